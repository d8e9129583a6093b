/**
 * The same item gives the same CSL-JSON on every backend: the sample library read from
 * zotero.sqlite, from the desktop's local API and from the Web API (the test server holding a
 * mirror of it), user library and group, every item that has a CSL form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toCslJson } from '../../../src/core/citations/csl-json.js';
import type { LibraryReader, WebApiItem } from '../../../src/core/library/port.js';
import { createLocalApiReader } from '../../../src/core/library/readers/local-api.js';
import { createSqliteReader } from '../../../src/core/library/readers/sqlite.js';
import { createApiReader } from '../../../src/core/library/readers/web.js';
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import { createLocalApiClient } from '../../../src/core/local/local-api-client.js';
import { createZoteroClient } from '../../../src/core/zotero/index.js';
import { GROUP_ID, KEY, startDesktopWorld, USER_ID, type DesktopWorld } from '../library/router-world.js';

const schema = buildSchema(readBundledSchema(), 'bundled');
let world: DesktopWorld;
let sqlite: ZoteroSqliteReader;
type Trio = Record<'sqlite' | 'localApi' | 'web', LibraryReader>;
const trios: Partial<Record<'user' | 'group', Trio>> = {};

beforeAll(async () => {
  world = await startDesktopWorld({ localApi: true });
  sqlite = await openZoteroSqlite(world.dbPath);
  const deps = world.deps();
  const web = createZoteroClient({ apiUrl: world.server.url, apiKey: KEY });
  const local = {
    client: createLocalApiClient(deps, world.localApiUrl),
    url: world.localApiUrl,
    forget: () => {},
  };
  for (const type of ['user', 'group'] as const) {
    const id = type === 'user' ? USER_ID : GROUP_ID;
    const library = { type, id };
    const libraryID = await sqlite.libraryIdFor(type === 'user' ? { type } : { type, groupID: id });
    trios[type] = {
      sqlite: createSqliteReader({ sqlite, libraryID, library, maxCollections: 1000 }),
      localApi: createLocalApiReader({ api: local, library, maxCollections: 1000 }),
      web: createApiReader({
        backend: 'web',
        client: web,
        prefix: `${type === 'user' ? 'users' : 'groups'}/${id}`,
        library,
        maxCollections: 1000,
        unpaged: false,
      }),
    };
  }
});
afterAll(async () => {
  sqlite?.close();
  await world?.close();
});

async function cslByKey(reader: LibraryReader): Promise<Record<string, unknown>> {
  // In key order: backends sort notes by title differently (by their HTML on the test server).
  const { items } = await reader.items({ itemType: '-annotation', limit: 100 });
  const byKey = [...items].sort((a: WebApiItem, b: WebApiItem) => (a.key < b.key ? -1 : 1));
  return Object.fromEntries(byKey.map((i) => [i.key, toCslJson(i, schema)]));
}

describe('CSL-JSON from three backends', () => {
  it.each(['user', 'group'] as const)(
    'the %s library: one JSON per item, whichever backend read it',
    async (type) => {
      const trio = trios[type] as Trio;
      const [fromSqlite, fromLocalApi, fromWeb] = await Promise.all([
        cslByKey(trio.sqlite),
        cslByKey(trio.localApi),
        cslByKey(trio.web),
      ]);
      expect(Object.keys(fromSqlite).length).toBeGreaterThan(type === 'user' ? 20 : 3);
      expect(JSON.stringify(fromLocalApi)).toBe(JSON.stringify(fromSqlite));
      expect(JSON.stringify(fromWeb)).toBe(JSON.stringify(fromSqlite));
      const scope = type === 'user' ? `users/${USER_ID}` : `groups/${GROUP_ID}`;
      for (const [key, csl] of Object.entries(fromSqlite)) {
        expect((csl as { id: string }).id).toBe(`http://zotero.org/${scope}/items/${key}`);
      }
    },
  );
});
