/**
 * A shared deployment, started as an operator would (`runMcp` with sign-in and a PostgreSQL
 * state database): people sign in through the loopback fake of Zotero's OAuth, and each one's
 * calls run as their own tenant: their own Zotero key and library, their own idempotency
 * records and journal, their own files; a read-only grant refuses writes; keys are encrypted
 * at rest and never logged.
 */
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';
import { clientWith as clientAt, signIn as signInAt, textOf, type ZoteroUser } from './signed-in.js';
import { freePort, waitUntilUp } from '../../support/free-port.js';

const KEY_ADA = 'AdaKey0000000000000000A1';
const KEY_BOB = 'BobKey0000000000000000B2';
const KEY_CY = 'CyKey00000000000000000C3';
const SECRET = randomBytes(32).toString('base64');

let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let databaseUrl: string;
let base: string;
let stop: AbortController;
let running: Promise<number>;
const stderr: string[] = [];

beforeAll(async () => {
  zotero = await startZoteroServer();
  for (const [id, name, key] of [
    [101, 'ada', KEY_ADA],
    [202, 'bob', KEY_BOB],
    [303, 'cy', KEY_CY],
  ] as const) {
    zotero.addUser({ userID: id, username: name });
    zotero.addKey({ key, userID: id, access: { user: { library: true, notes: true, write: true } } });
  }
  zotero.library('users/101').addItems([{ title: 'Ada only: analytical engines' }]);
  zotero.library('users/202').addItems([{ title: 'Bob only: bridges' }]);
  oauth = await startZoteroOAuthServer();
  databaseUrl = await postgresUrl();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  stop = new AbortController();
  running = runMcp({
    env: isolatedEnv({
      ...oauth.env(),
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_AUTH: 'zotero',
      ZOTEUS_SECRET_KEYS: SECRET,
      ZOTEUS_DATABASE_URL: databaseUrl,
      ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT: '3',
    }),
    http: true,
    port,
    publicUrl: base,
    stderr: err,
    signal: stop.signal,
  });
  // Listening once the metadata answers.
  await waitUntilUp(`${base}/.well-known/oauth-protected-resource`, () => stderr.join(''));
});

afterAll(async () => {
  stop.abort();
  expect(await running).toBe(0);
  await oauth.close();
  await zotero.close();
});

const signIn = (user: ZoteroUser, choose?: 'read-only', scope?: string) =>
  signInAt(base, oauth, user, choose, scope);
const clientWith = (token: string) => clientAt(`${base}/mcp`, token);
const dataOf = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe('a shared deployment with sign-in and PostgreSQL', () => {
  let ada: Client;
  let bob: Client;
  beforeAll(async () => {
    ada = await clientWith(await signIn({ userID: 101, username: 'ada', apiKey: KEY_ADA }));
    bob = await clientWith(await signIn({ userID: 202, username: 'bob', apiKey: KEY_BOB }));
  });
  afterAll(async () => {
    await ada.close();
    await bob.close();
  });

  it('each person reads their own library with their own key; the server has no key of its own', async () => {
    zotero.clearLog();
    const mine = await ada.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(textOf(mine)).toContain('Ada only: analytical engines');
    expect(textOf(mine)).not.toContain('Bob only');
    const theirs = await bob.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(textOf(theirs)).toContain('Bob only: bridges');
    expect(textOf(theirs)).not.toContain('Ada only');
    const reads = zotero.log.filter((r) => r.path.includes('/items'));
    const keyOf = (r: (typeof reads)[number]) =>
      r.headers['zotero-api-key'] ?? r.headers.authorization?.replace('Bearer ', '');
    expect(reads.filter((r) => r.path.startsWith('/users/101')).map(keyOf)).toEqual([KEY_ADA]);
    expect(reads.filter((r) => r.path.startsWith('/users/202')).map(keyOf)).toEqual([KEY_BOB]);
    expect(reads.filter((r) => !/^\/users\/(101|202)\//.test(r.path))).toEqual([]);
  });

  it("a tenant cannot address another's library: her key does not reach it, nothing is read", async () => {
    zotero.clearLog();
    const result = await ada.callTool({
      name: 'zotero_search_items',
      arguments: { library_type: 'user', library_id: 202 },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^permission_denied: /);
    expect(textOf(result)).not.toContain('Bob only');
    // Refused from what her key may do: no request for Bob's library was sent.
    expect(zotero.log.filter((r) => r.path.startsWith('/users/202'))).toEqual([]);
  });

  it('the same idempotency key from two tenants is two requests, each landing in its own library, each journaled as its own', async () => {
    const args = {
      items: [{ itemType: 'book', title: 'Shared key, two people' }],
      idempotency_key: 'same-key-1',
    };
    const first = await ada.callTool({ name: 'zotero_create_items', arguments: args });
    expect(first.isError ?? false).toBe(false);
    const second = await bob.callTool({ name: 'zotero_create_items', arguments: args });
    expect(second.isError ?? false).toBe(false);
    const titled = (prefix: string) =>
      [...zotero.library(prefix).items.values()].filter((i) => i.title === 'Shared key, two people');
    expect(titled('users/101')).toHaveLength(1);
    expect(titled('users/202')).toHaveLength(1);
    // Ada's retry replays her own record, and writes nothing more.
    const again = await ada.callTool({ name: 'zotero_create_items', arguments: args });
    expect(textOf(again)).toBe(textOf(first));
    expect(titled('users/101')).toHaveLength(1);

    const history = async (client: Client) =>
      (dataOf(await client.callTool({ name: 'zotero_history', arguments: {} })).requests as Array<{
        requestId: string;
        library: string;
      }>) ?? [];
    const adas = await history(ada);
    const bobs = await history(bob);
    expect(adas.map((r) => r.library)).toEqual(['users/101']);
    expect(bobs.map((r) => r.library)).toEqual(['users/202']);
    // Bob cannot undo Ada's request: it is not in his journal.
    const undo = await bob.callTool({ name: 'zotero_undo', arguments: { request_id: adas[0]!.requestId } });
    expect(undo.isError).toBe(true);
    expect(textOf(undo)).toContain('not_found');
    expect(titled('users/101')).toHaveLength(1);

    const db = new pg.Client(databaseUrl);
    await db.connect();
    const owners = await db.query('SELECT DISTINCT owner FROM journal_requests ORDER BY owner');
    const scopes = await db.query(
      "SELECT scope FROM idempotency_requests WHERE key = 'same-key-1' ORDER BY scope",
    );
    await db.end();
    expect(owners.rows.map((r: { owner: string }) => r.owner)).toEqual(['tenant:101', 'tenant:202']);
    expect(scopes.rows.map((r: { scope: string }) => r.scope)).toEqual([
      'mcp:tenant-101:zotero_create_items',
      'mcp:tenant-202:zotero_create_items',
    ]);
  });

  it('a read-only grant reads, and its writes are refused in its own terms before anything is sent', async () => {
    const cy = await clientWith(await signIn({ userID: 303, username: 'cy', apiKey: KEY_CY }, 'read-only'));
    try {
      expect((await cy.callTool({ name: 'zotero_search_items', arguments: {} })).isError ?? false).toBe(
        false,
      );
      // Listed as read-only mode lists: the reads only; the whole list for a full grant.
      const listed = (await cy.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('zotero_search_items');
      expect(listed).not.toContain('zotero_create_items');
      expect((await ada.listTools()).tools.map((t) => t.name)).toContain('zotero_create_items');
      const whoami = await cy.callTool({ name: 'zotero_whoami', arguments: {} });
      expect(
        (whoami as unknown as { structuredContent: { readOnly: boolean } }).structuredContent.readOnly,
      ).toBe(true);
      zotero.clearLog();
      const refused = await cy.callTool({
        name: 'zotero_create_items',
        arguments: { items: [{ itemType: 'book', title: 'Not by a reader' }] },
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('you signed in to this server with read-only access');
      expect(zotero.log.filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      await cy.close();
    }
  });

  it('a grant naming toolsets is shown those (and the tools they name), refused the others in its own terms, whoami saying so', async () => {
    const cy = await clientWith(
      await signIn(
        { userID: 303, username: 'cy', apiKey: KEY_CY },
        undefined,
        'zotero:read zotero:write zotero:toolset:citations',
      ),
    );
    try {
      const listed = (await cy.listTools()).tools.map((t) => t.name);
      expect(listed).toEqual(
        expect.arrayContaining([
          'zotero_whoami',
          'zotero_format_bibliography',
          'zotero_export',
          'zotero_styles',
        ]),
      );
      // Not in the citations set, and in the server's default set (which ada, with no toolset scope, sees).
      expect(listed).not.toContain('zotero_create_items');
      expect((await ada.listTools()).tools.map((t) => t.name)).toContain('zotero_create_items');
      expect((await ada.listTools()).tools.map((t) => t.name)).not.toEqual(listed);
      const whoami = dataOf(await cy.callTool({ name: 'zotero_whoami', arguments: {} })) as {
        toolsets: { on: string[]; hint: string };
      };
      expect(whoami.toolsets.on).toEqual(['citations']);
      expect(whoami.toolsets.hint).toContain('zotero:toolset:');
      zotero.clearLog();
      const refused = await cy.callTool({
        name: 'zotero_create_items',
        arguments: { items: [{ itemType: 'book', title: 'Not in this grant' }] },
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(
        'zotero_create_items is not offered to this sign-in: it is in the toolset "items"',
      );
      expect(textOf(refused)).toContain('zotero:toolset:items');
      expect(zotero.log).toEqual([]);
    } finally {
      await cy.close();
    }
  });

  it('a read-only grant keeps the toolsets it asked for', async () => {
    const cy = await clientWith(
      await signIn(
        { userID: 303, username: 'cy', apiKey: KEY_CY },
        'read-only',
        'zotero:read zotero:write zotero:toolset:collections',
      ),
    );
    try {
      const listed = (await cy.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('zotero_list_collections');
      expect(listed).not.toContain('zotero_manage_collections');
      expect(listed).not.toContain('zotero_format_bibliography');
      const refused = await cy.callTool({
        name: 'zotero_manage_collections',
        arguments: { action: 'create', name: 'No' },
      });
      expect(textOf(refused)).toContain('you signed in to this server with read-only access');
    } finally {
      await cy.close();
    }
  });

  it('a toolset scope the server does not know is refused at the authorization endpoint', async () => {
    await expect(
      signIn(
        { userID: 303, username: 'cy', apiKey: KEY_CY },
        undefined,
        'zotero:read zotero:toolset:everything',
      ),
    ).rejects.toThrow();
  });

  it('the keys are encrypted at rest, and no key reaches the log', async () => {
    const db = new pg.Client(databaseUrl);
    await db.connect();
    const rows = await db.query('SELECT id, username, key_ciphertext FROM tenants ORDER BY id');
    await db.end();
    expect(rows.rows.map((r: { id: string }) => r.id)).toEqual(['101', '202', '303']);
    const stored = JSON.stringify(rows.rows);
    for (const key of [KEY_ADA, KEY_BOB, KEY_CY, SECRET]) {
      expect(stored).not.toContain(key);
      expect(stderr.join('')).not.toContain(key);
    }
  });

  it("one person's sessions are capped (ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT), not the others'", async () => {
    const token = await signIn({ userID: 101, username: 'ada', apiKey: KEY_ADA });
    // Ada holds one session already (beforeAll); two more fill her share of three.
    const more = [await clientWith(token), await clientWith(token)];
    try {
      const refused = await clientWith(token).catch((e: unknown) => e as Error);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toContain('Too many sessions of yours: you have 3 open');
      expect((refused as Error).message).toContain('ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT');
      // Bob is not held back by Ada's sessions.
      const bobs = await clientWith(await signIn({ userID: 202, username: 'bob', apiKey: KEY_BOB }));
      await bobs.close();
    } finally {
      for (const c of more) await c.close();
    }
  });

  it('a request without a token is a 401 naming the metadata', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});
