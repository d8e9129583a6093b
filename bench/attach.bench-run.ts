/**
 * `zot attach KEY --file large.pdf`: the upload of a 50 MB file against the loopback Zotero
 * test server (its upload protocol: authorization, the storage POST streamed through an MD5,
 * registration, the md5 read back), as whole `bin/zot` processes whose peak resident memory
 * a preloaded script writes when they exit (`process.resourceUsage().maxRSS`):
 *
 * - `node -e 0` and `zot attach` of a 1 KB file: the baselines (Node alone; the same command
 *   with the same code loaded and nothing to stream);
 * - `zot attach` of the 50 MB file, BENCH_ATTACH_RUNS times (each under a new parent item):
 *   wall time and MB/s of the whole process (the MD5 pass over the file included), MB/s of the
 *   transfer alone (between the upload's `start` and `complete` progress events on stderr),
 *   peak RSS and peak RSS above the 1 KB run (target under 100 MB);
 * - the same under `--max-old-space-size=64` (as test/tools/attachments/attach-large.test.ts);
 * - in process, through the tool's `run` with one `deps`: the upload's wall time and MB/s
 *   (no memory figure: the test server shares that process).
 *
 * Every run checks the exit code, the md5 the library reports and the one the server computed
 * from the bytes it received.
 *
 *   npm run build && node bench/run.mjs bench/attach.bench-run.ts
 *
 * Knobs: BENCH_ATTACH_MB (50), BENCH_ATTACH_RUNS (3).
 */
import { spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import {
  closeSync,
  createWriteStream,
  existsSync,
  openSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import tool from '../src/tools/attachments/attach-file.js';
import { startWorld, type World } from '../test/core/library/world.js';
import { ROOT, runZot, type RunResult } from '../test/support/cli.js';
import { loadNote, median, printTable } from './support.js';

const MB = Number(process.env.BENCH_ATTACH_MB ?? 50);
const RUNS = Number(process.env.BENCH_ATTACH_RUNS ?? 3);
const SIZE = MB * 1024 * 1024;
const LIB = 'users/1';
const TARGET_MB = 100;

const rows: Array<Record<string, unknown>> = [];
let world: World;
let large: string;
let tiny: string;
let probe: string;

/** The MD5 state of every byte but the last TAIL, so each run's variant is hashed at once. */
let head: Hash;
const TAIL = 16;

beforeAll(async () => {
  world = await startWorld();
  large = join(world.box.dir, 'large.pdf');
  head = createHash('md5');
  const out = createWriteStream(large);
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < SIZE / block.length; i++) {
    block.fill(i % 251);
    if (i === 0) block.write('%PDF-1.7\n');
    const last = i === SIZE / block.length - 1;
    head.update(last ? block.subarray(0, block.length - TAIL) : block);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  tiny = join(world.box.dir, 'tiny.txt');
  writeFileSync(tiny, 'x'.repeat(1024));
  probe = join(world.box.dir, 'max-rss.mjs');
  writeFileSync(
    probe,
    "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS)));\n",
  );
}, 120_000);

afterAll(async () => {
  await world?.close();
  const columns = ['what', 'wall ms', 'MB/s', 'peak MB', 'above baseline MB', 'note'];
  printTable(
    `zot attach, a ${MB} MB file to the loopback test server (${loadNote()})`,
    rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? '']))),
  );
});

let variants = 0;
/**
 * Gives the large file new last bytes and returns its md5: the server keeps every upload's
 * bytes and would answer a second upload of the same ones `exists`, sending nothing.
 */
function nextVariant(): string {
  const tail = Buffer.alloc(TAIL, 0x20);
  tail.write(`variant ${variants++}`);
  const fd = openSync(large, 'r+');
  try {
    writeSync(fd, tail, 0, TAIL, SIZE - TAIL);
  } finally {
    closeSync(fd);
  }
  return head.copy().update(tail).digest('hex');
}

const rssOut = () => join(world.box.dir, 'rss.txt');
const peakMb = () => Number(readFileSync(rssOut(), 'utf8')) / 1024;
const mbps = (bytes: number, ms: number) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(1);

/** One `zot attach` process under a new parent item: its result, wall time and peak RSS. */
async function attach(file: string, heap?: number) {
  const [parent] = world.server.library(LIB).addItems([{ title: 'Bench parent' }]) as [string];
  const options = `--import=${probe}${heap ? ` --max-old-space-size=${heap}` : ''}`;
  const t = performance.now();
  const r: RunResult = await runZot(['attach', parent, '--file', file], {
    env: { ...world.env(), NODE_OPTIONS: options, RSS_OUT: rssOut() },
    timeoutMs: 300_000,
  });
  const ms = performance.now() - t;
  expect(r.stderr).not.toMatch(/heap out of memory/i);
  expect(r.code).toBe(0);
  const [done] = (r.json().data as { succeeded: Array<{ key: string; md5: string; size: number }> })
    .succeeded;
  return { r, ms, peak: peakMb(), done: done! };
}

/** Milliseconds between the upload's `start` and `complete` progress events (stderr JSON lines). */
function transferMs(stderr: string): number | undefined {
  const at = (event: string) =>
    Number(new RegExp(`"event":"${event}"[^\\n]*"elapsed_ms":(\\d+)`).exec(stderr)?.[1] ?? NaN);
  const ms = at('complete') - at('start');
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

it(`uploads ${MB} MB with peak memory under ${TARGET_MB} MB above the 1 KB run`, async () => {
  if (!existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))) {
    rows.push({ what: 'zot attach', note: 'skipped: run `npm run build` first' });
    return;
  }
  // Node alone, with the same preload.
  const t = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], {
      env: { ...world.env(), NODE_OPTIONS: `--import=${probe}`, RSS_OUT: rssOut() },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('exit', () => resolve());
  });
  rows.push({
    what: 'node -e 0',
    'wall ms': Math.round(performance.now() - t),
    'peak MB': peakMb().toFixed(0),
  });

  const small = await attach(tiny);
  rows.push({
    what: 'zot attach, 1 KB file',
    'wall ms': Math.round(small.ms),
    'peak MB': small.peak.toFixed(0),
    note: 'the baseline: the same command, nothing to stream',
  });

  const runs: Array<{ ms: number; peak: number; transfer: number | undefined }> = [];
  for (let i = 0; i < RUNS; i++) {
    const md5 = nextVariant();
    const big = await attach(large);
    expect(big.done).toMatchObject({ md5, size: SIZE });
    expect(world.server.files.files.get(`${LIB}/${big.done.key}`)).toMatchObject({ md5, size: SIZE });
    runs.push({ ms: big.ms, peak: big.peak, transfer: transferMs(big.r.stderr) });
  }
  const wall = median(runs.map((r) => r.ms));
  const peak = Math.max(...runs.map((r) => r.peak));
  const transfers = runs.map((r) => r.transfer).filter((ms): ms is number => ms !== undefined);
  rows.push({
    what: `zot attach, ${MB} MB file`,
    'wall ms': Math.round(wall),
    'peak MB': peak.toFixed(0),
    'above baseline MB': (peak - small.peak).toFixed(0),
    'MB/s': mbps(SIZE, wall),
    note: `median of ${RUNS}, the highest peak; MD5 pass + upload + registration + read-back; transfer alone ${
      transfers.length ? `${mbps(SIZE, median(transfers))} MB/s` : 'not reported'
    }`,
  });
  expect(peak - small.peak).toBeLessThan(TARGET_MB);

  const md5 = nextVariant();
  const held = await attach(large, 64);
  expect(held.done).toMatchObject({ md5, size: SIZE });
  rows.push({
    what: `zot attach, ${MB} MB file, --max-old-space-size=64`,
    'wall ms': Math.round(held.ms),
    'peak MB': held.peak.toFixed(0),
    'above baseline MB': (held.peak - small.peak).toFixed(0),
    'MB/s': mbps(SIZE, held.ms),
  });
}, 1_200_000);

it(`in process: ${MB} MB through the tool's run`, async () => {
  const deps = world.deps({ surface: 'cli' });
  const [parent] = world.server.library(LIB).addItems([{ title: 'In process' }]) as [string];
  const md5 = nextVariant();
  const t = performance.now();
  const out = await tool.run({ parent_item: parent, path: [large] }, deps);
  const ms = performance.now() - t;
  expect(out.failed).toEqual([]);
  expect(out.succeeded[0]).toMatchObject({ md5, size: SIZE, upload: 'uploaded' });
  rows.push({
    what: `in process, ${MB} MB file`,
    'wall ms': Math.round(ms),
    'MB/s': mbps(SIZE, ms),
    note: 'one deps; the test server in the same process (no memory figure)',
  });
  await deps.services.close();
}, 600_000);
