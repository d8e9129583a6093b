/**
 * `zot retractions --all` on a desktop library of 5,000 items with DOIs (zotero.sqlite, no API
 * key), against the loopback metadata services answering after 50 ms each (Crossref's work
 * lists, OpenAlex's singletons), with the real clock: so the services' paces hold as they would
 * against the real ones (Crossref's polite pool: 3 list requests a second, 3 at once; OpenAlex:
 * 10 at once). Rows: requests per service, the most in flight, wall time, for
 *
 * - Crossref alone (no OpenAlex key): ⌈5,000/50⌉ = 100 list requests;
 * - Crossref and OpenAlex (a key): 100 + 5,000 singletons;
 * - the re-run within the day: everything from the cache, no request.
 *
 * The call pages with --limit 5000 (one call; the default page is 1,000 items).
 *
 *   node bench/run.mjs bench/retractions.bench-run.ts
 *
 * Knobs: BENCH_RETRACTIONS_ITEMS (5000), BENCH_RETRACTIONS_LATENCY_MS (50).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crossrefWork, openAlexWork } from '../test/support/metadata-services/index.js';
import type { ItemSpec } from '../test/support/zotero-sqlite/index.js';
import { zotAt } from '../test/surfaces/cli/terminal-harness.js';
import { startRetractionWorld, type RetractionWorld } from '../test/tools/metadata/setup.js';
import { printTable } from './support.js';

const N = Number(process.env.BENCH_RETRACTIONS_ITEMS ?? 5000);
const LATENCY = Number(process.env.BENCH_RETRACTIONS_LATENCY_MS ?? 50);
const rows: Array<Record<string, unknown>> = [];
let world: RetractionWorld;

beforeAll(async () => {
  const items: ItemSpec[] = Array.from({ length: N }, (_, i) => ({
    itemType: 'journalArticle',
    fields: { title: `Article ${i}`, DOI: `10.5555/bench.${i}` },
  }));
  world = await startRetractionWorld(items);
  for (let i = 0; i < N; i++) {
    const doi = `10.5555/bench.${i}`;
    world.fakes.addCrossref(
      crossrefWork({
        doi,
        title: `Article ${i}`,
        ...(i % 250 === 3 ? { updatedBy: [{ DOI: `10.5555/notice.${i}`, type: 'retraction' }] } : {}),
      }),
    );
    world.fakes.addOpenAlex(openAlexWork({ doi, title: `Article ${i}`, isRetracted: i % 250 === 3 }));
  }
  world.fakes.latencyMs = LATENCY;
}, 300_000);

afterAll(async () => {
  printTable(`zot retractions --all: ${N} items, services answering after ${LATENCY} ms`, rows);
  await world?.close();
});

async function run(label: string, env: Record<string, string>): Promise<void> {
  world.fakes.clearLog();
  const started = performance.now();
  const r = await zotAt(['retractions', '--all', '--limit', String(N)], { env: world.env(env) });
  const ms = performance.now() - started;
  expect(r.code, r.stdout.slice(0, 500)).toBe(0);
  const data = r.json().data as { checked: number; retracted: number };
  expect(data.checked).toBe(N);
  rows.push({
    run: label,
    crossref: world.fakes.count('crossref'),
    'crossref in flight': world.fakes.maxInFlight('crossref'),
    openalex: world.fakes.count('openalex'),
    'openalex in flight': world.fakes.maxInFlight('openalex'),
    retracted: data.retracted,
    'wall s': (ms / 1000).toFixed(1),
  });
}

it('Crossref alone, then with OpenAlex, then the cached re-run', async () => {
  const cacheA = { ZOT_CACHE_DIR: join(world.dataDir, '..', 'bench-cache-a') };
  const cacheB = { ZOT_CACHE_DIR: join(world.dataDir, '..', 'bench-cache-b') };
  await run('Crossref (no OpenAlex key)', cacheA);
  expect(world.fakes.count('crossref')).toBe(Math.ceil(N / 50));
  await run('Crossref + OpenAlex', { ...cacheB, ZOTEUS_OPENALEX_API_KEY: 'benchKey-1234567890' });
  await run('re-run (cache)', { ...cacheB, ZOTEUS_OPENALEX_API_KEY: 'benchKey-1234567890' });
  expect(world.fakes.log).toEqual([]);
}, 900_000);
