/**
 * The PostgreSQL search index (issue 23, point 3) against the SQLite index it twins: built from
 * the same zotero.sqlite feed (a generated library of LIBRARY_ITEMS top-level items), each of the
 * 30 committed queries (fixtures/ranking-queries.json) must share at least 8 of its top 10 with
 * the SQLite index, by keywords and by keywords and vectors fused. The 50,000-item check is
 * bench/search-index-postgres.bench-run.ts.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteReader } from '../../../src/core/library/readers/sqlite.js';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import type { Embedder } from '../../../src/core/search-index/embeddings.js';
import type { IndexFeed } from '../../../src/core/search-index/feed.js';
import { queryPgIndex } from '../../../src/core/search-index/postgres-query.js';
import { rankPgIndex, postgresRankedIndex } from '../../../src/core/search-index/postgres-rank.js';
import { queryIndex, type IndexQuery } from '../../../src/core/search-index/query.js';
import {
  searchFulltextMigration,
  searchIndexMigration,
  searchOwner,
  updatePgIndex,
} from '../../../src/core/search-index/postgres.js';
import { sqliteRankedIndex } from '../../../src/core/search-index/ranked.js';
import { indexFile, openIndexDb, type IndexDb } from '../../../src/core/search-index/store.js';
import { updateIndex } from '../../../src/core/search-index/update.js';
import { loadDatabaseClass } from '../../../src/core/sqlite-driver.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import { openPostgresClient, type SqlClient } from '../../../src/core/store/sql.js';
import { buildLargeLibrary } from '../../../src/demo/sample/index.js';
import { postgresUrl } from '../../support/postgres.js';
import { retitle, tempDir } from '../local/helpers.js';

const LIBRARY_ITEMS = 10_000;
const QUERIES = (
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'ranking-queries.json'), 'utf8')) as {
    queries: string[];
  }
).queries;
const A = searchOwner('tenant-a', 'users/0');
const B = searchOwner('tenant-b', 'users/0');

/**
 * A deterministic embedder (no server): each word hashed into one of 64 dimensions, scaled to
 * unit length. Enough to give both indexes the same vectors and compare their fusion.
 */
function hashingEmbedder(): Embedder {
  const embedOne = (text: string): Float32Array => {
    const v = new Float32Array(64);
    for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      let h = 2166136261;
      for (const ch of w) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619);
      v[(h >>> 0) % 64]! += 1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  };
  return {
    provider: 'openai',
    model: 'hashing-64',
    embed: async (texts, options) => {
      const out = texts.map(embedOne);
      options?.onBatch?.(out.length, out.length, out);
      return out;
    },
  };
}

let tmp: ReturnType<typeof tempDir>;
let zotero: ZoteroSqliteReader;
let small: ZoteroSqliteReader;
let feed: IndexFeed;
let smallFeed: IndexFeed;
let index: IndexDb;
let pg: SqlClient;
const embedder = hashingEmbedder();

async function feedOf(path: string): Promise<{ reader: ZoteroSqliteReader; feed: IndexFeed }> {
  const reader = await openZoteroSqlite(path);
  const libraryID = await reader.libraryIdFor({ type: 'user' });
  const lib = createSqliteReader({
    sqlite: reader,
    libraryID,
    library: { type: 'user', id: 0 },
    maxCollections: 1e6,
  });
  return { reader, feed: lib.feed! };
}

beforeAll(async () => {
  tmp = tempDir('zoteus-pg-index-');
  mkdirSync(join(tmp.dir, 'Zotero'));
  mkdirSync(join(tmp.dir, 'Small'));
  await buildLargeLibrary(join(tmp.dir, 'Zotero', 'zotero.sqlite'), {
    items: LIBRARY_ITEMS,
    collections: 200,
  });
  await buildLargeLibrary(join(tmp.dir, 'Small', 'zotero.sqlite'), { items: 300, collections: 5 });
  ({ reader: zotero, feed } = await feedOf(join(tmp.dir, 'Zotero', 'zotero.sqlite')));
  ({ reader: small, feed: smallFeed } = await feedOf(join(tmp.dir, 'Small', 'zotero.sqlite')));
  index = (await openIndexDb(indexFile(join(tmp.dir, 'data'), 'users/0'), { create: true }))!;
  await updateIndex(index, feed, { embedder });
  pg = await openPostgresClient(await postgresUrl());
  await migrate(pg, [searchIndexMigration, searchFulltextMigration]);
}, 300_000);

afterAll(async () => {
  index?.close();
  zotero?.close();
  small?.close();
  await pg?.close();
  tmp?.cleanup();
});

const top10 = (hits: ReadonlyArray<{ key: string }>) => hits.slice(0, 10).map((h) => h.key);
const shared = (a: string[], b: string[]) => a.filter((k) => b.includes(k)).length;

describe('the PostgreSQL search index', () => {
  it('is a migration of the state database, made on PostgreSQL and nothing on SQLite', () => {
    expect(STATE_MIGRATIONS.map((m) => m.id)).toContain('0007_search_index');
    const statements = searchIndexMigration.statements as (d: 'sqlite' | 'postgres') => readonly string[];
    expect(statements('sqlite')).toEqual([]);
    expect(statements('postgres').join('\n')).toMatch(/CREATE EXTENSION IF NOT EXISTS pg_trgm/);
    expect(statements('postgres').join('\n')).toMatch(/USING GIN \(tsv\)/);
    expect(statements('postgres').join('\n')).toMatch(/USING GIN \(tcy gin_trgm_ops\)/);
  });

  it('builds from the same feed, then updates with nothing to do', async () => {
    const built = await updatePgIndex(pg, A, feed, { embedder });
    expect(built.mode).toBe('build');
    const [rows] = await pg.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM search_items WHERE owner = ?',
      [A],
    );
    expect(rows!.n).toBe(Number(index.prepare('SELECT count(*) FROM items').pluck().get()));
    expect(built.added).toBe(rows!.n);
    expect(built.vectors?.embedded).toBe(Number(index.prepare('SELECT count(*) FROM vectors').pluck().get()));
    const again = await updatePgIndex(pg, A, feed, { embedder });
    expect(again).toMatchObject({ mode: 'update', added: 0, changed: 0, deleted: 0 });
  }, 300_000);

  it('shares at least 8 of the top 10 with the SQLite index for each committed query (keywords)', async () => {
    expect(QUERIES).toHaveLength(30);
    const local = sqliteRankedIndex(index);
    const below: Array<[string, number]> = [];
    for (const q of QUERIES) {
      const options = { limit: 10, mode: 'keyword' as const, embedder: undefined };
      const [s, p] = [await local.rank(q, options), await postgresRankedIndex(pg, A).rank(q, options)];
      expect(s.hits.length, q).toBeGreaterThan(0);
      // At least 8 of 10; fewer than 10 hits: as many, at least 8 (or all) shared.
      expect(p.hits.length, q).toBe(s.hits.length);
      const n = shared(top10(s.hits), top10(p.hits));
      if (n < Math.min(8, s.hits.length)) below.push([q, n]);
      // The same shape, field by field: same keys, same kinds of values.
      expect(Object.keys(p.hits[0]!).sort(), q).toEqual(Object.keys(s.hits[0]!).sort());
      expect(p.vectors).toEqual(s.vectors);
      expect(p.notice, q).toBe(s.notice);
    }
    expect(below).toEqual([]);
  }, 300_000);

  it('agrees on scores and snippets of the best hit, not only on keys', async () => {
    const options = { limit: 5, mode: 'keyword' as const, embedder: undefined };
    const s = await sqliteRankedIndex(index).rank('glacier permafrost', options);
    const p = await rankPgIndex(pg, A, 'glacier permafrost', options);
    expect(p.hits[0]!.key).toBe(s.hits[0]!.key);
    expect(p.hits[0]!.matched).toEqual(s.hits[0]!.matched);
    expect(p.hits[0]!.scores.keyword).toBeCloseTo(s.hits[0]!.scores.keyword!, 6);
    expect(p.hits[0]).toMatchObject({
      title: s.hits[0]!.title,
      year: s.hits[0]!.year,
      itemType: s.hits[0]!.itemType,
    });
  }, 60_000);

  it('agrees with an item type or a collection filter too', async () => {
    const [c] = await pg.query<{ ckey: string }>(
      'SELECT ckey FROM search_item_collections WHERE owner = ? GROUP BY ckey ORDER BY count(*) DESC, ckey LIMIT 1',
      [A],
    );
    const below: string[] = [];
    for (const filter of [{ itemType: 'book' }, { collectionKey: c!.ckey }]) {
      for (const q of QUERIES.slice(0, 12)) {
        const options = { limit: 10, mode: 'keyword' as const, embedder: undefined, ...filter };
        const s = await sqliteRankedIndex(index).rank(q, options);
        const p = await rankPgIndex(pg, A, q, options);
        expect(p.hits.length, q).toBe(s.hits.length);
        if (shared(top10(s.hits), top10(p.hits)) < Math.min(8, s.hits.length))
          below.push(`${q} ${JSON.stringify(filter)}`);
        if (filter.itemType) for (const h of p.hits) expect(h.itemType).toBe('book');
      }
    }
    expect(below).toEqual([]);
  }, 120_000);

  it('fuses keywords and vectors as the SQLite index does (hybrid, no pgvector here: arrays)', async () => {
    const disagree: Array<[string, number]> = [];
    for (const q of QUERIES) {
      const options = { limit: 10, mode: 'hybrid' as const, embedder };
      const s = await sqliteRankedIndex(index).rank(q, options);
      const p = await rankPgIndex(pg, A, q, options);
      expect(p.vectors).toEqual({ used: true, model: 'openai:hashing-64' });
      expect(s.vectors).toEqual(p.vectors);
      expect(p.hits.length, q).toBe(s.hits.length);
      const n = shared(top10(s.hits), top10(p.hits));
      if (n < Math.min(8, s.hits.length)) disagree.push([q, n]);
    }
    expect(disagree).toEqual([]);
    const v = await rankPgIndex(pg, A, 'coral', { limit: 3, mode: 'vector', embedder });
    const sv = await sqliteRankedIndex(index).rank('coral', { limit: 3, mode: 'vector', embedder });
    expect(v.hits.map((h) => h.key)).toEqual(sv.hits.map((h) => h.key));
    expect(v.hits[0]!.scores.vector).toBeCloseTo(sv.hits[0]!.scores.vector!, 5);
  }, 300_000);

  it('answers zotero_search_items queries as the SQLite index does (trigram substrings, words inside words)', async () => {
    const cases: IndexQuery[] = [
      { q: 'climate', limit: 25 },
      { q: 'glaci', sort: 'title', direction: 'asc', limit: 25 },
      { q: 'müller ocean', top: true, sort: 'creator', limit: 25 },
      { q: 'ab', sort: 'date', direction: 'desc', start: 10, limit: 20 },
      { q: 'østergaard', sort: 'itemType', limit: 25 },
      { q: 'model 20', top: true, limit: 25 },
      { q: 'ocea', qmode: 'everything', limit: 25 },
      { q: 'permafrost coral', qmode: 'everything', top: true, sort: 'title', limit: 25 },
      {
        q: 'level',
        qmode: 'everything',
        includeTrashed: true,
        sort: 'dateAdded',
        direction: 'asc',
        limit: 25,
      },
      { top: true, tag: 'coral', sort: 'title', limit: 25 },
      { top: true, itemType: '-journalArticle', start: 100, limit: 25 },
      { onlyTrashed: true, limit: 25 },
      { q: 'zzzznothing', limit: 25 },
    ];
    for (const c of cases) {
      const expected = queryIndex(index, c);
      expect(expected, JSON.stringify(c)).toBeDefined();
      expect(await queryPgIndex(pg, A, c), JSON.stringify(c)).toEqual(expected);
    }
    expect((queryIndex(index, { q: 'climate', limit: 1 }) ?? { total: 0 }).total).toBeGreaterThan(100);
    expect(await queryPgIndex(pg, A, { sort: 'publisher' })).toBeUndefined();
  }, 120_000);

  it("keeps each tenant's library to itself", async () => {
    await updatePgIndex(pg, B, smallFeed);
    const keysOfB = new Set(
      (await pg.query<{ key: string }>('SELECT key FROM search_items WHERE owner = ?', [B])).map(
        (r) => r.key,
      ),
    );
    expect(keysOfB.size).toBeLessThan(1000);
    const options = { limit: 50, mode: 'keyword' as const, embedder: undefined };
    const b = await rankPgIndex(pg, B, 'climate', options);
    expect(b.hits.length).toBeGreaterThan(0);
    for (const h of b.hits) expect(keysOfB.has(h.key)).toBe(true);
    // A's answers are as before B came; a library nobody indexed answers nothing.
    const a = await rankPgIndex(pg, A, 'climate', options);
    const s = await sqliteRankedIndex(index).rank('climate', options);
    expect(shared(top10(a.hits), top10(s.hits))).toBeGreaterThanOrEqual(8);
    expect((await rankPgIndex(pg, searchOwner('tenant-c', 'users/0'), 'climate', options)).hits).toEqual([]);
  }, 120_000);
  // Last: it changes the library the other tests read.
  it('follows the changes of the library as the SQLite index does: an edit, a trashed parent, a deletion', async () => {
    const one = async (sql: string) => (await pg.query<{ key: string }>(sql, [A]))[0]!.key;
    const parent = await one(
      'SELECT top AS key FROM search_items WHERE owner = ? AND parent IS NOT NULL AND deleted = 0 ORDER BY rid LIMIT 1',
    );
    const edited = await one(
      `SELECT key FROM search_items i WHERE owner = ? AND parent IS NULL AND deleted = 0 AND key <> '${parent}'
       AND item_type = 'journalArticle' ORDER BY rid DESC LIMIT 1`,
    );
    const gone = await one(
      `SELECT key FROM search_items i WHERE owner = ? AND parent IS NULL AND item_type = 'book'
       AND NOT EXISTS (SELECT 1 FROM search_items c WHERE c.owner = i.owner AND c.parent = i.key) ORDER BY rid LIMIT 1`,
    );
    const libraryID = await zotero.libraryIdFor({ type: 'user' });
    const Database = loadDatabaseClass();
    const raw = new Database(join(tmp.dir, 'Zotero', 'zotero.sqlite'));
    try {
      const touch = (key: string) =>
        raw
          .prepare("UPDATE items SET clientDateModified = '2031-02-03 04:05:06', synced = 0 WHERE key = ?")
          .run(key);
      retitle(raw, libraryID, edited, 'Zpgrevised sediment budgets of fjords');
      touch(edited);
      raw.prepare('INSERT INTO deletedItems (itemID) SELECT itemID FROM items WHERE key = ?').run(parent);
      touch(parent);
      raw.prepare('DELETE FROM items WHERE key = ?').run(gone);
    } finally {
      raw.close();
    }
    const localReport = await updateIndex(index, feed, { embedder });
    const pgReport = await updatePgIndex(pg, A, feed, { embedder });
    expect(pgReport).toMatchObject({ mode: 'update', changed: 2, deleted: 1 });
    expect(pgReport).toMatchObject({
      added: localReport.added,
      changed: localReport.changed,
      deleted: localReport.deleted,
      unchanged: localReport.unchanged,
    });
    const options = { limit: 10, mode: 'keyword' as const, embedder: undefined };
    const found = await rankPgIndex(pg, A, 'zpgrevised fjords', options);
    expect(found.hits.map((h) => h.key)).toEqual([edited]);
    expect(found.hits[0]!.title).toBe('Zpgrevised sediment budgets of fjords');
    for (const c of [
      { onlyTrashed: true },
      { q: 'zpgrevised' },
      { keys: [gone], includeTrashed: true },
      { keys: [parent], includeTrashed: true },
      { top: true, limit: 30 },
    ] satisfies IndexQuery[]) {
      expect(await queryPgIndex(pg, A, c), JSON.stringify(c)).toEqual(queryIndex(index, c));
    }
    expect((await queryPgIndex(pg, A, { onlyTrashed: true }))!.total).toBeGreaterThan(1);
    for (const q of QUERIES.slice(0, 10)) {
      const s = await sqliteRankedIndex(index).rank(q, options);
      const p = await rankPgIndex(pg, A, q, options);
      expect(shared(top10(s.hits), top10(p.hits)), q).toBeGreaterThanOrEqual(Math.min(8, s.hits.length));
    }
  }, 120_000);
});
