/**
 * A desktop and a cloud holding the same library, for the router and reader tests: the sample
 * `zotero.sqlite` (user 8675309, group 4711) in the sandbox's Zotero data directory, and the
 * Web API test server holding the same content (mirrored from the database), which can also
 * serve it as the desktop's local API. Nothing of the machine is read: ZOTERO_DATA_DIR points
 * into the sandbox and the local API is looked for on a dead port unless asked for.
 */
import { join } from 'node:path';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { openZoteroSqlite } from '../../../src/core/local/index.js';
import type { Clock, Deps } from '../../../src/core/tool.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { sandbox } from '../../support/cli.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { mirrorLibrary } from '../../support/zotero-server/mirror.js';
import {
  buildSampleLibrary,
  buildZoteroDb,
  SAMPLE_KEYS,
  sampleLibrarySpec,
  type BuildSpec,
} from '../../support/zotero-sqlite/index.js';

export const USER_ID = SAMPLE_KEYS.user.userID;
export const GROUP_ID = SAMPLE_KEYS.group.groupID;
/** A group the key reaches on the Web API that the desktop does not hold. */
export const WEB_GROUP_ID = 99;
export const OTHER_USER_ID = 4242;
/** The sample user's key: its user library and every group. */
export const KEY = 'Smpl3K3yAbCdEf1234567890';
/** A key of another user. */
export const OTHER_KEY = 'Oth3rK3yAbCdEf1234567890';
/** Nothing listens on port 9: the local API is "not running" unless a test serves it. */
export const DEAD_LOCAL_API = 'http://127.0.0.1:9/api';

export interface DesktopWorld {
  server: ZoteroTestServer;
  box: ReturnType<typeof sandbox>;
  /** The sandbox's Zotero data directory (ZOTERO_DATA_DIR). */
  dataDir: string;
  dbPath: string;
  /** The test server's local API base URL (served once `serveLocalApi` was called). */
  localApiUrl: string;
  /** Sandbox env: the test server as the Web API, no key, the local API on a dead port. */
  env(extra?: Record<string, string | undefined>): Record<string, string>;
  deps(options?: {
    env?: Record<string, string | undefined>;
    surface?: Deps['surface'];
    clock?: Clock;
    logs?: string[];
  }): Deps;
  close(): Promise<void>;
}

export async function startDesktopWorld(
  options: { localApi?: boolean; spec?: BuildSpec } = {},
): Promise<DesktopWorld> {
  const box = sandbox();
  const dataDir = join(box.dir, 'Zotero');
  const dbPath = join(dataDir, 'zotero.sqlite');
  if (options.spec) await buildZoteroDb(dbPath, options.spec);
  else await buildSampleLibrary(dbPath);

  const server = await startZoteroServer();
  server.addUser({ userID: USER_ID, username: 'sample-user' });
  server.addUser({ userID: OTHER_USER_ID, username: 'other' });
  server.addKey({
    key: KEY,
    userID: USER_ID,
    access: {
      user: { library: true, files: true, notes: true, write: true },
      groups: { all: { library: true, write: true } },
    },
  });
  server.addKey({ key: OTHER_KEY, userID: OTHER_USER_ID, access: { user: { library: true, write: true } } });
  server.addGroup({ id: GROUP_ID, name: 'Ocean Lab (shared)', owner: USER_ID, members: [] });
  server.addGroup({ id: WEB_GROUP_ID, name: 'Web only', owner: USER_ID, members: [] });
  server.library(`groups/${WEB_GROUP_ID}`).addItems([{ title: 'Only in the cloud' }]);

  // The cloud holds what the desktop holds.
  const reader = await openZoteroSqlite(dbPath);
  try {
    for (const lib of await reader.libraries()) {
      const prefix = lib.type === 'user' ? `users/${USER_ID}` : `groups/${lib.groupID}`;
      // The children of a trashed item are in the trash too, as Zotero trashes them with it.
      const live = new Set((await reader.items(lib.libraryID)).items.map((i) => i.key));
      const items = (await reader.items(lib.libraryID, { includeTrashed: true })).items.map((i) =>
        live.has(i.key) ? i : { ...i, data: { ...i.data, deleted: 1 as const } },
      );
      mirrorLibrary(server.library(prefix), {
        collections: await reader.collections(lib.libraryID, { includeTrashed: true }),
        items,
        version: lib.version,
      });
    }
  } finally {
    reader.close();
  }
  const localApiUrl = options.localApi
    ? server.serveLocalApi({ userID: USER_ID, groups: [GROUP_ID] })
    : `${server.url}/api`;

  const env = (extra: Record<string, string | undefined> = {}): Record<string, string> => {
    const all: Record<string, string | undefined> = {
      ...box.env,
      ZOTERO_API_URL: server.url,
      ZOTEUS_LOCAL_API_URL: options.localApi ? localApiUrl : DEAD_LOCAL_API,
      // A background index build this world starts is a detached `zot` that may still be writing
      // its V8 code cache into the sandbox as the sandbox is removed (ENOTEMPTY under load).
      ZOTEUS_COMPILE_CACHE: 'off',
      ...extra,
    };
    for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
    return all as Record<string, string>;
  };
  return {
    server,
    box,
    dataDir,
    dbPath,
    localApiUrl,
    env,
    deps: (o = {}) => {
      const e = env(o.env);
      const logs = o.logs;
      return createDeps({
        config: loadConfig(e),
        env: e,
        version: CLI_VERSION,
        surface: o.surface ?? 'mcp',
        ...(o.clock ? { clock: o.clock } : {}),
        ...(logs ? { writeLog: (line: string) => logs.push(line), debug: true } : {}),
      });
    },
    close: async () => {
      await server.close();
      box.cleanup();
    },
  };
}

export { SAMPLE_KEYS, sampleLibrarySpec };
