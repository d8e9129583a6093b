/**
 * The search index fed by zotero.sqlite: it answers exactly what the reader's in-memory table
 * answers (same keys, order and totals), follows edits, trashing and deletions made to the
 * database behind its back (as Zotero makes them), and resumes an interrupted build.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ItemQuery, LibraryReader } from '../../../src/core/library/port.js';
import { createSqliteReader } from '../../../src/core/library/readers/sqlite.js';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import { freshIndex } from '../../../src/core/search-index/fresh.js';
import { indexTags, queryIndex } from '../../../src/core/search-index/query.js';
import { rankIndex } from '../../../src/core/search-index/rank.js';
import {
  indexFile,
  openIndexDb,
  readMeta,
  writeMeta,
  type IndexDb,
} from '../../../src/core/search-index/store.js';
import { updateIndex } from '../../../src/core/search-index/update.js';
import { buildSampleLibrary, SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { retitle, sqlite as sqliteClass, tempDir } from '../local/helpers.js';

const U = SAMPLE_KEYS.user;
let tmp: ReturnType<typeof tempDir>;
let dbPath: string;
let dataDir: string;
let zotero: ZoteroSqliteReader;
let userLib: number;

function readers(): { plain: LibraryReader; indexed: LibraryReader } {
  const base = {
    sqlite: zotero,
    libraryID: userLib,
    library: { type: 'user' as const, id: U.userID },
    maxCollections: 1e6,
  };
  return {
    plain: createSqliteReader(base),
    indexed: createSqliteReader({ ...base, index: { dataDir, autoMinItems: 0 } }),
  };
}

async function withIndex<T>(fn: (db: IndexDb) => T | Promise<T>): Promise<T> {
  const db = (await openIndexDb(indexFile(dataDir, `users/${U.userID}`), { create: true }))!;
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/** Edits the database as Zotero does: the change, a new clientDateModified, synced = 0. */
async function edit(fn: (db: BetterSqlite3.Database) => void): Promise<void> {
  const Database = await sqliteClass();
  const db = new Database(dbPath);
  try {
    db.transaction(() => fn(db))();
  } finally {
    db.close();
  }
}

function touch(db: BetterSqlite3.Database, key: string): void {
  db.prepare(
    "UPDATE items SET clientDateModified = '2031-02-03 04:05:06', synced = 0 WHERE libraryID = ? AND key = ?",
  ).run(userLib, key);
}

beforeAll(async () => {
  tmp = tempDir('zoteus-index-');
  dbPath = join(tmp.dir, 'zotero.sqlite');
  dataDir = join(tmp.dir, 'data');
  await buildSampleLibrary(dbPath);
  zotero = await openZoteroSqlite(dbPath);
  userLib = await zotero.libraryIdFor({ type: 'user' });
});
afterAll(() => {
  zotero?.close();
  tmp?.cleanup();
});

const QUERIES: ItemQuery[] = [
  { q: 'sea level', top: true },
  { q: 'sea level' },
  { q: 'climate', limit: 3, start: 1 },
  { q: 'muller' },
  { q: 'erwarmung ozeane' },
  { q: 'e', top: true },
  { q: 'de' },
  { q: 'sea level', qmode: 'everything', top: true },
  { q: 'transformer', qmode: 'everything' },
  { q: 'ice', qmode: 'everything', top: true, includeTrashed: true },
  { top: true },
  { top: true, sort: 'title' },
  { top: true, sort: 'title', direction: 'desc', start: 2, limit: 5 },
  { sort: 'creator' },
  { sort: 'creator', direction: 'desc' },
  { sort: 'date', limit: 7 },
  { sort: 'itemType', direction: 'desc' },
  { sort: 'dateAdded', includeTrashed: true },
  { onlyTrashed: true },
  { itemType: '-attachment || note' },
  { itemType: 'journalArticle || book', top: true },
  { tag: 'sea level' },
  { tag: ['-sea level'], top: true },
  { collectionKey: U.collections.seaLevel },
  { collectionKey: U.collections.climate, q: 'sea' },
  { since: 3 },
  { keys: [U.items.attentionPaper, U.items.seaLevelArticle, U.items.trashedArticle] },
  { keys: [U.items.attentionPaper, U.items.seaLevelArticle], includeTrashed: true, sort: 'title' },
];

describe('an index built from zotero.sqlite', () => {
  it('builds from every item, reading nothing from the network', async () => {
    const { plain } = readers();
    const report = await withIndex((db) => updateIndex(db, plain.feed!));
    const all = await plain.items({ includeTrashed: true });
    expect(report).toMatchObject({
      mode: 'build',
      added: all.totalResults,
      changed: 0,
      deleted: 0,
      requests: 0,
    });
    const fresh = await freshIndex(dataDir, `users/${U.userID}`, plain.feed!);
    expect(fresh.state).toBe('fresh');
    fresh.db?.close();
  });

  it.each(QUERIES.map((q) => [JSON.stringify(q), q] as const))(
    'answers %s exactly as the in-memory table does',
    async (_, query) => {
      const { plain, indexed } = readers();
      const a = await plain.items(query);
      const b = await indexed.items(query);
      expect(b.items.map((i) => i.key)).toEqual(a.items.map((i) => i.key));
      expect(b.totalResults).toBe(a.totalResults);
      expect(b.items).toEqual(a.items);
    },
  );

  it('lists tags with the same counts', async () => {
    const { plain, indexed } = readers();
    expect(await indexed.tags()).toEqual(await plain.tags());
    expect(await indexed.tags({ includeTrashed: true })).toEqual(await plain.tags({ includeTrashed: true }));
  });

  it('counts the tags of one state of the index once; a changed index counts again', async () => {
    await withIndex((db) => {
      const prepare = db.prepare.bind(db);
      let counted = 0;
      db.prepare = ((sql: string) => {
        if (sql.includes('GROUP BY t.tag')) counted += 1;
        return prepare(sql);
      }) as typeof db.prepare;
      const first = indexTags(db);
      const before = counted;
      expect(before).toBeLessThanOrEqual(1); // an earlier test may have counted this state already
      first[0]!.meta.numItems = -1; // the caller's copy: what is kept is not changed
      expect(indexTags(db)).toEqual(indexTags(db, {}));
      expect(indexTags(db)[0]!.meta.numItems).toBeGreaterThan(0);
      expect(counted).toBe(before);
      const updatedAt = readMeta(db, 'updated_at');
      writeMeta(db, { updated_at: '2000-01-01T00:00:00.000Z' });
      try {
        indexTags(db);
        expect(counted).toBe(before + 1);
      } finally {
        writeMeta(db, { updated_at: updatedAt });
      }
    });
  });

  it('refuses an unknown collection as the reader does', async () => {
    const { indexed } = readers();
    await expect(indexed.items({ collectionKey: 'ZZZZZZZ2' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('ranks a distinctive phrase first, with the field and a snippet of it', async () => {
    const ranked = await withIndex((db) =>
      rankIndex(db, 'Attention Is All You Need', { limit: 5, mode: 'keyword', embedder: undefined }),
    );
    expect(ranked.hits[0]).toMatchObject({ key: U.items.attentionPaper, matched: { field: 'title' } });
    expect(ranked.hits[0]!.matched!.snippet).toContain('«Attention»');
    expect(ranked.vectors).toEqual({ used: false, reason: 'Keyword ranking was asked for.' });
  });
});

describe('kept correct behind its back', () => {
  it('an edit, a new tag, a trashing and a deletion are seen by the next search, reading only what changed', async () => {
    const { plain, indexed } = readers();
    // Counted (and kept) before the edits: the list after them is counted again.
    expect((await indexed.tags()).map((t) => t.tag)).not.toContain('index-test');
    const before = (await indexed.items({ q: 'attention', top: true })).items.map((i) => i.key);
    expect(before).toContain(U.items.attentionPaper);

    const Database = await sqliteClass();
    const raw = new Database(dbPath);
    retitle(raw, userLib, U.items.attentionPaper, 'Transformers without recurrence');
    raw.close();
    await edit((db) => {
      touch(db, U.items.attentionPaper);
      const tagID = db
        .prepare("INSERT INTO tags (name) VALUES ('index-test') RETURNING tagID")
        .pluck()
        .get() as number;
      db.prepare(
        'INSERT INTO itemTags (itemID, tagID, type) SELECT itemID, ?, 0 FROM items WHERE key = ?',
      ).run(tagID, U.items.greenlandArticle);
      touch(db, U.items.greenlandArticle);
      db.prepare('INSERT INTO deletedItems (itemID) SELECT itemID FROM items WHERE key = ?').run(
        U.items.deepLearningBook,
      );
      touch(db, U.items.deepLearningBook);
      db.prepare('DELETE FROM items WHERE key = ?').run(U.items.standaloneNote);
    });

    // The freshness check runs inside the search: compare with the in-memory table again.
    for (const query of [
      { q: 'attention', top: true },
      { q: 'recurrence', top: true },
      { tag: 'index-test' },
      { q: 'deep learning', top: true },
      { q: 'deep learning', top: true, includeTrashed: true },
      { top: true },
    ] satisfies ItemQuery[]) {
      const a = await plain.items(query);
      const b = await indexed.items(query);
      expect({ q: query, keys: b.items.map((i) => i.key), total: b.totalResults }).toEqual({
        q: query,
        keys: a.items.map((i) => i.key),
        total: a.totalResults,
      });
    }
    expect((await indexed.items({ q: 'recurrence', top: true })).items.map((i) => i.key)).toEqual([
      U.items.attentionPaper,
    ]);
    expect((await indexed.items({ tag: 'index-test' })).items.map((i) => i.key)).toEqual([
      U.items.greenlandArticle,
    ]);
    expect(await indexed.tags()).toEqual(await plain.tags());
    expect((await indexed.tags()).map((t) => t.tag)).toContain('index-test');
    expect((await indexed.items({ keys: [U.items.standaloneNote], includeTrashed: true })).totalResults).toBe(
      0,
    );
  });

  it('an update after one edit re-reads that item only; with no change it reads nothing', async () => {
    const { plain } = readers();
    await edit((db) => {
      db.prepare("UPDATE items SET clientDateModified = '2032-01-01 00:00:00', synced = 0 WHERE key = ?").run(
        U.items.muellerThesis,
      );
    });
    const one = await withIndex((db) => updateIndex(db, plain.feed!));
    expect(one).toMatchObject({ mode: 'update', upToDate: false, added: 0, changed: 1, deleted: 0 });
    const none = await withIndex((db) => updateIndex(db, plain.feed!));
    expect(none).toMatchObject({ upToDate: true, added: 0, changed: 0, deleted: 0 });
  });

  it('an update after edits of N items fetches those N items only, and compares only the listed signatures', async () => {
    const { plain } = readers();
    const total = (await plain.items({ includeTrashed: true })).totalResults;
    const edited = [U.items.attentionPaper, U.items.seaLevelArticle];
    await edit((db) => {
      for (const key of edited)
        db.prepare(
          "UPDATE items SET clientDateModified = '2033-01-01 00:00:00', synced = 0 WHERE key = ?",
        ).run(key);
    });
    const fetched: string[] = [];
    const feed = {
      ...plain.feed!,
      fetch: (keys: readonly string[]) => (fetched.push(...keys), plain.feed!.fetch(keys)),
    };
    const report = await withIndex((db) => updateIndex(db, feed));
    expect(report).toMatchObject({ mode: 'update', added: 0, changed: 2, deleted: 0 });
    expect(fetched.sort()).toEqual([...edited].sort());
    // Only the listed items were compared (the edited ones, and those modified at the newest time seen).
    expect(report.unchanged).toBeLessThan(total - 2);
  });

  it('signatures and stats cover every item of a library, the large one read in table order, the small one by its index', async () => {
    const groupLib = await zotero.libraryIdFor({ type: 'group', groupID: SAMPLE_KEYS.group.groupID });
    const counts = new Map<number, number>();
    for (const lib of [userLib, groupLib]) {
      const keys = (await zotero.itemKeys(lib)).sort();
      const { signatures, ids } = await zotero.signatures(lib, {});
      expect([...signatures.keys()].sort()).toEqual(keys);
      expect([...ids.keys()].sort()).toEqual(keys);
      const stats = await zotero.itemStats(lib);
      expect(stats.count).toBe(keys.length);
      expect(stats.idSum).toBe([...ids.values()].reduce((a, b) => a + b, 0));
      counts.set(lib, keys.length);
    }
    // The user library holds most items (read in table order), the group few (by its index).
    expect(counts.get(userLib)! * 2).toBeGreaterThan(counts.get(userLib)! + counts.get(groupLib)!);
    expect(counts.get(groupLib)).toBeGreaterThan(0);
  });

  it('a permanent deletion is found from the list of keys, without comparing every signature', async () => {
    const { plain } = readers();
    const total = (await plain.items({ includeTrashed: true })).totalResults;
    await edit((db) => {
      db.prepare('DELETE FROM items WHERE key = ?').run(U.items.linkedFile);
    });
    const report = await withIndex((db) => updateIndex(db, plain.feed!));
    expect(report).toMatchObject({ mode: 'update', added: 0, changed: 0, deleted: 1 });
    // Only the modified and the trashed items were compared, not the library.
    expect(report.unchanged).toBeLessThan(total - 1);
    const { indexed } = readers();
    expect((await indexed.items({ keys: [U.items.linkedFile], includeTrashed: true })).totalResults).toBe(0);
  });
});

describe('a rebuild', () => {
  it('starts from empty tables, the trigram table too, and gives FTS5 back its merging', async () => {
    const { indexed } = readers();
    await indexed.items({ q: 'attention', top: true }); // built and current
    const feed = indexed.feed!;
    const count = (db: IndexDb, table: string) =>
      db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    await withIndex(async (db) => {
      const rows = count(db, 'items');
      expect(count(db, 'tcy_fts')).toBe(rows);
      // A row no item has, and the settings an interrupted bulk build leaves (the rebuild
      // writes fewer than 2000 rows: not a bulk run).
      db.exec("INSERT INTO tcy_fts (rowid, tcy) VALUES (999999, 'stale trigram row')");
      for (const table of ['docs', 'tcy_fts'])
        db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 0)`);
      await updateIndex(db, feed, { rebuild: true });
      expect(count(db, 'items')).toBe(rows);
      expect(count(db, 'tcy_fts')).toBe(rows);
      // FTS5's default (no setting) or its default value: merging as rows come.
      for (const table of ['docs', 'tcy_fts'])
        expect([undefined, 4]).toContain(
          db.prepare(`SELECT v FROM ${table}_config WHERE k = 'automerge'`).pluck().get(),
        );
    });
  });
});

describe('resuming an interrupted build', () => {
  it('a build stopped after its first batch resumes with what is missing, and ends equal to an uninterrupted one', async () => {
    const copy = join(tmp.dir, 'copy.sqlite');
    copyFileSync(dbPath, copy);
    const other = await openZoteroSqlite(copy);
    try {
      const reader = createSqliteReader({
        sqlite: other,
        libraryID: userLib,
        library: { type: 'user', id: U.userID },
        maxCollections: 1e6,
      });
      // Batches of 5, stopped once the first has landed.
      const feed = { ...reader.feed!, batchSize: 5 };
      const path = join(tmp.dir, 'resume', 'index.sqlite');
      const db = (await openIndexDb(path, { create: true }))!;
      const stop = new AbortController();
      await expect(
        updateIndex(db, feed, {
          signal: stop.signal,
          onProgress: (e) => e.phase === 'items' && stop.abort(),
        }),
      ).rejects.toMatchObject({ retryable: true });
      expect(readMeta(db, 'complete')).toBeUndefined();
      const landed = db.prepare('SELECT count(*) FROM items').pluck().get() as number;
      expect(landed).toBe(5);

      const total = (await reader.items({ includeTrashed: true })).totalResults;
      const resumed = await updateIndex(db, feed);
      expect(resumed).toMatchObject({ mode: 'build', added: total - 5, unchanged: 5 });
      expect(readMeta(db, 'complete')).toBe('1');
      const keysOf = (d: IndexDb) => queryIndex(d, { includeTrashed: true, sort: 'dateAdded' })!;
      const resumedKeys = keysOf(db);
      db.close();

      const fresh = (await openIndexDb(join(tmp.dir, 'whole', 'index.sqlite'), { create: true }))!;
      await updateIndex(fresh, reader.feed!);
      expect(resumedKeys).toEqual(keysOf(fresh));
      fresh.close();
    } finally {
      other.close();
    }
  });
});
