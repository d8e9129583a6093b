/**
 * The group libraries the desktop app holds, for `zotero_groups` without an API key: the groups
 * of its zotero.sqlite (with their item counts), else those its local API lists. Read-only:
 * without a key nothing can be written to them through Zoteus.
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { authMissing } from './keys.js';
import type { BackendName } from './port.js';
import { desktop } from './readers/desktop.js';

export interface DesktopGroup {
  id: number;
  name: string;
  /** Items outside the trash (children included), when read from zotero.sqlite. */
  numItems?: number;
}

/**
 * The desktop's groups and the backend that told them. `auth_missing` when there is no desktop
 * to ask (ZOTEUS_LOCAL=off, or no Zotero data found): then only a key can list groups.
 */
export async function desktopGroups(
  deps: Deps,
): Promise<{ groups: DesktopGroup[]; backend: Exclude<BackendName, 'web'> }> {
  if (deps.config.local === 'off') throw authMissing(deps.config);
  const d = await desktop(deps);
  const state = await d.state();
  if (!state.available) {
    const missing = authMissing();
    throw new ZoteusError(
      'auth_missing',
      'No Zotero API key is configured and no Zotero desktop data was found, so there are no groups to list.',
      {
        hint: `Start Zotero 7+ with its local API enabled, or set ZOTERO_DATA_DIR to the Zotero data directory; or: ${missing.hint ?? ''}`,
      },
    );
  }
  const sqlite = state.sqlite.reader;
  const groups: DesktopGroup[] = [];
  for (const lib of await d.libraries()) {
    if (lib.type !== 'group') continue;
    const group: DesktopGroup = { id: lib.id, name: lib.name };
    if (sqlite && lib.libraryID !== undefined) {
      const stats = await sqlite.itemStats(lib.libraryID);
      group.numItems = stats.count - stats.trashed;
    }
    groups.push(group);
  }
  return { groups, backend: sqlite ? 'sqlite' : 'localApi' };
}
