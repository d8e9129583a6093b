/**
 * Operating the HTTP server as a load balancer, Prometheus and a log collector see it:
 * /healthz, /readyz (the state database on both engines), /metrics (what it counts, who may
 * read it), JSON logs, and a graceful shutdown that answers the calls in flight.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../../src/core/config.js';
import { openStateDatabase, STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import { defineTool, type AnyTool } from '../../../src/core/tool.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer } from '../../support/zotero-oauth-server.js';
import { signIn } from './signed-in.js';
import { startZoteroServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';

const KEY = 'OpsKey000000000000000Z9x';
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Running {
  base: string;
  url: string;
  stderr: () => string;
  stop: () => Promise<number>;
  running: Promise<number>;
  abort: AbortController;
}

/** runMcp over HTTP on a free port, as `zot server` runs it; stopped after the test. */
async function serve(
  env: Record<string, string>,
  options: { tools?: readonly AnyTool[]; publicUrl?: string; port?: number } = {},
): Promise<Running> {
  let text = '';
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const abort = new AbortController();
  const running = runMcp({
    env,
    http: true,
    port: options.port ?? 0,
    stderr: err,
    signal: abort.signal,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  });
  await expect.poll(() => text, { timeout: 10_000 }).toMatch(/listening on http/);
  const url = /listening on (http:\/\/[^\s"]+)/.exec(text)![1]!;
  let stopped: Promise<number> | undefined;
  const stop = () => {
    abort.abort();
    return (stopped ??= running);
  };
  closers.push(stop);
  return { base: url.replace(/\/mcp$/, ''), url, stderr: () => text, stop, running, abort };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'ops-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  closers.push(() => client.close());
  return client;
}

/** A GET by node:http, with the exact headers given (fetch will not send Host). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function slowTool(ms: number): AnyTool {
  return defineTool({
    name: 'zotero_fixture_slow',
    title: 'Fixture slow',
    summary: 'Takes a while.',
    description: 'A fixture.',
    tier: 'read',
    openWorld: false,
    since: '0.2.0',
    toolset: 'library',
    cli: [],
    input: z.object({}).strict(),
    output: z.object({ ok: z.boolean() }),
    run: async (_input, deps) => {
      await deps.clock.sleep(ms);
      return { ok: true };
    },
  }) as unknown as AnyTool;
}

describe('health, readiness and metrics without sign-in', () => {
  it('answers /healthz and /readyz, and counts requests, tool calls, Zotero answers, 429s and waits', async () => {
    const zotero = await startZoteroServer();
    closers.push(() => zotero.close());
    zotero.addUser({ userID: 7, username: 'ops' });
    zotero.addKey({ key: KEY, userID: 7, access: { user: { library: true } } });
    zotero.faults.rateLimit({ retryAfter: 1, times: 1 });
    const server = await serve(isolatedEnv({ ZOTERO_API_KEY: KEY, ZOTERO_API_URL: zotero.url }));

    const health = await get(`${server.base}/healthz`);
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(await get(`${server.base}/readyz`)).toMatchObject({ status: 200, body: '{"status":"ready"}' });

    const client = await connect(server.url);
    const whoami = (await client.callTool({ name: 'zotero_whoami', arguments: {} })) as CallToolResult;
    expect(whoami.isError).toBeFalsy();
    const unknown = (await client.callTool({ name: 'no_such_tool_here', arguments: {} })) as CallToolResult;
    expect(unknown.isError).toBe(true);

    const metrics = await get(`${server.base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = metrics.body;
    expect(text).toContain('# TYPE zoteus_mcp_tool_calls_total counter');
    expect(metricValue(text, 'zoteus_mcp_tool_calls_total{tool="zotero_whoami",outcome="ok"}')).toBe(1);
    // A name the client made up is never a label.
    expect(text).toMatch(/^zoteus_mcp_tool_calls_total\{tool="unknown",outcome="[a-z_]+"\} 1$/m);
    expect(text).not.toContain('no_such_tool_here');
    expect(metricValue(text, 'zoteus_mcp_requests_total{method="tools/call",outcome="ok"}')).toBe(1);
    expect(metricValue(text, 'zoteus_mcp_request_duration_seconds_count{method="tools/call"}')).toBe(2);
    expect(
      metricValue(text, 'zoteus_mcp_request_duration_seconds_bucket{method="tools/call",le="+Inf"}'),
    ).toBe(2);
    // The key check: one 429 (Retry-After: 1, waited out), then its answer.
    expect(metricValue(text, 'zoteus_zotero_rate_limited_total{status="429"}')).toBe(1);
    expect(metricValue(text, 'zoteus_zotero_requests_total{status_class="4xx"}')).toBe(1);
    expect(metricValue(text, 'zoteus_zotero_requests_total{status_class="2xx"}')).toBe(
      zotero.log.filter((entry) => entry.status === 200).length,
    );
    expect(metricValue(text, 'zoteus_zotero_wait_seconds_total')).toBeGreaterThanOrEqual(0.9);
    expect(metricValue(text, 'zoteus_mcp_sessions_active')).toBe(1);
    expect(metricValue(text, 'zoteus_http_requests_in_flight')).toBe(0);
    expect(text).not.toContain(KEY);

    expect((await fetch(`${server.base}/healthz`, { method: 'POST' })).status).toBe(405);
    expect(await server.stop()).toBe(0);
  });

  it('asks for ZOTEUS_METRICS_TOKEN as a bearer when it is set', async () => {
    const token = randomBytes(18).toString('base64url');
    const server = await serve(isolatedEnv({ ZOTEUS_METRICS_TOKEN: token }));
    const none = await get(`${server.base}/metrics`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({
      error: 'Unauthorized: /metrics needs Authorization: Bearer <ZOTEUS_METRICS_TOKEN>.',
    });
    expect((await get(`${server.base}/metrics`, { authorization: 'Bearer wrong' })).status).toBe(401);
    const right = await get(`${server.base}/metrics`, { authorization: `Bearer ${token}` });
    expect(right.status).toBe(200);
    expect(right.body).toContain('zoteus_mcp_sessions_active 0');
    // Health needs no token.
    expect((await get(`${server.base}/healthz`)).status).toBe(200);
  });

  it('refuses a bad ZOTEUS_LOG_FORMAT or ZOTEUS_SHUTDOWN_GRACE_S at start, naming it', async () => {
    for (const [name, value] of [
      ['ZOTEUS_LOG_FORMAT', 'xml'],
      ['ZOTEUS_SHUTDOWN_GRACE_S', 'soon'],
    ] as const) {
      let text = '';
      const err = new PassThrough();
      err.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const code = await runMcp({ env: isolatedEnv({ [name]: value }), http: true, port: 0, stderr: err });
      expect(code).toBe(3);
      expect(text).toMatch(new RegExp(`^zoteus: validation_error: ${name} must be `));
    }
  });
});

describe('JSON logs (ZOTEUS_LOG_FORMAT=json)', () => {
  it('writes every line as one JSON object with the request fields, redacted', async () => {
    const server = await serve(isolatedEnv({ ZOTEUS_LOG_FORMAT: 'json', ZOTERO_API_KEY: KEY }), {
      tools: [slowTool(1)],
    });
    const client = await connect(server.url);
    const ok = (await client.callTool({ name: 'zotero_fixture_slow', arguments: {} })) as CallToolResult;
    expect(ok.structuredContent).toEqual({ ok: true });
    // A tool "named" with the key: the line about it must not carry it.
    await client.callTool({ name: KEY, arguments: {} });
    const refused = await fetch(server.url, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    await client.close();
    expect(await server.stop()).toBe(0);

    const lines = server.stderr().trim().split('\n');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of entries) {
      expect(entry).toMatchObject({
        level: expect.stringMatching(/^(debug|info|warn|error)$/),
        msg: expect.any(String),
      });
      expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
    }
    const call = entries.find((e) => e.method === 'tools/call' && e.tool === 'zotero_fixture_slow');
    expect(call).toMatchObject({
      level: 'info',
      outcome: 'ok',
      request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
      ms: expect.any(Number),
      msg: expect.stringMatching(
        /^zoteus: mcp 20\d\d-\d\d-\d\d http tools\/call zotero_fixture_slow: ok in \d+ ms/,
      ),
    });
    const unknown = entries.find((e) => e.method === 'tools/call' && e !== call);
    expect(unknown).toMatchObject({ tool: expect.stringContaining('[REDACTED]') });
    expect(server.stderr()).not.toContain(KEY);
    expect(entries.find((e) => String(e.msg).includes('refused Origin'))).toMatchObject({ level: 'warn' });
    expect(entries.at(-1)).toMatchObject({ level: 'info', msg: 'zoteus: mcp http stopped' });
  });
});

describe('JSON logs at start', () => {
  it('reports a bad setting as one JSON line of level error, naming it', async () => {
    let text = '';
    const err = new PassThrough();
    err.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const env = isolatedEnv({ ZOTEUS_LOG_FORMAT: 'json', ZOTEUS_HTTP_MAX_SESSIONS: 'many' });
    expect(await runMcp({ env, http: true, port: 0, stderr: err })).toBe(3);
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'error',
      msg: expect.stringMatching(
        /^zoteus: validation_error: ZOTEUS_HTTP_MAX_SESSIONS must be [^\n]*\nHint: /,
      ),
    });
  });
});

describe('graceful shutdown', () => {
  it('answers a call in flight when the stop comes, and refuses what comes after', async () => {
    const server = await serve(isolatedEnv(), { tools: [slowTool(1500)] });
    const client = await connect(server.url);
    const call = client.callTool({ name: 'zotero_fixture_slow', arguments: {} }) as Promise<CallToolResult>;
    await expect
      .poll(async () =>
        metricValue((await get(`${server.base}/metrics`)).body, 'zoteus_http_requests_in_flight'),
      )
      .toBe(1);
    server.abort.abort();
    await expect
      .poll(() => server.stderr())
      .toContain('shutting down: waiting up to 30 s for 1 request(s) in flight');
    // A new request now: the connection is refused (the listener is closed) or answered 503.
    const after = await get(`${server.base}/healthz`).then(
      (answer) => answer.status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(['ECONNREFUSED', 503]).toContain(after);
    const result = await call;
    expect(result.structuredContent).toEqual({ ok: true });
    expect(await server.running).toBe(0);
    expect(server.stderr()).toMatch(/tools\/call zotero_fixture_slow: ok in \d+ ms/);
  });

  it('closes after ZOTEUS_SHUTDOWN_GRACE_S even if a call is still running', async () => {
    const server = await serve(isolatedEnv({ ZOTEUS_SHUTDOWN_GRACE_S: '1' }), { tools: [slowTool(8000)] });
    const client = await connect(server.url);
    let answered = false;
    void client.callTool({ name: 'zotero_fixture_slow', arguments: {} }).then(
      () => (answered = true),
      () => {},
    );
    await expect
      .poll(async () =>
        metricValue((await get(`${server.base}/metrics`)).body, 'zoteus_http_requests_in_flight'),
      )
      .toBe(1);
    const started = Date.now();
    server.abort.abort();
    expect(await server.running).toBe(0);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(4000);
    expect(server.stderr()).toContain('waiting up to 1 s for 1 request(s) in flight');
    expect(server.stderr()).toContain(
      'shutting down with 1 request(s) still in flight after the grace period',
    );
    expect(answered).toBe(false);
  });
});

describe.each(['sqlite', 'postgres'] as const)('readiness and metrics with sign-in (%s)', (engine) => {
  it('is ready while the migrations are current, and not once one is missing; /metrics stays on loopback', async () => {
    const zotero = await startZoteroServer();
    closers.push(() => zotero.close());
    zotero.addUser({ userID: 4242, username: 'grace' });
    zotero.addKey({ key: KEY, userID: 4242, access: { user: { library: true } } });
    const oauth = await startZoteroOAuthServer();
    closers.push(() => oauth.close());
    oauth.user = { userID: 4242, username: 'grace', apiKey: KEY };
    const { createServer } = await import('node:http');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const env = isolatedEnv({
      ...oauth.env(),
      ZOTEUS_AUTH: 'zotero',
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_SECRET_KEYS: randomBytes(32).toString('base64'),
      ...(engine === 'postgres' ? { ZOTEUS_DATABASE_URL: await postgresUrl() } : {}),
    });
    const server = await serve(env, { port, publicUrl: `http://127.0.0.1:${port}` });

    expect(await get(`${server.base}/readyz`)).toMatchObject({ status: 200, body: '{"status":"ready"}' });
    // Probes reach health and readiness whatever Host they send (a pod's address).
    expect((await get(`${server.base}/healthz`, { host: '10.1.2.3:8080' })).status).toBe(200);
    expect((await get(`${server.base}/readyz`, { host: '10.1.2.3:8080' })).status).toBe(200);
    // No bearer needed for them; /mcp still asks for one.
    expect((await fetch(server.url, { method: 'POST', body: '{}' })).status).toBe(401);
    // A signed-in person's call is counted, and so are the Web API requests it made with their key.
    const client = await connect(server.url, {
      authorization: `Bearer ${await signIn(server.base, oauth, oauth.user)}`,
    });
    const whoami = (await client.callTool({ name: 'zotero_whoami', arguments: {} })) as CallToolResult;
    expect(whoami.isError).toBeFalsy();
    // /metrics: a loopback client directly, not one a proxy forwarded.
    const metrics = await get(`${server.base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metricValue(metrics.body, 'zoteus_mcp_tool_calls_total{tool="zotero_whoami",outcome="ok"}')).toBe(
      1,
    );
    expect(
      metricValue(metrics.body, 'zoteus_zotero_requests_total{status_class="2xx"}'),
    ).toBeGreaterThanOrEqual(1);
    // Nothing of the person: neither their id, name nor key.
    const labels = metrics.body.match(/\{[^}]*\}/g)!.join('\n');
    for (const secret of ['4242', 'grace']) expect(labels).not.toContain(secret);
    expect(metrics.body).not.toContain(KEY);
    const forwarded = await get(`${server.base}/metrics`, { 'x-forwarded-for': '203.0.113.9' });
    expect(forwarded.status).toBe(403);
    expect(JSON.parse(forwarded.body).error).toMatch(/ZOTEUS_METRICS_TOKEN/);

    const last = STATE_MIGRATIONS.at(-1)!.id;
    const state = await openStateDatabase(env, loadConfig(env));
    try {
      await state.db.run('DELETE FROM zoteus_migrations WHERE id = ?', [last]);
    } finally {
      await state.db.close();
    }
    const notReady = await get(`${server.base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body)).toEqual({ status: 'not_ready', reason: `migrations pending: ${last}` });
    expect(await server.stop()).toBe(0);
  });
});
