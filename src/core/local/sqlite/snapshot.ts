/**
 * Opening a user's `zotero.sqlite` without ever writing to it (`zotero/desktop.md`, "Opening
 * zotero.sqlite safely"):
 *
 * - read-only in place (`readonly`, `fileMustExist`) when it can be read;
 * - when it is locked (a running Zotero holds `locking_mode=EXCLUSIVE`: opening or the first
 *   query fails with SQLITE_BUSY), or cannot be opened read-only in place, a snapshot: copy
 *   `zotero.sqlite` and `zotero.sqlite-wal` (never `-shm`) into a private 0700 temp dir and
 *   open the copy, so committed changes still in the WAL are seen. Never `immutable=1`
 *   (it ignores the WAL: stale reads).
 *
 * A fingerprint (size and mtime of the database and of its WAL) tells when to re-read.
 */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { chmodSync, mkdtempSync, rmSync, statSync, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZoteusError } from '../../errors.js';

export type OpenMode = 'direct' | 'snapshot';

/** `size:mtime` of the database and of its WAL (`-` when there is none, or it is empty). */
export function fingerprint(path: string): string | undefined {
  const main = statOrUndefined(path);
  if (!main) return undefined;
  const wal = statOrUndefined(`${path}-wal`);
  // An empty WAL holds nothing: the same state as none (opening read-only may create one).
  const part = (s: { size: number; mtimeMs: number } | undefined) =>
    s && s.size > 0 ? `${s.size}:${s.mtimeMs}` : '-';
  return `${part(main)}|${part(wal)}`;
}

function statOrUndefined(path: string): { size: number; mtimeMs: number } | undefined {
  try {
    const s = statSync(path);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Errors that mean "held by someone else" or "cannot be read in place": try a snapshot. */
export function isLockedOrUnopenable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('SQLITE_BUSY') ||
    code.startsWith('SQLITE_LOCKED') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_PROTOCOL'
  );
}

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export interface Snapshot {
  /** Private directory (mode 0700) holding the copy; removed by `removeSnapshot`. */
  dir: string;
  path: string;
  /** The source's fingerprint the copy was taken at. */
  fingerprint: string;
}

/**
 * Copies the database and its WAL into a fresh private directory. Retries when the source
 * changed while it was being copied (a checkpoint mid-copy would tear the copy).
 */
export async function takeSnapshot(source: string, tmpRoot: string = tmpdir()): Promise<Snapshot> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = fingerprint(source);
    if (before === undefined) throw missingDatabase(source);
    const dir = mkdtempSync(join(tmpRoot, 'zoteus-zotero-'));
    try {
      chmodSync(dir, 0o700);
      const path = join(dir, 'zotero.sqlite');
      await fsp.copyFile(source, path);
      if (!before.endsWith('|-')) {
        try {
          await fsp.copyFile(`${source}-wal`, `${path}-wal`);
        } catch (error) {
          // The WAL went away between the stat and the copy (Zotero closed): try again.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      if (fingerprint(source) === before) return { dir, path, fingerprint: before };
    } catch (error) {
      removeSnapshot(dir);
      throw new ZoteusError('api_error', `Could not copy the Zotero database ${source} (${String(error)}).`, {
        retryable: true,
        cause: error,
      });
    }
    removeSnapshot(dir);
  }
  throw new ZoteusError(
    'api_error',
    `The Zotero database ${source} kept changing while it was being copied.`,
    {
      retryable: true,
      hint: 'Zotero is busy (syncing or importing?): retry in a moment.',
    },
  );
}

export function removeSnapshot(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function missingDatabase(path: string): ZoteusError {
  return new ZoteusError('not_found', `No Zotero database at ${path}.`, {
    hint: 'Set ZOTERO_DATA_DIR to the Zotero data directory (Zotero → Settings → Advanced → Files and Folders shows it), or ZOTEUS_LOCAL=off to use the Web API only.',
  });
}
