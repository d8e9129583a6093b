/**
 * The read tools on a large zotero.sqlite: 50,000 top-level items (about 74,000 with notes,
 * attachments and annotations) and 2,000 collections, built by the seeded generator, read
 * without an API key (the router picks zotero.sqlite).
 *
 * - In process, through the product path (the declaration's `run`, the router, one `deps` as
 *   one MCP server has it), without a search index: the first search (opens the database and
 *   builds the per-library search table in memory), then warm searches, `zotero_get_item`,
 *   tags, stats and digests (medians).
 * - In process with the local search index (`core/search-index`): `zotero_index` builds it in
 *   the sandbox's data directory, then the same searches answer from it.
 * - Whole processes (`bin/zot`, so `npm run build` first), with that index in place, as a user
 *   who has one runs them: `zot --version`, `zot search`, `zot read`, `zot list`,
 *   `zot collection list`, each a fresh process as an agent runs it (medians), after one
 *   unmeasured run that leaves the V8 code cache (bin/zot's, in the sandbox's cache folder);
 *   then search, read and collection list without that cache (ZOTEUS_COMPILE_CACHE=off), and
 *   `zot search` once more with no index, so each figure shows; and `node -e 0`, the floor.
 *
 * ZOTEUS_INDEX_AUTO_MIN_ITEMS=0 everywhere: no search starts a background `zot index build`
 * (one would outlive the bench and run beside the measurements); the index rows use the
 * index built on purpose, and its status is checked before and after the process rows.
 *
 *   npm run build && npm run bench -- bench/read.bench-run.ts
 *
 * Knobs: BENCH_READ_ITEMS (50000), BENCH_READ_COLLECTIONS (2000), BENCH_READ_RUNS (9 warm
 * in-process runs), BENCH_READ_PROCS (5 processes per command), BENCH_READ_DB (copy an
 * existing zotero.sqlite instead of building one).
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadNote, median, printTimingRows, timers, type TimingRow } from './support.js';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/core/deps.js';
import { buildLargeLibrary } from '../src/demo/sample/index.js';
import { fingerprint } from '../src/core/local/sqlite/snapshot.js';
import { indexFile, openIndexDb, readMeta } from '../src/core/search-index/store.js';
import type { AnyTool, Deps } from '../src/core/tool.js';
import { CLI_VERSION } from '../src/core/version.js';
import getItem from '../src/tools/items/get-item.js';
import listTags from '../src/tools/tags/list-tags.js';
import searchItems from '../src/tools/items/search-items.js';
import stats from '../src/tools/library/stats.js';
import summarize from '../src/tools/items/summarize.js';
import indexLibrary from '../src/tools/search/zotero-index.js';

const ITEMS = Number(process.env.BENCH_READ_ITEMS ?? 50_000);
const COLLECTIONS = Number(process.env.BENCH_READ_COLLECTIONS ?? 2_000);
const RUNS = Number(process.env.BENCH_READ_RUNS ?? 9);
const PROCS = Number(process.env.BENCH_READ_PROCS ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');

const rows: TimingRow[] = [];
const { once, warm } = timers(rows, RUNS);
let dir: string;
let dbPath: string;
/** The sandbox with the search index built in its data directory. */
let env: Record<string, string>;
/** The same sandbox with a data directory that holds no index. */
let noIndexEnv: Record<string, string>;
let deps: Deps | undefined;
const opened: Deps[] = [];
/** The library as the router names it (`users/ID`), from the index build's answer. */
let library: string | undefined;

function openDeps(e: Record<string, string>): Deps {
  deps = createDeps({ config: loadConfig(e), env: e, version: CLI_VERSION, surface: 'mcp' });
  opened.push(deps);
  return deps;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(tool: object, input: Record<string, unknown>): Promise<any> {
  const t = tool as AnyTool;
  return t.output.parse(await t.run(t.input.parse(input), deps!));
}

/**
 * What a search in this environment will do with the index: `fresh` (answers from it),
 * `stale` (brings it up to date first, then answers from it), or `none`/`partial`/
 * `other source` (answers without it). Read from the index file's own notes, as the reader
 * decides (`search-index/fresh.ts`), without changing anything.
 */
async function indexState(e: Record<string, string>): Promise<string> {
  const indexDir = join(e.ZOTEUS_DATA_DIR!, 'index');
  const files = existsSync(indexDir) ? readdirSync(indexDir).filter((n) => n.endsWith('.sqlite')) : [];
  if (files.length === 0 || library === undefined) return files.length === 0 ? 'none' : 'unknown';
  const db = await openIndexDb(indexFile(e.ZOTEUS_DATA_DIR!, library), { create: false });
  if (!db) return 'none';
  try {
    if (readMeta(db, 'source') !== `sqlite:${dbPath}`) return 'other source';
    if (readMeta(db, 'complete') !== '1') return 'partial';
    return readMeta(db, 'fingerprint') === fingerprint(dbPath) ? 'fresh' : 'stale';
  } finally {
    db.close();
  }
}

/**
 * Builds in the sandbox's data directories that are still running: a lock file naming a live
 * `zot index build` (`search-index/store.ts`). None should be; one found is stopped (a lock
 * in this sandbox was taken by a process this bench started). A pid is only signalled when its
 * command line says it is such a build: a stale lock's pid may belong to anything by now.
 */
function leftoverBuilds(): string[] {
  const found: string[] = [];
  for (const e of [env, noIndexEnv]) {
    const indexDir = join(e.ZOTEUS_DATA_DIR!, 'index');
    if (!existsSync(indexDir)) continue;
    for (const name of readdirSync(indexDir).filter((n) => n.endsWith('.lock'))) {
      const pid = Number(readFileSync(join(indexDir, name), 'utf8').trim());
      if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        // gone already (a stale lock), or no /proc to tell what it is
      }
      if (!/\bindex build\b/.test(cmdline)) continue;
      process.kill(pid, 'SIGTERM');
      found.push(`${name} (pid ${pid})`);
    }
  }
  return found;
}

/**
 * Median wall time of PROCS fresh `zot` processes (after one unmeasured run). A command that
 * fails is reported with its error code instead of a time.
 */
function processes(
  what: string,
  args: string[],
  check: (stdout: string) => string,
  processEnv: Record<string, string> = env,
): void {
  const runOnce = () => {
    const t = performance.now();
    const r = spawnSync(process.execPath, [ZOT, ...args], { env: processEnv, encoding: 'utf8' });
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
  dbPath = path;
  const source = process.env.BENCH_READ_DB;
  if (source && existsSync(source)) {
    // The WAL too: committed pages not yet checkpointed live there.
    copyFileSync(source, path);
    if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${path}-wal`);
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
    // No search starts a background `zot index build` (see the header).
    ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
    NO_COLOR: '1',
  };
  noIndexEnv = { ...env, ZOTEUS_DATA_DIR: join(dir, 'data-no-index') };
}, 900_000);

afterAll(async () => {
  for (const d of opened) await d.services.close();
  const leftover = dir ? leftoverBuilds() : [];
  rmSync(dir, { recursive: true, force: true });
  printTimingRows(
    `read tools on zotero.sqlite, ${ITEMS} top-level items, ${COLLECTIONS} collections (in process: median of ${RUNS} warm runs; processes: median of ${PROCS}; ${loadNote()})`,
    rows,
  );
  if (leftover.length)
    throw new Error(`background index builds were left running (stopped): ${leftover.join(', ')}`);
});

it('measures the read tools', async () => {
  openDeps(noIndexEnv);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const total = (r: any) => `${r.totalResults} results (${r.backend})`;

  const before = await indexState(noIndexEnv);
  expect(before).toBe('none');
  const first = (await once(
    'in process: first search, no index (open, route, build the in-memory search table)',
    () => call(searchItems, { q: 'sea level', top: true }),
    (r) => `${total(r)}; index: ${before}, not used`,
  )) as { backend: string; totalResults: number; items: Array<{ key: string }> };
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

  // The same searches with the local search index, built first in the sandbox's data directory
  // (the one the processes below use too), by a fresh `deps` as a new MCP server would be.
  openDeps(env);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const built: any = await once(
    'in process: zotero_index build (the index the rows below use)',
    () => call(indexLibrary, { action: 'build' }),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (r: any) =>
      `${r.report.added} rows added, ${(r.status.bytes / 1e6).toFixed(0)} MB (${r.library}, ${r.backend})`,
  );
  library = built.library as string;
  expect(built.backend).toBe('sqlite');
  expect(built.status.state).toBe('complete');
  const state = await indexState(env);
  expect(state).toBe('fresh');
  const firstIndexed = await once(
    'in process, index: first search (open, route, answer from the index)',
    () => call(searchItems, { q: 'sea level', top: true }),
    (r) => `${total(r)}; index: ${state}, used`,
  );
  // The index answers what the in-memory table answered.
  expect(firstIndexed.totalResults).toBe(first.totalResults);
  await warm(
    'in process, index: search "sea level" (top)',
    () => call(searchItems, { q: 'sea level', top: true }),
    total,
  );
  await warm('in process, index: search "müller"', () => call(searchItems, { q: 'müller' }), total);
  await warm(
    'in process, index: search "e" (matches nearly all)',
    () => call(searchItems, { q: 'e', top: true }),
    total,
  );
  await warm(
    'in process, index: search everything "sea level"',
    () => call(searchItems, { q: 'sea level', qmode: 'everything', top: true }),
    total,
  );
  await warm('in process, index: list, first page', () => call(searchItems, { top: true }), total);
  await warm(
    'in process, index: list_tags (first 100)',
    () => call(listTags, {}),
    (r) => `${r.totalResults} tags`,
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
  const searchNote = (s: string) => {
    const d = ok(s);
    return `${d.totalResults} results (${d.backend})${typeof d.message === 'string' ? `; ${d.message}` : ''}`;
  };
  // The processes run with the index built above: it must still be fresh when they start,
  // and stay so (a read that changed zotero.sqlite's fingerprint would make each one update it).
  expect(await indexState(env)).toBe('fresh');
  // This machine's floor: a Node process that does nothing, in the same environment (not the
  // bench's own: an inherited NODE_EXTRA_CA_CERTS alone costs every Node process ~85 ms).
  const bare: number[] = [];
  for (let i = 0; i <= PROCS; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0'], { env });
    if (i > 0) bare.push(performance.now() - t);
  }
  rows.push({ what: 'process: node -e 0', ms: median(bare), note: `min ${Math.min(...bare).toFixed(0)} ms` });
  processes('process: zot --version', ['--version'], (s) => s.trim());
  processes(
    'process, index: zot search "sea level" --limit 25',
    ['search', 'sea level', '--limit', '25'],
    searchNote,
  );
  processes('process, index: zot read KEY', ['read', key], (s) => `${ok(s).backend}`);
  processes(
    'process, index: zot list --limit 25',
    ['list', '--limit', '25'],
    (s) => `${ok(s).totalResults} items`,
  );
  processes('process, index: zot collection list', ['collection', 'list'], (s) => {
    const d = ok(s);
    return `${d.totalResults} collections${typeof d.backend === 'string' ? ` (${d.backend})` : ''}`;
  });
  // The same three without the V8 code cache (ZOTEUS_COMPILE_CACHE=off): every process
  // compiles the CLI's JavaScript afresh, as a first run after an install does.
  const noCache = { ...env, ZOTEUS_COMPILE_CACHE: 'off' };
  processes(
    'process, index, no code cache: zot search "sea level"',
    ['search', 'sea level', '--limit', '25'],
    searchNote,
    noCache,
  );
  processes('process, index, no code cache: zot read KEY', ['read', key], (s) => `${ok(s).backend}`, noCache);
  processes(
    'process, no code cache: zot collection list',
    ['collection', 'list'],
    (s) => `${ok(s).totalResults} collections`,
    noCache,
  );
  expect(await indexState(env)).toBe('fresh');
  processes(
    'process, no index: zot search "sea level" --limit 25',
    ['search', 'sea level', '--limit', '25'],
    searchNote,
    noIndexEnv,
  );
  // Nothing was built for the no-index sandbox behind the bench's back.
  expect(await indexState(noIndexEnv)).toBe('none');
}, 900_000);
