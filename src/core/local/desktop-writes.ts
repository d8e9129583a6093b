/**
 * Read-your-writes after a write through the desktop's local API (router.ts): a library the
 * desktop wrote is read through its local API, where the write already is, rather than from a
 * zotero.sqlite snapshot or a search index built before it, or from the Web API (which sees it
 * only after the app syncs). Remembered in memory per deps and, for the CLI across invocations
 * (`deps.lifetime === 'call'`), in `$cacheDir/desktop-writes.json` for ten minutes, as
 * recent-writes.ts does for Web API writes; keyed by the local API's url and the library as the
 * desktop names it (`users/0`, `groups/N`).
 */
import { fresh, readRecent, recordRecent, type RecentFile } from '../store/recent-file.js';
import type { Deps } from '../tool.js';
import { localApiUrl } from './local-api.js';

const DESKTOP_WRITES_SERVICE = 'zotero-desktop-writes';

interface Entry {
  url: string;
  library: string;
  at: number;
}

const FILE: RecentFile = { name: 'desktop-writes.json', valid: (w) => typeof w.url === 'string' };

/** When each library of this desktop was last written (this process, and recent CLI invocations). */
function written(deps: Deps): Promise<Map<string, number>> {
  return deps.services.get(DESKTOP_WRITES_SERVICE, () => {
    const map = new Map<string, number>();
    if (deps.lifetime !== 'call') return map;
    const url = localApiUrl(deps.env);
    const now = deps.clock.now();
    for (const w of readRecent<Entry>(deps, FILE)) {
      if (w.url === url && fresh(w.at, now)) map.set(w.library, Math.max(w.at, map.get(w.library) ?? 0));
    }
    return map;
  });
}

/** Records a write the desktop took for `library` (`users/0`, `groups/N`). Never throws. */
export async function recordDesktopWrite(deps: Deps, library: string): Promise<void> {
  const at = deps.clock.now();
  (await written(deps)).set(library, at);
  if (deps.lifetime === 'call') {
    const url = localApiUrl(deps.env);
    await recordRecent(deps, FILE, { url, library, at }, (w) => w.url === url && w.library === library);
  }
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
