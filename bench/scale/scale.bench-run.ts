/**
 * Curves, not points (issue 24): the read commands at 10,000, 50,000 and 250,000 top-level
 * items, and how each figure grows from one size to the next. For every size, a zotero.sqlite
 * from the seeded generator at realistic shares (`library.ts`: a PDF on 70 % of the items, a
 * fifth of them annotated with up to 12 annotations, keyword tags on 40 %, one collection per
 * 25 items, a 1,000-item group), cached on disk by options and generator sources; the bench
 * works on a copy of it in a temporary folder, read without an API key (the router picks
 * zotero.sqlite), with ZOTEUS_INDEX_AUTO_MIN_ITEMS=0 (no read starts a background build).
 *
 * Per size:
 * - in process, through the product path (the declaration's `run`, one `deps` as one MCP
 *   server has it): the search index built (`zotero_index` build), then p50/p99 of
 *   `zotero_search_items` and of `zotero_semantic_search` over BENCH_SCALE_CALLS calls (five
 *   queries in turn, after one unmeasured call of each), and `zotero_export` of the whole
 *   library as BibTeX saved to a file;
 * - whole processes of the built CLI (`bin/zot`) with that index in place: `zot read KEY`,
 *   `zot collection list`, `zot search Q`, `zot tag list`, `zot stats`,
 *   `zot semantic-search Q`, `zot export KEY` (BibTeX of one item) and `node -e 0`, the floor,
 *   in rounds (`processes.ts`: median of BENCH_SCALE_PROCS after an unmeasured round that
 *   leaves the V8 code cache), each with its ratio to the floor and its peak RSS; then
 *   `zot export --all --save FILE` once, with its peak RSS;
 * - MCP at scale, on the largest size (BENCH_SCALE_MCP=all: on every size; off: never): one
 *   `zoteus` server over stdio, BENCH_SCALE_MCP_CALLS rounds of `tools/call` of the main read
 *   tools, p50/p99 per tool, and the server's VmRSS/VmHWM after them (`mcp.ts`);
 * - 100 changes made to the copy as Zotero makes them (`changes.ts`), then the index's
 *   update (`zotero_index` update), timed, its counts asserted.
 * Then the ratio of every figure between consecutive sizes, flagged when it is above the
 * ratio of the sizes (the data grows 5× from 50,000 to 250,000: a figure that grows more than
 * 5× is a defect to fix or explain).
 *
 *   npm run build && node bench/run.mjs bench/scale/scale.bench-run.ts
 *
 * (`bash /tmp/build.sh` builds as well; without a build the process and MCP rows say they were
 * skipped.) Generating the libraries the first time takes long (minutes at 250,000); the cache
 * makes a re-run start at once.
 *
 * Knobs: BENCH_SCALE_SIZES (10000,50000,250000), BENCH_SCALE_CACHE (the cache folder, default
 * $TMPDIR/zoteus-scale-cache), BENCH_SCALE_CALLS (200 in-process calls per figure),
 * BENCH_SCALE_PROCS (5 processes per command), BENCH_SCALE_MCP (largest|all|off),
 * BENCH_SCALE_MCP_CALLS (200 calls of each tool), BENCH_SCALE_MCP_BUDGET_S (300: a tool's calls stop
 * once they have taken that long, after at least 20), BENCH_SCALE_OUT (also write the figures as
 * JSON to this file).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { loadNote, median, percentile, printTable } from '../support.js';
import { ADDED_TAG, TITLE_MARK, zoteroChanges } from './changes.js';
import { cachedLibrary, cacheDir, copyLibrary, scaleOptions } from './library.js';
import { mcpAtScale, type McpCall } from './mcp.js';
import { runProcess, timeProcesses, type ProcessCommand } from './processes.js';
import { loadConfig } from '../../src/core/config.js';
import { createDeps } from '../../src/core/deps.js';
import { loadDatabaseClass } from '../../src/core/sqlite-driver.js';
import type { AnyTool, Deps } from '../../src/core/tool.js';
import { CLI_VERSION } from '../../src/core/version.js';
import exportItems from '../../src/tools/citations/export.js';
import searchItems from '../../src/tools/items/search-items.js';
import semanticSearch from '../../src/tools/search/semantic-search.js';
import indexLibrary from '../../src/tools/search/zotero-index.js';

const SIZES = (process.env.BENCH_SCALE_SIZES ?? '10000,50000,250000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isSafeInteger(n) && n > 0);
const CALLS = Number(process.env.BENCH_SCALE_CALLS ?? 200);
const PROCS = Number(process.env.BENCH_SCALE_PROCS ?? 5);
const MCP = process.env.BENCH_SCALE_MCP ?? 'largest';
const MCP_CALLS = Number(process.env.BENCH_SCALE_MCP_CALLS ?? 200);
const MCP_BUDGET_S = Number(process.env.BENCH_SCALE_MCP_BUDGET_S ?? 300);
const OUT = process.env.BENCH_SCALE_OUT;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');
const ZOTEUS = join(ROOT, 'dist', 'bin', 'zoteus.js');
const BUILT = existsSync(join(ROOT, 'dist', 'bundle', 'bin', 'zot.js')) && existsSync(ZOTEUS);

/** The queries searched in turn, in process, over MCP and (the first) by `zot search`. */
const QUERIES = ['sea level', 'müller', 'climate ocean', 'glacier permafrost', 'bayesian inference'];

/**
 * One figure of one size. `x` figures are ratios to the floor, and are not compared between
 * sizes; nor is a figure of the bench's own work (`compare: false`: the generator's time).
 */
interface Figure {
  what: string;
  value: number;
  unit: 'ms' | 'MB' | 'x';
  note: string;
  compare?: false;
}

interface SizeResult {
  items: number;
  options: ReturnType<typeof scaleOptions>;
  library: string;
  figures: Figure[];
}

const results: SizeResult[] = [];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(deps: Deps, tool: object, input: Record<string, unknown>): Promise<any> {
  const t = tool as AnyTool;
  return t.output.parse(await t.run(t.input.parse(input), deps));
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const t = performance.now();
  const result = await fn();
  return { ms: performance.now() - t, result };
}

/** p50 and p99 of `calls` calls of `fn(query)`, the queries in turn, after one unmeasured call of each. */
async function latencies<T>(
  calls: number,
  fn: (q: string) => Promise<T>,
): Promise<{ p50: number; p99: number; max: number; last: T }> {
  let last: T | undefined;
  for (const q of QUERIES) last = await fn(q);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    last = await fn(QUERIES[i % QUERIES.length]!);
    times.push(performance.now() - t);
  }
  return { p50: median(times), p99: percentile(times, 0.99), max: Math.max(...times), last: last! };
}

/** What the library holds, counted in the copy (read-only connection, closed after). */
function describeLibrary(path: string): string {
  const Database = loadDatabaseClass();
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    const rows = count('SELECT count(*) FROM items');
    const notes = count('SELECT count(*) FROM itemNotes');
    const attachments = count('SELECT count(*) FROM itemAttachments');
    const annotations = count('SELECT count(*) FROM itemAnnotations');
    const collections = count('SELECT count(*) FROM collections');
    const tags = count('SELECT count(*) FROM tags');
    const links = count('SELECT count(*) FROM itemTags');
    return `${rows} rows (${notes} notes, ${attachments} attachments, ${annotations} annotations), ${collections} collections, ${tags} distinct tags on ${links} links, ${(statSync(path).size / 1e6).toFixed(0)} MB`;
  } finally {
    db.close();
  }
}

/** The envelope's data, or a thrown error with the envelope when it is not `ok`. */
function ok(stdout: string): Record<string, unknown> {
  const env = JSON.parse(stdout) as { ok: boolean; data: Record<string, unknown> };
  if (env.ok !== true) throw new Error(stdout.slice(0, 500));
  return env.data;
}

const total = (d: Record<string, unknown>) =>
  `${String(d.totalResults ?? (Array.isArray(d.hits) ? d.hits.length : '?'))} results`;

for (const items of SIZES) {
  it(
    `measures ${items} top-level items`,
    async () => {
      const figures: Figure[] = [];
      const add = (what: string, value: number, unit: Figure['unit'], note = '', compare?: false) =>
        figures.push({ what, value, unit, note, ...(compare === false ? { compare } : {}) });
      const options = scaleOptions(items);
      const cached = await cachedLibrary(options);
      const dir = mkdtempSync(join(tmpdir(), `zoteus-bench-scale-${items}-`));
      const opened: Deps[] = [];
      try {
        const dataDir = join(dir, 'Zotero');
        mkdirSync(dataDir);
        const dbPath = join(dataDir, 'zotero.sqlite');
        copyLibrary(cached.path, dbPath);
        const library = describeLibrary(dbPath);
        if (cached.builtMs !== undefined)
          add(
            'generate the library (the bench, not compared)',
            cached.builtMs,
            'ms',
            'built now, cached for next time',
            false,
          );
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dir,
          ZOT_CONFIG_DIR: join(dir, 'config'),
          ZOT_CACHE_DIR: join(dir, 'cache'),
          ZOTEUS_DATA_DIR: join(dir, 'data'),
          ZOTERO_DATA_DIR: dataDir,
          // No desktop app and no Web API: every read goes to zotero.sqlite.
          ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9',
          ZOTERO_API_URL: 'http://127.0.0.1:9',
          // No read starts a background `zot index build` beside the measurements.
          ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
          NO_COLOR: '1',
        };
        const deps = createDeps({ config: loadConfig(env), env, version: CLI_VERSION, surface: 'mcp' });
        opened.push(deps);

        // The index every row below uses (semantic search needs it; the others answer from it too).
        const built = await timed(() => call(deps, indexLibrary, { action: 'build' }));
        expect(built.result.backend).toBe('sqlite');
        expect(built.result.status.state).toBe('complete');
        add(
          'in process: index build',
          built.ms,
          'ms',
          `${built.result.report.added} rows, ${(built.result.status.bytes / 1e6).toFixed(0)} MB`,
        );
        const upToDate = async () =>
          (await call(deps, indexLibrary, { action: 'status' })).status.upToDate as boolean | null;

        const search = await latencies(CALLS, (q) => call(deps, searchItems, { q }));
        add('in process: search p50', search.p50, 'ms', `${CALLS} calls of ${QUERIES.length} queries`);
        add('in process: search p99', search.p99, 'ms', `max ${search.max.toFixed(1)} ms`);
        const semantic = await latencies(CALLS, (q) => call(deps, semanticSearch, { q }));
        add('in process: semantic search p50', semantic.p50, 'ms', `${CALLS} calls; ${semantic.last.mode}`);
        add('in process: semantic search p99', semantic.p99, 'ms', `max ${semantic.max.toFixed(1)} ms`);
        const first = await call(deps, searchItems, { q: QUERIES[0] });
        const key = first.items[0].key as string;

        const bib = join(dir, 'library.bib');
        const exported = await timed(() =>
          call(deps, exportItems, { all: true, format: 'bibtex', save_path: bib, overwrite: true }),
        );
        add(
          'in process: export the whole library (BibTeX, saved)',
          exported.ms,
          'ms',
          `${exported.result.totalResults} items, ${(statSync(bib).size / 1e6).toFixed(1)} MB`,
        );
        expect(await upToDate()).toBe(true);

        if (!BUILT) {
          add('processes and MCP', NaN, 'ms', 'skipped: run `npm run build` (or bash /tmp/build.sh) first');
        } else {
          const commands: ProcessCommand[] = [
            { what: 'node -e 0', args: ['-e', '0'] },
            { what: 'zot read KEY', args: [ZOT, 'read', key], check: (s) => String(ok(s).backend) },
            {
              what: 'zot collection list',
              args: [ZOT, 'collection', 'list'],
              check: (s) => `${String(ok(s).totalResults)} collections`,
            },
            {
              what: `zot search "${QUERIES[0]}"`,
              args: [ZOT, 'search', QUERIES[0]!],
              check: (s) => `${total(ok(s))} (${String(ok(s).backend)})`,
            },
            {
              what: 'zot tag list',
              args: [ZOT, 'tag', 'list'],
              check: (s) => `${String(ok(s).totalResults)} tags`,
            },
            {
              what: 'zot stats',
              args: [ZOT, 'stats'],
              check: (s) => {
                const counted = ok(s).items as { total: number; topLevel: number };
                return `${counted.total} items, ${counted.topLevel} top-level`;
              },
            },
            {
              what: `zot semantic-search "${QUERIES[0]}"`,
              args: [ZOT, 'semantic-search', QUERIES[0]!],
              check: (s) => `${total(ok(s))} (${String(ok(s).mode)})`,
            },
            {
              what: 'zot export KEY (BibTeX)',
              args: [ZOT, 'export', key],
              check: (s) => `${(ok(s).succeeded as unknown[]).length} item`,
            },
          ];
          const measured = timeProcesses(commands, env, PROCS);
          const floor = measured[0]!.ms;
          for (const m of measured) {
            const spread = `min ${m.minMs.toFixed(0)}, max ${m.maxMs.toFixed(0)} ms`;
            add(`process: ${m.what}`, m.ms, 'ms', m.note ? `${m.note}; ${spread}` : spread);
            if (m !== measured[0]) add(`process: ${m.what} / node -e 0`, m.ms / floor, 'x');
            add(`process: ${m.what}, peak RSS`, m.peakRssMb, 'MB');
          }
          const whole = runProcess([ZOT, 'export', '--all', '--save', join(dir, 'process.bib')], env);
          if (whole.status === 0) {
            const d = ok(whole.stdout);
            add(
              'process: zot export --all --save (BibTeX)',
              whole.ms,
              'ms',
              `${String(d.totalResults ?? (d.succeeded as unknown[]).length)} items, one run`,
            );
            add('process: zot export --all --save, peak RSS', whole.rssMb, 'MB');
          } else
            add(
              'process: zot export --all --save (BibTeX)',
              NaN,
              'ms',
              `failed: ${whole.stdout.slice(0, 200)}`,
            );
          expect(await upToDate()).toBe(true);

          if (MCP === 'all' || (MCP === 'largest' && items === Math.max(...SIZES))) {
            const mcpCalls: McpCall[] = [
              { what: 'search_items', tool: 'zotero_search_items', args: { q: QUERIES[0] } },
              { what: 'get_item', tool: 'zotero_get_item', args: { item_key: key } },
              { what: 'list_collections', tool: 'zotero_list_collections', args: {} },
              { what: 'list_tags', tool: 'zotero_list_tags', args: {} },
              { what: 'stats', tool: 'zotero_stats', args: {} },
              { what: 'semantic_search', tool: 'zotero_semantic_search', args: { q: QUERIES[0] } },
            ];
            // The default tool set lists neither tags nor stats: the server is started with both sets added.
            const toolsets = 'default,tags,library';
            const mcp = await mcpAtScale(
              ZOTEUS,
              { ...env, ZOTEUS_TOOLSETS: toolsets },
              ROOT,
              mcpCalls,
              MCP_CALLS,
              MCP_BUDGET_S * 1000,
            );
            for (const t of mcp.tools) {
              add(`MCP: ${t.what} p50`, t.p50, 'ms', `${t.calls} calls${t.note ? `; ${t.note}` : ''}`);
              add(`MCP: ${t.what} p99`, t.p99, 'ms', `max ${t.max.toFixed(1)} ms`);
            }
            add(
              'MCP: server RSS before the calls',
              mcp.memory.rssBeforeMb,
              'MB',
              'after connect and tools/list',
            );
            add('MCP: server RSS after the calls', mcp.memory.rssAfterMb, 'MB', '/proc/PID/status VmRSS');
            add('MCP: server peak RSS', mcp.memory.hwmMb, 'MB', 'VmHWM');
            expect(await upToDate()).toBe(true);
          }
        }

        // Last, since it changes the library: 100 changes, then the index brought up to date.
        const changed = zoteroChanges(dbPath);
        expect(await upToDate()).toBe(false);
        const update = await timed(() => call(deps, indexLibrary, { action: 'update' }));
        const report = update.result.report;
        expect(report.mode).toBe('update');
        expect(report.added).toBe(0);
        expect(report.changed).toBe(60 + 20 + 10);
        expect(report.deleted).toBe(changed.erasedRows.length);
        add(
          'in process: index update after 100 changes',
          update.ms,
          'ms',
          `${report.changed} changed, ${report.deleted} deleted (10 items and their children), ${report.unchanged} unchanged`,
        );
        // What the edits put in is found.
        expect((await call(deps, searchItems, { q: TITLE_MARK })).totalResults).toBe(60);
        expect((await call(deps, searchItems, { tag: ADDED_TAG })).totalResults).toBe(20);
        results.push({ items, options, library, figures });
      } finally {
        for (const d of opened) await d.services.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    6 * 3600_000,
  );
}

const fmt = (f: Figure | undefined) =>
  f === undefined || Number.isNaN(f.value)
    ? '—'
    : f.unit === 'x'
      ? `${f.value.toFixed(2)}×`
      : f.unit === 'MB'
        ? `${f.value.toFixed(0)} MB`
        : f.value >= 10_000
          ? `${(f.value / 1000).toFixed(1)} s`
          : `${f.value.toFixed(f.value < 10 ? 2 : 0)} ms`;

afterAll(() => {
  const when = `${loadNote()}; cache ${cacheDir()}`;
  for (const r of results) {
    printTable(
      `scale: ${r.items} top-level items (${r.library}; processes: median of ${PROCS}; in process: ${CALLS} calls; ${when})`,
      r.figures.map((f) => ({ what: f.what, value: fmt(f), note: f.note })),
    );
  }
  // Consecutive sizes: how much each figure grew, against how much the data grew.
  const steps = results.slice(1).map((r, i) => ({ from: results[i]!, to: r }));
  const names = [...new Set(results.flatMap((r) => r.figures.map((f) => f.what)))];
  const ratios: Array<{ what: string; from: number; to: number; ratio: number; flagged: boolean }> = [];
  const curve = names.map((what) => {
    const row: Record<string, unknown> = { what };
    // Named with a thousands separator: an integer-like key would come before `what` in the row.
    for (const r of results)
      row[r.items.toLocaleString('en-US')] = fmt(r.figures.find((f) => f.what === what));
    const flags: string[] = [];
    for (const { from, to } of steps) {
      const a = from.figures.find((f) => f.what === what);
      const b = to.figures.find((f) => f.what === what);
      const label = `${to.items.toLocaleString('en-US')}/${from.items.toLocaleString('en-US')}`;
      if (!a || !b || a.unit === 'x' || a.compare === false || !(a.value > 0) || Number.isNaN(b.value)) {
        row[label] = '';
        continue;
      }
      const ratio = b.value / a.value;
      const grew = to.items / from.items;
      const flagged = ratio > grew;
      ratios.push({ what, from: from.items, to: to.items, ratio, flagged });
      row[label] = `${ratio.toFixed(2)}×`;
      if (flagged) flags.push(`${label} above ${grew.toFixed(1)}×`);
    }
    row.flag = flags.join('; ');
    return row;
  });
  if (results.length > 1)
    printTable(`scale: each figure by size, and its growth from one size to the next (${when})`, curve);
  if (OUT) {
    writeFileSync(
      OUT,
      `${JSON.stringify({ machine: loadNote(), procs: PROCS, calls: CALLS, mcpCalls: MCP_CALLS, sizes: results, ratios }, null, 2)}\n`,
    );
    process.stdout.write(`\nscale: figures written to ${OUT}\n`);
  }
});
