/**
 * `zot update-status --all` (the preview) on a desktop library of 5,000 preprints (zotero.sqlite,
 * no API key), against the loopback metadata services answering after 50 ms each, with the
 * real clock so Crossref's polite pace holds (3 list requests a second, 3 at once). Each
 * preprint's Crossref record names its published version (`is-preprint-of`); a tenth have a
 * published title too different to accept. Rows: requests per service, the most in flight,
 * updates and unmatched, wall time, for
 *
 * - the first preview: ⌈5,000/50⌉ list requests for the preprints' records and as many for the
 *   published records (200);
 * - the re-run within the day: every answer from the cache, no request.
 *
 * Applying the plan writes through the Web API at 2·⌈n/50⌉ requests (asserted in
 * test/tools/metadata/update-status.test.ts at 500 items); this bench times the lookups.
 *
 *   node bench/run.mjs bench/update-status.bench-run.ts
 *
 * Knobs: BENCH_STATUS_ITEMS (5000), BENCH_STATUS_LATENCY_MS (50).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crossrefWork } from '../test/support/metadata-services/index.js';
import type { ItemSpec } from '../test/support/zotero-sqlite/index.js';
import { zotAt } from '../test/surfaces/cli/terminal-harness.js';
import { startRetractionWorld, type RetractionWorld } from '../test/tools/metadata/setup.js';
import { printTable } from './support.js';

const N = Number(process.env.BENCH_STATUS_ITEMS ?? 5000);
const LATENCY = Number(process.env.BENCH_STATUS_LATENCY_MS ?? 50);
const rows: Array<Record<string, unknown>> = [];
let world: RetractionWorld;

const preprintDoi = (i: number) => `10.1101/2020.05.05.${String(100000 + i)}`;

beforeAll(async () => {
  const items: ItemSpec[] = Array.from({ length: N }, (_, i) => ({
    itemType: 'preprint',
    fields: { title: `Preprint on coastal change number ${i}`, DOI: preprintDoi(i) },
  }));
  world = await startRetractionWorld(items);
  for (let i = 0; i < N; i++) {
    const published = `10.5555/published.${i}`;
    world.fakes.addCrossref(
      crossrefWork({
        doi: preprintDoi(i),
        title: `Preprint on coastal change number ${i}`,
        type: 'posted-content',
        relation: { 'is-preprint-of': [{ 'id-type': 'doi', id: published, 'asserted-by': 'subject' }] },
      }),
    );
    world.fakes.addCrossref({
      ...crossrefWork({
        doi: published,
        title: i % 10 === 7 ? `Something else entirely ${i}` : `Preprint on coastal change number ${i}`,
      }),
      volume: '3',
      page: `${i}-${i + 9}`,
    });
  }
  world.fakes.latencyMs = LATENCY;
}, 300_000);

afterAll(async () => {
  printTable(`zot update-status --all: ${N} preprints, services answering after ${LATENCY} ms`, rows);
  await world?.close();
});

async function run(label: string, env: Record<string, string>): Promise<void> {
  world.fakes.clearLog();
  const started = performance.now();
  const r = await zotAt(['update-status', '--all'], { env: world.env(env) });
  const ms = performance.now() - started;
  expect(r.code, r.stdout.slice(0, 500)).toBe(0);
  const data = r.json().data as {
    candidates: number;
    updates: unknown[];
    totalUpdates?: number;
    unmatched: unknown[];
    totalUnmatched?: number;
  };
  expect(data.candidates).toBe(N);
  rows.push({
    run: label,
    crossref: world.fakes.count('crossref'),
    'crossref in flight': world.fakes.maxInFlight('crossref'),
    arxiv: world.fakes.count('arxiv'),
    updates: data.totalUpdates ?? data.updates.length,
    unmatched: data.totalUnmatched ?? data.unmatched.length,
    'answer KB': (r.stdout.length / 1024).toFixed(1),
    'wall s': (ms / 1000).toFixed(1),
  });
}

it('the preview, then the cached re-run', async () => {
  const cache = { ZOT_CACHE_DIR: join(world.dataDir, '..', 'bench-status-cache') };
  await run('preview (cold)', cache);
  expect(world.fakes.count('crossref')).toBe(2 * Math.ceil(N / 50));
  await run('re-run (cache)', cache);
  expect(world.fakes.log).toEqual([]);
}, 900_000);
