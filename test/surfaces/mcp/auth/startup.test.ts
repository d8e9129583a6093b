/**
 * Where the server may listen and whom it answers: never beyond loopback without
 * authentication (the refusal names the settings that turn it on); with authentication, the
 * Host must be the public URL's (or loopback), and a session of the older revisions belongs to
 * the user who opened it. The settings' refusals name the variable and what it takes.
 */
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/core/config.js';
import { ZoteusError } from '../../../../src/core/errors.js';
import { CLI_VERSION } from '../../../../src/core/version.js';
import { authSettings } from '../../../../src/surfaces/mcp/auth/settings.js';
import { runMcp } from '../../../../src/surfaces/mcp/run.js';
import { buildMcpServer } from '../../../../src/surfaces/mcp/server.js';
import { startHttp } from '../../../../src/surfaces/mcp/transports.js';
import { tools } from '../../../../src/tools/index.js';
import { isolatedEnv } from '../harness.js';
import { browse, REDIRECT_URI, startAuthWorld, type AuthWorld } from './world.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const ENABLING =
  'ZOTEUS_AUTH=zotero with ZOTEUS_PUBLIC_URL (and ZOTEUS_ZOTERO_OAUTH_KEY, ZOTEUS_ZOTERO_OAUTH_SECRET), or ZOTEUS_AUTH=oidc with ZOTEUS_PUBLIC_URL and ZOTEUS_OIDC_ISSUER';

describe('listening beyond loopback', () => {
  it('is refused without authentication, naming the settings that configure it', async () => {
    const env = isolatedEnv();
    const refused = startHttp(
      () => buildMcpServer({ tools, config: loadConfig(env), env, version: CLI_VERSION }),
      {
        host: '0.0.0.0',
        port: 0,
      },
    );
    await expect(refused).rejects.toBeInstanceOf(ZoteusError);
    await expect(refused).rejects.toMatchObject({
      code: 'validation_error',
      field: 'host',
      message:
        'Refusing to listen on 0.0.0.0: the MCP HTTP server is bound to loopback unless authentication is configured, and none is.',
      hint: `Use a loopback host such as 127.0.0.1 (the default), ::1 or localhost, or configure authentication: ${ENABLING}.`,
    });
    let stderr = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        stderr += String(chunk);
        done();
      },
    });
    expect(await runMcp({ env, http: true, host: '0.0.0.0', port: 0, stderr: sink })).toBe(3);
    expect(stderr).toContain(
      `Hint: Use a loopback host such as 127.0.0.1 (the default), ::1 or localhost, or configure authentication: ${ENABLING}.`,
    );
  });
});

/** A raw request with a Host header of our choosing: status and body. */
function withHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('with authentication', () => {
  let w: AuthWorld;
  const open = async () => {
    w = await startAuthWorld();
    closers.push(() => w.close());
    return w;
  };

  it('may listen on every interface', async () => {
    const everywhere = await startAuthWorld({ host: '0.0.0.0' });
    closers.push(() => everywhere.close());
    expect(everywhere.handle.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
    const prm = await fetch(`${everywhere.base}/.well-known/oauth-protected-resource/mcp`);
    expect(((await prm.json()) as { resource: string }).resource).toBe(everywhere.resource);
  });

  it('answers only the public URL host or a loopback name (DNS rebinding)', async () => {
    await open();
    const prm = `${w.base}/.well-known/oauth-protected-resource`;
    const foreign = await withHost(prm, 'evil.example');
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.message).toBe(
      `Forbidden: the Host header is neither ${new URL(w.base).host} (ZOTEUS_PUBLIC_URL) nor a loopback name.`,
    );
    expect((await withHost(prm, new URL(w.base).host)).status).toBe(200);
    expect((await withHost(prm, 'localhost')).status).toBe(200);
  });

  it("keeps a session of the older revisions to the user who opened it: another user's token finds no session", async () => {
    await open();
    const tokenOf = async (userID: number, username: string) => {
      w.zotero.user = { ...w.zotero.user, userID, username };
      const reg = await fetch(`${w.base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT_URI] }),
      });
      const clientId = ((await reg.json()) as { client_id: string }).client_id;
      const verifier = 'v'.repeat(50) + String(userID);
      const { createHash } = await import('node:crypto');
      const url = new URL(`${w.base}/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        scope: 'zotero:read',
      }).toString();
      const back = await browse(url.href);
      const answer = await fetch(`${w.base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          code_verifier: verifier,
          client_id: clientId,
        }).toString(),
      });
      return ((await answer.json()) as { access_token: string }).access_token;
    };
    const alice = await tokenOf(1001, 'alice');
    const bob = await tokenOf(1002, 'bob');
    const post = (token: string, body: unknown, session?: string) =>
      fetch(w.handle.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post(alice, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get('mcp-session-id')!;
    expect(w.principals.at(-1)).toMatchObject({ tenantId: '1001', username: 'alice', readOnly: true });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const byBob = await post(bob, list, session);
    expect(byBob.status).toBe(404);
    await byBob.text();
    const byAlice = await post(alice, list, session);
    expect(byAlice.status).toBe(200);
    expect(await byAlice.text()).toContain('zotero_whoami');
  });
});

describe('the settings', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      authSettings(env);
    } catch (error) {
      return error as ZoteusError;
    }
    throw new Error('accepted');
  };

  it('are off unless ZOTEUS_AUTH is set, and read the public URL and lifetimes', () => {
    expect(authSettings({ ZOTEUS_PUBLIC_URL: 'https://zoteus.example.org' })).toBeUndefined();
    expect(
      authSettings({
        ZOTEUS_AUTH: 'zotero',
        ZOTEUS_PUBLIC_URL: 'https://Zoteus.Example.org/',
        ZOTEUS_ACCESS_TOKEN_TTL_S: '600',
      }),
    ).toEqual({
      mode: 'zotero',
      publicUrl: 'https://zoteus.example.org',
      accessTokenTtlMs: 600_000,
      refreshTokenTtlMs: 30 * 24 * 3600 * 1000,
    });
  });

  it('refuse what they cannot use, naming the variable', () => {
    expect(refusal({ ZOTEUS_AUTH: 'saml' })).toMatchObject({
      code: 'validation_error',
      field: 'ZOTEUS_AUTH',
      message:
        "ZOTEUS_AUTH must be 'zotero' (sign in with a Zotero account) or 'oidc' (an OpenID Connect provider); got 'saml'.",
    });
    expect(refusal({ ZOTEUS_AUTH: 'oidc', ZOTEUS_PUBLIC_URL: 'https://a.example' })).toMatchObject({
      field: 'ZOTEUS_OIDC_ISSUER',
      message: 'ZOTEUS_OIDC_ISSUER is needed with ZOTEUS_AUTH=oidc.',
    });
    expect(
      refusal({
        ZOTEUS_AUTH: 'oidc',
        ZOTEUS_PUBLIC_URL: 'https://a.example',
        ZOTEUS_OIDC_ISSUER: 'http://idp.example/realms/lab',
      }).message,
    ).toBe(
      "ZOTEUS_OIDC_ISSUER must be https (plain http only for a loopback address); got 'http://idp.example/realms/lab'.",
    );
    expect(refusal({ ZOTEUS_AUTH: 'zotero' })).toMatchObject({
      field: 'ZOTEUS_PUBLIC_URL',
      message: 'ZOTEUS_AUTH=zotero needs ZOTEUS_PUBLIC_URL, the address clients reach the server at.',
    });
    expect(refusal({ ZOTEUS_AUTH: 'zotero', ZOTEUS_PUBLIC_URL: 'http://zoteus.example.org' }).message).toBe(
      "ZOTEUS_PUBLIC_URL must be https (plain http only for a loopback address); got 'http://zoteus.example.org'.",
    );
    expect(refusal({ ZOTEUS_AUTH: 'zotero', ZOTEUS_PUBLIC_URL: 'https://example.org/zoteus' }).message).toBe(
      "ZOTEUS_PUBLIC_URL must be an origin only (scheme://host[:port]), without a path; got 'https://example.org/zoteus'.",
    );
    expect(
      refusal({
        ZOTEUS_AUTH: 'zotero',
        ZOTEUS_PUBLIC_URL: 'https://a.example',
        ZOTEUS_REFRESH_TOKEN_TTL_S: '5',
      }),
    ).toMatchObject({
      field: 'ZOTEUS_REFRESH_TOKEN_TTL_S',
      message: "ZOTEUS_REFRESH_TOKEN_TTL_S must be a number of seconds from 60 to 31536000; got '5'.",
    });
  });
});
