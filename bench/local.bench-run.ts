/**
 * The zotero.sqlite reader on a large library: 50,000 top-level items (about 74,000 with
 * notes, attachments and annotations) and 2,000 collections, built by the seeded generator.
 * Measures, in process: opening, the per-library search table (cold), searches (warm: median
 * of repeated runs), listings, hydration, and a snapshot copy. Prints a table.
 *
 *   npm run bench -- bench/local.bench-run.ts
 *
 * Knobs: BENCH_LOCAL_ITEMS (50000), BENCH_LOCAL_COLLECTIONS (2000), BENCH_LOCAL_RUNS (15),
 * BENCH_LOCAL_DB (reuse an existing file instead of building one).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { printTimingRows, timers, type TimingRow } from './support.js';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../src/core/local/index.js';
import { buildLargeLibrary } from '../src/demo/sample/index.js';

const ITEMS = Number(process.env.BENCH_LOCAL_ITEMS ?? 50_000);
const COLLECTIONS = Number(process.env.BENCH_LOCAL_COLLECTIONS ?? 2_000);
const RUNS = Number(process.env.BENCH_LOCAL_RUNS ?? 15);

const rows: TimingRow[] = [];
const { once, warm } = timers(rows, RUNS);
let dir: string | undefined;
let path: string;
let reader: ZoteroSqliteReader;

beforeAll(async () => {
  if (process.env.BENCH_LOCAL_DB && existsSync(process.env.BENCH_LOCAL_DB)) {
    path = process.env.BENCH_LOCAL_DB;
  } else {
    dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-local-'));
    path = join(dir, 'zotero.sqlite');
    await once(
      'build the library (generator)',
      () => buildLargeLibrary(path, { items: ITEMS, collections: COLLECTIONS }),
      (r) =>
        `${r.items.length} items, ${r.collections.length} collections, ${(statSync(path).size / 1e6).toFixed(0)} MB`,
    );
  }
}, 600_000);

afterAll(() => {
  reader?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  printTimingRows(
    `zotero.sqlite reader, ${ITEMS} top-level items, ${COLLECTIONS} collections (median of ${RUNS} warm runs)`,
    rows,
  );
});

it('measures the reader', async () => {
  reader = await once('open (schema check, name maps, libraries)', () => openZoteroSqlite(path));
  const total = (r: { totalResults: number }) => `${r.totalResults} results`;

  await once(
    'first search (builds the search table)',
    () => reader.searchItems(1, { q: 'sea level', limit: 25 }),
    total,
  );
  const sea = await warm(
    'search tcy "sea level"',
    () => reader.searchItems(1, { q: 'sea level', limit: 25 }),
    total,
  );
  expect(sea.totalResults).toBeGreaterThan(0);
  await warm('search tcy "müller"', () => reader.searchItems(1, { q: 'müller', limit: 25 }), total);
  await warm(
    'search tcy "climate ocean 2019"',
    () => reader.searchItems(1, { q: 'climate ocean 2019', limit: 25 }),
    total,
  );
  await warm(
    'search tcy "e" (matches nearly all)',
    () => reader.searchItems(1, { q: 'e', limit: 25 }),
    total,
  );
  await warm('search tcy, no match', () => reader.searchItems(1, { q: 'xylophonequartz', limit: 25 }), total);
  await warm(
    'search tcy + filters (type, tag)',
    () => reader.searchItems(1, { q: 'climate', itemType: 'journalArticle', tag: 'ocean', limit: 25 }),
    total,
  );

  await once(
    'first everything search (builds the word index)',
    () => reader.searchItems(1, { q: 'sea level', qmode: 'everything', limit: 25 }),
    total,
  );
  await warm(
    'search everything "sea level"',
    () => reader.searchItems(1, { q: 'sea level', qmode: 'everything', limit: 25 }),
    total,
  );
  await warm(
    'search everything "müller climate"',
    () => reader.searchItems(1, { q: 'müller climate', qmode: 'everything', limit: 25 }),
    total,
  );
  await warm(
    'search everything, new words each run',
    (() => {
      const words = [
        'kadun',
        'glemar',
        'stroze',
        'henqui',
        'borfel',
        'vosa',
        'mitine',
        'ruka',
        'zelo',
        'prati',
      ];
      let i = 0;
      return () =>
        reader.searchItems(1, { q: `${words[i++ % words.length]} ${i}`, qmode: 'everything', limit: 25 });
    })(),
    total,
  );

  await warm('items, first page by dateModified', () => reader.items(1, { top: true, limit: 25 }), total);
  await warm(
    'items, first page by title',
    () => reader.items(1, { top: true, sort: 'title', limit: 25 }),
    total,
  );
  await warm(
    'items, page 100 by creator',
    () => reader.items(1, { top: true, sort: 'creator', start: 2500, limit: 25 }),
    total,
  );
  const cols = await warm(
    'collections (all)',
    () => reader.collections(1),
    (r) => `${r.length} collections`,
  );
  await warm(
    'items of one collection',
    () => reader.items(1, { collectionKey: cols[0]!.key, limit: 100 }),
    total,
  );
  await warm(
    'item by key',
    () => reader.item(1, sea.items[0]!.key),
    () => '1 item',
  );
  await warm(
    'tags',
    () => reader.tags(1),
    (r) => `${r.length} tags`,
  );
  await once('items, all (hydrate every item)', () => reader.items(1), total);

  const snap = await once('open as a snapshot (copy + open)', () =>
    openZoteroSqlite(path, { mode: 'snapshot' }),
  );
  await once('first search on the snapshot', () => snap.searchItems(1, { q: 'sea level', limit: 25 }), total);
  snap.close();
}, 900_000);
