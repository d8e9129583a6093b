/**
 * `zot export --all --save FILE` of the 50,000-item generated library (zotero.sqlite, no key)
 * as whole processes of the built CLI (issue 17: under 10 s and 300 MB for BibTeX): wall and
 * CPU seconds and peak memory from `/usr/bin/time -v` (else the process's own
 * `resourceUsage().maxRSS` through a preloaded script), when the first entry was written
 * (the `start` progress event: the key pass and the listing are done), bytes and entries.
 * BibTeX `BENCH_EXPORT_RUNS` times, then BibLaTeX, RIS and CSL-JSON once each, a bounded page
 * without `--save`, and `node -e 0` for the machine's floor at that moment. Every BibTeX run
 * must write the same bytes.
 *
 *   npm run build && node bench/run.mjs bench/export.bench-run.ts
 *
 * Knobs: BENCH_EXPORT_ITEMS (50000 top-level items), BENCH_EXPORT_DB (copy this zotero.sqlite
 * instead of generating one), BENCH_EXPORT_RUNS (3), BENCH_EXPORT_FORMATS (1: the other
 * formats too; 0: BibTeX only).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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
import { loadNote, median, printTable } from './support.js';
import { buildLargeLibrary } from '../src/demo/sample/index.js';

const ITEMS = Number(process.env.BENCH_EXPORT_ITEMS ?? 50_000);
const RUNS = Number(process.env.BENCH_EXPORT_RUNS ?? 3);
const FORMATS = process.env.BENCH_EXPORT_FORMATS !== '0';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');
const TIME = '/usr/bin/time';

const rows: Array<Record<string, unknown>> = [];
let dir: string;
let env: Record<string, string>;
let dbNote = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-export-'));
  const data = join(dir, 'Zotero');
  mkdirSync(data, { recursive: true });
  const path = join(data, 'zotero.sqlite');
  const source = process.env.BENCH_EXPORT_DB;
  const t = performance.now();
  if (source && existsSync(source)) {
    copyFileSync(source, path);
    if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${path}-wal`);
    dbNote = `copied from ${source}`;
  } else {
    const built = await buildLargeLibrary(path, { items: ITEMS });
    dbNote = `generated: ${ITEMS} top-level items, ${built.items.length} rows, in ${((performance.now() - t) / 1000).toFixed(0)} s`;
  }
  dbNote += `, ${(statSync(path).size / 1e6).toFixed(0)} MB`;
  const home = join(dir, 'home');
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ZOT_CONFIG_DIR: join(home, 'config'),
    ZOT_CACHE_DIR: join(home, 'cache'),
    ZOTEUS_DATA_DIR: join(home, 'data'),
    ZOTERO_DATA_DIR: data,
    // No desktop app and no Web API: every read goes to zotero.sqlite.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    // No read starts a background `zot index build` beside the measurements.
    ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
    NO_COLOR: '1',
  };
}, 900_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  printTable(`zot export of the large library, whole processes (${dbNote}; ${loadNote()})`, rows);
});

interface Measured {
  stdout: string;
  stderr: string;
  ms: number;
  cpu: number;
  rssMb: number;
}

/** One process, measured: wall time here, CPU and peak memory from /usr/bin/time -v or the process itself. */
function measure(args: string[]): Measured {
  const preload = join(dir, 'max-rss.cjs');
  if (!existsSync(preload))
    writeFileSync(
      preload,
      "process.on('exit', () => { const u = process.resourceUsage(); process.stderr.write(`\\nmax-rss-kb ${u.maxRSS} cpu-us ${u.userCPUTime + u.systemCPUTime}\\n`); });\n",
    );
  const useTime = existsSync(TIME);
  const t = performance.now();
  const r = useTime
    ? spawnSync(TIME, ['-v', process.execPath, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 28 })
    : spawnSync(process.execPath, ['--require', preload, ...args], {
        env,
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      });
  const ms = performance.now() - t;
  const num = (re: RegExp) => Number(re.exec(r.stderr)?.[1] ?? NaN);
  const rssKb = useTime ? num(/Maximum resident set size \(kbytes\): (\d+)/) : num(/max-rss-kb (\d+)/);
  const cpu = useTime
    ? num(/User time \(seconds\): ([\d.]+)/) + num(/System time \(seconds\): ([\d.]+)/)
    : num(/cpu-us (\d+)/) / 1e6;
  return { stdout: r.stdout, stderr: r.stderr, ms, cpu, rssMb: rssKb / 1024 };
}

const PEAK_FROM = existsSync(TIME) ? '/usr/bin/time -v' : 'resourceUsage().maxRSS';

function exportRun(format: string, file: string) {
  const m = measure([ZOT, 'export', '--all', '--format', format, '--save', file]);
  const out = JSON.parse(m.stdout) as {
    ok: boolean;
    data: { saved: { bytes: number }; totalResults: number };
  };
  expect(out.ok, m.stderr).toBe(true);
  const text = readFileSync(file);
  const firstEntryMs = /"event":"start"[^\n]*"elapsed_ms":(\d+)/.exec(m.stderr)?.[1];
  const progress = (m.stderr.match(/"event":"progress"/g) ?? []).length;
  return { m, out, text, firstEntryMs, progress };
}

it('exports the whole library as whole processes', () => {
  if (
    !existsSync(join(ROOT, 'dist', 'bundle', 'bin', 'zot.js')) &&
    !existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))
  ) {
    rows.push({ what: 'zot export', note: 'skipped: run `npm run build` first' });
    return;
  }
  const floor = measure(['-e', '0']);
  const runs: Array<{ ms: number; cpu: number; rssMb: number }> = [];
  let digest: string | undefined;
  for (let i = 0; i < RUNS; i++) {
    const file = join(dir, `library-${i}.bib`);
    const { m, out, text, firstEntryMs, progress } = exportRun('bibtex', file);
    const sha = createHash('sha256').update(text).digest('hex');
    if (digest !== undefined) expect(sha, 'every run writes the same bytes').toBe(digest);
    digest = sha;
    runs.push(m);
    rows.push({
      what: `bibtex, run ${i + 1}`,
      s: (m.ms / 1000).toFixed(1),
      'cpu s': m.cpu.toFixed(1),
      'peak MB': m.rssMb.toFixed(0),
      'first entry ms': firstEntryMs ?? '?',
      note: `${(text.toString('utf8').match(/^@/gm) ?? []).length} entries of ${out.data.totalResults} listed, ${(text.length / 1e6).toFixed(1)} MB, ${progress} progress events, sha256 ${sha.slice(0, 12)}`,
    });
    rmSync(file, { force: true });
  }
  const worst = Math.max(...runs.map((r) => r.rssMb));
  rows.push({
    what: `bibtex, median of ${runs.length}`,
    s: (median(runs.map((r) => r.ms)) / 1000).toFixed(1),
    'cpu s': median(runs.map((r) => r.cpu)).toFixed(1),
    'peak MB': worst.toFixed(0),
    note: `targets: under 10 s and 300 MB (peak: the largest of the runs, from ${PEAK_FROM})`,
  });
  if (FORMATS) {
    for (const format of ['biblatex', 'ris', 'csljson']) {
      const file = join(dir, `library.${format}`);
      const { m, out, text, firstEntryMs } = exportRun(format, file);
      rows.push({
        what: format,
        s: (m.ms / 1000).toFixed(1),
        'cpu s': m.cpu.toFixed(1),
        'peak MB': m.rssMb.toFixed(0),
        'first entry ms': firstEntryMs ?? '?',
        note: `${out.data.totalResults} listed, ${(text.length / 1e6).toFixed(1)} MB`,
      });
      rmSync(file, { force: true });
    }
    const page = measure([ZOT, 'export', '--all', '--limit', '100']);
    const answer = JSON.parse(page.stdout) as { ok: boolean; data: { succeeded: string[] } };
    expect(answer.ok, page.stderr).toBe(true);
    rows.push({
      what: 'bibtex, a page (--limit 100, no --save)',
      s: (page.ms / 1000).toFixed(1),
      'cpu s': page.cpu.toFixed(1),
      'peak MB': page.rssMb.toFixed(0),
      note: `${answer.data.succeeded.length} entries in the envelope (keys over the whole library)`,
    });
  }
  rows.push({
    what: 'node -e 0',
    s: (floor.ms / 1000).toFixed(2),
    'cpu s': floor.cpu.toFixed(2),
    'peak MB': floor.rssMb.toFixed(0),
    note: 'the floor of a process on this machine now',
  });
}, 1_800_000);
