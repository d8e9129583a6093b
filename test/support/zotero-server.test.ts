import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { randomKey, startZoteroServer, type ZoteroTestServer } from './zotero-server/index.js';

const OWNER_KEY = 'ownerKey0123456789abcdef';
const READ_KEY = 'readOnlyKey0123456789abc';
const OTHER_KEY = 'otherUserKey0123456789ab';

let server: ZoteroTestServer;

// Answers are checked with toEqual/toMatchObject; loose typing keeps those assertions readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

beforeEach(async () => {
  server = await startZoteroServer();
  server.addUser({ userID: 1, username: 'alice', displayName: 'Alice A.' });
  server.addUser({ userID: 2, username: 'bob' });
  server.addKey({
    key: OWNER_KEY,
    userID: 1,
    access: {
      user: { library: true, files: true, notes: true, write: true },
      groups: { all: { library: true, write: true } },
    },
  });
  server.addKey({
    key: READ_KEY,
    userID: 1,
    access: { user: { library: true }, groups: { all: { library: true } } },
  });
  server.addKey({ key: OTHER_KEY, userID: 2, access: { user: { library: true, write: true } } });
});

afterEach(async () => {
  await server.close();
});

interface CallOptions {
  method?: string;
  key?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
}

/** One request to the test server with the owner's key unless told otherwise. */
async function call(path: string, o: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'Zotero-API-Version': '3', ...o.headers };
  const key = o.key === undefined ? OWNER_KEY : o.key;
  if (key !== null) headers['Zotero-API-Key'] = key;
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(`${server.url}${path}`, {
    method: o.method ?? 'GET',
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
}

async function json<T = Loose>(path: string, o: CallOptions = {}): Promise<{ res: Response; body: T }> {
  const res = await call(path, o);
  return { res, body: (await res.json()) as T };
}

const token = (): string => randomBytes(16).toString('hex');

describe('keys and permissions', () => {
  it('answers 403 "Invalid key" for an unknown key on every path', async () => {
    for (const [method, path] of [
      ['GET', '/users/1/items'],
      ['GET', '/keys/current'],
      ['GET', '/groups/999/collections'],
      ['GET', '/no/such/path'],
      ['POST', '/users/1/collections'],
    ] as const) {
      const res = await call(path, { method, key: 'bogus', body: method === 'POST' ? [] : undefined });
      expect(res.status, path).toBe(403);
      expect(await res.text()).toBe('Invalid key');
    }
  });

  it('refuses keyless library access without calling the key invalid', async () => {
    const res = await call('/users/1/items', { key: null });
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('Invalid key');
  });

  it('enforces key permissions: other users, writes, and groups', async () => {
    server.addGroup({ id: 10, name: 'Lab', owner: 2, members: [1] });
    server.addGroup({ id: 11, name: 'Not mine', owner: 2, members: [] });
    server.addGroup({ id: 12, name: 'Admins only', owner: 2, members: [1], libraryEditing: 'admins' });

    const other = await call('/users/2/items');
    expect(other.status).toBe(403);
    expect(await other.text()).not.toContain('Invalid key');

    const write = await call('/users/1/collections', {
      key: READ_KEY,
      method: 'POST',
      body: [{ name: 'x' }],
    });
    expect(write.status).toBe(403);
    expect(await write.text()).toBe('Write access denied');

    expect((await call('/groups/10/items')).status).toBe(200);
    // groups.all covers only the groups the user belongs to.
    expect((await call('/groups/11/items')).status).toBe(403);
    expect((await call('/groups/12/items')).status).toBe(200);
    const adminWrite = await call('/groups/12/collections', { method: 'POST', body: [{ name: 'x' }] });
    expect(adminWrite.status).toBe(403);
    // A key without group access cannot read even a member group.
    server.addGroup({ id: 13, name: 'Bob group', owner: 1, members: [2] });
    expect((await call('/groups/13/items', { key: OTHER_KEY })).status).toBe(403);
    expect((await call('/groups/999/items')).status).toBe(404);
  });

  it('accepts Authorization: Bearer', async () => {
    const res = await call('/users/1/items', {
      key: null,
      headers: { Authorization: `Bearer ${OWNER_KEY}` },
    });
    expect(res.status).toBe(200);
  });

  it('serves /keys/current and /keys/{key}', async () => {
    const { res, body } = await json('/keys/current');
    expect(res.status).toBe(200);
    expect(body).toEqual({
      key: OWNER_KEY,
      userID: 1,
      username: 'alice',
      displayName: 'Alice A.',
      access: {
        user: { library: true, files: true, notes: true, write: true },
        groups: { all: { library: true, write: true } },
      },
    });
    expect((await json(`/keys/${READ_KEY}`)).body.userID).toBe(1);
    expect((await call('/keys/current', { key: 'nope' })).status).toBe(403);
  });

  it('lists the groups of a user that the key can reach, numItems optional', async () => {
    server.addGroup({ id: 10, name: 'Lab', owner: 2, members: [1] });
    server.addGroup({ id: 11, name: 'Not mine', owner: 2, members: [] });
    server.addGroup({ id: 12, name: 'Archive', owner: 1, members: [], omitNumItems: true });
    server.library('groups/10').addItems([{ title: 'a' }, { title: 'b' }]);
    const { res, body } = await json('/users/1/groups');
    expect(res.status).toBe(200);
    expect(res.headers.get('Total-Results')).toBe('2');
    expect(body.map((g: Loose) => g.id)).toEqual([12, 10]);
    const lab = body.find((g: Loose) => g.id === 10);
    expect(lab.meta.numItems).toBe(2);
    expect(lab.data).toMatchObject({
      id: 10,
      name: 'Lab',
      owner: 2,
      type: 'Private',
      libraryEditing: 'members',
    });
    expect(Object.keys(lab.data)).toEqual(
      expect.arrayContaining([
        'id',
        'version',
        'name',
        'owner',
        'type',
        'description',
        'url',
        'libraryEditing',
        'libraryReading',
        'fileEditing',
      ]),
    );
    expect(body.find((g: Loose) => g.id === 12).meta).not.toHaveProperty('numItems');
  });
});

describe('reading', () => {
  it('pages by 25 by default with Total-Results and Link next/last', async () => {
    server.library('users/1').addItems(Array.from({ length: 60 }, (_, i) => ({ title: `T${i}` })));
    const { res, body } = await json('/users/1/items');
    expect(body).toHaveLength(25);
    expect(res.headers.get('Total-Results')).toBe('60');
    const link = res.headers.get('Link')!;
    expect(link).toContain(`<${server.url}/users/1/items?start=25>; rel="next"`);
    expect(link).toContain(`<${server.url}/users/1/items?start=50>; rel="last"`);
    expect(link).toContain('rel="alternate"');
    expect(link).not.toContain('rel="first"');

    const last = await call('/users/1/items?start=50');
    expect(((await last.json()) as unknown[]).length).toBe(10);
    const lastLink = last.headers.get('Link')!;
    expect(lastLink).toContain(`<${server.url}/users/1/items>; rel="first"`);
    expect(lastLink).toContain(`<${server.url}/users/1/items?start=25>; rel="prev"`);
    expect(lastLink).not.toContain('rel="next"');
  });

  it('clamps limit to 100 and keeps non-default parameters in links', async () => {
    server.library('users/1').addItems(Array.from({ length: 130 }, (_, i) => ({ title: `T${i}` })));
    const { res, body } = await json('/users/1/items?limit=500&sort=title');
    expect(body).toHaveLength(100);
    expect(res.headers.get('Link')).toContain(
      `<${server.url}/users/1/items?limit=100&sort=title&start=100>; rel="next"`,
    );
  });

  it('serves format=keys and format=versions unpaged, and filters by since and itemKey', async () => {
    const lib = server.library('users/1');
    const keys = lib.addItems(Array.from({ length: 30 }, (_, i) => ({ title: `T${i}` })));
    const v1 = lib.version;
    lib.editItem(keys[0]!, { title: 'changed' });

    const text = await (await call('/users/1/items?format=keys')).text();
    expect(text.trim().split('\n').sort()).toEqual([...keys].sort());
    const versions = (await json('/users/1/items?format=versions')).body;
    expect(Object.keys(versions)).toHaveLength(30);
    expect(versions[keys[0]!]).toBe(lib.version);
    expect((await json(`/users/1/items?format=versions&since=${v1}`)).body).toEqual({
      [keys[0]!]: lib.version,
    });

    const picked = await json(`/users/1/items?itemKey=${keys[3]},${keys[4]}`);
    expect(picked.body.map((i: Loose) => i.key).sort()).toEqual([keys[3], keys[4]].sort());
    const tooMany = Array.from({ length: 51 }, () => randomKey()).join(',');
    expect((await call(`/users/1/items?itemKey=${tooMany}`)).status).toBe(400);
  });

  it('answers 304 to If-Modified-Since-Version until the library changes', async () => {
    const lib = server.library('users/1');
    const [key] = lib.addCollections([{ name: 'A' }]);
    const v = lib.version;
    const first = await call('/users/1/collections', { headers: { 'If-Modified-Since-Version': String(v) } });
    expect(first.status).toBe(304);
    expect(await first.text()).toBe('');
    lib.editCollection(key!, { name: 'B' });
    const second = await call('/users/1/collections', {
      headers: { 'If-Modified-Since-Version': String(v) },
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('Last-Modified-Version')).toBe(String(lib.version));
  });

  it('serves single objects with their own version, 404 when missing', async () => {
    const lib = server.library('users/1');
    const [a] = lib.addCollections([{ name: 'A' }]);
    const [b] = lib.addCollections([{ name: 'B', parentCollection: a }]);
    lib.addItems([{ title: 'In B', collections: [b!] }]);
    const { res, body } = await json(`/users/1/collections/${a}`);
    expect(res.headers.get('Last-Modified-Version')).toBe('1');
    expect(lib.version).toBe(3);
    expect(body).toMatchObject({
      key: a,
      version: 1,
      library: { type: 'user', id: 1, name: 'alice' },
      meta: { numCollections: 1, numItems: 0 },
      data: { key: a, version: 1, name: 'A', parentCollection: false, relations: {} },
    });
    expect(body.links.self.href).toBe(`${server.url}/users/1/collections/${a}`);
    expect((await json(`/users/1/collections/${b}/items`)).body[0].data.title).toBe('In B');
    expect((await call(`/users/1/collections/${randomKey()}`)).status).toBe(404);
    expect((await call(`/users/1/items/${randomKey()}`)).status).toBe(404);
  });

  it('lists top collections, children, trash, tags, and filters with q, tag and sort', async () => {
    const lib = server.library('users/1');
    const [top] = lib.addCollections([{ name: 'Top' }]);
    lib.addCollections([{ name: 'Child', parentCollection: top }]);
    const [parent] = lib.addItems([
      { title: 'Beta paper', tags: [{ tag: 'ml' }, { tag: 'auto', type: 1 }] },
      { title: 'alpha paper', tags: [{ tag: 'ml' }] },
      { title: 'Trashed', deleted: true },
    ]);
    lib.addItems([{ itemType: 'note', note: '<p>n</p>', parentItem: parent }]);

    expect((await json('/users/1/collections/top')).body.map((c: Loose) => c.data.name)).toEqual(['Top']);
    expect(
      (await json(`/users/1/collections/${top}/collections`)).body.map((c: Loose) => c.data.name),
    ).toEqual(['Child']);
    expect((await json('/users/1/items/top?sort=title')).body.map((i: Loose) => i.data.title)).toEqual([
      'alpha paper',
      'Beta paper',
    ]);
    expect((await json('/users/1/items/trash')).body.map((i: Loose) => i.data.title)).toEqual(['Trashed']);
    expect((await json('/users/1/items')).body).toHaveLength(3);
    expect((await json('/users/1/items?includeTrashed=1')).body).toHaveLength(4);
    expect((await json(`/users/1/items/${parent}/children`)).body[0].data.itemType).toBe('note');
    expect((await json(`/users/1/items/${parent}`)).body.meta.numChildren).toBe(1);
    expect((await json('/users/1/items?q=ALPHA')).body.map((i: Loose) => i.data.title)).toEqual([
      'alpha paper',
    ]);
    expect((await json('/users/1/items/top?tag=auto || nothing')).body).toHaveLength(1);
    expect((await json('/users/1/items/top?tag=-auto')).body).toHaveLength(1);
    const tags = (await json('/users/1/tags')).body;
    expect(tags.map((t: Loose) => [t.tag, t.meta])).toEqual([
      ['auto', { type: 1, numItems: 1 }],
      ['ml', { type: 0, numItems: 2 }],
    ]);
    expect((await call('/users/1/items?sort=bogus')).status).toBe(400);
  });
});

describe('batch writes', () => {
  it('creates objects with a write token, all at one new version', async () => {
    const before = server.library('users/1').version;
    const { res, body } = await json('/users/1/collections', {
      method: 'POST',
      headers: { 'Zotero-Write-Token': token() },
      body: [{ name: 'One' }, { name: 'Two' }, { name: 'Three' }],
    });
    expect(res.status).toBe(200);
    const version = before + 1;
    expect(res.headers.get('Last-Modified-Version')).toBe(String(version));
    expect(Object.keys(body.success)).toEqual(['0', '1', '2']);
    for (const i of ['0', '1', '2']) {
      expect(body.successful[i].version).toBe(version);
      expect(body.successful[i].key).toMatch(/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/);
      expect(body.successful[i].key).toBe(body.success[i]);
    }
    expect(body).toMatchObject({ unchanged: {}, failed: {} });
    expect(server.library('users/1').collections.size).toBe(3);
  });

  it('refuses a reused write token with 412 for the whole request', async () => {
    const t = token();
    const headers = { 'Zotero-Write-Token': t };
    expect(
      (await call('/users/1/items', { method: 'POST', headers, body: [{ itemType: 'book', title: 'x' }] }))
        .status,
    ).toBe(200);
    const again = await call('/users/1/items', {
      method: 'POST',
      headers,
      body: [{ itemType: 'book', title: 'x' }],
    });
    expect(again.status).toBe(412);
    expect(server.library('users/1').items.size).toBe(1);
  });

  it('refuses more than 50 objects with 413', async () => {
    const body = Array.from({ length: 51 }, (_, i) => ({ name: `c${i}` }));
    expect((await call('/users/1/collections', { method: 'POST', body })).status).toBe(413);
    expect(server.library('users/1').collections.size).toBe(0);
  });

  it('fails a stale object with 412 and an unversioned one with 428, per object', async () => {
    const lib = server.library('users/1');
    const [a, b, c] = lib.addItems([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
    const seeded = lib.version;
    lib.editItem(a!, { title: 'a by someone else' });
    const { res, body } = await json('/users/1/items', {
      method: 'POST',
      body: [
        { key: a, version: seeded, title: 'mine' },
        { key: b, version: seeded, title: 'b2' },
        { key: c, title: 'c2' },
      ],
    });
    expect(res.status).toBe(200);
    expect(body.failed['0']).toMatchObject({ key: a, code: 412 });
    expect(body.success).toEqual({ '1': b });
    expect(body.failed['2']).toMatchObject({ key: c, code: 428 });
    expect(lib.items.get(a!)!.title).toBe('a by someone else');
    expect(lib.items.get(b!)!.version).toBe(lib.version);
  });

  it('checks If-Unmodified-Since-Version against the library for the whole request', async () => {
    const lib = server.library('users/1');
    const [a] = lib.addItems([{ title: 'a' }]);
    const v = lib.version;
    const ok = await json('/users/1/items', {
      method: 'POST',
      headers: { 'If-Unmodified-Since-Version': String(v) },
      body: [{ key: a, title: 'a2' }],
    });
    expect(ok.body.success).toEqual({ '0': a });
    const stale = await call('/users/1/items', {
      method: 'POST',
      headers: { 'If-Unmodified-Since-Version': String(v) },
      body: [{ key: a, title: 'a3' }],
    });
    expect(stale.status).toBe(412);
  });

  it('applies PATCH semantics, replaces arrays whole, and reports unchanged objects', async () => {
    const lib = server.library('users/1');
    const [c1, c2] = lib.addCollections([{ name: 'C1' }, { name: 'C2' }]);
    const [item] = lib.addItems([
      { itemType: 'book', title: 'Book', date: '2020', collections: [c1!], tags: [{ tag: 'x' }] },
    ]);
    const v = lib.items.get(item!)!.version;
    const { body } = await json('/users/1/items', {
      method: 'POST',
      body: [{ key: item, version: v, collections: [c2], tags: [] }],
    });
    expect(body.success).toEqual({ '0': item });
    const stored = lib.items.get(item!)!;
    expect(stored).toMatchObject({
      title: 'Book',
      date: '2020',
      itemType: 'book',
      collections: [c2],
      tags: [],
    });
    expect(body.successful['0'].data.collections).toEqual([c2]);

    const same = await json('/users/1/items', {
      method: 'POST',
      body: [{ key: item, version: stored.version, title: 'Book', collections: [c2] }],
    });
    expect(same.body.unchanged).toEqual({ '0': item });
    expect(same.body.success).toEqual({});
    expect(lib.version).toBe(stored.version);
  });

  it('rejects invalid objects per object: missing parent, cycles, long names, unknown collections', async () => {
    const lib = server.library('users/1');
    const [a] = lib.addCollections([{ name: 'A' }]);
    const [b] = lib.addCollections([{ name: 'B', parentCollection: a }]);
    const missing = randomKey();
    const { body } = await json('/users/1/collections', {
      method: 'POST',
      body: [
        { name: 'orphan', parentCollection: missing },
        { key: a, version: lib.version, parentCollection: b },
        { name: 'x'.repeat(256) },
        {},
        { name: 'fine' },
      ],
    });
    expect(body.failed['0']).toEqual({
      key: '',
      code: 409,
      message: `Parent collection ${missing} not found`,
    });
    expect(body.failed['1']).toMatchObject({ key: a, code: 409 });
    expect(body.failed['2']).toMatchObject({ code: 413 });
    expect(body.failed['3']).toMatchObject({ code: 400 });
    expect(Object.keys(body.success)).toEqual(['4']);

    const items = await json('/users/1/items', {
      method: 'POST',
      body: [{ itemType: 'book', collections: [missing] }],
    });
    expect(items.body.failed['0']).toMatchObject({ code: 409 });
  });
});

describe('single-object writes and deletes', () => {
  it('PATCHes one object: 204 with the new version, 412 when stale, 428 without a version', async () => {
    const lib = server.library('users/1');
    const [item] = lib.addItems([{ title: 'old', itemType: 'book' }]);
    const v = lib.items.get(item!)!.version;
    const ok = await call(`/users/1/items/${item}`, {
      method: 'PATCH',
      headers: { 'If-Unmodified-Since-Version': String(v) },
      body: { title: 'new' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('Last-Modified-Version')).toBe(String(lib.version));
    expect(lib.items.get(item!)).toMatchObject({ title: 'new', itemType: 'book', version: lib.version });

    const stale = await call(`/users/1/items/${item}`, {
      method: 'PATCH',
      headers: { 'If-Unmodified-Since-Version': String(v) },
      body: { title: 'newer' },
    });
    expect(stale.status).toBe(412);
    expect((await call(`/users/1/items/${item}`, { method: 'PATCH', body: { title: 'x' } })).status).toBe(
      428,
    );
    // PUT replaces: fields not sent are gone.
    const put = await call(`/users/1/items/${item}`, {
      method: 'PUT',
      body: { itemType: 'book', version: lib.version },
    });
    expect(put.status).toBe(204);
    expect(lib.items.get(item!)!.title).toBeUndefined();
  });

  it('cascades a collection delete, strips membership, and records deletions', async () => {
    const lib = server.library('users/1');
    const [root, keep] = lib.addCollections([{ name: 'Root' }, { name: 'Keep' }]);
    const [child] = lib.addCollections([{ name: 'Child', parentCollection: root }]);
    const [grandchild] = lib.addCollections([{ name: 'Grandchild', parentCollection: child }]);
    const [inChild, inKeep] = lib.addItems([
      { title: 'in child', collections: [grandchild!, keep!] },
      { title: 'in keep', collections: [keep!] },
    ]);
    const before = lib.version;
    const keepItemVersion = lib.items.get(inKeep!)!.version;

    const res = await call(`/users/1/collections?collectionKey=${root}`, {
      method: 'DELETE',
      headers: { 'If-Unmodified-Since-Version': String(before) },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('Last-Modified-Version')).toBe(String(before + 1));
    expect([...lib.collections.keys()]).toEqual([keep]);
    expect(lib.items.get(inChild!)).toMatchObject({ collections: [keep], version: before + 1 });
    expect(lib.items.get(inKeep!)!.version).toBe(keepItemVersion);

    const { body } = await json(`/users/1/deleted?since=${before}`);
    expect(body.collections.sort()).toEqual([root, child, grandchild].sort());
    expect(body).toMatchObject({ items: [], searches: [], tags: [], settings: [] });
    expect((await json(`/users/1/items?format=versions&since=${before}`)).body).toEqual({
      [inChild!]: before + 1,
    });
    expect((await call('/users/1/deleted')).status).toBe(400);
  });

  it('requires If-Unmodified-Since-Version for deletes: 428 missing, 412 stale', async () => {
    const lib = server.library('users/1');
    const [a] = lib.addCollections([{ name: 'A' }]);
    const [item] = lib.addItems([{ title: 't', tags: [{ tag: 'gone' }] }]);
    expect((await call(`/users/1/collections?collectionKey=${a}`, { method: 'DELETE' })).status).toBe(428);
    expect((await call(`/users/1/collections/${a}`, { method: 'DELETE' })).status).toBe(428);
    const stale = await call(`/users/1/items?itemKey=${item}`, {
      method: 'DELETE',
      headers: { 'If-Unmodified-Since-Version': '0' },
    });
    expect(stale.status).toBe(412);
    const single = await call(`/users/1/collections/${a}`, {
      method: 'DELETE',
      headers: { 'If-Unmodified-Since-Version': String(lib.collections.get(a!)!.version) },
    });
    expect(single.status).toBe(204);
    const tags = await call(`/users/1/tags?tag=${encodeURIComponent('gone || other')}`, {
      method: 'DELETE',
      headers: { 'If-Unmodified-Since-Version': String(lib.version) },
    });
    expect(tags.status).toBe(204);
    expect(lib.items.get(item!)!.tags).toEqual([]);
    expect(lib.deletedLog.map((d) => [d.kind, d.key])).toEqual([
      ['collections', a],
      ['tags', 'gone'],
    ]);
  });
});

describe('faults', () => {
  it('rate-limits the next matching requests with Retry-After, then serves normally', async () => {
    server.faults.rateLimit({ retryAfter: 3, times: 2, match: { path: '/items' } });
    expect((await call('/users/1/collections')).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await call('/users/1/items');
      expect(res.status).toBe(429);
      expect(res.headers.get('Retry-After')).toBe('3');
    }
    expect((await call('/users/1/items')).status).toBe(200);
    server.faults.rateLimit({ status: 503 });
    const unavailable = await call('/users/1/items');
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('Retry-After')).toBeNull();
    expect(server.log.map((e) => [e.status, e.fault])).toEqual([
      [200, undefined],
      [429, 'rateLimit'],
      [429, 'rateLimit'],
      [200, undefined],
      [503, 'rateLimit'],
    ]);
  });

  it('adds Backoff to a normal answer', async () => {
    server.faults.backoff({ seconds: 5 });
    const res = await call('/users/1/items');
    expect(res.status).toBe(200);
    expect(res.headers.get('Backoff')).toBe('5');
    expect((await call('/users/1/items')).headers.get('Backoff')).toBeNull();
  });

  it('resets the connection without an answer and logs status 0', async () => {
    server.faults.reset({ match: { method: 'GET' } });
    const error = await call('/users/1/items').catch((e: unknown) => e);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNRESET');
    expect((await call('/users/1/items')).status).toBe(200);
    expect(server.log[0]).toMatchObject({ status: 0, fault: 'reset' });
  });

  it('delays answers and answers arbitrary statuses', async () => {
    server.faults.slow({ ms: 120 });
    const t0 = Date.now();
    expect((await call('/users/1/items')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    server.faults.status({ status: 500, body: 'boom', match: { path: /collections/ } });
    const res = await call('/users/1/collections');
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('boom');
  });

  it('simulates another client writing between read and write', async () => {
    const lib = server.library('users/1');
    const [item] = lib.addItems([{ title: 'shared' }]);
    const read = (await json(`/users/1/items/${item}`)).body;
    server.faults.concurrentEdit({
      match: { method: 'POST', path: '/users/1/items' },
      apply: (s) => s.library('users/1').editItem(item!, { title: 'theirs' }),
    });
    const { body } = await json('/users/1/items', {
      method: 'POST',
      body: [{ key: item, version: read.version, title: 'mine' }],
    });
    expect(body.failed['0'].code).toBe(412);
    expect(lib.items.get(item!)!.title).toBe('theirs');
  });

  it('can ignore start like a broken compatible server', async () => {
    const lib = server.library('users/1');
    lib.addItems(Array.from({ length: 30 }, (_, i) => ({ title: `T${i}` })));
    server.faults.ignoreStart(true);
    const first = (await json('/users/1/items?limit=10')).body.map((i: Loose) => i.key);
    const second = (await json('/users/1/items?limit=10&start=10')).body.map((i: Loose) => i.key);
    expect(second).toEqual(first);
    server.faults.clear();
    expect((await json('/users/1/items?limit=10&start=10')).body.map((i: Loose) => i.key)).not.toEqual(first);
  });
});

describe('request log', () => {
  it('records method, path, query, headers, status, timing and body', async () => {
    await call('/users/1/collections?limit=5&tag=a&tag=b');
    await call('/users/1/collections', { method: 'POST', body: [{ name: 'N' }] });
    const [get, post] = server.log;
    expect(get).toMatchObject({
      method: 'GET',
      path: '/users/1/collections',
      query: { limit: '5', tag: ['a', 'b'] },
      status: 200,
    });
    expect(get!.headers['zotero-api-key']).toBe(OWNER_KEY);
    expect(get!.endedAt).toBeGreaterThanOrEqual(get!.startedAt);
    expect(post).toMatchObject({ method: 'POST', status: 200, body: [{ name: 'N' }] });
    server.clearLog();
    expect(server.log).toHaveLength(0);
  });

  it('tracks the highest number of requests in flight', async () => {
    server.setLatency(80);
    await Promise.all(Array.from({ length: 6 }, () => call('/users/1/items')));
    expect(server.maxInFlight()).toBe(6);
    server.clearLog();
    expect(server.maxInFlight()).toBe(0);
    for (let i = 0; i < 3; i++) await call('/users/1/items');
    expect(server.maxInFlight()).toBe(1);
  });

  it('can log the in-flight count per request', async () => {
    const s = await startZoteroServer({ maxConcurrentLog: true, latencyMs: 50 });
    try {
      await Promise.all([fetch(`${s.url}/keys/current`), fetch(`${s.url}/keys/current`)]);
      expect(s.log.map((e) => e.inFlight).sort()).toEqual([1, 2]);
    } finally {
      await s.close();
    }
  });
});

describe('seeding', () => {
  it('bumps the version once per seed call and validates seeds', () => {
    const lib = server.library('groups/5');
    const keys = lib.addCollections([{ name: 'a' }, { name: 'b' }]);
    expect(lib.version).toBe(1);
    expect(keys.every((k) => /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/.test(k))).toBe(true);
    expect(() => lib.addItems([{ title: 'x', collections: [randomKey()] }])).toThrow(/doesn't exist/);
    expect(() => lib.addCollections([{ name: 'y', parentCollection: randomKey() }])).toThrow(/not found/);
    expect(lib.version).toBe(1);
  });
});
