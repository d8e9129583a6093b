/**
 * Read-your-writes after a write through the desktop's local API (router.ts): a library the
 * desktop wrote is read through its local API, where the write already is, rather than from a
 * zotero.sqlite snapshot or a search index built before it, or from the Web API (which sees it
 * only after the app syncs). Remembered in memory per deps and, for the CLI across invocations
 * (`deps.lifetime === 'call'`), in `$cacheDir/desktop-writes.json` for ten minutes, as
 * recent-writes.ts does for Web API writes; keyed by the local API's url and the library as the
 * desktop names it (`users/0`, `groups/N`).
 */
import { readFileSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { ensureDir } from '../dirs.js';
import { randomHex } from '../node-crypto.js';
import { fresh } from '../library/recent-writes.js';
import type { Deps } from '../tool.js';
import { localApiUrl } from './local-api.js';

const DESKTOP_WRITES_SERVICE = 'zotero-desktop-writes';
const DESKTOP_WRITES_FILE = 'desktop-writes.json';

interface Entry {
  url: string;
  library: string;
  at: number;
}

function filePath(deps: Pick<Deps, 'config'>): string {
  return join(deps.config.cacheDir, DESKTOP_WRITES_FILE);
}

function parse(text: string): Entry[] {
  try {
    const raw = JSON.parse(text) as { writes?: unknown } | null;
    if (!raw || !Array.isArray(raw.writes)) return [];
    return (raw.writes as Entry[]).filter(
      (w) =>
        w !== null &&
        typeof w === 'object' &&
        typeof w.url === 'string' &&
        typeof w.library === 'string' &&
        /^(users|groups)\/\d+$/.test(w.library) &&
        Number.isFinite(w.at),
    );
  } catch {
    return [];
  }
}

/** When each library of this desktop was last written (this process, and recent CLI invocations). */
function written(deps: Deps): Promise<Map<string, number>> {
  return deps.services.get(DESKTOP_WRITES_SERVICE, () => {
    const map = new Map<string, number>();
    if (deps.lifetime !== 'call') return map;
    let text: string;
    try {
      text = readFileSync(filePath(deps), 'utf8');
    } catch {
      return map; // no file: no recent desktop writes
    }
    const url = localApiUrl(deps.env);
    const now = deps.clock.now();
    for (const w of parse(text)) {
      if (w.url === url && fresh(w.at, now)) map.set(w.library, Math.max(w.at, map.get(w.library) ?? 0));
    }
    return map;
  });
}

async function persist(deps: Deps, library: string, at: number): Promise<void> {
  const path = filePath(deps);
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    let existing: Entry[] = [];
    try {
      existing = parse(await fsp.readFile(path, 'utf8'));
    } catch {
      // no file yet
    }
    const url = localApiUrl(deps.env);
    const now = deps.clock.now();
    const writes = existing.filter((w) => fresh(w.at, now) && !(w.url === url && w.library === library));
    writes.push({ url, library, at });
    ensureDir(deps.config.cacheDir);
    await fsp.chmod(deps.config.cacheDir, 0o700);
    await fsp.writeFile(tmp, `${JSON.stringify({ writes })}\n`, { mode: 0o600 });
    await fsp.rename(tmp, path);
  } catch (error) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    // Only routing depends on it: a read-only cache directory must not fail the write.
    deps.log.debug(`Could not record the desktop write in ${path}: ${(error as Error).message}`);
  }
}

/** Records a write the desktop took for `library` (`users/0`, `groups/N`). Never throws. */
export async function recordDesktopWrite(deps: Deps, library: string): Promise<void> {
  const at = deps.clock.now();
  (await written(deps)).set(library, at);
  if (deps.lifetime === 'call') await persist(deps, library, at);
}

/**
 * Whether the desktop took a write for `library`: in this process (a long-running server
 * remembers it for its lifetime), or in a CLI invocation of the last ten minutes.
 */
export async function wasDesktopWritten(deps: Deps, library: string): Promise<boolean> {
  const at = (await written(deps)).get(library);
  if (at === undefined) return false;
  return deps.lifetime !== 'call' || fresh(at, deps.clock.now());
}
