/**
 * add_items / remove_items against the test server: batches of 50 with asserted request
 * counts (1, 50, 51 and 500 items), no-op re-runs that write nothing, a concurrent edit that
 * keeps the other writer's change, missing items in `failed`, a missing collection, the bulk
 * threshold, read-only mode and group libraries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { manageCollections, type ManageInput } from '../../../src/core/library/collections.js';
import type { Deps, ProgressEvent } from '../../../src/core/tool.js';
import manageTool from '../../../src/tools/collections/manage-collections.js';
import {
  ceil50,
  countsFor,
  membership,
  requests,
  seedItems,
  USER,
} from '../../tools/collections/fixtures.js';
import { startWorld, type World } from './world.js';
import { onCli } from '../../support/refs.js';

let world: World;
let coll: string;
beforeEach(async () => {
  world = await startWorld();
  [coll] = world.server.library(USER).addCollections([{ name: 'Target' }]) as [string];
});
afterEach(async () => {
  await world.close();
});

const manage = (input: ManageInput, deps: Deps = world.deps()) => manageCollections(deps, input);
const ITEMS = `/${USER}/items`;

async function failure(work: Promise<unknown>): Promise<ZoteusError> {
  try {
    await work;
  } catch (error) {
    if (isZoteusError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('add_items and remove_items: batches of 50, never one request per item', () => {
  it.each([1, 50, 51, 500])(
    '%i items: ⌈n/50⌉ reads and ⌈n/50⌉ writes, then a no-op re-run writes nothing',
    async (n) => {
      const keys = seedItems(world, n);
      world.server.clearLog();

      const added = await manage({ action: 'add_items', collection_key: coll, item_keys: keys });
      expect(added.updated).toEqual(keys);
      expect(added.unchanged).toEqual([]);
      expect(added.failed).toEqual([]);
      expect(added.libraryVersion).toBe(world.server.library(USER).version);
      expect(membership(world, keys).every((c) => c.length === 1 && c[0] === coll)).toBe(true);
      expect(countsFor(world, ITEMS)).toEqual({ GET: ceil50(n), POST: ceil50(n) });
      expect(requests(world)).toHaveLength(2 * ceil50(n));
      // Each read asks for at most 50 keys; each write carries at most 50 items, only key/version/collections.
      for (const e of requests(world, 'GET', ITEMS))
        expect(String(e.query.itemKey).split(',').length).toBeLessThanOrEqual(50);
      for (const e of requests(world, 'POST', ITEMS)) {
        const body = e.body as Array<Record<string, unknown>>;
        expect(body.length).toBeLessThanOrEqual(50);
        for (const o of body) expect(Object.keys(o).sort()).toEqual(['collections', 'key', 'version']);
      }

      world.server.clearLog();
      const version = world.server.library(USER).version;
      const again = await manage({ action: 'add_items', collection_key: coll, item_keys: keys });
      expect(again).toEqual({ updated: [], unchanged: keys, failed: [], libraryVersion: version });
      expect(countsFor(world, ITEMS)).toEqual({ GET: ceil50(n) });
      expect(requests(world)).toHaveLength(ceil50(n));
      expect(world.server.library(USER).version).toBe(version);

      world.server.clearLog();
      const removed = await manage({ action: 'remove_items', collection_key: coll, item_keys: keys });
      expect(removed.updated).toEqual(keys);
      expect(membership(world, keys).every((c) => c.length === 0)).toBe(true);
      expect(countsFor(world, ITEMS)).toEqual({ GET: ceil50(n), POST: ceil50(n) });

      // Nothing to remove: the reads, and one request to confirm the collection still exists.
      world.server.clearLog();
      const none = await manage({ action: 'remove_items', collection_key: coll, item_keys: keys });
      expect(none.updated).toEqual([]);
      expect(none.unchanged).toEqual(keys);
      expect(requests(world)).toHaveLength(ceil50(n) + 1);
      expect(requests(world, 'POST')).toHaveLength(0);
    },
  );

  it('leaves other memberships and every other field alone; reports members already there as unchanged', async () => {
    const lib = world.server.library(USER);
    const [other] = lib.addCollections([{ name: 'Other' }]) as [string];
    const [a, b] = lib.addItems([
      { title: 'A', collections: [other], tags: [{ tag: 'keep' }] },
      { title: 'B', collections: [coll] },
    ]) as [string, string];
    const out = await manage({ action: 'add_items', collection_key: coll, item_keys: [a, b] });
    expect(out).toMatchObject({ updated: [a], unchanged: [b], failed: [] });
    expect(lib.items.get(a)).toMatchObject({
      title: 'A',
      collections: [other, coll],
      tags: [{ tag: 'keep' }],
    });
    expect(
      manageTool.summarize?.(out, { action: 'add_items', collection_key: coll, item_keys: [a, b] }),
    ).toBe(`Added 1 item to collection ${coll}; 1 item already in it.`);
    const removed = await manage({ action: 'remove_items', collection_key: coll, item_keys: [a, b] });
    expect(removed).toMatchObject({ updated: [a, b], unchanged: [] });
    expect(lib.items.get(a)?.collections).toEqual([other]);
  });

  it('a concurrent edit (injected 412): every item ends in the collection and the other change survives', async () => {
    const keys = seedItems(world, 120);
    const edited = keys[60] as string;
    world.server.clearLog();
    // Another client edits an item of the second batch just before that batch is written.
    world.server.faults.concurrentEdit({
      match: { method: 'POST', path: ITEMS },
      times: 1,
      apply: (s) => s.library(USER).editItem(edited, { title: 'Edited by someone else' }),
    });
    const out = await manage({ action: 'add_items', collection_key: coll, item_keys: keys });
    expect(out.failed).toEqual([]);
    expect(out.updated).toEqual(keys);
    expect(membership(world, keys).every((c) => c.includes(coll))).toBe(true);
    expect(world.server.library(USER).items.get(edited)?.title).toBe('Edited by someone else');
    // 3 reads + 3 writes, then the one conflicting item read and written again.
    expect(countsFor(world, ITEMS)).toEqual({ GET: 4, POST: 4 });
    const retried = requests(world, 'GET', ITEMS).at(-1);
    expect(retried?.query.itemKey).toBe(edited);
  });

  it('an item that keeps changing fails with 412 after the bounded rounds; the rest land', async () => {
    const keys = seedItems(world, 3);
    const busy = keys[1] as string;
    world.server.faults.concurrentEdit({
      match: { method: 'POST', path: ITEMS },
      times: 3,
      apply: (s) => s.library(USER).editItem(busy, { title: `busy ${Date.now()}` }),
    });
    const out = await manage({ action: 'add_items', collection_key: coll, item_keys: keys });
    expect(out.updated).toEqual([keys[0], keys[2]]);
    expect(out.failed).toEqual([
      {
        index: 1,
        key: busy,
        code: 412,
        message: expect.stringMatching(/kept changing/),
        reason: 'conflict',
        retryable: true,
      },
    ]);
  });

  it('missing items are entries of failed (index, key, 404, message, reason); the others still land', async () => {
    const keys = seedItems(world, 3);
    const input = [keys[0] as string, 'MISS2345', keys[1] as string, 'GXNE2345', keys[2] as string];
    const out = await manage({ action: 'add_items', collection_key: coll, item_keys: input });
    expect(out.updated).toEqual(keys);
    expect(out.failed).toEqual([
      {
        index: 1,
        key: 'MISS2345',
        code: 404,
        message: 'Item MISS2345 does not exist in library users/1.',
        reason: 'not_found',
        retryable: false,
      },
      {
        index: 3,
        key: 'GXNE2345',
        code: 404,
        message: 'Item GXNE2345 does not exist in library users/1.',
        reason: 'not_found',
        retryable: false,
      },
    ]);
    expect(membership(world, keys).every((c) => c[0] === coll)).toBe(true);
  });

  it('an item that cannot be written (a child note) is a failed entry with its status', async () => {
    const lib = world.server.library(USER);
    const [parent] = lib.addItems([{ title: 'Parent' }]) as [string];
    const [note] = lib.addItems([{ itemType: 'note', note: 'n', parentItem: parent }]) as [string];
    const out = await manage({ action: 'add_items', collection_key: coll, item_keys: [parent, note] });
    expect(out.updated).toEqual([parent]);
    expect(out.failed).toEqual([
      {
        index: 1,
        key: note,
        code: 400,
        message: 'Child items cannot be assigned to collections',
        reason: 'validation_error',
        retryable: false,
      },
    ]);
  });

  it('a collection that does not exist is not_found, never a success', async () => {
    const keys = seedItems(world, 3);
    world.server.clearLog();
    const add = await failure(manage({ action: 'add_items', collection_key: 'NXPE2345', item_keys: keys }));
    expect(add).toMatchObject({ code: 'not_found', field: 'collection_key' });
    expect(add.message).toBe('Collection NXPE2345 does not exist in library users/1; no item was changed.');
    // The server refused each item (409); one more request confirmed the collection is missing.
    expect(countsFor(world, ITEMS)).toEqual({ GET: 1, POST: 1 });
    expect(countsFor(world, `/${USER}/collections`)).toEqual({ GET: 1 });
    expect(membership(world, keys).every((c) => c.length === 0)).toBe(true);

    const remove = await failure(
      manage({ action: 'remove_items', collection_key: 'NXPE2345', item_keys: keys }),
    );
    expect(remove).toMatchObject({ code: 'not_found', field: 'collection_key' });
  });

  it('every item missing, in a collection that exists: every entry failed (the surfaces make it an error)', async () => {
    const out = await manage({
      action: 'add_items',
      collection_key: coll,
      item_keys: ['MISS2345', 'GXNE2345'],
    });
    expect(out.updated).toEqual([]);
    expect(out.failed?.map((f) => f.code)).toEqual([404, 404]);
  });

  it('reports progress: start, progress, complete', async () => {
    const events: ProgressEvent[] = [];
    const deps = { ...world.deps(), progress: (e: ProgressEvent) => events.push(e) };
    const keys = seedItems(world, 60);
    await manage({ action: 'add_items', collection_key: coll, item_keys: keys }, deps);
    expect(events[0]).toEqual({ event: 'start', phase: 'add_items', done: 0, total: 60 });
    expect(events.at(-1)).toEqual({
      event: 'complete',
      phase: 'add_items',
      done: 60,
      total: 60,
      succeeded: 60,
      failed: 0,
    });
  });

  it('in a group library', async () => {
    const lib = world.server.library('groups/10');
    const [g] = lib.addCollections([{ name: 'G' }]) as [string];
    const keys = seedItems(world, 55, 'groups/10');
    const out = await manage({ action: 'add_items', collection_key: g, item_keys: keys, library_id: 10 });
    expect(out.updated).toEqual(keys);
    expect(membership(world, keys, 'groups/10').every((c) => c[0] === g)).toBe(true);
    expect(countsFor(world, '/groups/10/items')).toEqual({ GET: 2, POST: 2 });
    const removed = await manage({
      action: 'remove_items',
      collection_key: g,
      item_keys: keys.slice(0, 5),
      library_id: 10,
      library_type: 'group',
    });
    expect(removed.updated).toEqual(keys.slice(0, 5));
  });

  it('read-only mode refuses both, before any request', async () => {
    const keys = seedItems(world, 2);
    world.server.clearLog();
    const deps = world.deps({ env: { ZOTEUS_READ_ONLY: 'true' } });
    for (const action of ['add_items', 'remove_items'] as const) {
      const error = await failure(manage({ action, collection_key: coll, item_keys: keys }, deps));
      expect(error.code).toBe('permission_denied');
    }
    expect(world.server.log).toHaveLength(0);
  });
});

describe('the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES)', () => {
  it('removing more than N items needs confirm: true; the refusal says the threshold, how to proceed, and writes nothing', async () => {
    const keys = seedItems(world, 12, USER, { collections: [] });
    await manage({ action: 'add_items', collection_key: coll, item_keys: keys });
    world.server.clearLog();
    const deps = world.deps({ env: { ZOTEUS_CONFIRM_BULK_WRITES: '10' } });

    const refused = await failure(
      manage({ action: 'remove_items', collection_key: coll, item_keys: keys }, deps),
    );
    expect(refused).toMatchObject({ code: 'confirmation_required', field: 'confirm', retryable: false });
    expect(refused.message).toBe(
      `Removing 12 items from collection ${coll} in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is 10 items. Nothing was changed.`,
    );
    expect(refused.hint).toBe(
      'Call again with {{param:confirm=true}} to proceed, or remove at most 10 items per call.',
    );
    // Not even the key check: confirmation comes before credentials.
    expect(world.server.log).toHaveLength(0);
    expect(membership(world, keys).every((c) => c[0] === coll)).toBe(true);

    // At the threshold, or adding, needs nothing more.
    const ten = await manage(
      { action: 'remove_items', collection_key: coll, item_keys: keys.slice(0, 10) },
      deps,
    );
    expect(ten.updated).toHaveLength(10);
    const addBack = await manage({ action: 'add_items', collection_key: coll, item_keys: keys }, deps);
    expect(addBack.updated).toHaveLength(10);

    const confirmed = await manage(
      { action: 'remove_items', collection_key: coll, item_keys: keys, confirm: true },
      deps,
    );
    expect(confirmed.updated).toEqual(keys);
  });

  it('repeated keys count once; off (0) by default', async () => {
    const keys = seedItems(world, 11);
    const deps = world.deps({ env: { ZOTEUS_CONFIRM_BULK_WRITES: '10' } });
    const repeated = [...keys.slice(0, 10), ...keys.slice(0, 10)];
    await expect(
      manage({ action: 'remove_items', collection_key: coll, item_keys: repeated }, deps),
    ).resolves.toBeDefined();
    await expect(
      manage({ action: 'remove_items', collection_key: coll, item_keys: keys }),
    ).resolves.toBeDefined();
  });

  it('on the CLI the hint names --confirm', async () => {
    const keys = seedItems(world, 3);
    const deps = world.deps({ env: { ZOTEUS_CONFIRM_BULK_WRITES: '2' }, surface: 'cli' });
    const refused = await failure(
      manage({ action: 'remove_items', collection_key: coll, item_keys: keys }, deps),
    );
    expect(onCli(refused.hint ?? '')).toBe(
      'Call again with --confirm to proceed, or remove at most 2 items per call.',
    );
  });
});
