/**
 * The read tools on a large zotero.sqlite: 50,000 top-level items (about 74,000 with notes,
 * attachments and annotations) and 2,000 collections, built by the seeded generator, read
 * without an API key (the router picks zotero.sqlite).
 *
 * - In process, through the product path (the declaration's `run`, the router, one `deps` as
 *   one MCP server has it): the first search (opens the database and builds the per-library
 *   search table), then warm searches, `zotero_get_item`, tags, stats and digests (medians).
 * - Whole processes (`bin/zot`, so `npm run build` first): `zot --version`, `zot search`,
 *   `zot read`, `zot collection list`, each a fresh process as an agent runs it (medians).
 *
 *   npm run build && npm run bench -- bench/read.bench-run.ts
 *
 * Knobs: BENCH_READ_ITEMS (50000), BENCH_READ_COLLECTIONS (2000), BENCH_READ_RUNS (9 warm
 * in-process runs), BENCH_READ_PROCS (5 processes per command), BENCH_READ_DB (reuse an
 * existing zotero.sqlite instead of building one).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { median, printTimingRows, timers, type TimingRow } from './support.js';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/core/deps.js';
import { buildLargeLibrary } from '../src/core/local/sample/index.js';
import type { AnyTool, Deps } from '../src/core/tool.js';
import { CLI_VERSION } from '../src/core/version.js';
import getItem from '../src/tools/items/read/get-item.js';
import listTags from '../src/tools/items/read/list-tags.js';
import searchItems from '../src/tools/items/read/search-items.js';
import stats from '../src/tools/items/read/stats.js';
import summarize from '../src/tools/items/read/summarize.js';

const ITEMS = Number(process.env.BENCH_READ_ITEMS ?? 50_000);
const COLLECTIONS = Number(process.env.BENCH_READ_COLLECTIONS ?? 2_000);
const RUNS = Number(process.env.BENCH_READ_RUNS ?? 9);
const PROCS = Number(process.env.BENCH_READ_PROCS ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');

const rows: TimingRow[] = [];
const { once, warm } = timers(rows, RUNS);
let dir: string;
let env: Record<string, string>;
let deps: Deps | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(tool: object, input: Record<string, unknown>): Promise<any> {
  const t = tool as AnyTool;
  return t.output.parse(await t.run(t.input.parse(input), deps!));
}

/**
 * Median wall time of PROCS fresh `zot` processes (after one unmeasured run). A command that
 * fails is reported with its error code instead of a time.
 */
function processes(what: string, args: string[], check: (stdout: string) => string): void {
  const runOnce = () => {
    const t = performance.now();
    const r = spawnSync(process.execPath, [ZOT, ...args], { env, encoding: 'utf8' });
    const ms = performance.now() - t;
    return { ms, stdout: r.stdout, status: r.status };
  };
  const probe = runOnce();
  if (probe.status !== 0) {
    let code = `exit ${probe.status}`;
    try {
      code = (JSON.parse(probe.stdout) as { error: { code: string; message: string } }).error.message;
    } catch {
      // not an envelope
    }
    rows.push({ what, ms: NaN, note: `not measured: ${code}` });
    return;
  }
  let note = check(probe.stdout);
  const times: number[] = [];
  for (let i = 0; i < PROCS; i++) {
    const r = runOnce();
    times.push(r.ms);
    note = check(r.stdout);
  }
  rows.push({
    what,
    ms: median(times),
    note: `${note}; min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)} ms`,
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-read-'));
  const dataDir = join(dir, 'Zotero');
  mkdirSync(dataDir);
  const path = join(dataDir, 'zotero.sqlite');
  if (process.env.BENCH_READ_DB && existsSync(process.env.BENCH_READ_DB)) {
    copyFileSync(process.env.BENCH_READ_DB, path);
  } else {
    await once(
      'build the library (generator)',
      () => buildLargeLibrary(path, { items: ITEMS, collections: COLLECTIONS }),
      (r) =>
        `${r.items.length} items, ${r.collections.length} collections, ${(statSync(path).size / 1e6).toFixed(0)} MB`,
    );
  }
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: dataDir,
    // No desktop app and no Web API: every read goes to zotero.sqlite.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9',
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    NO_COLOR: '1',
  };
}, 900_000);

afterAll(async () => {
  await deps?.services.close();
  rmSync(dir, { recursive: true, force: true });
  printTimingRows(
    `read tools on zotero.sqlite, ${ITEMS} top-level items, ${COLLECTIONS} collections (in process: median of ${RUNS} warm runs; processes: median of ${PROCS})`,
    rows,
  );
});

it('measures the read tools', async () => {
  deps = createDeps({ config: loadConfig(env), env, version: CLI_VERSION, surface: 'mcp' });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const total = (r: any) => `${r.totalResults} results (${r.backend})`;

  const first = (await once(
    'in process: first search (open, route, build the search table)',
    () => call(searchItems, { q: 'sea level', top: true }),
    total,
  )) as { backend: string; items: Array<{ key: string }> };
  expect(first.backend).toBe('sqlite');
  await warm(
    'in process: search "sea level" (top)',
    () => call(searchItems, { q: 'sea level', top: true }),
    total,
  );
  await warm('in process: search "müller"', () => call(searchItems, { q: 'müller' }), total);
  await warm(
    'in process: search "climate ocean 2019" + type + tag',
    () => call(searchItems, { q: 'climate ocean 2019', itemType: 'journalArticle', tag: 'ocean', top: true }),
    total,
  );
  await warm(
    'in process: search "e" (matches nearly all)',
    () => call(searchItems, { q: 'e', top: true }),
    total,
  );
  await once(
    'in process: first everything search (word index)',
    () => call(searchItems, { q: 'sea level', qmode: 'everything', top: true }),
    total,
  );
  await warm(
    'in process: search everything "sea level"',
    () => call(searchItems, { q: 'sea level', qmode: 'everything', top: true }),
    total,
  );
  await warm('in process: list (zot list), first page', () => call(searchItems, { top: true }), total);
  // A window that holds about 250 items: `zot recent --days N` walks them newest first.
  const newest = await call(searchItems, {
    top: true,
    sort: 'dateAdded',
    direction: 'desc',
    start: 249,
    limit: 1,
  });
  const days = Math.ceil((Date.now() - Date.parse(newest.items[0].data.dateAdded as string)) / 86_400_000);
  await warm(
    `in process: recent, added within ${days} days`,
    () => call(searchItems, { top: true, addedWithinDays: days }),
    total,
  );
  const key = first.items[0]!.key;
  await warm(
    'in process: get_item',
    () => call(getItem, { item_key: key }),
    (r) => `${r.children.length} children`,
  );
  await warm(
    'in process: list_tags (first 100)',
    () => call(listTags, {}),
    (r) => `${r.totalResults} tags`,
  );
  await warm(
    'in process: stats',
    () => call(stats, {}),
    (r) => `${r.items.total} items, ${r.collections} collections`,
  );
  await warm(
    'in process: summarize 25 items (digests)',
    () => call(summarize, {}),
    (r) => `${r.digests.length} digests`,
  );

  if (!existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))) {
    rows.push({ what: 'processes', ms: NaN, note: 'skipped: run `npm run build` first' });
    return;
  }
  const ok = (stdout: string) => {
    const env = JSON.parse(stdout) as { ok: boolean; data: Record<string, unknown> };
    if (env.ok !== true) throw new Error(stdout);
    return env.data;
  };
  processes('process: zot --version', ['--version'], (s) => s.trim());
  processes('process: zot search "sea level" --limit 25', ['search', 'sea level', '--limit', '25'], (s) => {
    const d = ok(s);
    return `${d.totalResults} results (${d.backend})`;
  });
  processes('process: zot read KEY', ['read', key], (s) => `${ok(s).backend}`);
  processes('process: zot list --limit 25', ['list', '--limit', '25'], (s) => `${ok(s).totalResults} items`);
  processes('process: zot collection list', ['collection', 'list'], (s) => {
    const d = ok(s);
    return `${d.totalResults} collections${typeof d.backend === 'string' ? ` (${d.backend})` : ''}`;
  });
}, 900_000);
