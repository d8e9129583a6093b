/**
 * The resource server with an external OpenID provider (ZOTEUS_AUTH=oidc), on loopback: the
 * MCP HTTP server checks JWTs from the loopback issuer (test/support/oidc-issuer.ts) against its
 * JWKS: RS256 and ES256 accepted; another issuer, another audience, expired, not yet valid, a
 * bad signature, `alg: none`, an HMAC algorithm refused (401 naming the metadata); an unknown
 * `kid` fetches the JWKS again, at most once a minute (and a 10-minute-old JWKS is fetched
 * again, retiring the provider's old keys); the metadata names the provider, and the
 * built-in authorization server's routes are not there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/core/config.js';
import { migrate } from '../../../../src/core/store/migrations.js';
import { openSqliteClient, type SqlClient } from '../../../../src/core/store/sql.js';
import { parseSecretKeys } from '../../../../src/core/tenants/secrets.js';
import { tenantStore, tenantsMigration, tenantUserMigration } from '../../../../src/core/tenants/store.js';
import { CLI_VERSION } from '../../../../src/core/version.js';
import type { Principal } from '../../../../src/surfaces/mcp/auth/principal.js';
import { authSettings } from '../../../../src/surfaces/mcp/auth/settings.js';
import { createCatalogue, createServer as createMcpServer } from '../../../../src/surfaces/mcp/server.js';
import { startHttp, type HttpHandle } from '../../../../src/surfaces/mcp/transports.js';
import { createJwtVerifier } from '../../../../src/surfaces/mcp/auth/oidc.js';
import { tools } from '../../../../src/tools/index.js';
import { startOidcIssuer, type OidcIssuer } from '../../../support/oidc-issuer.js';
import { isolatedEnv } from '../harness.js';
import { freePort } from '../../../support/free-port.js';

let issuer: OidcIssuer;
let handle: HttpHandle;
let base: string;
let db: SqlClient;
let dir: string;
const clock = { offsetMs: 0 };
const principals: Principal[] = [];
const log: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  issuer = await startOidcIssuer({ audience: `${base}/mcp` });
  issuer.nowS = () => Math.floor((Date.now() + clock.offsetMs) / 1000);
  dir = mkdtempSync(join(tmpdir(), 'zoteus-oidc-'));
  db = openSqliteClient(join(dir, 'state.db'));
  await migrate(db, [tenantsMigration, tenantUserMigration]);
  const env = {
    ...isolatedEnv(),
    ZOTEUS_AUTH: 'oidc',
    ZOTEUS_PUBLIC_URL: base,
    ZOTEUS_OIDC_ISSUER: issuer.url,
  };
  const settings = authSettings(env)!;
  const catalogue = createCatalogue({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  handle = await startHttp(
    (context) => {
      if (context.principal) principals.push(context.principal);
      return createMcpServer(catalogue);
    },
    {
      port,
      log: (line) => log.push(line),
      auth: {
        settings,
        oidc: settings.oidc!,
        account: {
          tenants: tenantStore(db, parseSecretKeys(Buffer.alloc(32, 7).toString('base64'))),
          checkKey: () => Promise.reject(new Error('not asked in these tests')),
        },
        now: () => Date.now() + clock.offsetMs,
      },
    },
  );
});

afterAll(async () => {
  await handle.close();
  await issuer.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'oidc-test', version: '0' },
  },
};

/** Initializes a session (an older revision's request) with the token; the status and challenge. */
async function callMcp(token: string | undefined) {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(INITIALIZE),
  });
  const text = await response.text();
  return { status: response.status, challenge: response.headers.get('www-authenticate'), text };
}

async function account(token: string) {
  const response = await fetch(`${base}/account`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const refusedWith = (description: string) =>
  `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="${description}"`;

describe('ZOTEUS_AUTH=oidc: bearer tokens are JWTs of the configured provider', () => {
  it('the settings: the issuer kept exactly as given, the audience by default the resource', () => {
    const env = { ZOTEUS_AUTH: 'oidc', ZOTEUS_PUBLIC_URL: 'https://zoteus.example.org' };
    expect(authSettings({ ...env, ZOTEUS_OIDC_ISSUER: 'https://idp.example/realms/lab/' })).toMatchObject({
      mode: 'oidc',
      publicUrl: 'https://zoteus.example.org',
      oidc: { issuer: 'https://idp.example/realms/lab/', audience: undefined },
    });
    expect(
      authSettings({ ...env, ZOTEUS_OIDC_ISSUER: 'https://idp.example', ZOTEUS_OIDC_AUDIENCE: 'zoteus-api' })
        ?.oidc,
    ).toEqual({ issuer: 'https://idp.example', audience: 'zoteus-api' });
  });

  it('the metadata names the external issuer; the built-in authorization server is not mounted', async () => {
    const prm = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(prm.status).toBe(200);
    expect(await prm.json()).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [issuer.url] });
    for (const path of ['/.well-known/oauth-authorization-server', '/authorize', '/token', '/register']) {
      const response = await fetch(`${base}${path}`, { method: path === '/authorize' ? 'GET' : 'POST' });
      expect(response.status, path).toBe(404);
    }
  });

  it('accepts an RS256 and an ES256 token: the tenant is oidc:<sub>, zotero:write decides read-only', async () => {
    principals.length = 0;
    const rs = await callMcp(issuer.token({ sub: 'alice' }, { alg: 'RS256' }));
    expect(rs.status).toBe(200);
    const es = await callMcp(issuer.token({ sub: 'bob', scope: 'openid zotero:read' }, { alg: 'ES256' }));
    expect(es.status).toBe(200);
    const scp = await callMcp(issuer.token({ sub: 'cy', scope: undefined, scp: ['zotero:write'] }));
    expect(scp.status).toBe(200);
    expect(principals.map((p) => [p.tenantId, p.readOnly])).toEqual([
      ['oidc:alice', false],
      ['oidc:bob', true],
      ['oidc:cy', false],
    ]);
  });

  it('refuses without a token, naming the metadata', async () => {
    const none = await callMcp(undefined);
    expect(none.status).toBe(401);
    expect(none.challenge).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  const now = () => Math.floor((Date.now() + clock.offsetMs) / 1000);
  const cases: Array<[string, () => string, string]> = [
    [
      'another issuer',
      () => issuer.token({ iss: 'https://evil.example' }),
      `The access token was issued by another issuer, not ${'ISSUER'}.`,
    ],
    [
      'another audience',
      () => issuer.token({ aud: ['https://other.example/mcp'] }),
      'The access token was issued for another audience, not AUDIENCE.',
    ],
    ['expired beyond the 60 s skew', () => issuer.token({ exp: now() - 61 }), 'The access token expired.'],
    ['without an expiry', () => issuer.token({ exp: undefined }), 'The access token has no expiry (exp).'],
    [
      'not valid for another 2 minutes',
      () => issuer.token({ nbf: now() + 120 }),
      'The access token is not valid yet (nbf).',
    ],
    [
      'a bad signature (claims changed after signing)',
      () => {
        const [h, , s] = issuer.token({ sub: 'alice' }).split('.');
        const forged = Buffer.from(
          JSON.stringify({ iss: issuer.url, aud: issuer.audience, sub: 'mallory', exp: now() + 600 }),
        ).toString('base64url');
        return `${h}.${forged}.${s}`;
      },
      'The access token signature is invalid.',
    ],
    [
      'signed by a key the JWKS does not hold, under a published kid',
      () => issuer.token({}, { foreignKey: true }),
      'The access token signature is invalid.',
    ],
    [
      'alg: none',
      () => issuer.token({}, { header: { alg: 'none' }, signature: '' }),
      'The access token\'s algorithm "none" is not accepted (only RS256, ES256).',
    ],
    [
      'HS256 (a public key used as an HMAC secret)',
      () => issuer.token({}, { header: { alg: 'HS256' } }),
      'The access token\'s algorithm "HS256" is not accepted (only RS256, ES256).',
    ],
    ['not a JWT', () => 'opaque-token-value', 'The access token is not a JWT.'],
  ];
  it.each(cases)('refuses a token with %s (401, invalid_token, its reason)', async (_what, make, reason) => {
    const description = reason.replace('ISSUER', issuer.url).replace('AUDIENCE', `${base}/mcp`);
    const result = await callMcp(make());
    expect(result.status).toBe(401);
    expect(result.challenge).toBe(refusedWith(description));
    expect(JSON.parse(result.text)).toMatchObject({ error: { message: `Unauthorized: ${description}` } });
    const acc = await account(make());
    expect(acc.status).toBe(401);
  });

  it('accepts a token expired by less than the 60 s skew, and one whose nbf is 30 s ahead', async () => {
    expect((await callMcp(issuer.token({ exp: now() - 30 }))).status).toBe(200);
    expect((await callMcp(issuer.token({ nbf: now() + 30 }))).status).toBe(200);
  });

  it('an unknown kid fetches the JWKS again at most once a minute: after a rotation, the new keys are used', async () => {
    expect((await callMcp(issuer.token())).status).toBe(200);
    const before = { ...issuer.requests };
    // Checked tokens ask nothing of the provider.
    expect((await callMcp(issuer.token({}, { alg: 'ES256' }))).status).toBe(200);
    expect(issuer.requests).toEqual(before);

    clock.offsetMs += 61_000;
    issuer.rotate();
    const rotated = issuer.token({}, { alg: 'ES256' });
    expect((await callMcp(rotated)).status).toBe(200);
    expect(issuer.requests).toEqual({ discovery: before.discovery, jwks: before.jwks + 1 });

    // A token naming a kid nobody publishes, within the minute: refused, the provider not asked.
    const unknown = issuer.token({}, { kid: 'never-published' });
    const refused = await callMcp(unknown);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(
      refusedWith("The access token is signed with a key the OpenID provider's JWKS does not hold."),
    );
    expect(issuer.requests.jwks).toBe(before.jwks + 1);
    // A minute later it may ask once more (and the kid is still unknown).
    clock.offsetMs += 61_000;
    expect((await callMcp(issuer.token({}, { kid: 'never-published' }))).status).toBe(401);
    expect(issuer.requests.jwks).toBe(before.jwks + 2);
    // Keys are fetched again once 10 minutes old: tokens of retired keys stop being accepted.
    issuer.rotate();
    clock.offsetMs += 9 * 60_000;
    expect((await callMcp(rotated)).status).toBe(200);
    clock.offsetMs += 2 * 60_000;
    expect((await callMcp(rotated)).status).toBe(401);
    expect(issuer.requests.jwks).toBe(before.jwks + 3);
  });

  it('a provider that cannot be reached, or whose discovery names another issuer, is a 503-kind refusal, said so', async () => {
    const lines: string[] = [];
    const closed = `http://127.0.0.1:${await freePort()}/realm`;
    const down = createJwtVerifier({
      issuer: closed,
      audience: 'a',
      now: Date.now,
      log: (l) => lines.push(l),
    });
    const result = await down.verify(issuer.token());
    expect(result).toMatchObject({ ok: false, unavailable: true });
    expect(result.ok ? '' : result.description).toContain(
      `The OpenID provider's keys cannot be fetched now (The OpenID provider's discovery document (${closed}/.well-known/openid-configuration) could not be fetched`,
    );
    expect(lines.length).toBe(1);
    // Asked again only after a few seconds: the next request is told the same at once.
    expect(await down.verify(issuer.token())).toEqual(result);
    expect(lines.length).toBe(1);
    // The configured issuer with a trailing slash is another issuer than the discovery document names.
    const other = createJwtVerifier({
      issuer: `${issuer.url}/`,
      audience: 'a',
      now: Date.now,
      log: () => {},
    });
    const mismatch = await other.verify(issuer.token());
    expect(mismatch.ok ? '' : mismatch.description).toContain(
      `The OpenID provider's discovery document names the issuer "${issuer.url}", not ${issuer.url}/ (ZOTEUS_OIDC_ISSUER)`,
    );
  });
});
