/**
 * The PostgreSQL search index (`src/core/search-index/postgres*.ts`, issue 23 point 3) against
 * the SQLite index it twins, on the generated library of 50,000 top-level items (about 74,000
 * rows): both built from the same zotero.sqlite feed, then each of the 30 queries committed
 * before the PostgreSQL index was written (test/core/search-index/fixtures/ranking-queries.json)
 * ranked by keywords by both, limit 10. Printed: the build times and sizes, and per query how
 * many of the top 10 agree and each engine's median time. Asserted: at least 8 of 10 agree for
 * every query (the bar); a query with fewer than 10 hits: as many hits, at least 8 (or
 * all of them) shared.
 *
 *   node bench/run.mjs bench/search-index-postgres.bench-run.ts
 *
 * PostgreSQL: ZOTEUS_TEST_DATABASE_URL (a database is created in that cluster), else a
 * throwaway cluster from scripts/postgres-cluster.mjs. Knobs: BENCH_INDEX_DB (copy this
 * zotero.sqlite instead of generating one), BENCH_INDEX_ITEMS (50000), BENCH_INDEX_QUERY_RUNS (5).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadNote, median, printTable, printTimingRows, timers, type TimingRow } from './support.js';
import { createSqliteReader } from '../src/core/library/readers/sqlite.js';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../src/core/local/index.js';
import { postgresRankedIndex } from '../src/core/search-index/postgres-rank.js';
import {
  searchFulltextMigration,
  searchIndexMigration,
  searchOwner,
  updatePgIndex,
} from '../src/core/search-index/postgres.js';
import { sqliteRankedIndex } from '../src/core/search-index/ranked.js';
import { indexFile, openIndexDb, type IndexDb } from '../src/core/search-index/store.js';
import { updateIndex } from '../src/core/search-index/update.js';
import { migrate } from '../src/core/store/migrations.js';
import { openPostgresClient, type SqlClient } from '../src/core/store/sql.js';
import { buildLargeLibrary } from '../src/demo/sample/index.js';

const ITEMS = Number(process.env.BENCH_INDEX_ITEMS ?? 50_000);
const QUERY_RUNS = Number(process.env.BENCH_INDEX_QUERY_RUNS ?? 5);
const QUERIES = (
  JSON.parse(
    readFileSync(
      join(import.meta.dirname, '..', 'test', 'core', 'search-index', 'fixtures', 'ranking-queries.json'),
      'utf8',
    ),
  ) as { queries: string[] }
).queries;
const OWNER = searchOwner('bench-tenant', 'users/0');

const rows: TimingRow[] = [];
const { once } = timers(rows, 1);
let dir: string;
let sqlite: ZoteroSqliteReader | undefined;
let index: IndexDb | undefined;
let db: SqlClient | undefined;
let stopCluster: (() => void) | undefined;

async function postgresDatabase(): Promise<string> {
  let base = process.env.ZOTEUS_TEST_DATABASE_URL;
  if (!base) {
    // @ts-expect-error: a plain .mjs script of the repository, without types.
    const cluster = (await import('../scripts/postgres-cluster.mjs')) as {
      startCluster(): Promise<{ url: string; stop(): void }>;
    };
    const started = await cluster.startCluster();
    stopCluster = () => started.stop();
    base = started.url;
  }
  const name = `zb_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(base);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-pg-index-'));
  mkdirSync(join(dir, 'Zotero'));
  const dbPath = join(dir, 'Zotero', 'zotero.sqlite');
  const source = process.env.BENCH_INDEX_DB;
  if (source && existsSync(source)) {
    copyFileSync(source, dbPath);
    if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${dbPath}-wal`);
  } else {
    await once(
      'build the library (generator)',
      () => buildLargeLibrary(dbPath, { items: ITEMS, collections: 2000 }),
      (r) => `${r.items.length} items`,
    );
  }
  db = await openPostgresClient(await postgresDatabase());
  await migrate(db, [searchIndexMigration, searchFulltextMigration]);
}, 900_000);

afterAll(async () => {
  index?.close();
  sqlite?.close();
  await db?.close();
  stopCluster?.();
  rmSync(dir, { recursive: true, force: true });
  printTimingRows(
    `PostgreSQL search index beside the SQLite one, ${ITEMS} top-level items (${loadNote()})`,
    rows,
  );
});

it('agrees with the SQLite index on the top 10 of each committed query', async () => {
  sqlite = await openZoteroSqlite(join(dir, 'Zotero', 'zotero.sqlite'));
  const libraryID = await sqlite.libraryIdFor({ type: 'user' });
  const feed = createSqliteReader({
    sqlite,
    libraryID,
    library: { type: 'user', id: 0 },
    maxCollections: 1e6,
  }).feed!;
  const path = indexFile(join(dir, 'data'), 'users/0');
  index = (await openIndexDb(path, { create: true }))!;
  const local = index;
  await once(
    'SQLite index: build',
    () => updateIndex(local, feed),
    (r) => `${r.added} rows, ${(statSync(path).size / 1e6).toFixed(1)} MB (before the WAL checkpoint)`,
  );
  const pgdb = db!;
  await once(
    'PostgreSQL index: build',
    () => updatePgIndex(pgdb, OWNER, feed),
    (r) => `${r.added} rows`,
  );
  const [size] = await pgdb.query<{ bytes: number }>(
    `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
     WHERE c.relkind = 'r' AND c.relname LIKE 'search\\_%'`,
  );
  rows.push({
    what: 'PostgreSQL index: size (tables and indexes)',
    ms: 0,
    note: `${(Number(size!.bytes) / 1e6).toFixed(1)} MB`,
  });

  const sqliteIndex = sqliteRankedIndex(local);
  const pgIndex = postgresRankedIndex(pgdb, OWNER);
  const options = { limit: 10, mode: 'keyword' as const, embedder: undefined };
  const table: Array<Record<string, unknown>> = [];
  const below: string[] = [];
  for (const q of QUERIES) {
    const sTimes: number[] = [];
    const pTimes: number[] = [];
    let s: Awaited<ReturnType<typeof sqliteIndex.rank>> | undefined;
    let p: typeof s;
    for (let i = 0; i < QUERY_RUNS; i++) {
      let t = performance.now();
      s = await sqliteIndex.rank(q, options);
      sTimes.push(performance.now() - t);
      t = performance.now();
      p = await pgIndex.rank(q, options);
      pTimes.push(performance.now() - t);
    }
    const sKeys = s!.hits.map((h) => h.key);
    const pKeys = p!.hits.map((h) => h.key);
    const agree = sKeys.filter((k) => pKeys.includes(k)).length;
    // At least 8 of 10; a query with fewer hits than 10: the same number, at least 8 (or all) shared.
    if (pKeys.length !== sKeys.length || agree < Math.min(8, sKeys.length))
      below.push(`${q}: ${agree} of ${sKeys.length} (PostgreSQL found ${pKeys.length})`);
    table.push({
      query: q,
      'top 10 agree': `${agree}/${Math.max(sKeys.length, pKeys.length)}`,
      'same order': sKeys.join() === pKeys.join() ? 'yes' : 'no',
      'sqlite ms': median(sTimes).toFixed(1),
      'postgres ms': median(pTimes).toFixed(1),
      capped: s!.notice ? 'yes' : '',
    });
  }
  printTable(`Top 10 by keywords, SQLite index and PostgreSQL index (median of ${QUERY_RUNS} runs)`, table);
  expect(below).toEqual([]);
}, 1_800_000);
