import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, caught, LIB, setup, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await setup();
});
afterEach(async () => {
  await h.close();
});

const posts = (): typeof h.server.log => h.server.log.filter((e) => e.method === 'POST');

describe('getByKeys', () => {
  it('reads 120 keys in 3 requests, in input order, reporting missing keys', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems(Array.from({ length: 118 }, (_, i) => ({ title: `T${i}` })));
    const missing = ['ZZZZZZZZ', 'YYYYYYYY'];
    const wanted = [...keys.slice(60), 'ZZZZZZZZ', ...keys.slice(0, 60), 'YYYYYYYY'];
    const result = await h.client.getByKeys(LIB, 'items', wanted);
    expect(h.server.log).toHaveLength(3);
    const sizes = h.server.log.map((e) => String(e.query.itemKey).split(',').length);
    expect(sizes).toEqual([50, 50, 20]);
    expect(result.objects.map((o) => o.key)).toEqual(wanted.filter((k) => !missing.includes(k)));
    expect(result.missing).toEqual(missing);
    expect(result.byKey.get(keys[0] as string)?.data.title).toBe('T0');
    expect(result.libraryVersion).toBe(lib.version);
  });

  it('reads collections by collectionKey', async () => {
    const keys = h.server.library(LIB).addCollections([{ name: 'A' }, { name: 'B' }]);
    const result = await h.client.getByKeys(LIB, 'collections', [keys[1] as string, keys[0] as string]);
    expect(result.objects.map((o) => o.data.name)).toEqual(['B', 'A']);
    expect(h.server.log[0]?.query.collectionKey).toBe(`${keys[1]},${keys[0]}`);
  });
});

describe('writeBatch', () => {
  it('updates with each object version and reports unchanged objects at their index', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
    const v = lib.version;
    const result = await h.client.writeBatch(LIB, 'items', [
      { key: keys[0], version: v, title: 'A' },
      { key: keys[1], version: v, title: 'b' },
      { key: keys[2], version: v - 1, title: 'C' },
    ]);
    expect(posts()[0]?.headers['zotero-write-token']).toBeUndefined();
    expect(result.successful.map((s) => [s.index, s.key])).toEqual([[0, keys[0]]]);
    expect(result.unchanged).toEqual([{ index: 1, key: keys[1] }]);
    expect(result.failed).toEqual([
      expect.objectContaining({ index: 2, key: keys[2], code: 412, reason: 'conflict' }),
    ]);
  });

  it('carries the library version from chunk to chunk with If-Unmodified-Since-Version', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addCollections(Array.from({ length: 60 }, (_, i) => ({ name: `c${i}` })));
    const result = await h.client.writeBatch(
      LIB,
      'collections',
      keys.map((key, i) => ({ key, name: `renamed ${i}` })),
      { ifUnmodifiedSinceVersion: lib.version },
    );
    expect(result.successful).toHaveLength(60);
    const preconditions = posts().map((e) => Number(e.headers['if-unmodified-since-version']));
    expect(preconditions[1]).toBeGreaterThan(preconditions[0] as number);
    expect(result.libraryVersion).toBe(lib.version);
  });

  it('never resends an update without a write token after a reset', async () => {
    const lib = h.server.library(LIB);
    const [key] = lib.addItems([{ title: 'x' }]);
    h.server.faults.reset({ match: { method: 'POST' } });
    const error = await caught(
      h.client.writeBatch(LIB, 'items', [{ key, version: lib.version, title: 'y' }]),
    );
    expect(error.code).toBe('network_error');
    expect(posts()).toHaveLength(1);
  });

  it('refuses an object without a key: every create goes through createObjects', async () => {
    const error = await caught(h.client.writeBatch(LIB, 'items', [{ itemType: 'book', title: 'x' }]));
    expect(error.code).toBe('internal_error');
    expect(error.message).toMatch(/createObjects/);
    expect(h.server.log).toHaveLength(0);
  });

  it('throws when the first chunk fails as a whole (413)', async () => {
    h.server.faults.status({
      status: 413,
      body: "Collection name 'xxxxx…' too long",
      match: { method: 'POST' },
    });
    const error = await caught(h.client.writeBatch(LIB, 'collections', [{ key: 'ABCD2345', name: 'x' }]));
    expect(error.code).toBe('validation_error');
    expect(error.status).toBe(413);
  });

  it('reports later chunks that fail as a whole per object, keeping what landed', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addCollections(Array.from({ length: 60 }, (_, i) => ({ name: `c${i}` })));
    let n = 0;
    const client = h.makeClient({
      fetch: async (url, init) => {
        // Updates carry no write token: a refused connection on chunk 2 is not resent.
        if (init.method === 'POST' && ++n === 2)
          throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
        return fetch(url, init);
      },
    });
    const objects = keys.map((key, i) => ({ key, version: lib.version, name: `renamed ${i}` }));
    const result = await client.writeBatch(LIB, 'collections', objects);
    expect(result.successful).toHaveLength(50);
    expect(result.failed).toHaveLength(10);
    expect(result.failed[0]).toMatchObject({ index: 50, key: keys[50], code: 0, reason: 'network_error' });
    expect(result.failed[0]?.message).toMatch(/ECONNREFUSED/);
    expect(result.failed[0]?.message).not.toContain(API_KEY);
  });
});

describe('patch and deleteBatch', () => {
  it('patches one object with its version, and a stale version is a retryable conflict', async () => {
    const lib = h.server.library(LIB);
    const [key] = lib.addItems([{ title: 'old' }]);
    const before = lib.items.get(key as string)?.version as number;
    const { version } = await h.client.patch(LIB, 'items', key as string, { title: 'new' }, before);
    expect(version).toBe(lib.version);
    expect(lib.items.get(key as string)?.title).toBe('new');
    expect(h.server.log[0]).toMatchObject({ method: 'PATCH', path: `/${LIB}/items/${key}` });
    expect(h.server.log[0]?.headers['if-unmodified-since-version']).toBe(String(before));

    const error = await caught(h.client.patch(LIB, 'items', key as string, { title: 'again' }, before));
    expect(error.code).toBe('conflict');
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(412);
  });

  it('deletes 120 collections in 3 DELETEs of 50 with the library version', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addCollections(Array.from({ length: 120 }, (_, i) => ({ name: `c${i}` })));
    const result = await h.client.deleteBatch(LIB, 'collections', keys, { libraryVersion: lib.version });
    const deletes = h.server.log.filter((e) => e.method === 'DELETE');
    expect(h.server.log).toHaveLength(3);
    expect(deletes.map((e) => String(e.query.collectionKey).split(',').length)).toEqual([50, 50, 20]);
    for (const e of deletes) expect(e.headers['if-unmodified-since-version']).toMatch(/^\d+$/);
    expect(result.deleted).toHaveLength(120);
    expect(lib.collections.size).toBe(0);
    expect(result.libraryVersion).toBe(lib.version);
  });

  it('looks the library version up when not given, and again after a concurrent write', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems([{ title: 'a' }, { title: 'b' }]);
    h.server.faults.concurrentEdit({
      match: { method: 'DELETE' },
      apply: (server) => server.library(LIB).addCollections([{ name: 'meanwhile' }]),
    });
    const result = await h.client.deleteBatch(LIB, 'items', keys);
    expect(result.deleted).toEqual(keys);
    expect(lib.items.size).toBe(0);
    expect(h.server.log.map((e) => `${e.method} ${e.status}`)).toEqual([
      'GET 200',
      'DELETE 412',
      'GET 200',
      'DELETE 204',
    ]);
  });

  it('refuses a stale library version given by the caller with a conflict', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems([{ title: 'a' }]);
    const error = await caught(h.client.deleteBatch(LIB, 'items', keys, { libraryVersion: lib.version - 1 }));
    expect(error.code).toBe('conflict');
    expect(lib.items.size).toBe(1);
  });
});

describe('getKeyInfo', () => {
  it('returns the key owner and access, without the key', async () => {
    const info = await h.client.getKeyInfo();
    expect(info).toEqual({
      userID: 1,
      username: 'alice',
      displayName: 'alice',
      access: expect.objectContaining({ user: expect.objectContaining({ library: true, write: true }) }),
    });
    expect(JSON.stringify(info)).not.toContain(API_KEY);
    expect(h.server.log[0]?.path).toBe('/keys/current');
  });

  it('is auth_missing without a key, with no request sent', async () => {
    const client = h.makeClient({ apiKey: undefined });
    const error = await caught(client.getKeyInfo());
    expect(error.code).toBe('auth_missing');
    expect(h.server.log).toHaveLength(0);
  });
});
