/**
 * A small JSON file of recent writes in the cache directory, shared by the CLI's invocations
 * (read-your-writes: recent-writes.ts for the Web API, local/desktop-writes.ts for the desktop).
 * Entries older than ten minutes are dropped; the file is replaced atomically (a temporary file,
 * then a rename), private to the user; a damaged or missing file reads as no entries, and a cache
 * directory that cannot be written never fails the write it records.
 */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { readFileSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { ensureDir } from '../dirs.js';
import { randomHex } from '../node-crypto.js';
import type { Deps } from '../tool.js';

/** How long a recorded write counts. */
export const RECENT_WRITE_TTL_MS = 10 * 60_000;

export function fresh(at: number, now: number): boolean {
  return at <= now && now - at < RECENT_WRITE_TTL_MS;
}

/** What every entry has: the library as its side names it, and when it was written. */
export interface RecentEntry {
  library: string;
  at: number;
}

export interface RecentFile {
  /** The file name in the cache directory. */
  name: string;
  /** The other fields of a well-formed entry (library and time are checked here). */
  valid(entry: Record<string, unknown>): boolean;
}

function parse<E extends RecentEntry>(file: RecentFile, text: string): E[] {
  try {
    const raw = JSON.parse(text) as { writes?: unknown } | null;
    if (!raw || !Array.isArray(raw.writes)) return [];
    return (raw.writes as unknown[]).filter(
      (w): w is E =>
        w !== null &&
        typeof w === 'object' &&
        typeof (w as RecentEntry).library === 'string' &&
        /^(users|groups)\/\d+$/.test((w as RecentEntry).library) &&
        Number.isFinite((w as RecentEntry).at) &&
        file.valid(w as Record<string, unknown>),
    );
  } catch {
    return [];
  }
}

/** The entries on disk (synchronous: read once per process, before the first routing). */
export function readRecent<E extends RecentEntry>(deps: Pick<Deps, 'config'>, file: RecentFile): E[] {
  try {
    return parse(file, readFileSync(join(deps.config.cacheDir, file.name), 'utf8'));
  } catch {
    return []; // no file: no recent writes
  }
}

/** Adds `entry`, replacing the entries `same` matches and dropping stale ones. Never throws. */
export async function recordRecent<E extends RecentEntry>(
  deps: Pick<Deps, 'config' | 'clock' | 'log'>,
  file: RecentFile,
  entry: E,
  same: (existing: E) => boolean,
): Promise<void> {
  const path = join(deps.config.cacheDir, file.name);
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    let existing: E[] = [];
    try {
      existing = parse(file, await fsp.readFile(path, 'utf8'));
    } catch {
      // no file yet
    }
    const now = deps.clock.now();
    const writes = existing.filter((w) => fresh(w.at, now) && !same(w));
    writes.push(entry);
    ensureDir(deps.config.cacheDir);
    await fsp.chmod(deps.config.cacheDir, 0o700);
    await fsp.writeFile(tmp, `${JSON.stringify({ writes })}\n`, { mode: 0o600 });
    await fsp.rename(tmp, path);
  } catch (error) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    // Only routing depends on it: a read-only cache directory must not fail the write.
    deps.log.debug(`Could not record the write in ${path}: ${(error as Error).message}`);
  }
}
