/**
 * The local search index fed by the Web API (the test server, a user library read with a key):
 * what a first build asks for, an update that reads only what changed behind its back, a build
 * interrupted half-way that resumes where it stopped, and an index rebuilt when its source
 * changes. Request counts are the server's own log; answers are read back through the index's
 * queries (queryIndex: zotero_search_items; rankIndex: zotero_semantic_search).
 */
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import type { Deps } from '../../../src/core/tool.js';
import { queryIndex } from '../../../src/core/search-index/query.js';
import { rankIndex } from '../../../src/core/search-index/rank.js';
import {
  indexedLibrary,
  indexStatus,
  runIndexUpdate,
  type IndexedLibrary,
} from '../../../src/core/search-index/service.js';
import { openIndexDb, readMeta, type IndexDb } from '../../../src/core/search-index/store.js';
import { updateIndex, type UpdateReport } from '../../../src/core/search-index/update.js';
import type { ItemSeed, TestLibrary } from '../../support/zotero-server/index.js';
import { ALICE, startWorld, type World } from '../library/world.js';
import { KEY as SAMPLE_KEY, startDesktopWorld, USER_ID, type DesktopWorld } from '../library/router-world.js';

const USER = `users/${ALICE}`;
/** Top-level items besides the special ones below: with them, the library spans several batches of 50. */
const FILLER = 220;

/** Keys of the items the tests speak of (8 characters of Zotero's key alphabet). */
const K = {
  glacier: 'GLACIER2',
  glacierNote: 'GLNTE222',
  glacierPdf: 'GLPDF222',
  glacierAnnotation: 'GLANNT22',
  trashed: 'TRASHED2',
  trashedNote: 'TRNTE222',
  retitled: 'RETITLE2',
  retagged: 'RETAGGE2',
  toTrash: 'TTRASH22',
  toDelete: 'TDELETE2',
  toDeleteNote: 'TDNTE222',
  added: 'ADDEDIT2',
} as const;

/** Seeds the library; returns the keys of the filler items. */
function seedLibrary(lib: TestLibrary): string[] {
  const special: ItemSeed[] = [
    {
      key: K.glacier,
      title: 'Glacier dynamics of outlet streams',
      creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Frost' }],
      date: '2019-04-02',
      tags: [{ tag: 'glaciology' }],
    },
    {
      key: K.glacierNote,
      itemType: 'note',
      parentItem: K.glacier,
      note: '<p>Compare the crevasse maps with the 2015 survey.</p>',
    },
    {
      key: K.glacierPdf,
      itemType: 'attachment',
      parentItem: K.glacier,
      linkMode: 'imported_file',
      title: 'Full Text PDF',
      contentType: 'application/pdf',
      filename: 'frost.pdf',
    },
    {
      key: K.glacierAnnotation,
      itemType: 'annotation',
      parentItem: K.glacierPdf,
      annotationType: 'highlight',
      annotationText: 'meltwater reaches the bed through a moulin',
      annotationComment: 'drainage mechanism',
      annotationColor: '#ffd400',
      annotationPageLabel: '4',
      annotationSortIndex: '00003|000120|00200',
      annotationPosition: '{"pageIndex":3,"rects":[[1,2,3,4]]}',
    },
    {
      key: K.trashed,
      title: 'Discarded draft about permafrost',
      deleted: true,
    },
    { key: K.trashedNote, itemType: 'note', parentItem: K.trashed, note: '<p>Permafrost thaw notes</p>' },
    { key: K.retitled, title: 'Original heading about tundra' },
    { key: K.retagged, title: 'Peatland carbon fluxes', tags: [{ tag: 'carbon' }] },
    { key: K.toTrash, title: 'Sea ice thickness from submarines' },
    { key: K.toDelete, title: 'Obsolete survey of fjords' },
    { key: K.toDeleteNote, itemType: 'note', parentItem: K.toDelete, note: '<p>fjord bathymetry</p>' },
  ];
  lib.addItems(special);
  // Each with a word of its own (f1z, f2z…: no one is inside another).
  return lib.addItems(
    Array.from({ length: FILLER }, (_, i) => ({
      title: `Filler record f${i + 1}z`,
      date: String(1990 + (i % 30)),
    })),
  );
}

let world: World;
let deps: Deps;
let lib: IndexedLibrary;
let filler: string[];
const opened: IndexDb[] = [];

beforeEach(async () => {
  world = await startWorld();
  filler = seedLibrary(world.server.library(USER));
  deps = world.deps();
  lib = await indexedLibrary(deps, {});
  world.server.clearLog();
});
afterEach(async () => {
  for (const db of opened.splice(0)) if (db.open) db.close();
  await deps?.services.close();
  await world?.close();
});

const server = () => world.server.library(USER);
/** Every item the Web API holds: top-level ones, children, trashed ones. */
const itemCount = () => server().items.size;
const itemRequests = () => world.server.log.filter((e) => e.path === `/${USER}/items`);
const versionListings = () => itemRequests().filter((e) => e.query.format === 'versions');
const itemFetches = () => itemRequests().filter((e) => e.query.itemKey !== undefined);
const deletedListings = () => world.server.log.filter((e) => e.path === `/${USER}/deleted`);
/** Keys asked for by `itemKey` batches since the log was cleared. */
const fetchedKeys = () => itemFetches().flatMap((e) => String(e.query.itemKey).split(','));

async function open(): Promise<IndexDb> {
  const db = await openIndexDb(lib.path, { create: false });
  if (!db) throw new Error(`no index at ${lib.path}`);
  opened.push(db);
  return db;
}

async function build(): Promise<UpdateReport> {
  return runIndexUpdate(deps, {}, lib);
}

/** Top-level keys whose title, creators or year hold every word (zotero_search_items' default). */
async function titleSearch(q: string, extra: Parameters<typeof queryIndex>[1] = {}): Promise<string[]> {
  const db = await open();
  try {
    return queryIndex(db, { q, top: true, ...extra })!.keys;
  } finally {
    db.close();
  }
}

async function everything(q: string, extra: Parameters<typeof queryIndex>[1] = {}): Promise<string[]> {
  const db = await open();
  try {
    return queryIndex(db, { q, qmode: 'everything', top: true, ...extra })!.keys;
  } finally {
    db.close();
  }
}

async function ranked(q: string) {
  const db = await open();
  try {
    return await rankIndex(db, q, { limit: 10, mode: 'keyword', embedder: undefined });
  } finally {
    db.close();
  }
}

describe('a first build from the Web API', () => {
  it('lists versions once, then fetches every item in batches of 50: exactly 1 + ⌈n/50⌉ requests', async () => {
    const n = itemCount();
    expect(n).toBe(FILLER + 11);
    const report = await build();
    const fetches = Math.ceil(n / 50);
    expect(world.server.log).toHaveLength(1 + fetches);
    expect(versionListings()).toHaveLength(1);
    expect(versionListings()[0]!.query).toMatchObject({ since: '0', includeTrashed: '1' });
    expect(itemFetches()).toHaveLength(fetches);
    expect(itemFetches().every((e) => String(e.query.itemKey).split(',').length <= 50)).toBe(true);
    // Every item asked for once, trashed ones and children included.
    expect(new Set(fetchedKeys()).size).toBe(n);
    expect(fetchedKeys()).toHaveLength(n);
    expect(deletedListings()).toHaveLength(0);

    expect(report).toEqual({
      mode: 'build',
      upToDate: false,
      added: n,
      changed: 0,
      deleted: 0,
      unchanged: 0,
      requests: 1 + fetches,
      libraryVersion: server().version,
      fulltext: null,
      vectors: null,
    });

    const status = await indexStatus(lib);
    expect(status).toMatchObject({
      state: 'complete',
      building: false,
      items: n,
      // Not the children (3 under the glacier item, 1 under each of two others), not the trashed item.
      topLevel: n - 5 - 1,
      // The trashed item and its note, trashed with it.
      trashed: 2,
      fulltextDocuments: 0,
      vectors: null,
      libraryVersion: server().version,
      source: `web:${deps.config.apiUrl}/${USER}`,
      // Only asking the Web API could tell.
      upToDate: null,
    });
    expect(status.bytes).toBeGreaterThan(0);
    expect(status.updatedAt).not.toBeNull();
  });

  it('holds children under their item and keeps the trash apart', async () => {
    await build();
    // A word only in a child note, and one only in an annotation of the item's PDF, find the item.
    expect(await everything('crevasse')).toEqual([K.glacier]);
    expect(await everything('moulin')).toEqual([K.glacier]);
    // Each child on its own, when children are listed too.
    expect(await everything('crevasse', { top: false })).toEqual([K.glacierNote]);
    expect(await everything('moulin', { top: false })).toEqual([K.glacierAnnotation]);
    // Title, creator and year.
    expect(await titleSearch('glacier frost 2019')).toEqual([K.glacier]);
    // The trashed item and its note are left out unless asked for.
    expect(await titleSearch('permafrost')).toEqual([]);
    expect(await everything('permafrost')).toEqual([]);
    expect(await titleSearch('permafrost', { includeTrashed: true })).toEqual([K.trashed]);
    expect(await everything('thaw', { top: false, onlyTrashed: true })).toEqual([K.trashedNote]);
    expect((await ranked('permafrost')).hits).toEqual([]);

    const db = await open();
    try {
      // The trashed parent's note counts as trashed; the annotation's item is its grandparent.
      const row = db.prepare('SELECT top, deleted FROM items WHERE key = ?');
      expect(row.get(K.trashedNote)).toEqual({ top: K.trashed, deleted: 1 });
      expect(row.get(K.glacierAnnotation)).toEqual({ top: K.glacier, deleted: 0 });
    } finally {
      db.close();
    }
  });
});

describe('an update after edits made elsewhere', () => {
  it('fetches exactly the changed items (versions + deleted + ⌈changed/50⌉) and answers with every change', async () => {
    await build();
    const before = await indexStatus(lib);
    const s = server();
    s.editItem(K.retitled, { title: 'Revised heading about muskeg' });
    s.editItem(K.retagged, { tags: [{ tag: 'carbon' }, { tag: 'wetlands' }] });
    const [added] = s.addItems([{ key: K.added, title: 'Newly added study of pingos' }]);
    s.editItem(K.toTrash, { deleted: true });
    s.deleteItem(K.toDelete);
    expect(s.items.has(K.toDeleteNote)).toBe(false);
    world.server.clearLog();

    const report = await runIndexUpdate(deps, {}, lib);
    const changed = [K.retitled, K.retagged, added, K.toTrash];
    expect(world.server.log).toHaveLength(2 + Math.ceil(changed.length / 50));
    expect(versionListings()).toHaveLength(1);
    expect(Number(versionListings()[0]!.query.since)).toBe(before.libraryVersion);
    expect(deletedListings()).toHaveLength(1);
    expect(Number(deletedListings()[0]!.query.since)).toBe(before.libraryVersion);
    expect(fetchedKeys().sort()).toEqual([...changed].sort());
    expect(report).toMatchObject({
      mode: 'update',
      upToDate: false,
      added: 1,
      changed: 3,
      // The item and its note, deleted with it.
      deleted: 2,
      requests: 3,
      libraryVersion: s.version,
    });

    // The new title matches, the old one no longer does.
    expect(await titleSearch('tundra')).toEqual([]);
    expect(await titleSearch('muskeg')).toEqual([K.retitled]);
    expect((await ranked('tundra')).hits).toEqual([]);
    expect((await ranked('muskeg')).hits.map((h) => h.key)).toEqual([K.retitled]);
    // The new tag.
    expect(await titleSearch('', { tag: 'wetlands' })).toEqual([K.retagged]);
    expect(await everything('wetlands')).toEqual([K.retagged]);
    // The added item.
    expect(await titleSearch('pingos')).toEqual([K.added]);
    // The trashed one: out of searches, in the trash.
    expect(await titleSearch('submarines')).toEqual([]);
    expect(await titleSearch('submarines', { onlyTrashed: true })).toEqual([K.toTrash]);
    expect((await ranked('submarines')).hits).toEqual([]);
    // The deleted one, and its note, are gone, even from the trash.
    expect(await titleSearch('fjords', { includeTrashed: true })).toEqual([]);
    expect(await everything('bathymetry', { top: false, includeTrashed: true })).toEqual([]);

    const after = await indexStatus(lib);
    expect(after).toMatchObject({
      state: 'complete',
      items: before.items + 1 - 2,
      topLevel: before.topLevel + 1 - 1 - 1,
      trashed: before.trashed + 1,
      libraryVersion: s.version,
    });

    // Nothing changed since: the two listings, nothing fetched.
    world.server.clearLog();
    const idle = await runIndexUpdate(deps, {}, lib);
    expect(world.server.log).toHaveLength(2);
    expect(itemFetches()).toHaveLength(0);
    expect(idle).toMatchObject({ mode: 'update', added: 0, changed: 0, deleted: 0, requests: 2 });
    expect(await indexStatus(lib)).toMatchObject({ items: after.items, libraryVersion: s.version });
  });

  it('an item restored from the trash comes back; a child added to an item counts for it', async () => {
    await build();
    const s = server();
    s.editItem(K.trashed, { deleted: false });
    s.addItems([
      { key: 'NEWNTE22', itemType: 'note', parentItem: K.retitled, note: '<p>solifluction lobes</p>' },
    ]);
    world.server.clearLog();
    const report = await runIndexUpdate(deps, {}, lib);
    expect(report).toMatchObject({ added: 1, changed: 1, deleted: 0, requests: 3 });
    expect(await titleSearch('permafrost')).toEqual([K.trashed]);
    // Its note, trashed only through it, is back too.
    expect(await everything('thaw')).toEqual([K.trashed]);
    expect(await everything('solifluction')).toEqual([K.retitled]);
  });
});

describe('an interrupted build resumes', () => {
  /** The index of an uninterrupted build of the same library, row by row. */
  async function snapshot(db: IndexDb) {
    return {
      items: db
        .prepare(
          'SELECT key, parent, top, item_type, deleted, version, sig, title_sort, date_sql FROM items ORDER BY key',
        )
        .all(),
      docs: db
        .prepare(
          'SELECT i.key, d.title, d.creators, d.tags, d.notes, d.annotations, d.fields FROM docs d JOIN items i ON i.rid = d.rowid ORDER BY i.key',
        )
        .all(),
      tags: db
        .prepare('SELECT i.key, t.tag FROM item_tags t JOIN items i ON i.rid = t.rid ORDER BY i.key, t.tag')
        .all(),
      terms: db.prepare('SELECT term FROM terms ORDER BY term').pluck().all(),
    };
  }

  async function reference() {
    // The same library in a second server, built without interruption.
    const other = await startWorld();
    try {
      // The same items, keys and versions: copied over.
      const mine = server();
      const theirs = other.server.library(USER);
      for (const [key, item] of mine.items) theirs.items.set(key, structuredClone(item));
      theirs.version = mine.version;
      const d = other.deps();
      try {
        const l = await indexedLibrary(d, {});
        await runIndexUpdate(d, {}, l);
        const db = (await openIndexDb(l.path, { create: false }))!;
        try {
          return await snapshot(db);
        } finally {
          db.close();
        }
      } finally {
        await d.services.close();
      }
    } finally {
      await other.close();
    }
  }

  it('aborted after the first batch: the batches in flight land, the next build fetches only the rest', async () => {
    const n = itemCount();
    const db = (await openIndexDb(lib.path, { create: true }))!;
    opened.push(db);
    const stop = new AbortController();
    const error = await updateIndex(db, lib.feed, {
      signal: stop.signal,
      onProgress: (e) => {
        if (e.phase === 'items') stop.abort();
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZoteusError);
    expect(error).toMatchObject({ code: 'internal_error', retryable: true });
    // The four batches asked for at once (the feed's concurrency) all landed; no other was asked for.
    expect(itemFetches()).toHaveLength(4);
    const landed = db.prepare('SELECT count(*) FROM items').pluck().get() as number;
    expect(landed).toBe(200);
    db.close();
    expect(await indexStatus(lib)).toMatchObject({ state: 'partial', items: 200 });

    world.server.clearLog();
    const report = await build();
    // A build again: the whole listing, then only what is missing.
    expect(world.server.log).toHaveLength(1 + Math.ceil((n - 200) / 50));
    expect(new Set(fetchedKeys()).size).toBe(n - 200);
    expect(report).toMatchObject({ mode: 'build', added: n - 200, unchanged: 200, changed: 0, deleted: 0 });
    expect(await indexStatus(lib)).toMatchObject({ state: 'complete', items: n });

    const resumed = await open();
    const got = await snapshot(resumed);
    resumed.close();
    expect(got).toEqual(await reference());
  });

  it('a failed request stops the build; the next one fetches only what did not land', async () => {
    const n = itemCount();
    // The first batch fetched fails for good (a 500 is not retried).
    world.server.faults.status({ status: 500, match: { path: 'itemKey=' } });
    const error = await build().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api_error' });
    // The other batches in flight landed; no batch was asked for after the failure.
    expect(itemFetches()).toHaveLength(4);
    const partial = await indexStatus(lib);
    expect(partial).toMatchObject({ state: 'partial', items: 150, building: false });

    world.server.clearLog();
    const report = await build();
    expect(world.server.log).toHaveLength(1 + Math.ceil((n - 150) / 50));
    expect(report).toMatchObject({ mode: 'build', added: n - 150, unchanged: 150 });
    expect(await indexStatus(lib)).toMatchObject({ state: 'complete', items: n });
    const db = await open();
    const got = await snapshot(db);
    db.close();
    expect(got).toEqual(await reference());
  });

  it('an interrupted update: what landed is linked to its item and its trash state at once', async () => {
    await build();
    const s = server();
    const edited = filler.slice(0, 150);
    for (const key of edited) s.editItem(key, { extra: 'edited' });
    s.editItem(K.toTrash, { deleted: true });
    s.editItem(K.glacier, { deleted: true });
    // 152 changed items: 4 batches, all asked for at once. One without the trashed items fails.
    const changed = edited.length + 2;
    world.server.faults.status({
      status: 500,
      match: { path: new RegExp(`^(?!.*(${K.toTrash}|${K.glacier})).*itemKey=`) },
    });
    world.server.clearLog();
    const error = await runIndexUpdate(deps, {}, lib).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api_error' });
    expect(itemFetches()).toHaveLength(4);
    const db = await open();
    const sig = db.prepare('SELECT sig FROM items WHERE key = ?').pluck();
    const landed = (key: string) => sig.get(key) === String(s.items.get(key)!.version);
    expect(landed(K.toTrash) && landed(K.glacier)).toBe(true);
    const done = [K.toTrash, K.glacier, ...edited].filter(landed).length;
    expect(done).toBeLessThan(changed);
    db.close();

    // Searched before the update is through, the trashed items are already out.
    expect(await titleSearch('submarines')).toEqual([]);
    expect(await everything('moulin')).toEqual([]);

    world.server.clearLog();
    const report = await runIndexUpdate(deps, {}, lib);
    expect(world.server.log).toHaveLength(2 + Math.ceil((changed - done) / 50));
    expect(report).toMatchObject({ mode: 'update', changed: changed - done, unchanged: done, added: 0 });
    expect(await titleSearch('submarines')).toEqual([]);
    expect(await titleSearch('submarines', { onlyTrashed: true })).toEqual([K.toTrash]);
    // The trashed item's note and its PDF's annotation are in the trash with it.
    expect(await everything('moulin')).toEqual([]);
    expect(await everything('crevasse', { top: false, onlyTrashed: true })).toEqual([K.glacierNote]);
    expect(await everything('moulin', { top: false, onlyTrashed: true })).toEqual([K.glacierAnnotation]);
  });

  it('a large build (words collected in bulk) interrupted: the rows that landed are found by word', async () => {
    // More than 2000 rows to write: the build collects their words in one pass at the end.
    server().addItems(Array.from({ length: 1900 }, (_, i) => ({ title: `Bulk entry b${i + 1}q` })));
    const n = itemCount();
    const db = (await openIndexDb(lib.path, { create: true }))!;
    opened.push(db);
    const stop = new AbortController();
    const error = await updateIndex(db, lib.feed, {
      signal: stop.signal,
      onProgress: (e) => {
        if (e.phase === 'items') stop.abort();
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal_error' });
    const first = db.prepare('SELECT key FROM items ORDER BY key').pluck().all() as string[];
    expect(first).toHaveLength(200);
    // The query indexes are made at the end of the build (a sort each): owed so far.
    const fresh = (await openIndexDb(join(dirname(lib.path), 'fresh.sqlite'), { create: true }))!;
    opened.push(fresh);
    const allIndexes = indexesOf(fresh);
    expect(allIndexes.map((i) => i.name)).toContain('items_title_sort');
    expect(indexesOf(db).map((i) => i.name)).toEqual([
      'items_parent',
      'item_tags_rid',
      'item_collections_rid',
    ]);
    expect(readMeta(db, 'indexes_pending')).toBe('1');
    // FTS5 merges nothing while a bulk run lasts (its 'optimize' at the end merges once).
    expect(mergingOf(db)).toEqual({
      docs: { automerge: 0, crisismerge: 1999 },
      tcy_fts: { automerge: 0, crisismerge: 1999 },
    });
    db.close();

    // The rest is fewer than 2000 rows: not a bulk run, yet the first rows' words are there,
    // and the indexes are made by it: the file has those of a new one, in the same order.
    const report = await build();
    expect(report).toMatchObject({ mode: 'build', added: n - 200, unchanged: 200 });
    const after = await open();
    expect(indexesOf(after)).toEqual(allIndexes);
    expect(readMeta(after, 'indexes_pending')).toBeUndefined();
    // The run that completed it gave FTS5 its defaults back.
    expect(mergingOf(after)).toEqual({
      docs: { automerge: 4, crisismerge: 16 },
      tcy_fts: { automerge: 4, crisismerge: 16 },
    });
    after.close();
    // Every landed row is found by a word of its own: a filler's, or a bulk entry's `b…q`
    // (which rows land first depends on the feed's order, so both kinds are checked).
    const wordOf = (key: string): string =>
      filler.includes(key)
        ? /f\d+z/.exec(s(key))![0]
        : /b\d+q/.exec(String(server().items.get(key)?.title ?? ''))![0];
    const byWord = await Promise.all(
      first.map(async (key) => ({ key, found: await everything(wordOf(key)) })),
    );
    expect(byWord).toHaveLength(200);
    for (const { key, found } of byWord) expect(found).toEqual([key]);
    expect(await everything('b1900q')).toHaveLength(1);

    function mergingOf(d: IndexDb): Record<string, Record<string, number>> {
      const out: Record<string, Record<string, number>> = {};
      for (const table of ['docs', 'tcy_fts']) {
        const rows = d
          .prepare(`SELECT k, v FROM ${table}_config WHERE k IN ('automerge', 'crisismerge')`)
          .all() as Array<{
          k: string;
          v: number;
        }>;
        out[table] = Object.fromEntries(rows.map((r) => [r.k, r.v]));
      }
      return out;
    }

    function indexesOf(d: IndexDb): Array<{ name: string; sql: string }> {
      return d
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        .all() as Array<{ name: string; sql: string }>;
    }

    function s(key: string): string {
      return String(server().items.get(key)!.title);
    }
  });
});

describe('the source of an index', () => {
  let desk: DesktopWorld;
  afterEach(async () => {
    await desk?.close();
  });

  it('an index built from zotero.sqlite is rebuilt from the Web API when reads move there', async () => {
    desk = await startDesktopWorld();
    const local = desk.deps();
    const web = desk.deps({ env: { ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: SAMPLE_KEY } });
    try {
      const fromDb = await indexedLibrary(local, {});
      expect(fromDb.backend).toBe('sqlite');
      const first = await runIndexUpdate(local, {}, fromDb);
      expect(first).toMatchObject({ mode: 'build', requests: 0 });
      expect(desk.server.log).toHaveLength(0);
      const sqliteStatus = await indexStatus(fromDb);
      expect(sqliteStatus.source).toBe(`sqlite:${desk.dbPath}`);
      expect(sqliteStatus.upToDate).toBe(true);

      const fromWeb = await indexedLibrary(web, {});
      expect(fromWeb.backend).toBe('web');
      // The same library, so the same index file.
      expect(fromWeb.path).toBe(fromDb.path);
      expect(fromWeb.library).toBe(`users/${USER_ID}`);
      // Seen from the Web API, the index is of another source: not up to date.
      expect((await indexStatus(fromWeb)).upToDate).toBe(false);
      desk.server.clearLog();
      const second = await runIndexUpdate(web, {}, fromWeb);
      // Emptied and built again from the Web API: nothing counted as unchanged.
      expect(second).toMatchObject({ mode: 'build', unchanged: 0, changed: 0, deleted: 0 });
      const webStatus = await indexStatus(fromWeb);
      expect(second.added).toBe(webStatus.items);
      expect(second.requests).toBe(1 + Math.ceil(webStatus.items / 50));
      expect(webStatus).toMatchObject({
        state: 'complete',
        source: `web:${web.config.apiUrl}/users/${USER_ID}`,
      });
      // The same items as from the database.
      expect(webStatus.items).toBe(sqliteStatus.items);
      expect(webStatus.topLevel).toBe(sqliteStatus.topLevel);

      // And back: from the database again, rebuilt once more.
      const third = await runIndexUpdate(local, {}, await indexedLibrary(local, {}));
      expect(third).toMatchObject({ mode: 'build', unchanged: 0, added: sqliteStatus.items });
    } finally {
      await local.services.close();
      await web.services.close();
    }
  });
});
