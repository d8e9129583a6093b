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
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../src/core/local/index.js';
import { buildLargeLibrary } from '../src/core/local/sample/index.js';

const ITEMS = Number(process.env.BENCH_LOCAL_ITEMS ?? 50_000);
const COLLECTIONS = Number(process.env.BENCH_LOCAL_COLLECTIONS ?? 2_000);
const RUNS = Number(process.env.BENCH_LOCAL_RUNS ?? 15);

interface Row {
  what: string;
  ms: number;
  note: string;
}

const rows: Row[] = [];
let dir: string | undefined;
let path: string;
let reader: ZoteroSqliteReader;

async function once<T>(what: string, fn: () => Promise<T>, note: (r: T) => string = () => ''): Promise<T> {
  const t = performance.now();
  const r = await fn();
  rows.push({ what, ms: performance.now() - t, note: note(r) });
  return r;
}

/** Median of RUNS runs after the first (warm). */
async function warm<T>(what: string, fn: () => Promise<T>, note: (r: T) => string = () => ''): Promise<T> {
  let last = await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    last = await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const p90 = times[Math.min(times.length - 1, Math.floor(times.length * 0.9))]!;
  rows.push({
    what,
    ms: times[Math.floor(times.length / 2)]!,
    note: `${note(last)}; p90 ${p90.toFixed(1)} ms`,
  });
  return last;
}

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
  const width = Math.max(...rows.map((r) => r.what.length));
  const lines = [
    '',
    `zotero.sqlite reader, ${ITEMS} top-level items, ${COLLECTIONS} collections (median of ${RUNS} warm runs)`,
    '',
    `${'what'.padEnd(width)}  ${'ms'.padStart(9)}  note`,
    ...rows.map((r) => `${r.what.padEnd(width)}  ${r.ms.toFixed(1).padStart(9)}  ${r.note}`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
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
