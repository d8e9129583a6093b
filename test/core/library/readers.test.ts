/**
 * The three readers of the Library port answer the same query identically for the same
 * content: zotero.sqlite (the sample library), the desktop's local API and the Web API (the
 * test server holding a mirror of that library, served both ways). Group items never appear
 * in the user library on any backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import { createLocalApiClient } from '../../../src/core/local/local-api-client.js';
import type {
  ItemQuery,
  LibraryReader,
  WebApiCollection,
  WebApiItem,
} from '../../../src/core/library/port.js';
import { createLocalApiReader } from '../../../src/core/library/readers/local-api.js';
import { createSqliteReader } from '../../../src/core/library/readers/sqlite.js';
import { createApiReader } from '../../../src/core/library/readers/web.js';
import { createZoteroClient } from '../../../src/core/zotero/index.js';
import { GROUP_ID, KEY, SAMPLE_KEYS, startDesktopWorld, USER_ID, type DesktopWorld } from './router-world.js';

let world: DesktopWorld;
let sqlite: ZoteroSqliteReader;
type Trio = Record<'sqlite' | 'localApi' | 'web', LibraryReader>;
let user: Trio;
let group: Trio;

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
  const trio = async (type: 'user' | 'group'): Promise<Trio> => {
    const id = type === 'user' ? USER_ID : GROUP_ID;
    const library = { type, id };
    const libraryID = await sqlite.libraryIdFor(type === 'user' ? { type } : { type, groupID: id });
    return {
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
  };
  user = await trio('user');
  group = await trio('group');
});
afterAll(async () => {
  sqlite?.close();
  await world?.close();
});

/**
 * What an agent reads of an item: everything but the links and the library's display name.
 * (The sample database trashes an item without its child note, which Zotero never does; its
 * reader counts that note as a live child of the trashed item, so numChildren of an item in the
 * trash is left out.)
 */
function itemView(i: WebApiItem) {
  const { collections, ...data } = i.data;
  const numChildren = i.data.deleted ? undefined : i.meta.numChildren;
  return { key: i.key, version: i.version, data: { ...data, collections: collections ?? [] }, numChildren };
}
function collectionView(c: WebApiCollection) {
  return { key: c.key, version: c.version, meta: c.meta, data: c.data };
}

async function allItems(trio: Trio, query: ItemQuery) {
  const out: Record<string, unknown> = {};
  for (const [name, reader] of Object.entries(trio)) {
    const { items, totalResults } = await reader.items(query);
    out[name] = { totalResults, items: items.map(itemView) };
  }
  return out;
}

const U = SAMPLE_KEYS.user;
const G = SAMPLE_KEYS.group;

describe('the same query, three backends, one answer', () => {
  it.each([false, true])('collections (includeTrashed %s)', async (includeTrashed) => {
    const answers = await Promise.all(
      Object.values(user).map(async (r) => {
        const listing = await r.collections({ includeTrashed });
        const collections = listing.collections.map(collectionView).sort((a, b) => (a.key < b.key ? -1 : 1));
        return { ...listing, collections };
      }),
    );
    expect(answers[0]?.collections.length).toBe(includeTrashed ? 8 : 7);
    expect(answers[0]?.complete).toBe(true);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  // Sorted by title without notes: the test server sorts a note by its HTML, Zotero by its title.
  const noNotes = { itemType: '-note' };
  it.each<[string, ItemQuery, number]>([
    ['top items by title', { top: true, sort: 'title', direction: 'asc', ...noNotes }, 26],
    ['top items, default order (dateModified, newest first)', { top: true }, 27],
    [
      'a page of them, backwards',
      { top: true, sort: 'title', direction: 'desc', start: 3, limit: 5, ...noNotes },
      26,
    ],
    ['by item type (or) and tag', { itemType: 'journalArticle || book', tag: 'sea level', sort: 'title' }, 4],
    [
      'excluding a type and a tag',
      { top: true, itemType: ['-attachment', '-note'], tag: '-sea level', sort: 'title' },
      15,
    ],
    ['in a collection', { collectionKey: U.collections.seaLevel, sort: 'title', ...noNotes }, 8],
    ['top items of a collection', { collectionKey: U.collections.climate, top: true, sort: 'title' }, 3],
    ['a word in title, creators or year', { q: 'sea', top: true, sort: 'title' }, 5],
    // A child attachment's title matches: its parent is listed (the Web API's items/top).
    ['a word of a child attachment, top', { q: 'pdf', top: true, sort: 'title' }, 4],
    ['a word of a child attachment, children too', { q: 'pdf', sort: 'title' }, 4],
    ['changed since a version', { since: 1400, top: true, sort: 'title', ...noNotes }, 4],
    ['the trash too', { top: true, includeTrashed: true, sort: 'title', ...noNotes }, 27],
    ['only the trash', { onlyTrashed: true, top: true }, 1],
    [
      'by key (a group key finds nothing)',
      { keys: [U.items.seaLevelArticle, U.items.greenlandArticle, G.items.groupArticle], sort: 'title' },
      2,
    ],
  ])('items: %s', async (_name, query, total) => {
    const out = await allItems(user, query);
    expect((out.sqlite as { totalResults: number }).totalResults).toBe(total);
    expect(out.localApi).toEqual(out.sqlite);
    expect(out.web).toEqual(out.sqlite);
  });

  it('one item, its children, a missing key', async () => {
    for (const reader of Object.values(user)) {
      const item = await reader.item(U.items.seaLevelArticle);
      expect(item?.data.title).toBe('Sea-level rise from the late 19th to the early 21st century');
      const children = await reader.children(U.items.seaLevelArticle);
      expect(children.map((c) => c.data.itemType).sort()).toEqual(['attachment', 'attachment', 'note']);
      expect(await reader.item('ZZZZZZZZ')).toBeUndefined();
      // In the trash, still found by key, flagged.
      expect((await reader.item(U.items.trashedArticle))?.data.deleted).toBe(1);
      await expect(reader.children('ZZZZZZZZ')).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('tags and the library version', async () => {
    const tags = await Promise.all(
      Object.values(user).map(async (r) =>
        (await r.tags()).sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.meta.type - b.meta.type)),
      ),
    );
    expect(tags[0]?.find((t) => t.tag === 'sea level')?.meta.numItems).toBeGreaterThan(0);
    expect(tags[1]).toEqual(tags[0]);
    expect(tags[2]).toEqual(tags[0]);
    for (const r of Object.values(user)) expect(await r.libraryVersion()).toBe(1600);
    for (const r of Object.values(group)) expect(await r.libraryVersion()).toBe(320);
  });
});

describe('group items never leak into the user library (and back)', () => {
  const groupKeys = [G.items.coralReport, G.items.groupArticle];

  it.each(['sqlite', 'localApi', 'web'] as const)('%s', async (backend) => {
    const mine = (await user[backend].items({ includeTrashed: true })).items.map((i) => i.key);
    expect(mine.length).toBeGreaterThan(20);
    for (const key of groupKeys) {
      expect(mine).not.toContain(key);
      expect(await user[backend].item(key)).toBeUndefined();
    }
    const searched = await user[backend].items({ q: 'coral', qmode: 'everything' });
    expect(searched.items.map((i) => i.key)).not.toEqual(expect.arrayContaining(groupKeys.slice(0, 1)));
    const collections = (await user[backend].collections({ includeTrashed: true })).collections.map(
      (c) => c.key,
    );
    expect(collections).not.toContain(G.collections.fieldwork);
    expect((await user[backend].tags()).map((t) => t.tag)).not.toContain('coral');

    const theirs = (await group[backend].items({ includeTrashed: true })).items;
    expect(theirs.map((i) => i.key)).toEqual(expect.arrayContaining(groupKeys));
    expect(theirs.map((i) => i.key)).not.toContain(U.items.seaLevelArticle);
    expect(theirs.every((i) => i.library.type === 'group' && i.library.id === GROUP_ID)).toBe(true);
    expect(await group[backend].item(U.items.seaLevelArticle)).toBeUndefined();
  });
});

describe('paging on the Web API and the local API', () => {
  const PREFIX = 'users/77';
  let keys: string[];
  let web: LibraryReader;
  let local: LibraryReader;
  beforeAll(() => {
    world.server.addUser({ userID: 77, username: 'pager' });
    world.server.addKey({ key: 'PagerK3yAbCdEf1234567890', userID: 77, access: { user: { library: true } } });
    keys = world.server
      .library(PREFIX)
      .addItems(Array.from({ length: 260 }, (_, i) => ({ title: `Paper ${String(i).padStart(3, '0')}` })));
    const client = createZoteroClient({ apiUrl: world.server.url, apiKey: 'PagerK3yAbCdEf1234567890' });
    web = createApiReader({
      backend: 'web',
      client,
      prefix: PREFIX,
      library: { type: 'user', id: 77 },
      maxCollections: 10,
      unpaged: false,
    });
    const localClient = createZoteroClient({ apiUrl: `${world.server.url}/api` });
    local = createApiReader({
      backend: 'localApi',
      client: localClient,
      prefix: 'users/0',
      library: { type: 'user', id: 77 },
      maxCollections: 10,
      unpaged: true,
    });
  });
  const pages = (path: string) => world.server.log.filter((e) => e.path === path);
  const titles = (items: WebApiItem[]) => items.map((i) => i.data.title);
  const expected = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => `Paper ${String(from + i).padStart(3, '0')}`);

  it('a limit above 100 is read in pages of 100 from start; no limit reads everything', async () => {
    world.server.clearLog();
    const out = await web.items({ sort: 'title', start: 20, limit: 150 });
    expect(out.totalResults).toBe(260);
    expect(titles(out.items)).toEqual(expected(20, 150));
    expect(pages(`/${PREFIX}/items`).map((e) => [e.query.start, e.query.limit])).toEqual([
      ['20', '100'],
      ['120', '50'],
    ]);
    world.server.clearLog();
    const all = await web.items({ sort: 'title', start: 250 });
    expect(titles(all.items)).toEqual(expected(250, 10));
    expect(pages(`/${PREFIX}/items`)).toHaveLength(3);
  });

  it('limit 0 counts (one request)', async () => {
    world.server.clearLog();
    expect(await web.items({ limit: 0 })).toEqual({ items: [], totalResults: 260 });
    expect(pages(`/${PREFIX}/items`)).toHaveLength(1);
  });

  it('more than 50 keys: ⌈n/50⌉ requests', async () => {
    world.server.clearLog();
    const out = await web.items({ keys: keys.slice(0, 120), sort: 'title' });
    expect(out.totalResults).toBe(120);
    expect(new Set(out.items.map((i) => i.key))).toEqual(new Set(keys.slice(0, 120)));
    expect(pages(`/${PREFIX}/items`)).toHaveLength(3);
  });

  it('the local API: a whole listing is one request, a page one request', async () => {
    world.server.serveLocalApi({ userID: 77 });
    try {
      world.server.clearLog();
      const all = await local.items({ sort: 'title' });
      expect(all.items).toHaveLength(260);
      expect(pages('/api/users/0/items')).toHaveLength(1);
      expect(pages('/api/users/0/items')[0]?.query.limit).toBeUndefined();
      world.server.clearLog();
      const page = await local.items({ sort: 'title', start: 10, limit: 150 });
      expect(titles(page.items)).toEqual(expected(10, 150));
      expect(page.totalResults).toBe(260);
      expect(pages('/api/users/0/items')).toHaveLength(1);
    } finally {
      world.server.serveLocalApi({ userID: USER_ID, groups: [GROUP_ID] });
    }
  });

  it('bad keys and numbers are validation errors, before any request', async () => {
    world.server.clearLog();
    for (const reader of [web, user.sqlite]) {
      await expect(reader.items({ collectionKey: '../../keys' })).rejects.toMatchObject({
        code: 'validation_error',
        field: 'collectionKey',
      });
      await expect(reader.items({ keys: ['nope'] })).rejects.toMatchObject({ code: 'validation_error' });
      await expect(reader.items({ start: -1 })).rejects.toMatchObject({
        code: 'validation_error',
        field: 'start',
      });
      await expect(reader.item('a/b')).rejects.toMatchObject({ code: 'validation_error' });
    }
    await expect(user.sqlite.items({ sort: 'numItems' })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'sort',
    });
    expect(world.server.log).toHaveLength(0);
  });

  it('an unknown collection is not_found on every backend', async () => {
    for (const reader of Object.values(user)) {
      await expect(reader.items({ collectionKey: 'ZZZZZZZZ' })).rejects.toMatchObject({ code: 'not_found' });
    }
  });
});
