/**
 * Batch writes with concurrent chunks (issue 24, point 4): the chunks of one batch go at once
 * within the client's 4 requests in flight, a chunk naming a parent in an earlier chunk waits
 * for it, a library version precondition keeps them one after another, and Zotero's 409
 * "library locked" is waited out and retried by the HTTP layer within the call's retry budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applySetChange } from '../../../src/core/writes/engine.js';
import type { Clock } from '../../../src/core/zotero/index.js';
import { LIBRARY_LOCKED, randomKey, type RequestLogEntry } from '../../support/zotero-server/index.js';
import { caught, LIB, setup, type Harness } from './helpers.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const posts = (): RequestLogEntry[] => h.server.log.filter((e) => e.method === 'POST');
/** Most POSTs in flight at once, as the server saw them (each entry counts those in flight on arrival). */
const maxPostsInFlight = (): number => {
  const list = posts();
  return Math.max(
    0,
    ...list.map((e) => list.filter((o) => o.startedAt <= e.startedAt && o.endedAt > e.startedAt).length),
  );
};
const bodyKeys = (e: RequestLogEntry): string[] => (e.body as Array<{ key: string }>).map((o) => o.key);

/** Real waits, 25 times shorter than asked: the jitter spreads retries as it would, quickly. */
function quickClock(): Clock {
  let skew = 0;
  return {
    now: () => Date.now() + skew,
    sleep: (ms) =>
      new Promise((resolve) =>
        setTimeout(() => {
          skew += ms - ms / 25;
          resolve();
        }, ms / 25),
      ),
  };
}

describe('writeBatch: concurrent chunks', () => {
  it('adds 500 items to a collection in 2·⌈500/50⌉ requests, its 10 POSTs several at a time and never more than 4', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const [target] = lib.addCollections([{ name: 'Target' }]);
    const keys = lib.addItems(Array.from({ length: 500 }, (_, i) => ({ title: `T${i}` })));
    const [outside] = lib.addItems([{ title: 'not in the batch' }]);
    const before = lib.version;
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: (data) => ({ ...data, collections: [...(data.collections as string[]), target] }),
    });
    expect(h.server.log).toHaveLength(20);
    expect(h.server.log.filter((e) => e.method === 'GET')).toHaveLength(10);
    expect(posts()).toHaveLength(10);
    expect(posts().every((e) => e.status === 200)).toBe(true);
    expect(maxPostsInFlight()).toBeGreaterThan(1);
    expect(h.server.maxInFlight()).toBeLessThanOrEqual(4);
    expect(result.succeeded).toEqual(keys);
    expect(result.failed).toEqual([]);
    for (const key of keys) expect(lib.items.get(key)?.collections).toEqual([target]);
    expect(lib.items.get(outside as string)?.collections).toEqual([]);
    // One library version per POST, whatever order they landed in.
    expect(lib.version).toBe(before + 10);
    expect(result.libraryVersion).toBe(lib.version);
  });

  it('sends a chunk of children only once the chunk with their parents has answered; the rest go meanwhile', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const parents = Array.from({ length: 50 }, (_, i) => ({
      key: randomKey(),
      itemType: 'book',
      title: `Parent ${i}`,
    }));
    const children = parents.map((p, i) => ({
      key: randomKey(),
      itemType: 'note',
      note: `<p>Note ${i}</p>`,
      parentItem: p.key,
    }));
    const others = Array.from({ length: 100 }, (_, i) => ({
      key: randomKey(),
      itemType: 'book',
      title: `Other ${i}`,
    }));
    // Chunks: 0 parents, 1 and 2 independent books, 3 the children of chunk 0.
    const objects = [...parents, ...others, ...children];
    const result = await h.client.writeBatch(LIB, 'items', objects);
    expect(result.failed).toEqual([]);
    expect(result.successful.map((s) => s.index)).toEqual(objects.map((_, i) => i));
    expect(posts()).toHaveLength(4);
    const parentPost = posts().find((e) => bodyKeys(e).includes(parents[0]?.key as string));
    const childPost = posts().find((e) => bodyKeys(e).includes(children[0]?.key as string));
    expect(childPost?.startedAt).toBeGreaterThanOrEqual(parentPost?.endedAt as number);
    // The independent chunks did not wait: they were in flight with the parents' chunk (at least
    // two at once: a loaded machine may not let the server see all three overlap).
    expect(maxPostsInFlight()).toBeGreaterThanOrEqual(2);
    expect(h.server.maxInFlight()).toBeLessThanOrEqual(4);
    for (const c of children) expect(lib.items.get(c.key)?.parentItem).toBe(c.parentItem);
    expect(lib.items.size).toBe(200);
  });

  it('waits for the chunk holding a parent collection before sending its subcollections', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const tops = Array.from({ length: 60 }, (_, i) => ({ key: randomKey(), name: `Top ${i}` }));
    // Chunk 1 holds tops 50..59 and the first 40 subcollections, of tops 0..39 (chunk 0).
    const subs = tops.map((t, i) => ({ key: randomKey(), name: `Sub ${i}`, parentCollection: t.key }));
    const result = await h.client.writeBatch(LIB, 'collections', [...tops, ...subs]);
    expect(result.failed).toEqual([]);
    expect(result.successful).toHaveLength(120);
    expect(posts()).toHaveLength(3);
    const [first, second, third] = posts();
    expect(second?.startedAt).toBeGreaterThanOrEqual(first?.endedAt as number);
    expect(third?.startedAt).toBeGreaterThanOrEqual(second?.endedAt as number);
    for (const s of subs) expect(lib.collections.get(s.key)?.parentCollection).toBe(s.parentCollection);
  });

  it('keeps chunks one after another under a library version precondition', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const keys = lib.addCollections(Array.from({ length: 200 }, (_, i) => ({ name: `c${i}` })));
    const result = await h.client.writeBatch(
      LIB,
      'collections',
      keys.map((key, i) => ({ key, name: `renamed ${i}` })),
      { ifUnmodifiedSinceVersion: lib.version },
    );
    expect(result.successful).toHaveLength(200);
    expect(posts()).toHaveLength(4);
    expect(maxPostsInFlight()).toBe(1);
    const preconditions = posts().map((e) => Number(e.headers['if-unmodified-since-version']));
    expect(preconditions).toEqual([0, 1, 2, 3].map((n) => (preconditions[0] as number) + n));
  });

  it('after a chunk fails as a whole, sends no chunk that had not started, and reports exactly what did not land', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const keys = lib.addItems(Array.from({ length: 500 }, (_, i) => ({ title: `T${i}` })));
    h.server.faults.status({ status: 413, body: 'Request too large', match: { method: 'POST' } });
    const objects = keys.map((key) => ({ key, version: lib.version, title: `new ${key}` }));
    const result = await h.client.writeBatch(LIB, 'items', objects);
    const sent = posts();
    // The first four went at once; the 413 came back before the slots freed for the rest.
    expect(sent.length).toBeLessThan(10);
    expect(sent.filter((e) => e.status === 413)).toHaveLength(1);
    const landed = new Set(sent.filter((e) => e.status === 200).flatMap(bodyKeys));
    expect(result.successful.map((s) => s.key)).toEqual(keys.filter((k) => landed.has(k)));
    expect(result.failed.map((f) => f.key)).toEqual(keys.filter((k) => !landed.has(k)));
    expect(result.failed.every((f) => f.code === 413 && f.reason === 'validation_error')).toBe(true);
    for (const [i, key] of keys.entries())
      expect(lib.items.get(key)?.title).toBe(landed.has(key) ? `new ${key}` : `T${i}`);
  });

  it('when no chunk was answered, throws the failure whose chunk may have landed rather than a refusal', async () => {
    h = await setup({}, { latencyMs: 20 });
    const lib = h.server.library(LIB);
    const keys = lib.addItems(Array.from({ length: 100 }, (_, i) => ({ title: `T${i}` })));
    h.server.faults.status({ status: 413, body: 'Request too large', match: { method: 'POST' } });
    h.server.faults.reset({ match: { method: 'POST' } });
    const objects = keys.map((key) => ({ key, version: lib.version, title: 'new' }));
    const error = await caught(h.client.writeBatch(LIB, 'items', objects));
    expect(
      posts()
        .map((e) => e.status)
        .sort(),
    ).toEqual([0, 413]);
    // The reset chunk's answer was lost: the caller must read before it says what failed.
    expect(error.code).toBe('network_error');
  });
});

describe("writeBatch: Zotero's 409 library locked", () => {
  it('waits out the locks of its own concurrent chunks and lands every object exactly once', async () => {
    h = await setup({}, { latencyMs: 20 });
    const client = h.makeClient({ clock: quickClock(), random: Math.random });
    const lib = h.server.library(LIB);
    const keys = lib.addItems(Array.from({ length: 500 }, (_, i) => ({ title: `T${i}` })));
    const before = lib.version;
    h.server.faults.lock({ times: Number.POSITIVE_INFINITY });
    const objects = keys.map((key) => ({ key, version: before, title: `new ${key}` }));
    const result = await client.writeBatch(LIB, 'items', objects);
    const locked = posts().filter((e) => e.status === 409);
    expect(locked.length).toBeGreaterThan(0);
    expect(locked.every((e) => e.fault === 'lock')).toBe(true);
    expect(posts()).toHaveLength(10 + locked.length);
    const applied = posts().filter((e) => e.status === 200);
    expect(applied).toHaveLength(10);
    // Each object was applied by exactly one request: none twice, none lost.
    expect(applied.flatMap(bodyKeys).sort()).toEqual([...keys].sort());
    expect(result.successful.map((s) => s.key)).toEqual(keys);
    expect(result.failed).toEqual([]);
    expect(lib.version).toBe(before + 10);
    for (const key of keys) expect(lib.items.get(key)?.title).toBe(`new ${key}`);
  });

  it('retries a locked create with its write token, and the create lands once', async () => {
    h = await setup({}, { latencyMs: 20 });
    const client = h.makeClient({ clock: quickClock(), random: Math.random });
    h.server.faults.lock({ times: Number.POSITIVE_INFINITY });
    const creates = [0, 1, 2].map((n) =>
      client.writeBatch(LIB, 'items', [{ key: randomKey(), itemType: 'book', title: `B${n}` }], {
        writeToken: `${'a'.repeat(31)}${n}`,
      }),
    );
    const results = await Promise.all(creates);
    expect(results.every((r) => r.successful.length === 1 && r.failed.length === 0)).toBe(true);
    const locked = posts().filter((e) => e.status === 409);
    expect(locked.length).toBeGreaterThan(0);
    expect(posts()).toHaveLength(3 + locked.length);
    expect(h.server.library(LIB).items.size).toBe(3);
  });

  it('gives up when the lock outlasts the retry budget: what did not land fails as a retryable conflict', async () => {
    h = await setup();
    const lib = h.server.library(LIB);
    const parents = Array.from({ length: 50 }, (_, i) => ({
      key: randomKey(),
      itemType: 'book',
      title: `P${i}`,
    }));
    const children = parents
      .slice(0, 10)
      .map((p) => ({ key: randomKey(), itemType: 'note', note: 'n', parentItem: p.key }));
    // The parents' chunk lands; from then on the library stays locked by someone else.
    h.server.faults.concurrentEdit({
      match: { method: 'POST' },
      apply: (s) =>
        s.faults.status({ status: 409, body: LIBRARY_LOCKED, times: 100, match: { method: 'POST' } }),
    });
    const result = await h.client.writeBatch(LIB, 'items', [...parents, ...children]);
    // Backoff of 750, 1500, 3000, 6000, 12000, 24000 ms (jitter 0.5): the next 24000 would pass 60 s.
    expect(h.clock.sleeps).toEqual([750, 1500, 3000, 6000, 12000, 24000]);
    expect(posts()).toHaveLength(1 + 7);
    expect(result.successful.map((s) => s.index)).toEqual(parents.map((_, i) => i));
    expect(result.failed.map((f) => f.key)).toEqual(children.map((c) => c.key));
    for (const f of result.failed) {
      expect(f).toMatchObject({ code: 409, reason: 'conflict', retryable: true });
      expect(f.message).toBe(`The Zotero API answered HTTP 409 to POST /${LIB}/items: ${LIBRARY_LOCKED}.`);
    }
    expect(lib.items.size).toBe(50);
    for (const c of children) expect(lib.items.has(c.key)).toBe(false);
  });

  it('throws the typed conflict when a one-request write stays locked', async () => {
    h = await setup({ retryBudgetMs: 5000 });
    h.server.faults.status({ status: 409, body: LIBRARY_LOCKED, times: 100, match: { method: 'POST' } });
    const error = await caught(
      h.client.writeBatch(LIB, 'items', [{ key: randomKey(), itemType: 'book', title: 'x' }]),
    );
    expect(error).toMatchObject({ code: 'conflict', status: 409, retryable: true });
    expect(error.hint).toMatch(/locked through every retry/);
    // 750 + 1500 fit in 5 s, 3000 more would not.
    expect(h.clock.sleeps).toEqual([750, 1500]);
    expect(posts()).toHaveLength(3);
    expect(h.server.library(LIB).items.size).toBe(0);
  });

  it("waits as long as a locked answer's Retry-After says, then sends again", async () => {
    h = await setup();
    h.server.faults.status({ status: 409, body: LIBRARY_LOCKED, retryAfter: 2, match: { method: 'POST' } });
    const key = randomKey();
    const result = await h.client.writeBatch(LIB, 'items', [{ key, itemType: 'book', title: 'x' }]);
    expect(h.clock.sleeps).toEqual([2000]);
    expect(posts().map((e) => e.status)).toEqual([409, 200]);
    expect(result.successful.map((s) => s.key)).toEqual([key]);
  });

  it('does not retry a 409 that is not a lock', async () => {
    h = await setup();
    const [key] = h.server.library(LIB).addItems([{ title: 'x' }]);
    h.server.faults.status({
      status: 409,
      body: "'key' property in JSON does not match the key in the URL",
      match: { method: 'POST' },
    });
    const error = await caught(h.client.writeBatch(LIB, 'items', [{ key, version: 1, title: 'y' }]));
    expect(error).toMatchObject({ code: 'conflict', status: 409 });
    expect(posts()).toHaveLength(1);
    expect(h.clock.sleeps).toEqual([]);
  });
});
