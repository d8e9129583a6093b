/**
 * Opening a user's `zotero.sqlite` without ever writing to it (`zotero/desktop.md`, "Opening
 * zotero.sqlite safely"):
 *
 * - read-only in place (`readonly`, `fileMustExist`) when it can be read;
 * - when it is locked (a running Zotero holds `locking_mode=EXCLUSIVE`: opening or the first
 *   query fails with SQLITE_BUSY), or cannot be opened read-only in place, a snapshot: copy
 *   `zotero.sqlite` and `zotero.sqlite-wal` (never `-shm`) into a private 0700 temp dir and
 *   open the copy, so committed changes still in the WAL are seen. Never `immutable=1`
 *   (it ignores the WAL: stale reads). In rollback-journal mode the `-journal` is copied
 *   too and rolled back on the copy, so a writer's uncommitted pages are never seen.
 *
 * A fingerprint (size and mtime of the database and of its WAL) tells when to re-read.
 */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  promises as fsp,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
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

/** Waits before each try: a writer's transaction usually ends within these (about 0.8 s in all). */
const TRY_DELAYS_MS = [0, 25, 50, 100, 200, 400];

/**
 * Copies the database with its WAL, or with its rollback journal, into a fresh private
 * directory, and only a copy of one consistent moment: when the source changed while it was
 * copied (a commit, a rollback, a checkpoint, pages journaled), it tries again, a few times,
 * then refuses rather than show a torn copy or a writer's uncommitted changes.
 *
 * In rollback-journal mode (as Zotero uses it) a writer may already have written uncommitted
 * pages into the database file, their originals in the `-journal`: the copy of the journal
 * (hot) is then rolled back on the copy, so the copy holds the last committed state.
 */
export async function takeSnapshot(
  source: string,
  Database: typeof BetterSqlite3,
  tmpRoot: string = tmpdir(),
): Promise<Snapshot> {
  for (const delay of TRY_DELAYS_MS) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const before = sourceState(source);
    if (before === undefined) throw missingDatabase(source);
    if (before.racy) continue;
    const dir = mkdtempSync(join(tmpRoot, 'zoteus-zotero-'));
    try {
      chmodSync(dir, 0o700);
      const path = join(dir, 'zotero.sqlite');
      // The database first, its journal after: SQLite syncs a page's original to the journal
      // before it writes the page to the database, so a journal copied later holds the
      // original of every uncommitted page the database copy caught.
      await fsp.copyFile(source, path);
      const journal = before.journal !== '-' && (await copyIfThere(`${source}-journal`, `${path}-journal`));
      if (!before.fingerprint.endsWith('|-')) await copyIfThere(`${source}-wal`, `${path}-wal`);
      // Anything gone or changed (a journal deleted or zeroed at a commit, a new transaction's
      // journal, the change counter, a checkpoint) means the copies may not be of one moment.
      if (sameState(before, sourceState(source)) && !(journal && namesSuperJournal(`${path}-journal`))) {
        if (journal && isHot(`${path}-journal`)) rollBack(path, Database);
        return { dir, path, fingerprint: before.fingerprint };
      }
    } catch (error) {
      removeSnapshot(dir);
      if (error instanceof ZoteusError) throw error;
      throw new ZoteusError('api_error', `Could not copy the Zotero database ${source} (${String(error)}).`, {
        retryable: true,
        cause: error,
      });
    }
    removeSnapshot(dir);
  }
  throw new ZoteusError(
    'api_error',
    `The Zotero database ${source} is locked: Zotero is writing to it, and it kept changing while Zoteus copied it (${TRY_DELAYS_MS.length} tries), so it cannot be read without showing changes not yet saved.`,
    {
      retryable: true,
      hint: 'Try again in a moment, once Zotero has finished writing (a sync or an import?).',
    },
  );
}

/** What must stay the same while a copy is taken (`takeSnapshot`). */
interface SourceState {
  /** `fingerprint()`: size and mtime of the database and of its WAL. */
  fingerprint: string;
  /** The database header's file change counter (offset 24), bumped by each rollback-mode commit. */
  counter: string;
  /** `-`, or the journal's size, mtime and header (magic, page count, nonce: new each transaction). */
  journal: string;
  /**
   * The database was modified within the last few milliseconds: a further write in the same
   * clock tick would leave its mtime as it is, so this state cannot be told apart from the next.
   */
  racy: boolean;
}

const RACY_MS = 20;
const JOURNAL_HEADER = 28;
/** The 8 bytes that start a journal header, and end a journal that names a super-journal. */
const JOURNAL_MAGIC = Buffer.from([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);

function sourceState(path: string): SourceState | undefined {
  const fp = fingerprint(path);
  if (fp === undefined) return undefined;
  const main = statOrUndefined(path);
  const journal = statOrUndefined(`${path}-journal`);
  return {
    fingerprint: fp,
    counter: readBytes(path, 24, 4)?.toString('hex') ?? '-',
    journal: journal
      ? `${journal.size}:${journal.mtimeMs}:${readBytes(`${path}-journal`, 0, JOURNAL_HEADER)?.toString('hex') ?? '-'}`
      : '-',
    // Absolute: a clock skew (a network share) must not make every state look racy.
    racy: main !== undefined && Math.abs(Date.now() - main.mtimeMs) < RACY_MS,
  };
}

function sameState(a: SourceState, b: SourceState | undefined): boolean {
  return (
    b !== undefined && a.fingerprint === b.fingerprint && a.counter === b.counter && a.journal === b.journal
  );
}

/** The bytes at `offset` (fewer at the end of the file); undefined when there is no such file. */
function readBytes(path: string, offset: number, length: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const buf = Buffer.alloc(length);
    return buf.subarray(0, readSync(fd, buf, 0, length, offset));
  } finally {
    closeSync(fd);
  }
}

async function copyIfThere(from: string, to: string): Promise<boolean> {
  try {
    await fsp.copyFile(from, to);
    return true;
  } catch (error) {
    // Gone between the stat and the copy (a commit, Zotero closed): the state check tells.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * A journal naming a super-journal is mid-way through a multi-database commit; SQLite would
 * play it back or not depending on whether that file (in the user's folder) still exists, and
 * may delete it: never open such a copy.
 */
function namesSuperJournal(journal: string): boolean {
  const size = statSync(journal).size;
  return size > JOURNAL_HEADER && readBytes(journal, size - 8, 8)?.equals(JOURNAL_MAGIC) === true;
}

/** A journal SQLite would play back: one whose header is not zeroed (a zeroed one is finished). */
function isHot(journal: string): boolean {
  const first = readBytes(journal, 0, 1);
  return first !== undefined && first.length > 0 && first[0] !== 0;
}

/**
 * Opens the copy read-write once, which makes SQLite roll its hot journal back (a read-only
 * connection refuses a hot journal: SQLITE_READONLY_ROLLBACK), then checks that it did.
 */
function rollBack(path: string, Database: typeof BetterSqlite3): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } finally {
    db.close();
  }
  if (isHot(`${path}-journal`)) {
    throw new ZoteusError('api_error', `Could not roll back the copy of the Zotero database at ${path}.`, {
      retryable: true,
    });
  }
}

export function removeSnapshot(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function missingDatabase(path: string): ZoteusError {
  return new ZoteusError('not_found', `No Zotero database at ${path}.`, {
    hint: 'Set ZOTERO_DATA_DIR to the Zotero data directory (Zotero → Settings → Advanced → Files and Folders shows it), or ZOTEUS_LOCAL=off to use the Web API only.',
  });
}
