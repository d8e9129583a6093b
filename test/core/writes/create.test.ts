/**
 * createObjects: client-generated keys and write tokens, decided once per logical request, and
 * "did it land?" answered by reading the keys back. The attacks: an answer lost after the
 * server applied the request (a real proxy drops it), a retry of the whole request with the
 * same seed, and per-object refusals mixed with landed objects.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createObjects } from '../../../src/core/writes/create.js';
import { freshWriteIds, writeIdsFrom } from '../../../src/core/writes/ids.js';
import { createZoteroClient } from '../../../src/core/zotero/index.js';
import { startDroppingProxy, type DroppingProxy } from '../../support/dropping-proxy.js';
import { API_KEY, caught, LIB, setup, type Harness } from '../zotero/helpers.js';

let h: Harness;
let proxy: DroppingProxy;
beforeEach(async () => {
  h = await setup();
  proxy = await startDroppingProxy(h.server.url);
});
afterEach(async () => {
  await proxy.close();
  await h.close();
});

const posts = (): typeof h.server.log => h.server.log.filter((e) => e.method === 'POST');
const titled = (title: string) => [...h.server.library(LIB).items.values()].filter((i) => i.title === title);
/** A client that reaches the server through the dropping proxy. */
const proxied = () =>
  createZoteroClient({ apiUrl: proxy.url, apiKey: API_KEY, clock: h.clock, random: () => 0.5 });
const books = (n: number, prefix = 'Book') =>
  Array.from({ length: n }, (_, i) => ({ itemType: 'book', title: `${prefix} ${i}` }));
const labels = (n: number) => Array.from({ length: n }, (_, i) => `item/${i}`);

describe('createObjects', () => {
  it('creates 120 objects in 3 POSTs, each with its client key and a write token; indexes map back', async () => {
    const objects: Array<Record<string, unknown>> = books(120);
    objects[75] = { itemType: 'book', title: 'Bad', tags: 'not-an-array' };
    const result = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects,
      labels: labels(120),
      ids: freshWriteIds(),
    });
    expect(posts().map((e) => (e.body as unknown[]).length)).toEqual([50, 50, 20]);
    const tokens = posts().map((e) => e.headers['zotero-write-token']);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(tokens).size).toBe(3);
    for (const post of posts()) {
      for (const object of post.body as Array<{ key?: string }>)
        expect(object.key).toMatch(/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/);
    }
    expect(result.successful).toHaveLength(119);
    for (const s of result.successful)
      expect(h.server.library(LIB).items.get(s.key)?.title).toBe(`Book ${s.index}`);
    expect(result.failed).toEqual([
      expect.objectContaining({ index: 75, code: 400, reason: 'validation_error' }),
    ]);
    expect(result.libraryVersion).toBe(h.server.library(LIB).version);
  });

  it('an answer lost after the server applied it: the resend finds the token used, reads back, reports the one copy', async () => {
    proxy.drop({ method: 'POST' });
    const ids = freshWriteIds();
    const result = await createObjects(proxied(), {
      library: LIB,
      kind: 'items',
      objects: [{ itemType: 'book', title: 'Once' }],
      labels: ['item/0'],
      ids,
    });
    expect(proxy.dropped).toEqual([`POST /${LIB}/items`]);
    expect(titled('Once')).toHaveLength(1);
    expect(result.successful).toEqual([expect.objectContaining({ index: 0, key: titled('Once')[0]?.key })]);
    expect(result.failed).toEqual([]);
    // Both POSTs carried the same token and the same key; then one read by key.
    const [first, second] = posts();
    expect(second?.headers['zotero-write-token']).toBe(first?.headers['zotero-write-token']);
    expect((second?.body as Array<{ key: string }>)[0]?.key).toBe(
      (first?.body as Array<{ key: string }>)[0]?.key,
    );
    expect(h.server.log.map((e) => e.method)).toEqual(['POST', 'POST', 'GET']);
  });

  it('a whole retry of the same request (same seed) creates nothing twice and answers the same keys', async () => {
    const seed = 'a'.repeat(32);
    const first = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: books(60),
      labels: labels(60),
      ids: writeIdsFrom(seed, false),
    });
    h.server.clearLog();
    const again = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: books(60),
      labels: labels(60),
      ids: writeIdsFrom(seed, true),
    });
    expect(again.successful.map((s) => s.key)).toEqual(first.successful.map((s) => s.key));
    expect(h.server.library(LIB).items.size).toBe(60);
    // Resumed: the keys are read first (2 GETs for 60 keys) and nothing is sent.
    expect(h.server.log.map((e) => e.method)).toEqual(['GET', 'GET']);
  });

  it('a retry without the read-first (not known as resumed) still lands nothing twice: existing keys are read back', async () => {
    const seed = 'b'.repeat(32);
    await createObjects(h.client, {
      library: LIB,
      kind: 'collections',
      objects: [{ name: 'Twice?' }],
      labels: ['collection'],
      ids: writeIdsFrom(seed, false),
    });
    const again = await createObjects(h.client, {
      library: LIB,
      kind: 'collections',
      objects: [{ name: 'Twice?' }],
      labels: ['collection'],
      ids: writeIdsFrom(seed, false),
    });
    const named = [...h.server.library(LIB).collections.values()].filter((c) => c.name === 'Twice?');
    expect(named).toHaveLength(1);
    expect(again.successful.map((s) => s.key)).toEqual([named[0]?.key]);
    expect(again.failed).toEqual([]);
  });

  it('a token spent by an attempt whose objects all failed: read back, then sent again with a new token', async () => {
    const seed = 'c'.repeat(32);
    const bad = [{ itemType: 'book', title: 'Needs a collection', collections: ['ZZZZ2345'] }];
    const first = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: bad,
      labels: ['item/0'],
      ids: writeIdsFrom(seed, false),
    });
    expect(first.failed).toEqual([expect.objectContaining({ index: 0, code: 409 })]);
    h.server.library(LIB).addCollections([{ key: 'ZZZZ2345', name: 'Now there' }]);
    h.server.clearLog();
    const retry = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: bad,
      labels: ['item/0'],
      ids: writeIdsFrom(seed, true),
    });
    expect(retry.successful).toHaveLength(1);
    expect(titled('Needs a collection')).toHaveLength(1);
    // Read first (missing), the same first token (used: 412), read back (still missing), a new token.
    expect(h.server.log.map((e) => [e.method, e.status])).toEqual([
      ['GET', 200],
      ['POST', 412],
      ['GET', 200],
      ['POST', 200],
    ]);
  });

  it('a lost answer on the second chunk: the first chunk stands, the second is settled by reading back', async () => {
    proxy.drop({ method: 'POST', times: 3 });
    const client = proxied();
    // The first POST's answer is lost too; all resends of chunk 1 answer 412 and are read back.
    const result = await createObjects(client, {
      library: LIB,
      kind: 'items',
      objects: books(70, 'Chunked'),
      labels: labels(70),
      ids: freshWriteIds(),
    });
    expect(result.failed).toEqual([]);
    expect(result.successful).toHaveLength(70);
    expect(h.server.library(LIB).items.size).toBe(70);
  });

  it('the first request refused as a whole (413) is the call’s error, and nothing was created', async () => {
    h.server.faults.status({
      status: 413,
      body: "Collection name 'xxxxx…' too long",
      match: { method: 'POST' },
    });
    const error = await caught(
      createObjects(h.client, {
        library: LIB,
        kind: 'collections',
        objects: [{ name: 'x' }],
        labels: ['collection'],
        ids: freshWriteIds(),
      }),
    );
    expect(error.code).toBe('validation_error');
    expect(error.status).toBe(413);
    expect(h.server.library(LIB).collections.size).toBe(0);
  });
});
