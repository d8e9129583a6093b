/**
 * Read-your-writes (router.ts): every write through the Web API records the library version
 * it produced, in memory per deps and, for the CLI across invocations, in
 * `$cacheDir/recent-writes.json` (kept ten minutes). While the desktop's copy of that library
 * is older, the router keeps reads of it on the Web API.
 */
import { randomHex } from '../node-crypto.js';
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { readFileSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { Deps } from '../tool.js';
import { ensureDir } from '../dirs.js';

/** How long a write keeps reads of its library on the Web API at most. */
export const RECENT_WRITE_TTL_MS = 10 * 60_000;
const RECENT_WRITES_SERVICE = 'zotero-recent-writes';
const RECENT_WRITES_FILE = 'recent-writes.json';

export interface RecentWrite {
  version: number;
  at: number;
}

interface RecentWritesFile {
  writes: Array<{ api: string; library: string; version: number; at: number }>;
}

function recentWritesPath(deps: Pick<Deps, 'config'>): string {
  return join(deps.config.cacheDir, RECENT_WRITES_FILE);
}

function parseRecentWrites(text: string): RecentWritesFile['writes'] {
  try {
    const raw = JSON.parse(text) as Partial<RecentWritesFile> | null;
    if (!raw || !Array.isArray(raw.writes)) return [];
    return raw.writes.filter(
      (w) =>
        w !== null &&
        typeof w === 'object' &&
        typeof w.api === 'string' &&
        typeof w.library === 'string' &&
        /^(users|groups)\/\d+$/.test(w.library) &&
        Number.isSafeInteger(w.version) &&
        Number.isFinite(w.at),
    );
  } catch {
    return [];
  }
}

export function fresh(at: number, now: number): boolean {
  return at <= now && now - at < RECENT_WRITE_TTL_MS;
}

/** The writes of these deps (and, for the CLI, of the invocations of the last ten minutes). */
export function recentWrites(deps: Deps): Promise<Map<string, RecentWrite>> {
  return deps.services.get(RECENT_WRITES_SERVICE, () => {
    const writes = new Map<string, RecentWrite>();
    if (deps.lifetime !== 'call') return writes;
    let text: string;
    try {
      text = readFileSync(recentWritesPath(deps), 'utf8');
    } catch {
      return writes; // no file: no recent writes
    }
    const now = deps.clock.now();
    for (const w of parseRecentWrites(text)) {
      if (w.api !== deps.config.apiUrl || !fresh(w.at, now)) continue;
      const known = writes.get(w.library);
      if (!known || w.version > known.version) writes.set(w.library, { version: w.version, at: w.at });
    }
    return writes;
  });
}

async function persistWrite(deps: Deps, library: string, write: RecentWrite): Promise<void> {
  const path = recentWritesPath(deps);
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    let existing: RecentWritesFile['writes'] = [];
    try {
      existing = parseRecentWrites(await fsp.readFile(path, 'utf8'));
    } catch {
      // no file yet
    }
    const now = deps.clock.now();
    const api = deps.config.apiUrl;
    const writes = existing.filter((w) => fresh(w.at, now) && !(w.api === api && w.library === library));
    writes.push({ api, library, version: write.version, at: write.at });
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

/**
 * Records a write through the Web API: `library` is its prefix (`users/123`, `groups/456`, as
 * `openWebLibrary` gives it), `version` the library version the write produced (the
 * `Last-Modified-Version` of its answer). Reads of that library then stay on the Web API until
 * the desktop's copy reaches that version (at most ten minutes). Never throws.
 */
export async function noteWrite(deps: Deps, library: string, version: number): Promise<void> {
  if (!/^(users|groups)\/\d+$/.test(library) || !Number.isSafeInteger(version) || version < 0) return;
  const writes = await recentWrites(deps);
  const known = writes.get(library);
  const write = { version: Math.max(version, known?.version ?? 0), at: deps.clock.now() };
  writes.set(library, write);
  if (deps.lifetime === 'call') await persistWrite(deps, library, write);
}

/** The most recent unexpired write to one of `libraries`. */
export async function pendingWrite(
  deps: Deps,
  libraries: (library: string) => boolean,
): Promise<{ library: string; write: RecentWrite } | undefined> {
  const writes = await recentWrites(deps);
  const now = deps.clock.now();
  let found: { library: string; write: RecentWrite } | undefined;
  for (const [library, write] of writes) {
    if (!fresh(write.at, now)) {
      writes.delete(library);
      continue;
    }
    if (libraries(library) && (!found || write.version > found.write.version)) found = { library, write };
  }
  return found;
}
