/**
 * Collections against the Zotero Web API test server: the listing (sorting, `q` over the whole
 * library, paging, `complete`, the warm `304`), structure changes (create, rename, reparent,
 * delete) in user and group libraries, with request counts read from the server's log.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import {
  listCollections,
  manageCollections,
  type ManageInput,
} from '../../../src/core/library/collections.js';
import type { Deps } from '../../../src/core/tool.js';
import listTool from '../../../src/tools/collections/list-collections.js';
import { countsFor, requests, USER } from '../../tools/collections/fixtures.js';
import { READ_KEY, startWorld, type World } from './world.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.close();
});

const manage = (input: ManageInput, deps: Deps = world.deps()) => manageCollections(deps, input);

async function failure(work: Promise<unknown>): Promise<ZoteusError> {
  try {
    await work;
  } catch (error) {
    if (isZoteusError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const COLLECTIONS = `/${USER}/collections`;

describe('list', () => {
  it('returns key, name, parentCollection and numItems, sorted by name (case-insensitive), then key', async () => {
    const lib = world.server.library(USER);
    lib.addCollections([
      { key: 'BBBB2345', name: 'beta' },
      { key: 'CCCC2345', name: 'Alpha' },
      { key: 'AAAA2345', name: 'alpha' },
      { key: 'DDDD2345', name: 'Émile' },
      { key: 'EEEE2345', name: 'zeta' },
    ]);
    lib.addCollections([{ key: 'FFFF2345', name: 'Gamma', parentCollection: 'CCCC2345' }]);
    lib.addItems([
      { title: 'In alpha', collections: ['CCCC2345'] },
      { title: 'Also', collections: ['CCCC2345'] },
    ]);

    const out = await listCollections(world.deps(), {});
    expect(out).toEqual({
      collections: [
        { key: 'AAAA2345', name: 'alpha', parentCollection: false, numItems: 0 },
        { key: 'CCCC2345', name: 'Alpha', parentCollection: false, numItems: 2 },
        { key: 'BBBB2345', name: 'beta', parentCollection: false, numItems: 0 },
        { key: 'DDDD2345', name: 'Émile', parentCollection: false, numItems: 0 },
        { key: 'FFFF2345', name: 'Gamma', parentCollection: 'CCCC2345', numItems: 0 },
        { key: 'EEEE2345', name: 'zeta', parentCollection: false, numItems: 0 },
      ],
      totalResults: 6,
      start: 0,
      complete: true,
    });
    expect(listTool.output.safeParse(out).success).toBe(true);
    // One key check, one page.
    expect(world.server.log.map((e) => `${e.method} ${e.path}`)).toEqual([
      'GET /keys/current',
      `GET ${COLLECTIONS}`,
    ]);
  });

  describe('a library of 250 collections (three server pages)', () => {
    let special: string[];
    beforeEach(() => {
      const lib = world.server.library(USER);
      const seeds = Array.from({ length: 250 }, (_, i) => ({
        name: i % 60 === 7 ? `Special ${String(i).padStart(3, '0')}` : `Topic ${String(i).padStart(3, '0')}`,
      }));
      const keys = lib.addCollections(seeds.slice(0, 200));
      lib.addCollections(seeds.slice(200).map((s, i) => ({ ...s, parentCollection: keys[i] as string })));
      special = seeds.filter((s) => s.name.startsWith('Special')).map((s) => s.name);
      world.server.clearLog();
    });

    it('reads every page, then pages the sorted result: default limit 200, start, an empty page', async () => {
      const deps = world.deps();
      const first = await listCollections(deps, {});
      expect(first.collections).toHaveLength(200);
      expect(first).toMatchObject({ totalResults: 250, start: 0, complete: true });
      const pages = requests(world, 'GET', COLLECTIONS);
      expect(pages.map((e) => e.query.start).sort()).toEqual(['0', '100', '200']);
      expect(pages.every((e) => e.query.limit === '100')).toBe(true);

      const second = await listCollections(deps, { start: 200 });
      expect(second.collections).toHaveLength(50);
      const names = [...first.collections, ...second.collections].map((c) => c.name);
      expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
      expect(new Set([...first.collections, ...second.collections].map((c) => c.key)).size).toBe(250);

      const small = await listCollections(deps, { start: 10, limit: 5 });
      expect(small.collections.map((c) => c.name)).toEqual(names.slice(10, 15));
      expect(small).toMatchObject({ totalResults: 250, start: 10 });

      const empty = await listCollections(deps, { start: 1000 });
      expect(empty).toEqual({ collections: [], totalResults: 250, start: 1000, complete: true });
      expect(listTool.summarize?.(empty, { start: 1000 })).toBe(
        'No collections on this page (start 1,000); there are 250 in total.',
      );
      expect(listTool.summarize?.(first, {})).toBe('Showing 1–200 of 250 collections.');
    });

    it('q filters over the whole library (matches on every server page), case-insensitively', async () => {
      const out = await listCollections(world.deps(), { q: 'sPeCiAl' });
      expect(out.collections.map((c) => c.name)).toEqual(special);
      expect(out.totalResults).toBe(special.length);
      // The matches came from all three server pages.
      expect(special).toEqual(['Special 007', 'Special 067', 'Special 127', 'Special 187', 'Special 247']);
      const paged = await listCollections(world.deps(), { q: 'special', start: 2, limit: 2 });
      expect(paged.collections.map((c) => c.name)).toEqual(['Special 127', 'Special 187']);
      expect(paged.totalResults).toBe(5);
      const none = await listCollections(world.deps(), { q: 'nothing like it' });
      expect(none).toMatchObject({ collections: [], totalResults: 0 });
      expect(listTool.summarize?.(none, { q: 'nothing like it' })).toBe(
        'No collections matching "nothing like it".',
      );
    });

    it('top keeps the top-level collections, filtered before paging', async () => {
      const out = await listCollections(world.deps(), { top: true, limit: 1000 });
      expect(out.totalResults).toBe(200);
      expect(out.collections.every((c) => c.parentCollection === false)).toBe(true);
      const both = await listCollections(world.deps(), { top: true, q: 'special' });
      expect(both.collections.map((c) => c.name)).toEqual([
        'Special 007',
        'Special 067',
        'Special 127',
        'Special 187',
      ]);
    });

    it('a warm listing of an unchanged library costs one request (304); a change is read again', async () => {
      const deps = world.deps();
      await listCollections(deps, {});
      world.server.clearLog();
      const warm = await listCollections(deps, { q: 'special' });
      expect(warm.totalResults).toBe(5);
      expect(world.server.log).toHaveLength(1);
      expect(world.server.log[0]).toMatchObject({ method: 'GET', path: COLLECTIONS, status: 304 });
      expect(world.server.log[0]?.headers['if-modified-since-version']).toBeDefined();

      world.server.library(USER).addCollections([{ name: 'Special new' }]);
      world.server.clearLog();
      const changed = await listCollections(deps, { q: 'special' });
      expect(changed.totalResults).toBe(6);
      expect(requests(world, 'GET', COLLECTIONS)).toHaveLength(3);
    });

    it('complete is false past ZOTEUS_MAX_COLLECTIONS, and says how many were read of how many', async () => {
      const deps = world.deps({ env: { ZOTEUS_MAX_COLLECTIONS: '120' } });
      const out = await listCollections(deps, {});
      expect(out.complete).toBe(false);
      expect(out.read).toBe(120);
      expect(out.totalResults).toBe(120);
      expect(out.message).toBe(
        'Read 120 of 250 collections: one listing reads at most 120 (ZOTEUS_MAX_COLLECTIONS); totalResults and the page come from the collections read.',
      );
      expect(listTool.summarize?.(out, {})).toBe(
        'Showing 1–120 of 120 collections. Incomplete: Read 120 of 250 collections: one listing reads at most 120 (ZOTEUS_MAX_COLLECTIONS); totalResults and the page come from the collections read.',
      );
      // Only the pages needed for the cap were read.
      expect(requests(world, 'GET', COLLECTIONS)).toHaveLength(2);
    });

    it('complete is false when the server ignores start, without looping or repeating', async () => {
      world.server.faults.ignoreStart(true);
      const out = await listCollections(world.deps(), { limit: 1000 });
      expect(out.complete).toBe(false);
      expect(out.read).toBe(100);
      expect(new Set(out.collections.map((c) => c.key)).size).toBe(100);
      expect(out.message).toMatch(/^Read 100 of 250 collections: the server ignores the start parameter/);
    });
  });

  it('numItems is absent when the server does not report it', async () => {
    world.server.library(USER).addCollections([{ key: 'AAAA2345', name: 'A' }]);
    const out = await listCollections(world.deps(), {});
    expect(out.collections[0]).toHaveProperty('numItems', 0);
  });

  it('an empty library', async () => {
    const out = await listCollections(world.deps(), {});
    expect(out).toEqual({ collections: [], totalResults: 0, start: 0, complete: true });
    expect(listTool.summarize?.(out, {})).toBe('The library has no collections.');
  });

  it('addresses a group library exactly like the user library', async () => {
    world.server.library('groups/10').addCollections([{ name: 'Lab notes' }, { name: 'Drafts' }]);
    world.server.library(USER).addCollections([{ name: 'Mine' }]);
    const out = await listCollections(world.deps(), { library_id: 10 });
    expect(out.collections.map((c) => c.name)).toEqual(['Drafts', 'Lab notes']);
    const typed = await listCollections(world.deps(), { library_id: 10, library_type: 'group' });
    expect(typed.collections).toHaveLength(2);
    expect(requests(world).map((e) => e.path)).toEqual(['/groups/10/collections', '/groups/10/collections']);
  });

  it('works in read-only mode and with a read-only key (both tools), where writes are refused', async () => {
    world.server.library(USER).addCollections([{ name: 'A' }]);
    const readOnly = world.deps({ env: { ZOTEUS_READ_ONLY: 'true' } });
    expect((await listCollections(readOnly, {})).collections).toHaveLength(1);
    expect((await manage({ action: 'list' }, readOnly)).collections).toHaveLength(1);
    world.server.clearLog();
    const refused = await failure(manage({ action: 'create', name: 'B' }, readOnly));
    expect(refused.code).toBe('permission_denied');
    expect(refused.message).toMatch(/read-only mode/);
    expect(world.server.log).toHaveLength(0);

    const readKey = world.deps({ env: { ZOTERO_API_KEY: READ_KEY } });
    expect((await manage({ action: 'list' }, readKey)).collections).toHaveLength(1);
    world.server.clearLog();
    const noWrite = await failure(manage({ action: 'create', name: 'B' }, readKey));
    expect(noWrite.code).toBe('permission_denied');
    expect(noWrite.message).toMatch(/can read users\/1 but not write/);
    expect(requests(world)).toHaveLength(0);
    expect(world.server.library(USER).collections.size).toBe(1);
  });
});

describe('create', () => {
  it('creates a top-level collection with a write token; the name is trimmed', async () => {
    const out = await manage({ action: 'create', name: '  Reading list  ' });
    const lib = world.server.library(USER);
    expect(out).toEqual({
      created: [expect.stringMatching(/^[23456789A-Z]{8}$/)],
      libraryVersion: lib.version,
    });
    const key = out.created?.[0] as string;
    expect(lib.collections.get(key)).toMatchObject({ name: 'Reading list', parentCollection: false });
    const posts = requests(world, 'POST', COLLECTIONS);
    expect(posts).toHaveLength(1);
    expect(posts[0]?.headers['zotero-write-token']).toMatch(/^[0-9a-f]{32}$/);
    // The collection's key is chosen by the client, so a resend can never make a second one.
    expect(posts[0]?.body).toEqual([{ name: 'Reading list', parentCollection: false, key }]);
    expect(requests(world)).toHaveLength(1);
  });

  it('creates under a parent after checking that it exists (one GET)', async () => {
    const [parent] = world.server.library(USER).addCollections([{ name: 'Parent' }]);
    world.server.clearLog();
    const out = await manage({ action: 'create', name: 'Child', parent_collection: parent });
    const key = out.created?.[0] as string;
    expect(world.server.library(USER).collections.get(key)).toMatchObject({
      name: 'Child',
      parentCollection: parent,
    });
    expect(countsFor(world, COLLECTIONS)).toEqual({ GET: 1, POST: 1 });
  });

  it('a missing parent is not_found before any write', async () => {
    const error = await failure(manage({ action: 'create', name: 'Child', parent_collection: 'ZZZZ2345' }));
    expect(error).toMatchObject({ code: 'not_found', field: 'parent_collection' });
    expect(error.message).toBe(
      'Parent collection ZZZZ2345 does not exist in library users/1; nothing was created.',
    );
    expect(requests(world, 'POST')).toHaveLength(0);
    expect(world.server.library(USER).collections.size).toBe(0);
  });

  it('in a group library; refused by a group that lets only admins edit', async () => {
    const out = await manage({ action: 'create', name: 'Group coll', library_id: 10 });
    expect(world.server.library('groups/10').collections.get(out.created?.[0] as string)?.name).toBe(
      'Group coll',
    );
    expect(out.libraryVersion).toBe(world.server.library('groups/10').version);
    const refused = await failure(manage({ action: 'create', name: 'No', library_id: 30 }));
    expect(refused.code).toBe('permission_denied');
    expect(world.server.library('groups/30').collections.size).toBe(0);
    // Bob's private group: the server refuses (groups.all covers only alice's groups).
    const other = await failure(manage({ action: 'create', name: 'No', library_id: 40 }));
    expect(other.code).toBe('permission_denied');
    // A key without access to the group is refused from its cached access, before any request.
    world.server.clearLog();
    const readKey = world.deps({ env: { ZOTERO_API_KEY: READ_KEY } });
    const noAccess = await failure(manage({ action: 'create', name: 'No', library_id: 40 }, readKey));
    expect(noAccess).toMatchObject({ code: 'permission_denied', field: 'library_id' });
    expect(requests(world)).toHaveLength(0);
    expect(world.server.library('groups/40').collections.size).toBe(0);
  });
});

describe('rename and reparent', () => {
  let a: string;
  let b: string;
  let c: string;
  let d: string;
  beforeEach(() => {
    // A > B > C, D at the top.
    const lib = world.server.library(USER);
    [a, d] = lib.addCollections([{ name: 'A' }, { name: 'D' }]) as [string, string];
    [b] = lib.addCollections([{ name: 'B', parentCollection: a }]) as [string];
    [c] = lib.addCollections([{ name: 'C', parentCollection: b }]) as [string];
    world.server.clearLog();
  });

  it('rename: read with the version, written with it; returns collection_key and libraryVersion', async () => {
    const out = await manage({ action: 'rename', collection_key: b, name: ' Beta ' });
    const lib = world.server.library(USER);
    expect(out).toEqual({ collection_key: b, libraryVersion: lib.version });
    expect(lib.collections.get(b)).toMatchObject({ name: 'Beta', parentCollection: a });
    expect(countsFor(world, COLLECTIONS)).toEqual({ GET: 1, POST: 1 });
    const post = requests(world, 'POST', COLLECTIONS)[0];
    expect(post?.body).toEqual([{ key: b, version: expect.any(Number), name: 'Beta' }]);
  });

  it('rename to the same name writes nothing', async () => {
    const version = world.server.library(USER).version;
    const out = await manage({ action: 'rename', collection_key: b, name: 'B' });
    expect(out).toEqual({ collection_key: b, libraryVersion: version });
    expect(requests(world, 'POST')).toHaveLength(0);
  });

  it('rename after a concurrent edit (412): re-read and written again', async () => {
    world.server.faults.concurrentEdit({
      match: { method: 'POST', path: COLLECTIONS },
      apply: (s) => s.library(USER).editCollection(b, { name: 'Theirs' }),
    });
    const out = await manage({ action: 'rename', collection_key: b, name: 'Ours' });
    expect(world.server.library(USER).collections.get(b)?.name).toBe('Ours');
    expect(out.libraryVersion).toBe(world.server.library(USER).version);
    expect(countsFor(world, COLLECTIONS)).toEqual({ GET: 2, POST: 2 });
  });

  it('rename of a collection that does not exist is not_found, with nothing written', async () => {
    const error = await failure(manage({ action: 'rename', collection_key: 'ZZZZ2345', name: 'X' }));
    expect(error).toMatchObject({ code: 'not_found', field: 'collection_key' });
    expect(error.message).toBe('Collection ZZZZ2345 does not exist in library users/1; nothing was written.');
    expect(requests(world, 'POST')).toHaveLength(0);
  });

  it('reparent under another collection, and back to the top level', async () => {
    const under = await manage({ action: 'reparent', collection_key: c, parent_collection: d });
    expect(under.collection_key).toBe(c);
    expect(world.server.library(USER).collections.get(c)?.parentCollection).toBe(d);
    // C is a leaf: no ancestor walk, one read (C and D together) and one write.
    expect(countsFor(world, COLLECTIONS)).toEqual({ GET: 1, POST: 1 });
    world.server.clearLog();
    const top = await manage({ action: 'reparent', collection_key: c });
    expect(top).toEqual({ collection_key: c, libraryVersion: world.server.library(USER).version });
    expect(world.server.library(USER).collections.get(c)?.parentCollection).toBe(false);
    expect(requests(world, 'POST', COLLECTIONS)[0]?.body).toEqual([
      { key: c, version: expect.any(Number), parentCollection: false },
    ]);
  });

  it('refuses to make a collection its own ancestor (validation_error), writing nothing', async () => {
    const self = await failure(manage({ action: 'reparent', collection_key: a, parent_collection: a }));
    expect(self).toMatchObject({ code: 'validation_error', field: 'parent_collection' });
    const under = await failure(manage({ action: 'reparent', collection_key: a, parent_collection: c }));
    expect(under).toMatchObject({ code: 'validation_error', field: 'parent_collection' });
    expect(under.message).toBe(
      `Collection ${c} is inside collection ${a}: a collection cannot be moved under itself or one of its own subcollections.`,
    );
    expect(requests(world, 'POST')).toHaveLength(0);
    expect(world.server.library(USER).collections.get(a)?.parentCollection).toBe(false);
  });

  it('a missing parent is not_found', async () => {
    const error = await failure(
      manage({ action: 'reparent', collection_key: b, parent_collection: 'ZZZZ2345' }),
    );
    expect(error).toMatchObject({ code: 'not_found', field: 'parent_collection' });
    expect(requests(world, 'POST')).toHaveLength(0);
  });

  it('reparent after a concurrent edit (412) keeps the other writer’s rename', async () => {
    world.server.faults.concurrentEdit({
      match: { method: 'POST', path: COLLECTIONS },
      apply: (s) => s.library(USER).editCollection(b, { name: 'Renamed meanwhile' }),
    });
    await manage({ action: 'reparent', collection_key: b, parent_collection: d });
    expect(world.server.library(USER).collections.get(b)).toMatchObject({
      name: 'Renamed meanwhile',
      parentCollection: d,
    });
  });

  it('in a group library', async () => {
    const [g1, g2] = world.server.library('groups/10').addCollections([{ name: 'G1' }, { name: 'G2' }]) as [
      string,
      string,
    ];
    await manage({ action: 'rename', collection_key: g1, name: 'Group one', library_id: 10 });
    await manage({ action: 'reparent', collection_key: g2, parent_collection: g1, library_id: 10 });
    const lib = world.server.library('groups/10');
    expect(lib.collections.get(g1)?.name).toBe('Group one');
    expect(lib.collections.get(g2)?.parentCollection).toBe(g1);
  });
});

describe('delete', () => {
  it('deletes the subtree; the result names it and counts the subcollections; items stay', async () => {
    const lib = world.server.library(USER);
    const [a, other] = lib.addCollections([{ name: 'Doomed' }, { name: 'Other' }]) as [string, string];
    const [b, d] = lib.addCollections([
      { name: 'B', parentCollection: a },
      { name: 'D', parentCollection: a },
    ]) as [string, string];
    const [c] = lib.addCollections([{ name: 'C', parentCollection: b }]) as [string];
    const [item] = lib.addItems([{ title: 'Kept', collections: [b, other] }]) as [string];
    world.server.clearLog();

    const out = await manage({ action: 'delete', collection_key: a });
    expect(out).toEqual({
      deleted: a,
      deletedName: 'Doomed',
      subcollectionsDeleted: 3,
      libraryVersion: lib.version,
    });
    for (const k of [a, b, c, d]) expect(lib.collections.has(k)).toBe(false);
    expect(lib.collections.has(other)).toBe(true);
    expect(lib.items.get(item)?.collections).toEqual([other]);
    const del = requests(world, 'DELETE', COLLECTIONS);
    expect(del).toHaveLength(1);
    expect(del[0]?.query.collectionKey).toBe(a);
    expect(del[0]?.headers['if-unmodified-since-version']).toBeDefined();
  });

  it('a leaf costs one read and one DELETE (no listing)', async () => {
    const [leaf] = world.server.library(USER).addCollections([{ name: 'Leaf' }]) as [string];
    world.server.clearLog();
    const out = await manage({ action: 'delete', collection_key: leaf });
    expect(out).toMatchObject({ deleted: leaf, deletedName: 'Leaf', subcollectionsDeleted: 0 });
    expect(countsFor(world, COLLECTIONS)).toEqual({ GET: 1, DELETE: 1 });
  });

  it('a collection that does not exist is not_found, with nothing deleted', async () => {
    const error = await failure(manage({ action: 'delete', collection_key: 'ZZZZ2345' }));
    expect(error).toMatchObject({ code: 'not_found', field: 'collection_key' });
    expect(requests(world, 'DELETE')).toHaveLength(0);
  });

  it('re-reads and deletes again when the library moved meanwhile (412)', async () => {
    const lib = world.server.library(USER);
    const [leaf] = lib.addCollections([{ name: 'Leaf' }]) as [string];
    const [item] = lib.addItems([{ title: 'x' }]) as [string];
    world.server.clearLog();
    world.server.faults.concurrentEdit({
      match: { method: 'DELETE', path: COLLECTIONS },
      apply: (s) => s.library(USER).editItem(item, { title: 'edited' }),
    });
    const out = await manage({ action: 'delete', collection_key: leaf });
    expect(out.deleted).toBe(leaf);
    expect(lib.collections.has(leaf)).toBe(false);
    expect(lib.items.get(item)?.title).toBe('edited');
    const dels = requests(world, 'DELETE', COLLECTIONS);
    expect(dels.map((e) => e.status)).toEqual([412, 204]);
  });

  it('in a group library', async () => {
    const lib = world.server.library('groups/10');
    const [g] = lib.addCollections([{ name: 'G' }]) as [string];
    lib.addCollections([{ name: 'Sub', parentCollection: g }]);
    const out = await manage({ action: 'delete', collection_key: g, library_id: 10 });
    expect(out).toMatchObject({ deleted: g, deletedName: 'G', subcollectionsDeleted: 1 });
    expect(lib.collections.size).toBe(0);
  });
});
