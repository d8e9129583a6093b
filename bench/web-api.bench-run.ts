/**
 * Web API performance against the test server with 20 ms of latency per request: listing
 * 20,000 collections cold and warm, and reading 1,000 items by key, through the product path
 * (deps → openWebLibrary → the shared client). Prints a table and asserts what the issue
 * demands: the warm listing is 1 request, never more than 4 requests in flight.
 *
 * The test server sorts all 20,000 collections by name for every page it serves (about 0.3 s
 * of its single thread per page), so the cold listing against it measures mostly the server.
 * The same answers are then replayed by a server that only waits the 20 ms: that row is the
 * client's own cost.
 *
 *   npm run bench        (or: npx vitest run --config bench/vitest.config.ts)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/core/deps.js';
import { openWebLibrary } from '../src/core/library/web.js';
import type { Deps } from '../src/core/tool.js';
import { CLI_VERSION } from '../src/core/version.js';
import type { ListResult } from '../src/core/zotero/index.js';
import { startZoteroServer, type ZoteroTestServer } from '../test/support/zotero-server/index.js';
import { createRecorder, startReplay, type ReplayServer } from './replay.js';
import { printRequestRows, requestMeasurer, type RequestRow } from './support.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const COLLECTIONS = Number(process.env.BENCH_COLLECTIONS ?? 20_000);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1_000);
const KEY = 'BenchK3yAbCdEfGh12345678';
const PAGES = Math.ceil(COLLECTIONS / 100);
const BATCHES = Math.ceil(ITEMS / 50);

let server: ZoteroTestServer;
let replay: ReplayServer | undefined;
let dir: string;
let itemKeys: string[];
const rows: RequestRow[] = [];
const measure = requestMeasurer(rows);
/** The answers of the cold listing, replayed by the second test. */
const recorder = createRecorder();
const opened: Deps[] = [];

/** Deps as one MCP server process has them: one client, one key check, one listing cache. */
function makeDeps(apiUrl: string): Deps {
  const env = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTERO_API_URL: apiUrl,
    ZOTERO_API_KEY: KEY,
  };
  const deps = createDeps({ config: loadConfig(env), env, version: CLI_VERSION, surface: 'mcp' });
  opened.push(deps);
  return deps;
}

/** The least wall time at 4 in flight: the requests before the first page, the first page, then rounds of 4. */
function floorMs(pages: number, before = 0): number {
  return (before + 1 + Math.ceil((pages - 1) / 4)) * LATENCY_MS;
}

beforeAll(async () => {
  server = await startZoteroServer();
  server.addUser({ userID: 1, username: 'bench' });
  server.addKey({
    key: KEY,
    userID: 1,
    access: { user: { library: true, write: true }, groups: { all: { library: true, write: true } } },
  });
  const lib = server.library('users/1');
  // A realistic tree: 200 top-level collections, the rest nested under earlier ones.
  const keys = lib.addCollections(
    Array.from({ length: Math.min(200, COLLECTIONS) }, (_, i) => ({ name: `Topic ${i}` })),
  );
  while (keys.length < COLLECTIONS) {
    const start = keys.length;
    const parents = [...keys];
    const count = Math.min(2_000, COLLECTIONS - start);
    keys.push(
      ...lib.addCollections(
        Array.from({ length: count }, (_, i) => ({
          name: `Sub ${start + i}`,
          parentCollection: parents[(start + i) % parents.length] as string,
        })),
      ),
    );
  }
  itemKeys = lib.addItems(
    Array.from({ length: ITEMS }, (_, i) => ({
      title: `Paper ${i}`,
      collections: [keys[i % keys.length] as string],
    })),
  );
  server.setLatency(LATENCY_MS);
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-'));
}, 120_000);

afterAll(async () => {
  for (const deps of opened) await deps.services.close();
  await replay?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  printRequestRows(
    `Zotero Web API bench: ${COLLECTIONS} collections, ${ITEMS} items, ${LATENCY_MS} ms latency per request`,
    rows,
  );
});

const testServer = {
  reset: () => server.clearLog(),
  requests: () => server.log.length,
  maxInFlight: () => server.maxInFlight(),
};

function listing(deps: Deps) {
  return async () => {
    const lib = await openWebLibrary(deps, {}, { access: 'read' });
    return lib.client.listAll(`/${lib.prefix}/collections`);
  };
}

it(`lists ${COLLECTIONS} collections cold, then warm in one request, and reads ${ITEMS} items by key`, async () => {
  const deps = makeDeps(server.url);

  // The answers are recorded on the way (the client calls the global fetch) for the replay below.
  const realFetch = globalThis.fetch;
  globalThis.fetch = recorder.fetch as typeof fetch;
  let cold: { result: ListResult; row: RequestRow };
  try {
    cold = await measure(
      `list ${COLLECTIONS} collections, cold`,
      testServer,
      (r) =>
        `${r.read} read, complete=${r.complete}; 1 key check + ${PAGES} pages; floor ${floorMs(PAGES, 1)} ms`,
      listing(deps),
    );
  } finally {
    globalThis.fetch = realFetch;
  }
  expect(cold.result.read).toBe(COLLECTIONS);
  expect(cold.result.complete).toBe(true);
  expect(cold.row.requests).toBe(PAGES + 1);
  expect(cold.row.maxInFlight).toBeLessThanOrEqual(4);

  const warm = await measure(
    `list ${COLLECTIONS} collections, warm`,
    testServer,
    (r) => `${r.read} read, fromCache=${r.fromCache} (one 304; key check cached)`,
    listing(deps),
  );
  expect(warm.row.requests).toBe(1);
  expect(warm.result.fromCache).toBe(true);
  expect(warm.result.read).toBe(COLLECTIONS);

  const shuffled = [...itemKeys].sort(() => Math.random() - 0.5);
  const read = await measure(
    `read ${ITEMS} items by key`,
    testServer,
    (r) =>
      `${r.objects.length} found, ${r.missing.length} missing; ${BATCHES} x 50 keys; floor ${Math.ceil(BATCHES / 4) * LATENCY_MS} ms`,
    async () => {
      const lib = await openWebLibrary(deps, {}, { access: 'read' });
      return lib.client.getByKeys(lib.prefix, 'items', shuffled);
    },
  );
  expect(read.result.objects).toHaveLength(ITEMS);
  expect(read.row.requests).toBe(BATCHES);
  expect(read.row.maxInFlight).toBeLessThanOrEqual(4);
});

it('replays the same listing from a server that only waits: the client’s own cost', async () => {
  expect(recorder.answers.size).toBe(PAGES + 1);
  replay = await startReplay(recorder.answers, LATENCY_MS, server.url);
  const counter = {
    reset: () => replay?.reset(),
    requests: () => replay?.requests ?? 0,
    maxInFlight: () => replay?.maxInFlight ?? 0,
  };

  const deps = makeDeps(replay.url);
  const cold = await measure(
    `list ${COLLECTIONS} collections, cold, replayed`,
    counter,
    (r) => `${r.read} read; 1 key check + ${PAGES} pages; floor ${floorMs(PAGES, 1)} ms`,
    listing(deps),
  );
  expect(cold.result.read).toBe(COLLECTIONS);
  expect(cold.row.requests).toBe(PAGES + 1);
  expect(cold.row.maxInFlight).toBeLessThanOrEqual(4);

  const warm = await measure(
    `list ${COLLECTIONS} collections, warm, replayed`,
    counter,
    (r) => `${r.read} read, fromCache=${r.fromCache} (one 304)`,
    listing(deps),
  );
  expect(warm.row.requests).toBe(1);
  expect(warm.result.fromCache).toBe(true);
});
