/**
 * Citations and exports (issue 17), three ways:
 *
 * - In process, on the large generated library (zotero.sqlite, no key), one `deps` as one MCP
 *   server has it: opening the CSL engine (citeproc-js, the style, the locales, the engine
 *   build), the CSL-JSON mapping of 1,000 items, and their bibliography in APA and Vancouver
 *   with one engine (first run, then the median of warm runs); and zotero_format_bibliography
 *   with 500 keys, whose answer the size bound cuts.
 * - Whole `zot cite` processes on the sample library, each paired with a `node -e 0` run just
 *   before it (A B A B …, so drift hits both alike), after one unmeasured run that leaves the
 *   V8 code cache and the parsed forms of the style and locales ($ZOT_CACHE_DIR/csl/parsed/):
 *   APA is the bundled copy (resolution takes it before asking the repository); Chicago is
 *   downloaded once from a loopback style repository serving Debian's packaged styles, then
 *   read from the download cache. The same with the parsed forms removed before each run (what
 *   the first `zot cite` with a style costs), and without the code cache; then offline (the
 *   repository refuses, and nothing is cached). `zot read KEY` (the same library read, without
 *   citeproc-js) and `zot --version` for comparison.
 * - `zot export --all --format bibtex --save FILE` of the large library as a whole process:
 *   wall and CPU time, peak memory (`/usr/bin/time -v` where it exists, else the process's own
 *   `resourceUsage().maxRSS` through a preloaded script), bytes and entries written.
 *
 *   npm run build && node bench/run.mjs bench/cite.bench-run.ts
 *
 * Knobs: BENCH_CITE_ITEMS (1000 items formatted in process), BENCH_CITE_RUNS (7 warm runs),
 * BENCH_CITE_PROCS (11 process pairs), BENCH_EXPORT_ITEMS (50000 top-level items),
 * BENCH_EXPORT_DB (copy this zotero.sqlite instead of generating one), BENCH_EXPORT_RUNS (1).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadNote, median, printTable, printTimingRows, timers, type TimingRow } from './support.js';
import { openEngine } from '../src/core/citations/engine.js';
import { toCslJson } from '../src/core/citations/csl-json.js';
import type { CslItem } from '../src/core/citations/csl-types.js';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/core/deps.js';
import { openReader } from '../src/core/items/read/common.js';
import { localSchema } from '../src/core/items/schema.js';
import type { WebApiItem } from '../src/core/library/port.js';
import type { AnyTool, Deps } from '../src/core/tool.js';
import { CLI_VERSION } from '../src/core/version.js';
import { buildLargeLibrary, buildSampleLibrary, SAMPLE_KEYS } from '../src/demo/sample/index.js';
import formatBibliography from '../src/tools/citations/format-bibliography.js';
import { debianStyle, startStyleServer, type StyleServer } from '../test/support/style-server.js';

const CITE_ITEMS = Number(process.env.BENCH_CITE_ITEMS ?? 1_000);
const RUNS = Number(process.env.BENCH_CITE_RUNS ?? 7);
const PROCS = Number(process.env.BENCH_CITE_PROCS ?? 11);
const EXPORT_ITEMS = Number(process.env.BENCH_EXPORT_ITEMS ?? 50_000);
const EXPORT_RUNS = Number(process.env.BENCH_EXPORT_RUNS ?? 1);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');
const TIME = '/usr/bin/time';
const KEY = SAMPLE_KEYS.user.items.seaLevelArticle;

const inProcess: TimingRow[] = [];
const { once, warm } = timers(inProcess, RUNS);
const processRows: Array<Record<string, unknown>> = [];
const exportRows: Array<Record<string, unknown>> = [];
let dir: string;
let styleServer: StyleServer;
let largeEnv: Record<string, string>;
let sampleEnv: Record<string, string>;
let deps: Deps | undefined;

function sandboxEnv(dataDir: string, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ZOT_CONFIG_DIR: join(home, 'config'),
    ZOT_CACHE_DIR: join(home, 'cache'),
    ZOTEUS_DATA_DIR: join(home, 'data'),
    ZOTERO_DATA_DIR: dataDir,
    // No desktop app and no Web API: every read goes to zotero.sqlite.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    ZOTEUS_STYLES_URL: styleServer.stylesUrl,
    ZOTEUS_LOCALES_URL: styleServer.localesUrl,
    // No read starts a background `zot index build` beside the measurements.
    ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
    NO_COLOR: '1',
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-cite-'));
  styleServer = await startStyleServer();
  const large = join(dir, 'large', 'Zotero');
  mkdirSync(large, { recursive: true });
  const path = join(large, 'zotero.sqlite');
  const source = process.env.BENCH_EXPORT_DB;
  if (source && existsSync(source)) {
    copyFileSync(source, path);
    if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${path}-wal`);
  } else {
    await once(
      'build the large library (generator)',
      () => buildLargeLibrary(path, { items: EXPORT_ITEMS }),
      (r) => `${r.items.length} rows, ${(statSync(path).size / 1e6).toFixed(0)} MB`,
    );
  }
  largeEnv = sandboxEnv(large, join(dir, 'large-home'));
  const sample = join(dir, 'sample', 'Zotero');
  mkdirSync(sample, { recursive: true });
  await buildSampleLibrary(join(sample, 'zotero.sqlite'));
  sampleEnv = sandboxEnv(sample, join(dir, 'sample-home'));
}, 900_000);

afterAll(async () => {
  await deps?.services.close();
  await styleServer?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  const load = loadNote();
  printTimingRows(
    `citations in process, ${CITE_ITEMS} items of the large library (warm rows: median of ${RUNS}; ${load})`,
    inProcess,
  );
  if (processRows.length)
    printTable(
      `zot cite as whole processes, sample library (median of ${PROCS} pairs, each with a node -e 0 run; ${load})`,
      processRows,
    );
  if (exportRows.length) printTable(`zot export of the large library, whole process (${load})`, exportRows);
});

it('formats in process', async () => {
  deps = createDeps({ config: loadConfig(largeEnv), env: largeEnv, version: CLI_VERSION, surface: 'mcp' });
  const d = deps;
  const { reader } = await openReader(d, {});
  const items: WebApiItem[] = [];
  for (let start = 0; items.length < CITE_ITEMS; start += 100) {
    const page = await reader.items({ top: true, sort: 'dateAdded', direction: 'asc', start, limit: 100 });
    for (const item of page.items)
      if (!['note', 'attachment', 'annotation'].includes(String(item.data.itemType))) items.push(item);
    if (page.items.length < 100) break;
  }
  items.splice(CITE_ITEMS);
  expect(items).toHaveLength(CITE_ITEMS);
  const schema = localSchema(d.config);
  const csl: CslItem[] = await warm(
    `CSL-JSON mapping of ${CITE_ITEMS} items`,
    async () => items.map((item) => toCslJson(item, schema, { id: item.key })),
    (r) => `${new Set(r.map((i) => i.type)).size} CSL types`,
  );
  for (const style of ['apa', 'vancouver']) {
    const engine = await once(
      `open the engine, ${style} (first: citeproc-js, style, locales, engine build)`,
      () => openEngine(d, { style }),
      (e) => `${e.info.style.title}, ${e.info.locale}, style from ${e.info.style.source}`,
    );
    const note = (b: { entries: unknown[]; errors: unknown[] }) =>
      `${b.entries.length} entries, ${b.errors.length} errors`;
    const first = await once(
      `bibliography of ${CITE_ITEMS} items, ${style}, one engine (first)`,
      async () => engine.bibliography(csl, d),
      note,
    );
    expect(first.entries).toHaveLength(CITE_ITEMS);
    await warm(
      `bibliography of ${CITE_ITEMS} items, ${style}, one engine`,
      async () => engine.bibliography(csl, d),
      note,
    );
  }
  const tool = formatBibliography as unknown as AnyTool;
  const keys = items.slice(0, 500).map((i) => i.key);
  await warm(
    'zotero_format_bibliography, 500 keys, apa (read, map, format, bound the answer)',
    async () =>
      tool.output.parse(await tool.run(tool.input.parse({ item_keys: keys }), d)) as Record<string, unknown>,
    (r) =>
      `${(r.entries as unknown[]).length} entries in the answer${r.truncated ? `, ${(r.remaining as unknown[]).length} remaining` : ''}`,
  );
}, 900_000);

it('cites as whole processes', async () => {
  if (!existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))) {
    processRows.push({ what: 'processes', note: 'skipped: run `npm run build` first' });
    return;
  }
  // Asynchronous: the loopback style repository lives in this process and must answer while
  // a `zot` waits for it.
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ ms: number; status: number | null; stdout: string }>((resolve, reject) => {
      const t = performance.now();
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.on('error', reject);
      child.on('close', (status) => resolve({ ms: performance.now() - t, status, stdout }));
    });
  const paired = async (
    what: string,
    args: string[],
    check: (stdout: string) => string,
    env = sampleEnv,
    /** Run before each measured `zot` (not before its `node -e 0`). */
    prepare = () => {},
  ) => {
    const probe = await run([ZOT, ...args], env);
    if (probe.status !== 0) {
      processRows.push({ what, note: `not measured: exit ${probe.status} ${probe.stdout.slice(0, 200)}` });
      return;
    }
    const bare: number[] = [];
    const zot: number[] = [];
    const ratios: number[] = [];
    let note = check(probe.stdout);
    for (let i = 0; i < PROCS; i++) {
      const b = await run(['-e', '0'], env);
      prepare();
      const z = await run([ZOT, ...args], env);
      bare.push(b.ms);
      zot.push(z.ms);
      ratios.push(z.ms / b.ms);
      note = check(z.stdout);
    }
    processRows.push({
      what,
      ms: median(zot).toFixed(0),
      'node -e 0 ms': median(bare).toFixed(0),
      'x node -e 0': median(ratios).toFixed(2),
      note: `${note}; min ${Math.min(...zot).toFixed(0)}, max ${Math.max(...zot).toFixed(0)} ms`,
    });
  };
  const cited = (stdout: string) => {
    const out = JSON.parse(stdout) as {
      ok: boolean;
      data: { text: string; style: { id: string; source: string } };
    };
    if (out.ok !== true) throw new Error(stdout);
    return `${out.data.style.id} (${out.data.style.source}): ${out.data.text.slice(0, 40)}…`;
  };
  await paired('zot --version', ['--version'], (s) => s.trim());
  await paired(
    'zot read KEY (the same read, no citeproc-js)',
    ['read', KEY],
    (s) => `${(JSON.parse(s) as { ok: boolean }).ok}`,
  );
  // The probe keeps APA's parsed forms (and the code cache); the pairs build from them.
  await paired('zot cite KEY (apa, parsed cache)', ['cite', KEY], cited);
  await paired('zot cite KEY, parsed forms removed before each run', ['cite', KEY], cited, sampleEnv, () =>
    rmSync(join(sampleEnv.ZOT_CACHE_DIR as string, 'csl', 'parsed'), { recursive: true, force: true }),
  );
  await paired(
    'zot cite KEY --mode citation --locator 12',
    ['cite', KEY, '--mode', 'citation', '--locator', '12'],
    cited,
  );
  if (debianStyle('chicago-author-date')) {
    // The probe downloads it once from the loopback repository; the pairs read it from the cache.
    await paired(
      'zot cite KEY --style chicago-author-date (cached)',
      ['cite', KEY, '--style', 'chicago-author-date'],
      cited,
    );
    expect(styleServer.log.filter((r) => r.path.includes('chicago-author-date'))).toHaveLength(1);
  }
  await paired('zot cite KEY, no code cache', ['cite', KEY], cited, {
    ...sampleEnv,
    ZOTEUS_COMPILE_CACHE: 'off',
  });
  // Offline: the repository refuses, nothing is cached, so every run tries it, then uses the bundled APA.
  await paired('zot cite KEY, repository refused (bundled apa)', ['cite', KEY], cited, {
    ...sampleEnv,
    ZOT_CACHE_DIR: join(dir, 'offline-cache'),
    ZOTEUS_STYLES_URL: 'http://127.0.0.1:9/styles',
    ZOTEUS_LOCALES_URL: 'http://127.0.0.1:9/locales',
  });
}, 900_000);

it('exports the whole library as a whole process', () => {
  if (!existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))) {
    exportRows.push({ what: 'export', note: 'skipped: run `npm run build` first' });
    return;
  }
  // Peak memory: /usr/bin/time -v where it exists, else the process's own maxRSS at exit.
  const preload = join(dir, 'max-rss.cjs');
  writeFileSync(
    preload,
    "process.on('exit', () => process.stderr.write(`\\nmax-rss-kb ${process.resourceUsage().maxRSS}\\n`));\n",
  );
  const useTime = existsSync(TIME);
  for (let i = 0; i < EXPORT_RUNS; i++) {
    const file = join(dir, `library-${i}.bib`);
    const args = [ZOT, 'export', '--all', '--format', 'bibtex', '--save', file];
    const t = performance.now();
    const r = useTime
      ? spawnSync(TIME, ['-v', process.execPath, ...args], {
          env: largeEnv,
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        })
      : spawnSync(process.execPath, ['--require', preload, ...args], {
          env: largeEnv,
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
    const ms = performance.now() - t;
    const out = JSON.parse(r.stdout) as { ok: boolean; data: { saved: { bytes: number } } };
    expect(out.ok).toBe(true);
    const rssKb = Number(
      (useTime
        ? /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)
        : /max-rss-kb (\d+)/.exec(r.stderr))?.[1] ?? NaN,
    );
    const cpu = useTime
      ? Number(/User time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1]) +
        Number(/System time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1])
      : NaN;
    const firstProgress = /"event":"start"[^\n]*"elapsed_ms":(\d+)/.exec(r.stderr)?.[1];
    const entries = (readFileSync(file, 'utf8').match(/^@/gm) ?? []).length;
    exportRows.push({
      what: 'zot export --all --format bibtex --save FILE',
      s: (ms / 1000).toFixed(1),
      'cpu s': Number.isNaN(cpu) ? '' : cpu.toFixed(1),
      'peak MB': (rssKb / 1024).toFixed(0),
      note: `${entries} entries, ${(out.data.saved.bytes / 1e6).toFixed(1)} MB; first entry after ${firstProgress ?? '?'} ms (keys over the library); peak from ${useTime ? '/usr/bin/time -v' : 'resourceUsage().maxRSS'}`,
    });
    rmSync(file, { force: true });
  }
}, 1_800_000);
