/**
 * Read-your-writes (router.ts): every write through the Web API records the library version
 * it produced, in memory per deps and, for the CLI across invocations, in
 * `$cacheDir/recent-writes.json` (kept ten minutes). While the desktop's copy of that library
 * is older, the router keeps reads of it on the Web API.
 */
import type { Deps } from '../tool.js';
import {
  fresh,
  readRecent,
  recordRecent,
  RECENT_WRITE_TTL_MS,
  type RecentFile,
} from '../store/recent-file.js';

export { fresh, RECENT_WRITE_TTL_MS };

const RECENT_WRITES_SERVICE = 'zotero-recent-writes';

export interface RecentWrite {
  version: number;
  at: number;
}

interface Entry {
  api: string;
  library: string;
  version: number;
  at: number;
}

const FILE: RecentFile = {
  name: 'recent-writes.json',
  valid: (w) => typeof w.api === 'string' && Number.isSafeInteger(w.version),
};

/** The writes of these deps (and, for the CLI, of the invocations of the last ten minutes). */
export function recentWrites(deps: Deps): Promise<Map<string, RecentWrite>> {
  return deps.services.get(RECENT_WRITES_SERVICE, () => {
    const writes = new Map<string, RecentWrite>();
    if (deps.lifetime !== 'call') return writes;
    const now = deps.clock.now();
    for (const w of readRecent<Entry>(deps, FILE)) {
      if (w.api !== deps.config.apiUrl || !fresh(w.at, now)) continue;
      const known = writes.get(w.library);
      if (!known || w.version > known.version) writes.set(w.library, { version: w.version, at: w.at });
    }
    return writes;
  });
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
  if (deps.lifetime === 'call') {
    const api = deps.config.apiUrl;
    await recordRecent(
      deps,
      FILE,
      { api, library, version: write.version, at: write.at },
      (w) => w.api === api && w.library === library,
    );
  }
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
