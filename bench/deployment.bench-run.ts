/**
 * A shared deployment under load: three `zot server` replicas (separate processes, their own
 * disks) on one PostgreSQL, in front of the Zotero test server; TENANTS people signed in;
 * SESSIONS MCP sessions at once (spread over the replicas), CALLS calls each (searches, and one
 * create in five, each with its own idempotency key). Prints calls per second, p50/p99 latency,
 * errors, and each replica's memory. Then the same with one replica killed halfway: its clients
 * move to another replica and retry with the same idempotency keys; every create must be in
 * the library exactly once (none lost, none doubled).
 *
 *   node bench/run.mjs bench/deployment.bench-run.ts
 *   BENCH_SESSIONS=200 BENCH_CALLS=20 BENCH_TENANTS=10 BENCH_LATENCY_MS=5 (the defaults)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ZOT } from '../test/support/cli.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../test/support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../test/support/zotero-server/index.js';
import { isolatedEnv } from '../test/surfaces/mcp/harness.js';
import { clientWith, signIn } from '../test/surfaces/mcp/signed-in.js';
// @ts-expect-error: a plain .mjs script of the repository, without types.
import { startCluster } from '../scripts/postgres-cluster.mjs';
import { freePort, waitUntilUp } from '../test/support/free-port.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const CALLS = Number(process.env.BENCH_CALLS ?? 20);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 10);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 5);
const CALL_TIMEOUT_MS = 10_000;

interface Replica {
  url: string;
  port: number;
  process: ChildProcess;
  dir: string;
}

let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let cluster: { url: string; stop(): void };
let publicUrl: string;
let replicas: Replica[] = [];
const tokens: string[] = [];
let env: Record<string, string>;

async function startReplica(port: number): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-replica-'));
  const child = spawn(process.execPath, [ZOT, 'server', '--port', String(port), '--public-url', publicUrl], {
    env: {
      ...env,
      HOME: dir,
      ZOT_CACHE_DIR: join(dir, 'cache'),
      ZOTEUS_DATA_DIR: join(dir, 'data'),
      ZOTEUS_HTTP_MAX_SESSIONS: String(SESSIONS * 4),
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${url}/.well-known/oauth-protected-resource`, undefined, 20_000);
  return { url, port, process: child, dir };
}

/** Resident memory of a process now and at its peak, in MB (Linux /proc). */
function memoryOf(pid: number | undefined): { rss: number; peak: number } {
  if (pid === undefined) return { rss: 0, peak: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rss: 0, peak: 0 };
  }
}

beforeAll(async () => {
  cluster = (await startCluster()) as { url: string; stop(): void };
  zotero = await startZoteroServer({ latencyMs: LATENCY_MS });
  oauth = await startZoteroOAuthServer();
  const ports = [await freePort(), await freePort(), await freePort()];
  publicUrl = `http://127.0.0.1:${ports[0]}`;
  env = {
    ...isolatedEnv(),
    ...oauth.env(),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ZOTEUS_COMPILE_CACHE: 'off',
    ZOTERO_API_URL: zotero.url,
    ZOTEUS_AUTH: 'zotero',
    ZOTEUS_SECRET_KEYS: randomBytes(32).toString('base64'),
    ZOTEUS_DATABASE_URL: cluster.url,
  };
  replicas = [];
  for (const port of ports) replicas.push(await startReplica(port));
  for (let t = 0; t < TENANTS; t++) {
    const userID = 9000 + t;
    const apiKey = `BenchTenant${String(t).padStart(13, '0')}`;
    zotero.addUser({ userID, username: `tenant${t}` });
    zotero.addKey({ key: apiKey, userID, access: { user: { library: true, notes: true, write: true } } });
    zotero
      .library(`users/${userID}`)
      .addItems(Array.from({ length: 40 }, (_, i) => ({ title: `Tenant ${t} paper ${i} on graphs` })));
    tokens.push(await signIn(publicUrl, oauth, { userID, username: `tenant${t}`, apiKey }));
  }
}, 300_000);

afterAll(async () => {
  for (const r of replicas) {
    if (r.process.exitCode === null && r.process.signalCode === null) {
      const exited = new Promise((resolve) => r.process.once('exit', resolve));
      r.process.kill('SIGTERM');
      await exited;
    }
    rmSync(r.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  await oauth.close();
  await zotero.close();
  cluster.stop();
});

/** Ends the session (DELETE) and the client, whatever state the replica is in. */
async function closeSession(client: Client): Promise<void> {
  await (client.transport as { terminateSession?: () => Promise<void> } | undefined)
    ?.terminateSession?.()
    .catch(() => undefined);
  await client.close().catch(() => undefined);
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function run(label: string, killHalfway: boolean): Promise<void> {
  const alive = () => replicas.filter((r) => r.process.exitCode === null && r.process.signalCode === null);
  const latencies: number[] = [];
  let errors = 0;
  let moved = 0;
  let done = 0;
  let killed: Replica | undefined;
  const creates: Array<{ tenant: number; title: string }> = [];
  const total = SESSIONS * CALLS;
  const started = performance.now();

  const session = async (s: number) => {
    const tenant = s % TENANTS;
    let replica = replicas[s % replicas.length]!;
    let client: Client = await clientWith(`${replica.url}/mcp`, tokens[tenant]!);
    for (let c = 0; c < CALLS; c++) {
      const create = c % 5 === 4;
      const title = `${label} s${s} c${c}`;
      const params = create
        ? {
            name: 'zotero_create_items',
            arguments: { items: [{ itemType: 'book', title }], idempotency_key: `${label}-${s}-${c}` },
          }
        : { name: 'zotero_search_items', arguments: { q: 'graphs', limit: 10 } };
      if (create) creates.push({ tenant, title });
      const t0 = performance.now();
      for (let attempt = 0; ; attempt++) {
        let result: Awaited<ReturnType<Client['callTool']>> | undefined;
        try {
          result = await client.callTool(params, undefined, { timeout: CALL_TIMEOUT_MS });
        } catch (error) {
          if (attempt >= 3) {
            errors++;
            break;
          }
          // The replica went away (or refused): go to another one, retry with the same key.
          if (replica.process.exitCode !== null || replica.process.signalCode !== null) moved++;
          void closeSession(client);
          const others = alive();
          replica = others[(s + attempt + 1) % others.length]!;
          client = await clientWith(`${replica.url}/mcp`, tokens[tenant]!);
          if (process.env.BENCH_DEBUG) console.log(String(error).slice(0, 300));
          continue;
        }
        // An answer: an error in it is the call's own, not the transport's (not retried).
        if (result.isError) {
          errors++;
          if (process.env.BENCH_DEBUG) console.log(JSON.stringify(result.content).slice(0, 300));
        }
        break;
      }
      latencies.push(performance.now() - t0);
      done++;
      if (killHalfway && !killed && done >= total / 2) {
        killed = replicas[1]!;
        killed.process.kill('SIGKILL');
      }
    }
    await closeSession(client);
  };

  const before = zotero.log.length;
  await Promise.all(Array.from({ length: SESSIONS }, (_, s) => session(s)));
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  // Every create exactly once in its tenant's library.
  let lost = 0;
  let doubled = 0;
  for (const { tenant, title } of creates) {
    const n = [...zotero.library(`users/${9000 + tenant}`).items.values()].filter(
      (i) => i.title === title,
    ).length;
    if (n === 0) lost++;
    if (n > 1) doubled++;
  }
  const memory = replicas.map((r, i) => {
    const m = memoryOf(
      r.process.exitCode === null && r.process.signalCode === null ? r.process.pid : undefined,
    );
    return `replica ${i + 1}: ${r === killed ? 'killed' : `${m.rss} MB now, ${m.peak} MB peak`}`;
  });
  console.log(
    [
      `\n${label}: ${SESSIONS} sessions x ${CALLS} calls over ${replicas.length} replicas, ${TENANTS} tenants, Zotero latency ${LATENCY_MS} ms`,
      `  calls: ${latencies.length} in ${seconds.toFixed(1)} s = ${(latencies.length / seconds).toFixed(0)} calls/s`,
      `  latency: p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms`,
      `  errors: ${errors}; sessions moved to another replica: ${moved}`,
      `  creates: ${creates.length}, lost ${lost}, doubled ${doubled}; Zotero requests: ${zotero.log.length - before}`,
      `  memory: ${memory.join('; ')}`,
    ].join('\n'),
  );
  expect(lost).toBe(0);
  expect(doubled).toBe(0);
  expect(errors).toBe(0);
}

it('200 sessions x 20 calls over 3 replicas', async () => {
  await run('steady', false);
});

it('the same with one replica killed halfway', async () => {
  await run('kill', true);
});
