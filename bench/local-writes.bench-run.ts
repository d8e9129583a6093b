/**
 * A membership change of 500 items through the desktop's local API (Zotero 10+), against the
 * test server's local-API write mode with 20 ms of latency per request, through the product
 * path (tool declaration → core → openWebLibrary → write-route.ts → the local write client, one
 * `deps` as one MCP server has it); and the same change through the Web API
 * (ZOTEUS_WRITES=cloud) on the same server and latency, for comparison.
 *
 * The local API saves each object of a batch in its own transaction and answers HTTP/1.0 (a
 * connection per request); reads by key go 50 keys a request, as on the Web API.
 *
 *   npx vitest run --config bench/vitest.config.ts bench/local-writes.bench-run.ts
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
import manageTool from '../src/tools/collections/manage-collections.js';
import { startZoteroServer, type ZoteroTestServer } from '../test/support/zotero-server/index.js';
import { printRequestRows, requestMeasurer, type RequestRow } from './support.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const ITEMS = Number(process.env.BENCH_MEMBERSHIP_ITEMS ?? 500);
const KEY = 'BenchK3yAbCdEfGh12345678';
const LOCAL_KEY = 'BenchL0calK3yAbCdEfGh1234567890a';
const BATCHES = Math.ceil(ITEMS / 50);

let server: ZoteroTestServer;
let localUrl: string;
let dir: string;
let target: string;
let cloudTarget: string;
let items: string[];
const rows: RequestRow[] = [];
const measure = requestMeasurer(rows);
const opened: Deps[] = [];

function makeDeps(extra: Record<string, string>): Deps {
  const env = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTERO_API_URL: server.url,
    ZOTEUS_LOCAL_API_URL: localUrl,
    ...extra,
  };
  const deps = createDeps({ config: loadConfig(env), env, version: CLI_VERSION, surface: 'mcp' });
  opened.push(deps);
  return deps;
}

beforeAll(async () => {
  server = await startZoteroServer();
  server.addUser({ userID: 1, username: 'bench' });
  server.addKey({ key: KEY, userID: 1, access: { user: { library: true, write: true } } });
  localUrl = server.serveLocalApi({ userID: 1, groups: [] });
  server.serveLocalWrites().keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
  const lib = server.library('users/1');
  [target, cloudTarget] = lib.addCollections([{ name: 'Desktop target' }, { name: 'Cloud target' }]) as [
    string,
    string,
  ];
  items = lib.addItems(Array.from({ length: ITEMS }, (_, i) => ({ title: `Item ${i}` })));
  server.setLatency(LATENCY_MS);
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-local-writes-'));
}, 120_000);

afterAll(async () => {
  for (const deps of opened) await deps.services.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  printRequestRows(
    `Local writes bench: ${ITEMS} items per membership change, ${LATENCY_MS} ms latency per request`,
    rows,
  );
});

const testServer = {
  reset: () => server.clearLog(),
  requests: () => server.log.length,
  maxInFlight: () => server.maxInFlight(),
};

type ManageOut = Awaited<ReturnType<typeof manageTool.run>>;

it(`add_items of ${ITEMS} items through the desktop's local API, then through the Web API`, async () => {
  const desktop = makeDeps({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY });
  // The write probe and the desktop's libraries are detected once per deps: first, so the rows count the work.
  await openWebLibrary(desktop, {}, { access: 'write' });
  const isMember = (key: string, coll: string) =>
    server.library('users/1').items.get(key)?.collections.includes(coll) ?? false;

  const local = await measure(
    `add_items ${ITEMS}, desktop local API`,
    testServer,
    (r: ManageOut) => `${r.updated?.length} updated; ${BATCHES} GET + ${BATCHES} POST of 50 expected`,
    () => manageTool.run({ action: 'add_items', collection_key: target, item_keys: items }, desktop),
  );
  expect(local.row.requests).toBeLessThanOrEqual(2 * BATCHES + 1);
  expect(items.every((k) => isMember(k, target))).toBe(true);
  expect(server.log.every((e) => e.path.startsWith('/api'))).toBe(true);

  const again = await measure(
    `add_items ${ITEMS}, desktop, re-run (no-op)`,
    testServer,
    (r: ManageOut) => `${r.unchanged?.length} unchanged, nothing written`,
    () => manageTool.run({ action: 'add_items', collection_key: target, item_keys: items }, desktop),
  );
  expect(again.row.requests).toBeLessThanOrEqual(BATCHES + 1);

  const cloud = makeDeps({ ZOTERO_API_KEY: KEY, ZOTEUS_WRITES: 'cloud' });
  await openWebLibrary(cloud, {}, { access: 'write' });
  const web = await measure(
    `add_items ${ITEMS}, Web API (ZOTEUS_WRITES=cloud)`,
    testServer,
    (r: ManageOut) => `${r.updated?.length} updated; ${BATCHES} GET + ${BATCHES} POST of 50 expected`,
    () => manageTool.run({ action: 'add_items', collection_key: cloudTarget, item_keys: items }, cloud),
  );
  expect(web.row.requests).toBeLessThanOrEqual(2 * BATCHES + 1);
  expect(server.log.some((e) => e.path.startsWith('/api'))).toBe(false);
}, 120_000);
