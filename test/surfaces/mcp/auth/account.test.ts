/**
 * A deployment with an external OpenID provider (ZOTEUS_AUTH=oidc), started as an operator
 * would (runMcp), on SQLite and on PostgreSQL: each person supplies their Zotero key once
 * (`POST /account/zotero-key`, JSON or the settings page's form), checked with Zotero's
 * `GET /keys/current`; it is stored encrypted (never in clear in the database, never in the
 * logs); a tool call before it answers auth_missing saying where to post it, after it reads
 * that key's own library; a token acts on its own account only.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../../src/core/store/sql.js';
import { runMcp } from '../../../../src/surfaces/mcp/run.js';
import { startOidcIssuer, type OidcIssuer } from '../../../support/oidc-issuer.js';
import { postgresUrl } from '../../../support/postgres.js';
import { startZoteroServer, type ZoteroTestServer } from '../../../support/zotero-server/index.js';
import { isolatedEnv } from '../harness.js';
import { freePort, waitUntilUp } from '../../../support/free-port.js';

const KEY_ADA = 'AdaKey0000000000000000A1';
const KEY_BOB = 'BobKey0000000000000000B2';
const UNKNOWN_KEY = 'NoSuchKey000000000000000';
const SECRET = randomBytes(32).toString('base64');

const textOf = (result: unknown) =>
  (result as { content: Array<{ type: string; text: string }> }).content.map((c) => c.text).join('\n');

describe.each(['sqlite', 'postgres'] as const)('Zotero keys of an OpenID deployment on %s', (engine) => {
  let zotero: ZoteroTestServer;
  let issuer: OidcIssuer;
  let base: string;
  let stop: AbortController;
  let running: Promise<number>;
  let db: SqlClient;
  const stderr: string[] = [];
  const opened: Client[] = [];

  beforeAll(async () => {
    zotero = await startZoteroServer();
    for (const [id, name, key] of [
      [101, 'ada', KEY_ADA],
      [202, 'bob', KEY_BOB],
    ] as const) {
      zotero.addUser({ userID: id, username: name });
      zotero.addKey({ key, userID: id, access: { user: { library: true, notes: true, write: true } } });
    }
    zotero.library('users/101').addItems([{ title: 'Ada only: analytical engines' }]);
    zotero.library('users/202').addItems([{ title: 'Bob only: bridges' }]);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    issuer = await startOidcIssuer({ audience: `${base}/mcp` });
    const env = isolatedEnv({
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_AUTH: 'oidc',
      ZOTEUS_OIDC_ISSUER: issuer.url,
      ZOTEUS_SECRET_KEYS: SECRET,
    });
    if (engine === 'postgres') env.ZOTEUS_DATABASE_URL = await postgresUrl();
    const err = new PassThrough();
    err.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    stop = new AbortController();
    running = runMcp({ env, http: true, port, publicUrl: base, stderr: err, signal: stop.signal });
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = (await fetch(`${base}/.well-known/oauth-protected-resource`).catch(() => undefined))?.ok ?? false;
      if (!up) await new Promise((r) => setTimeout(r, 50));
    }
    if (!up) throw new Error(`the server did not start: ${stderr.join('')}`);
    db =
      engine === 'postgres'
        ? await openPostgresClient(env.ZOTEUS_DATABASE_URL!, { max: 1 })
        : openSqliteClient(join(env.ZOTEUS_DATA_DIR!, 'server.db'));
  });

  afterAll(async () => {
    for (const client of opened) await client.close();
    await db.close();
    stop.abort();
    expect(await running).toBe(0);
    await issuer.close();
    await zotero.close();
  });

  const tokenOf = (sub: string, scope = 'openid zotero:read zotero:write') =>
    issuer.token({ sub: `subject-${sub}`, scope });

  async function clientWith(token: string): Promise<Client> {
    const client = new Client({ name: 'oidc-account-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    opened.push(client);
    return client;
  }

  const api = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('a tool call before the key answers auth_missing, saying where to post it', async () => {
    expect(await api('GET', '/account', tokenOf('ada'))).toMatchObject({
      status: 200,
      body: { zotero_key_stored: false },
    });
    const ada = await clientWith(tokenOf('ada'));
    const result = await ada.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain('auth_missing');
    expect(text).toContain(
      `This server has no Zotero API key of yours yet: POST it once to ${base}/account/zotero-key with your access token (Authorization: Bearer) and {"key": "…"}`,
    );
    expect(text).toContain(`${base}/account/settings`);
  });

  it('the account API needs the bearer token', async () => {
    const none = await api('GET', '/account', undefined);
    expect(none.status).toBe(401);
    expect(none.challenge).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    const posted = await api('POST', '/account/zotero-key', undefined, { key: KEY_ADA });
    expect(posted.status).toBe(401);
    // The saved files too (files.ts): none without a token; with one, the person's own (none yet).
    expect((await api('GET', '/account/files', undefined)).status).toBe(401);
    expect((await api('DELETE', '/account/files/a.md', undefined)).status).toBe(401);
    expect(await api('GET', '/account/files', tokenOf('ada'))).toMatchObject({
      status: 200,
      body: { used: 0, total: 0, files: [] },
    });
    expect(await api('DELETE', '/account/files/a.md', tokenOf('ada'))).toMatchObject({ status: 404 });
    expect(await api('GET', '/account', tokenOf('ada'))).toMatchObject({
      body: { zotero_key_stored: false },
    });
  });

  it('a key Zotero refuses, or that is not a key, is a 400 and nothing is stored', async () => {
    zotero.clearLog();
    const refused = await api('POST', '/account/zotero-key', tokenOf('ada'), { key: UNKNOWN_KEY });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: 'invalid_key',
        error_description:
          'Zotero does not accept this key (GET /keys/current refused it): it may be mistyped or revoked. Check it at https://www.zotero.org/settings/keys.',
      },
    });
    expect(zotero.log.filter((r) => r.path === '/keys/current')).toHaveLength(1);
    const malformed = await api('POST', '/account/zotero-key', tokenOf('ada'), { key: 'not a key' });
    expect(malformed).toMatchObject({ status: 400, body: { error: 'invalid_key' } });
    expect(zotero.log.filter((r) => r.path === '/keys/current')).toHaveLength(1);
    expect(await db.query('SELECT id FROM tenants')).toEqual([]);
  });

  it("a valid key is stored encrypted with its user, and the person's calls then read that user's library", async () => {
    const stored = await api('POST', '/account/zotero-key', tokenOf('ada'), { key: KEY_ADA });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      zotero_key_stored: true,
      zotero_user_id: 101,
      zotero_username: 'ada',
    });
    expect(JSON.stringify(stored.body)).not.toContain(KEY_ADA);
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM tenants');
    expect(rows.map((r) => [r.id, Number(r.user_id), r.username])).toEqual([
      ['oidc:subject-ada', 101, 'ada'],
    ]);
    expect(JSON.stringify(rows)).not.toContain(KEY_ADA);
    expect(String(rows[0]!.key_ciphertext)).toMatch(/^v1\./);

    zotero.clearLog();
    const ada = await clientWith(tokenOf('ada'));
    const result = await ada.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(result.isError ?? false).toBe(false);
    expect(textOf(result)).toContain('Ada only: analytical engines');
    expect(textOf(result)).not.toContain('Bob only');
    const reads = zotero.log.filter((r) => r.path.includes('/items'));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.path.startsWith('/users/101/'))).toBe(true);
    expect(reads.every((r) => r.headers['zotero-api-key'] === KEY_ADA)).toBe(true);
    expect(stderr.join('')).not.toContain(KEY_ADA);
  });

  it("the settings page's form stores a key too (the token in the form, never a cookie)", async () => {
    const page = await fetch(`${base}/account/settings`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/account/zotero-key">');
    expect(html).toContain('name="access_token"');
    const saved = await fetch(`${base}/account/zotero-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: tokenOf('bob'), key: KEY_BOB }).toString(),
    });
    expect(saved.status).toBe(200);
    expect(saved.headers.get('set-cookie')).toBeNull();
    expect(await saved.text()).toContain('Zotero user bob (202)');
    const noToken = await fetch(`${base}/account/zotero-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'session=whatever' },
      body: new URLSearchParams({ key: KEY_ADA }).toString(),
    });
    expect(noToken.status).toBe(401);
  });

  it('a token without zotero:write is a read-only grant: reads work, a write is refused and nothing is sent', async () => {
    const bob = await clientWith(tokenOf('bob', 'openid zotero:read'));
    expect(textOf(await bob.callTool({ name: 'zotero_search_items', arguments: {} }))).toContain(
      'Bob only: bridges',
    );
    zotero.clearLog();
    const write = await bob.callTool({
      name: 'zotero_create_items',
      arguments: { items: [{ itemType: 'book', title: 'Read-only grant' }] },
    });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toContain('permission_denied');
    expect(textOf(write)).toContain('you signed in to this server with read-only access');
    expect(zotero.log.filter((r) => r.method !== 'GET')).toEqual([]);
    expect([...zotero.library('users/202').items.values()].map((i) => i.title)).not.toContain(
      'Read-only grant',
    );
  });

  it("a token reaches its own account only: A cannot read, set or forget B's key", async () => {
    const ada = tokenOf('ada');
    // Nothing in a request names a tenant: a `tenant` field or query is not looked at.
    const asB = await api('POST', '/account/zotero-key?tenant=oidc:subject-bob', ada, {
      key: KEY_ADA,
      tenant: 'oidc:subject-bob',
    });
    expect(asB.body).toMatchObject({ zotero_user_id: 101 });
    expect(await api('GET', '/account?tenant=oidc:subject-bob', ada)).toMatchObject({
      body: { zotero_key_stored: true, zotero_user_id: 101, zotero_username: 'ada' },
    });
    expect(await api('DELETE', '/account/zotero-key?tenant=oidc:subject-bob', ada)).toMatchObject({
      status: 200,
      body: { zotero_key_stored: false, removed: true },
    });
    expect(await api('GET', '/account', tokenOf('bob'))).toMatchObject({
      body: { zotero_key_stored: true, zotero_user_id: 202, zotero_username: 'bob' },
    });
    const bob = await clientWith(tokenOf('bob'));
    expect(textOf(await bob.callTool({ name: 'zotero_search_items', arguments: {} }))).toContain(
      'Bob only: bridges',
    );
    // A forgot hers: her next call is auth_missing again.
    const again = await clientWith(ada);
    const result = await again.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('auth_missing');
    expect((await db.query<{ id: string }>('SELECT id FROM tenants')).map((r) => r.id)).toEqual([
      'oidc:subject-bob',
    ]);
  });
});

describe('two replicas of an OpenID deployment on one PostgreSQL', () => {
  let zotero: ZoteroTestServer;
  let issuer: OidcIssuer;
  const replicas: Array<{ base: string; stop: AbortController; running: Promise<number> }> = [];
  const opened: Client[] = [];

  beforeAll(async () => {
    zotero = await startZoteroServer();
    zotero.addUser({ userID: 101, username: 'ada' });
    zotero.addKey({
      key: KEY_ADA,
      userID: 101,
      access: { user: { library: true, notes: true, write: true } },
    });
    zotero.library('users/101').addItems([{ title: 'Ada only: analytical engines' }]);
    const ports = [await freePort(), await freePort()];
    // One public URL (the proxy's); each replica listens on its own port.
    const publicUrl = `http://127.0.0.1:${ports[0]}`;
    issuer = await startOidcIssuer({ audience: `${publicUrl}/mcp` });
    const shared = {
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_AUTH: 'oidc',
      ZOTEUS_OIDC_ISSUER: issuer.url,
      ZOTEUS_SECRET_KEYS: SECRET,
      ZOTEUS_DATABASE_URL: await postgresUrl(),
    };
    for (const port of ports) {
      const stop = new AbortController();
      const running = runMcp({
        env: isolatedEnv(shared),
        http: true,
        port,
        publicUrl,
        stderr: new PassThrough(),
        signal: stop.signal,
      });
      const base = `http://127.0.0.1:${port}`;
      await waitUntilUp(`${base}/.well-known/oauth-protected-resource`);
      replicas.push({ base, stop, running });
    }
  });

  afterAll(async () => {
    for (const client of opened) await client.close();
    for (const replica of replicas) {
      replica.stop.abort();
      expect(await replica.running).toBe(0);
    }
    await issuer.close();
    await zotero.close();
  });

  async function clientAt(base: string, token: string): Promise<Client> {
    const client = new Client({ name: 'oidc-replicas-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    opened.push(client);
    return client;
  }

  it('a key posted through one replica serves the next session on the other (no key yet is never cached)', async () => {
    const token = issuer.token({ sub: 'ada' });
    const [one, two] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const onTwo = await clientAt(two.base, token);
    const before = await onTwo.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(textOf(before)).toContain('auth_missing');
    const posted = await fetch(`${one.base}/account/zotero-key`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: KEY_ADA }),
    });
    expect(posted.status).toBe(200);
    // A session opened before the key keeps its deps (older revisions' sessions): a new one has it.
    const again = await clientAt(two.base, token);
    const after = await again.callTool({ name: 'zotero_search_items', arguments: {} });
    expect(after.isError ?? false).toBe(false);
    expect(textOf(after)).toContain('Ada only: analytical engines');
  });
});
