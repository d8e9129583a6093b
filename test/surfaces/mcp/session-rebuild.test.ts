/**
 * What a replica that did not see a session's `initialize` knows of it once rebuilt from the
 * state database (SQLite and PostgreSQL): the server instance it makes for the tenant has the
 * client's name and version, its capabilities and the revision negotiated on the first
 * replica, as the first replica's instance has; and idleness on every replica ends the session
 * on every replica.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { sqlAuthStore } from '../../../src/core/store/auth-store.js';
import { mcpSessionsMigration, sqlSessionStore } from '../../../src/core/store/sessions-sql.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { zoteroOAuthSettings, zoteroSignIn } from '../../../src/core/zotero/oauth1.js';
import { authSettings } from '../../../src/surfaces/mcp/auth/settings.js';
import { createCatalogue, createServer as createMcpServer } from '../../../src/surfaces/mcp/server.js';
import { startHttp, type HttpHandle } from '../../../src/surfaces/mcp/transports.js';
import { tools } from '../../../src/tools/index.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { DATABASES, openTestDatabase, type TestDatabase } from './auth/databases.js';
import { isolatedEnv } from './harness.js';
import { signIn } from './signed-in.js';
import { freePort } from '../../support/free-port.js';

const IDLE_MS = 60_000;

describe.each(DATABASES)('a session rebuilt on another replica (%s)', (kind) => {
  let database: TestDatabase;
  let oauth: ZoteroOAuthFake;
  let base: string;
  const clock = { now: Date.now() };
  /** The server instances each replica made, in order. */
  const made: Record<'A' | 'B', Server[]> = { A: [], B: [] };
  const replicas: Partial<Record<'A' | 'B', HttpHandle>> = {};
  let token: string;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    await migrate(database.db, [mcpSessionsMigration]);
    oauth = await startZoteroOAuthServer();
    const portA = await freePort();
    base = `http://127.0.0.1:${portA}`;
    const env = { ...isolatedEnv(), ...oauth.env(), ZOTEUS_AUTH: 'zotero', ZOTEUS_PUBLIC_URL: base };
    const catalogue = createCatalogue({ tools, config: loadConfig(env), env, version: CLI_VERSION });
    for (const [name, port] of [
      ['A', portA],
      ['B', await freePort()],
    ] as const) {
      replicas[name] = await startHttp(
        () => {
          const server = createMcpServer(catalogue);
          made[name].push(server);
          return server;
        },
        {
          port,
          now: () => clock.now,
          settings: { sessionIdleMs: IDLE_MS },
          sessionStore: sqlSessionStore(database.db),
          auth: {
            settings: authSettings(env)!,
            store: sqlAuthStore(database.db),
            signIn: zoteroSignIn(zoteroOAuthSettings(env)!),
            onSignIn: async () => {},
          },
        },
      );
    }
    token = await signIn(base, oauth, { userID: 101, username: 'ada', apiKey: 'AdaKey0000000000000000A1' });
  });

  afterAll(async () => {
    await replicas.A?.close();
    await replicas.B?.close();
    await oauth.close();
    await database.close();
  });

  const connect = async (name: 'A' | 'B') => {
    const transport = new StreamableHTTPClientTransport(
      new URL(`http://127.0.0.1:${replicas[name]!.port}/mcp`),
      {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      },
    );
    const client = new Client(
      { name: 'rebuild-test', version: '4.5.6' },
      { capabilities: { roots: { listChanged: true }, sampling: {} } },
    );
    await client.connect(transport);
    return { client, transport };
  };

  const listTools = (name: 'A' | 'B', session: string) =>
    fetch(`http://127.0.0.1:${replicas[name]!.port}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-session-id': session,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it("B's instance knows the client, its capabilities and the revision as A's does", async () => {
    const { client, transport } = await connect('A');
    const onB = await listTools('B', transport.sessionId!);
    expect(onB.status).toBe(200);
    expect(await onB.text()).toContain('zotero_search_items');
    const [a] = made.A.slice(-1);
    const [b] = made.B.slice(-1);
    expect(made.B).toHaveLength(1);
    expect(b!.getClientVersion()).toEqual({ name: 'rebuild-test', version: '4.5.6' });
    expect(b!.getClientVersion()).toEqual(a!.getClientVersion());
    expect(b!.getClientCapabilities()).toEqual({ roots: { listChanged: true }, sampling: {} });
    expect(b!.getNegotiatedProtocolVersion()).toBe(a!.getNegotiatedProtocolVersion());
    expect(b!.getNegotiatedProtocolVersion()).toBe(transport.protocolVersion);
    expect(replicas.B!.sessions()).toBe(1);
    await client.close();
  });

  it('idle on every replica for the idle period, the session is over on both, and its row is gone', async () => {
    // A bare client, with no GET stream (which would keep the session busy on A).
    const opened = await fetch(`http://127.0.0.1:${replicas.A!.port}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'bare', version: '1' },
        },
      }),
    });
    expect(opened.status).toBe(200);
    await opened.text();
    const session = opened.headers.get('mcp-session-id')!;
    clock.now += IDLE_MS / 2;
    // Used on B halfway: alive on both a whole period after that, though A saw nothing.
    const onB = await listTools('B', session);
    expect(onB.status).toBe(200);
    await onB.text();
    clock.now += IDLE_MS - 1;
    // A closes its own copy (idle there for longer than the period), but the row is alive.
    await replicas.A!.sweep();
    expect(replicas.A!.sessions()).toBe(0);
    const onA = await listTools('A', session);
    expect(onA.status).toBe(200);
    await onA.text();
    clock.now += IDLE_MS;
    await replicas.A!.sweep();
    await replicas.B!.sweep();
    const rows = await database.db.query('SELECT id FROM mcp_sessions WHERE id = ?', [session]);
    expect(rows).toEqual([]);
    for (const name of ['A', 'B'] as const) expect((await listTools(name, session)).status).toBe(404);
  });
});
