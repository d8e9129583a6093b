/**
 * Collection tools against the test server with 20 ms of latency per request, through the
 * product path (tool declaration → core → openWebLibrary → the shared client, one `deps` as
 * one MCP server has it):
 *
 * - `zotero_list_collections` over 20,000 collections, cold and warm (the warm listing must be
 *   one request, a `304`), and the same answers replayed by a server that only waits, which
 *   leaves the tool's own cost (reading, sorting, filtering and paging 20,000 rows);
 * - `zotero_manage_collections` add_items of 500 items (at most 2·⌈500/50⌉ = 20 requests), its
 *   no-op re-run, remove_items, and add_items again while the library answers a write that
 *   arrives during another with 409 "locked", against a naive tool doing one GET and one PATCH per item
 *   (1,000 requests) with the same client and the same 4 requests in flight.
 *
 *   npm run bench        (or: npx vitest run --config bench/vitest.config.ts bench/collections.bench-run.ts)
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
import listTool from '../src/tools/collections/list-collections.js';
import manageTool from '../src/tools/collections/manage-collections.js';
import { startZoteroServer, type ZoteroTestServer } from '../test/support/zotero-server/index.js';
import { createRecorder, startReplay, type ReplayServer } from './replay.js';
import { printRequestRows, requestMeasurer, type RequestRow } from './support.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const COLLECTIONS = Number(process.env.BENCH_COLLECTIONS ?? 20_000);
const ITEMS = Number(process.env.BENCH_MEMBERSHIP_ITEMS ?? 500);
const KEY = 'BenchK3yAbCdEfGh12345678';
const PAGES = Math.ceil(COLLECTIONS / 100);
const BATCHES = Math.ceil(ITEMS / 50);

let server: ZoteroTestServer;
let replay: ReplayServer | undefined;
let dir: string;
let target: string;
let naiveTarget: string;
let batchedItems: string[];
let naiveItems: string[];
const rows: RequestRow[] = [];
const measure = requestMeasurer(rows);
const recorder = createRecorder();
const opened: Deps[] = [];

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

/**
 * The least wall time of a batched membership change: the reads go 4 at a time, then the writes
 * 4 at a time (the client's writeBatch sends the chunks of a batch at once, within the bound).
 */
function batchedFloorMs(): number {
  return 2 * Math.ceil(BATCHES / 4) * LATENCY_MS;
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
  // The two targets of the membership rows count among the COLLECTIONS.
  [target, naiveTarget] = lib.addCollections([{ name: 'Bench target' }, { name: 'Naive target' }]) as [
    string,
    string,
  ];
  const keys = lib.addCollections(
    Array.from({ length: Math.min(200, COLLECTIONS) }, (_, i) => ({ name: `Topic ${i}` })),
  );
  while (keys.length < COLLECTIONS - 2) {
    const start = keys.length;
    const parents = [...keys];
    const count = Math.min(2_000, COLLECTIONS - 2 - start);
    keys.push(
      ...lib.addCollections(
        Array.from({ length: count }, (_, i) => ({
          name: `Sub ${start + i}`,
          parentCollection: parents[(start + i) % parents.length] as string,
        })),
      ),
    );
  }
  batchedItems = lib.addItems(Array.from({ length: ITEMS }, (_, i) => ({ title: `Batched ${i}` })));
  naiveItems = lib.addItems(Array.from({ length: ITEMS }, (_, i) => ({ title: `Naive ${i}` })));
  server.setLatency(LATENCY_MS);
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-collections-'));
}, 300_000);

afterAll(async () => {
  for (const deps of opened) await deps.services.close();
  await replay?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  printRequestRows(
    `Collections bench: ${COLLECTIONS} collections, ${ITEMS} items per membership change, ${LATENCY_MS} ms latency per request`,
    rows,
  );
});

const testServer = {
  reset: () => server.clearLog(),
  requests: () => server.log.length,
  maxInFlight: () => server.maxInFlight(),
};

type ListOut = Awaited<ReturnType<typeof listTool.run>>;
type ManageOut = Awaited<ReturnType<typeof manageTool.run>>;

it(`zotero_list_collections over ${COLLECTIONS} collections: cold, warm (one 304), warm with q`, async () => {
  const deps = makeDeps(server.url);
  const realFetch = globalThis.fetch;
  globalThis.fetch = recorder.fetch as typeof fetch;
  let cold: { result: ListOut; row: RequestRow };
  try {
    cold = await measure(
      `list ${COLLECTIONS}, cold`,
      testServer,
      (r) =>
        `totalResults ${r.totalResults}, complete=${String(r.complete)}; 1 key check + ${PAGES} pages; floor ${floorMs(PAGES, 1)} ms`,
      () => listTool.run({}, deps),
    );
  } finally {
    globalThis.fetch = realFetch;
  }
  expect(cold.result.totalResults).toBe(COLLECTIONS);
  expect(cold.result.complete).toBe(true);
  expect(cold.row.requests).toBe(PAGES + 1);
  expect(cold.row.maxInFlight).toBeLessThanOrEqual(4);

  const warm = await measure(
    `list ${COLLECTIONS}, warm`,
    testServer,
    (r) => `totalResults ${r.totalResults}; one If-Modified-Since-Version request answered 304`,
    () => listTool.run({}, deps),
  );
  expect(warm.row.requests).toBe(1);
  expect(server.log[0]?.status).toBe(304);

  const q = await measure(
    `list ${COLLECTIONS}, warm, q "Sub 19"`,
    testServer,
    (r) => `${r.totalResults} matches over the whole library; page of ${r.collections.length}`,
    () => listTool.run({ q: 'Sub 19', limit: 50 }, deps),
  );
  expect(q.row.requests).toBe(1);
});

it('the same listing replayed by a server that only waits: the tool’s own cost', async () => {
  replay = await startReplay(recorder.answers, LATENCY_MS, server.url);
  const counter = {
    reset: () => replay?.reset(),
    requests: () => replay?.requests ?? 0,
    maxInFlight: () => replay?.maxInFlight ?? 0,
  };
  const deps = makeDeps(replay.url);
  const cold = await measure(
    `list ${COLLECTIONS}, cold, replayed`,
    counter,
    (r) => `totalResults ${r.totalResults}; floor ${floorMs(PAGES, 1)} ms`,
    () => listTool.run({}, deps),
  );
  expect(cold.row.requests).toBe(PAGES + 1);
  const warm = await measure(
    `list ${COLLECTIONS}, warm, replayed`,
    counter,
    () => `one 304; floor ${LATENCY_MS} ms (the rest is sorting and paging ${COLLECTIONS} rows)`,
    () => listTool.run({}, deps),
  );
  expect(warm.row.requests).toBe(1);
});

it(`add_items of ${ITEMS} items: batched, no-op re-run, remove, locked; against one GET and one PATCH per item`, async () => {
  const deps = makeDeps(server.url);
  // The key check is cached per deps: do it first so the rows count only the work.
  await openWebLibrary(deps, {}, { access: 'write' });
  const isMember = (key: string, coll: string) =>
    server.library('users/1').items.get(key)?.collections.includes(coll) ?? false;

  const add = await measure(
    `add_items ${ITEMS}, batched`,
    testServer,
    (r: ManageOut) =>
      `${r.updated?.length} updated; ${BATCHES} GET + ${BATCHES} POST of 50; floor ${batchedFloorMs()} ms`,
    () => manageTool.run({ action: 'add_items', collection_key: target, item_keys: batchedItems }, deps),
  );
  expect(add.row.requests).toBeLessThanOrEqual(2 * BATCHES);
  expect(batchedItems.every((k) => isMember(k, target))).toBe(true);

  const again = await measure(
    `add_items ${ITEMS}, re-run (no-op)`,
    testServer,
    (r: ManageOut) =>
      `${r.unchanged?.length} unchanged, nothing written; ${BATCHES} GET; floor ${Math.ceil(BATCHES / 4) * LATENCY_MS} ms`,
    () => manageTool.run({ action: 'add_items', collection_key: target, item_keys: batchedItems }, deps),
  );
  expect(again.row.requests).toBe(BATCHES);

  const remove = await measure(
    `remove_items ${ITEMS}, batched`,
    testServer,
    (r: ManageOut) =>
      `${r.updated?.length} updated; ${BATCHES} GET + ${BATCHES} POST; floor ${batchedFloorMs()} ms`,
    () => manageTool.run({ action: 'remove_items', collection_key: target, item_keys: batchedItems }, deps),
  );
  expect(remove.row.requests).toBeLessThanOrEqual(2 * BATCHES);

  // Zotero's library lock: a write that arrives while another is in progress answers 409.
  server.faults.lock({ times: Number.POSITIVE_INFINITY });
  const locked = () => server.log.filter((e) => e.fault === 'lock').length;
  const contended = await measure(
    `add_items ${ITEMS}, library locked`,
    testServer,
    (r: ManageOut) =>
      `${r.updated?.length} updated; ${locked()} POSTs found the library locked (409), waited out (backoff with jitter) and sent again`,
    () => manageTool.run({ action: 'add_items', collection_key: target, item_keys: batchedItems }, deps),
  );
  server.faults.clear();
  expect(contended.row.requests).toBe(2 * BATCHES + locked());
  expect(batchedItems.every((k) => isMember(k, target))).toBe(true);

  const lib = await openWebLibrary(deps, {}, { access: 'write' });
  const naive = await measure(
    `naive: GET + PATCH per item, ${ITEMS}`,
    testServer,
    () =>
      `what a one-object-at-a-time tool costs: ${2 * ITEMS} requests; floor ${Math.ceil(ITEMS / 4) * 2 * LATENCY_MS} ms at 4 in flight, ${2 * ITEMS * LATENCY_MS} ms one at a time`,
    async () => {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < naiveItems.length) {
          const key = naiveItems[next++] as string;
          const got = await lib.client.request<{ version: number; data: { collections: string[] } }>(
            'GET',
            `/${lib.prefix}/items/${key}`,
          );
          await lib.client.patch(
            lib.prefix,
            'items',
            key,
            { collections: [...got.data.data.collections, naiveTarget] },
            got.data.version,
          );
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
    },
  );
  expect(naive.row.requests).toBe(2 * ITEMS);
  expect(naiveItems.every((k) => isMember(k, naiveTarget))).toBe(true);
});
