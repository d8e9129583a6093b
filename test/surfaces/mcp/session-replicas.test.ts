/**
 * A session of the older (session-based) revisions moves between replicas: two servers started
 * as an operator would (`runMcp` with sign-in, one PostgreSQL), behind a loopback proxy that
 * sends every request to one replica and, after a switch, to the other. An SDK 1.32 client
 * opens its session on A and keeps working in it on B; another tenant's token with that id
 * finds no session; B, at its cap, refuses to take on a second session until the first is
 * closed; after DELETE on B, neither replica knows the session.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';
import { signIn as signInAt, textOf } from './signed-in.js';
import { freePort, waitUntilUp } from '../../support/free-port.js';

const KEY_ADA = 'AdaKey0000000000000000A1';
const KEY_BOB = 'BobKey0000000000000000B2';
const SECRET = randomBytes(32).toString('base64');

let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let proxy: Server;
let base: string;
const replicas: Array<{
  name: 'A' | 'B';
  port: number;
  stop: AbortController;
  running: Promise<number>;
  log: string[];
}> = [];
/** Where the proxy sends requests now. */
let target: 'A' | 'B' = 'A';
/** Every /mcp request the proxy forwarded: to which replica, with which session id. */
const forwarded: Array<{ to: 'A' | 'B'; method: string; session: string | undefined }> = [];

const portOf = (name: 'A' | 'B') => replicas.find((r) => r.name === name)!.port;

beforeAll(async () => {
  zotero = await startZoteroServer();
  zotero.addUser({ userID: 101, username: 'ada' });
  zotero.addKey({ key: KEY_ADA, userID: 101, access: { user: { library: true, notes: true, write: true } } });
  zotero.addUser({ userID: 202, username: 'bob' });
  zotero.addKey({ key: KEY_BOB, userID: 202, access: { user: { library: true, notes: true, write: true } } });
  zotero.library('users/101').addItems([{ title: 'Ada only: analytical engines' }]);
  oauth = await startZoteroOAuthServer();
  const databaseUrl = await postgresUrl();

  // The proxy: what a load balancer does, with a switch.
  proxy = createServer((req, res) => {
    const to = target;
    if (req.url?.startsWith('/mcp')) {
      const session = req.headers['mcp-session-id'];
      forwarded.push({
        to,
        method: req.method ?? '',
        session: Array.isArray(session) ? session[0] : session,
      });
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: portOf(to), method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  for (const name of ['A', 'B'] as const) {
    const port = await freePort();
    const log: string[] = [];
    const err = new PassThrough();
    err.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    const stop = new AbortController();
    const running = runMcp({
      env: isolatedEnv({
        ...oauth.env(),
        ZOTERO_API_URL: zotero.url,
        ZOTEUS_AUTH: 'zotero',
        ZOTEUS_SECRET_KEYS: SECRET,
        ZOTEUS_DATABASE_URL: databaseUrl,
        // B keeps one session at a time: the cap is per replica, rebuilt sessions included.
        ...(name === 'B' ? { ZOTEUS_HTTP_MAX_SESSIONS: '1' } : {}),
      }),
      http: true,
      port,
      publicUrl: base,
      stderr: err,
      signal: stop.signal,
    });
    replicas.push({ name, port, stop, running, log });
    await waitUntilUp(`http://127.0.0.1:${port}/readyz`);
  }
});

afterAll(async () => {
  for (const replica of replicas) replica.stop.abort();
  for (const replica of replicas) expect(await replica.running).toBe(0);
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  proxy.closeAllConnections();
  await oauth.close();
  await zotero.close();
});

/** A 2025-era request in the session `session`, straight to one replica. */
const listTools = (name: 'A' | 'B', token: string, session: string) =>
  fetch(`http://127.0.0.1:${portOf(name)}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
  });

describe('a session of the older revisions on two replicas sharing PostgreSQL', () => {
  let adaToken: string;
  let bobToken: string;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    adaToken = await signInAt(base, oauth, { userID: 101, username: 'ada', apiKey: KEY_ADA });
    bobToken = await signInAt(base, oauth, { userID: 202, username: 'bob', apiKey: KEY_BOB });
    client = new Client({ name: 'replica-test', version: '1.2.3' });
    transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adaToken}` } },
    });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client.close();
  });

  it('opens on A and goes on in the same session on B, which rebuilds it from the database', async () => {
    const session = transport.sessionId!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(forwarded.filter((f) => f.to === 'B')).toEqual([]);
    const onA = await client.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(textOf(onA)).toContain('Ada only: analytical engines');

    target = 'B';
    const before = forwarded.length;
    const onB = await client.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(onB.isError ?? false).toBe(false);
    expect(textOf(onB)).toContain('Ada only: analytical engines');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('zotero_search_items');
    // The same session, and every one of those requests answered by B.
    expect(transport.sessionId).toBe(session);
    const later = forwarded.slice(before);
    expect(later.length).toBeGreaterThanOrEqual(2);
    expect(later.every((f) => f.to === 'B' && f.session === session)).toBe(true);
    const logB = replicas.find((r) => r.name === 'B')!.log.join('');
    expect(logB).toContain(`zoteus: mcp http session ${session.slice(0, 8)}… continued here`);
  });

  it("another tenant's token with that session id finds no session, on either replica", async () => {
    const session = transport.sessionId!;
    for (const name of ['A', 'B'] as const) {
      const answer = await listTools(name, bobToken, session);
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { error: { code: number } }).error.code).toBe(-32001);
    }
    // Ada's own token still reaches it on both.
    for (const name of ['A', 'B'] as const) {
      const answer = await listTools(name, adaToken, session);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('zotero_search_items');
    }
  });

  it('B at its cap (one session) refuses to take on a second one with 503, and A keeps serving it', async () => {
    target = 'A';
    const second = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${adaToken}` } },
    });
    const other = new Client({ name: 'replica-test-2', version: '1.0.0' });
    await other.connect(second);
    const id = second.sessionId!;
    expect(id).not.toBe(transport.sessionId);
    const refused = await listTools('B', adaToken, id);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /^Too many sessions: 1 are open/,
    );
    const onA = await listTools('A', adaToken, id);
    expect(onA.status).toBe(200);
    await onA.text();
    await other.close();
  });

  it('after DELETE on B, the session is over on both replicas (404)', async () => {
    const session = transport.sessionId!;
    target = 'B';
    await transport.terminateSession();
    expect(forwarded.at(-1)).toEqual({ to: 'B', method: 'DELETE', session });
    for (const name of ['B', 'A'] as const) {
      const answer = await listTools(name, adaToken, session);
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { error: { code: number } }).error.code).toBe(-32001);
    }
  });
});
