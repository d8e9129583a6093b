/**
 * createObjects with concurrent chunks (issue 24, point 4): the chunks of a create go at once
 * within the client's 4 requests in flight, a chunk of children waits for the chunk that
 * creates their parents, and a locked library is waited out without creating anything twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createObjects } from '../../../src/core/writes/create.js';
import { freshWriteIds, newWriteSeed, writeIdsFrom } from '../../../src/core/writes/ids.js';
import type { Clock } from '../../../src/core/zotero/index.js';
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import { LIB, setup, type Harness } from '../zotero/helpers.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const posts = (): RequestLogEntry[] => h.server.log.filter((e) => e.method === 'POST');
const maxPostsInFlight = (): number => {
  const list = posts();
  return Math.max(
    0,
    ...list.map((e) => list.filter((o) => o.startedAt <= e.startedAt && o.endedAt > e.startedAt).length),
  );
};
const bodyKeys = (e: RequestLogEntry): string[] => (e.body as Array<{ key: string }>).map((o) => o.key);
const books = (n: number, prefix = 'Book') =>
  Array.from({ length: n }, (_, i) => ({ itemType: 'book', title: `${prefix} ${i}` }));

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

describe('createObjects: concurrent chunks', () => {
  it('creates 500 items in 10 POSTs, several at a time and never more than 4, each once', async () => {
    h = await setup({}, { latencyMs: 20 });
    const progress: number[] = [];
    const result = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: books(500),
      labels: Array.from({ length: 500 }, (_, i) => `b${i}`),
      ids: freshWriteIds(),
      progress: (done) => progress.push(done),
    });
    expect(h.server.log).toHaveLength(10);
    expect(posts().every((e) => e.status === 200)).toBe(true);
    expect(maxPostsInFlight()).toBeGreaterThan(1);
    expect(h.server.maxInFlight()).toBeLessThanOrEqual(4);
    expect(result.failed).toEqual([]);
    expect(result.successful.map((s) => s.index)).toEqual(books(500).map((_, i) => i));
    const items = h.server.library(LIB).items;
    expect(items.size).toBe(500);
    for (const s of result.successful) expect(items.get(s.key)?.title).toBe(`Book ${s.index}`);
    expect(progress).toEqual([50, 100, 150, 200, 250, 300, 350, 400, 450, 500]);
  });

  it('sends the chunk of notes only once the chunk creating their parents has answered', async () => {
    h = await setup({}, { latencyMs: 20 });
    // Keys from a seed: the test names the parents' keys as createObjects will derive them.
    const ids = writeIdsFrom(newWriteSeed(), false);
    const parents = books(50, 'Parent');
    const others = books(100, 'Other');
    const notes = parents.map((_, i) => ({
      itemType: 'note',
      note: `<p>Note ${i}</p>`,
      parentItem: ids.objectKey(`items/p${i}`),
    }));
    const labels = [
      ...parents.map((_, i) => `p${i}`),
      ...others.map((_, i) => `o${i}`),
      ...notes.map((_, i) => `n${i}`),
    ];
    const result = await createObjects(h.client, {
      library: LIB,
      kind: 'items',
      objects: [...parents, ...others, ...notes],
      labels,
      ids,
    });
    expect(result.failed).toEqual([]);
    expect(result.successful).toHaveLength(200);
    expect(posts()).toHaveLength(4);
    const parentKey = ids.objectKey('items/p0');
    const noteKey = ids.objectKey('items/n0');
    const parentPost = posts().find((e) => bodyKeys(e).includes(parentKey));
    const notePost = posts().find((e) => bodyKeys(e).includes(noteKey));
    expect(notePost?.startedAt).toBeGreaterThanOrEqual(parentPost?.endedAt as number);
    // The parents' chunk and the independent ones went together (at least two at once: a loaded
    // machine may not let the server see all three overlap).
    expect(maxPostsInFlight()).toBeGreaterThanOrEqual(2);
    expect(h.server.library(LIB).items.get(noteKey)?.parentItem).toBe(parentKey);
  });

  it('waits out a locked library: every create lands once, requests = 3 + the locked ones', async () => {
    h = await setup({}, { latencyMs: 20 });
    const client = h.makeClient({ clock: quickClock(), random: Math.random });
    h.server.faults.lock({ times: Number.POSITIVE_INFINITY });
    const result = await createObjects(client, {
      library: LIB,
      kind: 'items',
      objects: books(150),
      labels: Array.from({ length: 150 }, (_, i) => `b${i}`),
      ids: freshWriteIds(),
    });
    const locked = posts().filter((e) => e.status === 409);
    expect(locked.length).toBeGreaterThan(0);
    expect(h.server.log).toHaveLength(3 + locked.length);
    expect(result.failed).toEqual([]);
    expect(result.successful).toHaveLength(150);
    expect(h.server.library(LIB).items.size).toBe(150);
  });
});
