import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  addTags,
  addToCollections,
  applySetChange,
  removeFromCollections,
  removeTags,
} from '../../../src/core/writes/index.js';
import { API_KEY, caught, LIB, setup, type Harness } from '../zotero/helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await setup();
});
afterEach(async () => {
  for (const line of h.logLines) expect(line).not.toContain(API_KEY);
  await h.close();
});

const count = (method: string): number => h.server.log.filter((e) => e.method === method).length;

describe('applySetChange: collection membership', () => {
  it('adds 120 items where 20 are members already: 3 GETs + 2 POSTs, 20 unchanged', async () => {
    const lib = h.server.library(LIB);
    const [target, other] = lib.addCollections([{ name: 'Target' }, { name: 'Other' }]) as [string, string];
    const members = lib.addItems(
      Array.from({ length: 20 }, (_, i) => ({ title: `m${i}`, collections: [target] })),
    );
    const rest = lib.addItems(
      Array.from({ length: 100 }, (_, i) => ({ title: `r${i}`, collections: i % 2 ? [other] : [] })),
    );
    const keys = [...rest.slice(0, 50), ...members, ...rest.slice(50)];
    h.server.clearLog();

    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: addToCollections([target]),
    });
    expect(count('GET')).toBe(3);
    expect(count('POST')).toBe(2);
    expect(result.unchanged).toEqual(members);
    expect(result.succeeded).toEqual(rest);
    expect(result.failed).toEqual([]);
    expect(result.libraryVersion).toBe(lib.version);
    for (const key of keys) expect(lib.items.get(key)?.collections).toContain(target);
    // Other memberships survive: the whole array is sent, built from the current one.
    expect(lib.items.get(rest[1] as string)?.collections).toEqual([other, target]);
    // Only key, version and the changed field travel.
    const body = h.server.log.find((e) => e.method === 'POST')?.body as Array<Record<string, unknown>>;
    expect(Object.keys(body[0] as object).sort()).toEqual(['collections', 'key', 'version']);
  });

  it('removes items from a collection and reports non-members as unchanged', async () => {
    const lib = h.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'C' }]) as [string];
    const keys = lib.addItems([{ title: 'a', collections: [c] }, { title: 'b' }]);
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: removeFromCollections([c]),
    });
    expect(result.succeeded).toEqual([keys[0]]);
    expect(result.unchanged).toEqual([keys[1]]);
    expect(lib.items.get(keys[0] as string)?.collections).toEqual([]);
  });

  it('reports missing keys as 404 not_found at their input index', async () => {
    const lib = h.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'C' }]) as [string];
    const [a] = lib.addItems([{ title: 'a' }]) as [string];
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys: ['ZZZZZZZZ', a],
      apply: addToCollections([c]),
    });
    expect(result.succeeded).toEqual([a]);
    expect(result.failed).toEqual([
      {
        index: 0,
        key: 'ZZZZZZZZ',
        code: 404,
        message: expect.stringContaining('ZZZZZZZZ'),
        reason: 'not_found',
        retryable: false,
      },
    ]);
  });

  it('keeps the server code of other per-object failures with its reason', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems([{ title: 'a' }, { title: 'b' }]);
    // A collection that does not exist: the server refuses each object with 409.
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: addToCollections(['NNNNNNNN']),
    });
    expect(result.failed.map((f) => [f.index, f.code, f.reason])).toEqual([
      [0, 409, 'conflict'],
      [1, 409, 'conflict'],
    ]);
    expect(count('POST')).toBe(1);
  });

  it('re-reads and re-applies after a concurrent edit (412): their change and ours both land', async () => {
    const lib = h.server.library(LIB);
    const [mine, theirs] = lib.addCollections([{ name: 'Mine' }, { name: 'Theirs' }]) as [string, string];
    const keys = lib.addItems([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
    const contested = keys[1] as string;
    h.server.faults.concurrentEdit({
      match: { method: 'POST' },
      apply: (server) =>
        server.library(LIB).editItem(contested, { collections: [theirs], title: 'B (edited)' }),
    });
    h.server.clearLog();
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: addToCollections([mine]),
    });
    expect(result.succeeded).toEqual(keys);
    expect(result.failed).toEqual([]);
    expect(lib.items.get(contested)?.collections).toEqual([theirs, mine]);
    expect(lib.items.get(contested)?.title).toBe('B (edited)');
    expect(h.server.log.map((e) => e.method)).toEqual(['GET', 'POST', 'GET', 'POST']);
    expect(String(h.server.log[2]?.query.itemKey)).toBe(contested);
  });

  it('gives up on an object that keeps changing after bounded rounds: 412 conflict', async () => {
    const lib = h.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'C' }]) as [string];
    const [calm, busy] = lib.addItems([{ title: 'calm' }, { title: 'busy' }]) as [string, string];
    let n = 0;
    h.server.faults.concurrentEdit({
      match: { method: 'POST' },
      times: 100,
      apply: (server) => server.library(LIB).editItem(busy, { title: `edit ${++n}` }),
    });
    h.server.clearLog();
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys: [calm, busy],
      apply: addToCollections([c]),
    });
    expect(result.succeeded).toEqual([calm]);
    expect(result.failed).toEqual([
      {
        index: 1,
        key: busy,
        code: 412,
        message: expect.stringMatching(/kept changing/),
        reason: 'conflict',
        retryable: true,
      },
    ]);
    expect(count('GET')).toBe(3);
    expect(count('POST')).toBe(3);
    expect(lib.items.get(busy)?.collections).toEqual([]);
  });

  it('throws when nothing could be done at all (no access to write)', async () => {
    h.server.addKey({ key: 'ReadOnlyKey0000000000000', userID: 1, access: { user: { library: true } } });
    const lib = h.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'C' }]) as [string];
    const keys = lib.addItems([{ title: 'a' }]);
    const ro = h.makeClient({ apiKey: 'ReadOnlyKey0000000000000' });
    const error = await caught(
      applySetChange(ro, { library: LIB, kind: 'items', keys, apply: addToCollections([c]) }),
    );
    expect(error.code).toBe('permission_denied');
  });

  it('writes nothing when every object is already in the wanted state', async () => {
    const lib = h.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'C' }]) as [string];
    const keys = lib.addItems([{ title: 'a', collections: [c] }]);
    h.server.clearLog();
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: addToCollections([c]),
    });
    expect(result).toEqual({ succeeded: [], unchanged: keys, failed: [], libraryVersion: lib.version });
    expect(count('POST')).toBe(0);
  });
});

describe('applySetChange: tags', () => {
  it('adds and removes tags, skipping items that already match', async () => {
    const lib = h.server.library(LIB);
    const keys = lib.addItems([
      { title: 'a', tags: [{ tag: 'keep' }] },
      { title: 'b', tags: [{ tag: 'x' }] },
    ]);
    const added = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: addTags(['x']),
    });
    expect(added.succeeded).toEqual([keys[0]]);
    expect(added.unchanged).toEqual([keys[1]]);
    expect(lib.items.get(keys[0] as string)?.tags.map((t) => t.tag)).toEqual(['keep', 'x']);

    const removed = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys,
      apply: removeTags(['x']),
    });
    expect(removed.succeeded).toEqual(keys);
    expect(lib.items.get(keys[0] as string)?.tags.map((t) => t.tag)).toEqual(['keep']);
    expect(lib.items.get(keys[1] as string)?.tags).toEqual([]);
  });
});

describe('applySetChange: a change refused by apply', () => {
  it('fails that object as a conflict, sends nothing for it, and writes the others', async () => {
    const lib = h.server.library(LIB);
    const [kept, changed] = lib.addItems([{ title: 'kept' }, { title: 'changed' }]) as [string, string];
    const versionBefore = lib.items.get(kept)?.version;
    h.server.clearLog();
    const { RefusedChange } = await import('../../../src/core/writes/index.js');
    const result = await applySetChange(h.client, {
      library: LIB,
      kind: 'items',
      keys: [kept, changed],
      apply: (data) => {
        if (data.title === 'kept') throw new RefusedChange('Item kept was edited since the preview.');
        return { ...data, volume: '12' };
      },
    });
    expect(result.succeeded).toEqual([changed]);
    expect(result.failed).toEqual([
      {
        index: 0,
        key: kept,
        code: 409,
        message: 'Item kept was edited since the preview.',
        reason: 'conflict',
        retryable: false,
      },
    ]);
    expect(lib.items.get(kept)?.version).toBe(versionBefore);
    const body = h.server.log.find((e) => e.method === 'POST')?.body as Array<Record<string, unknown>>;
    expect(body.map((o) => o.key)).toEqual([changed]);
  });
});
