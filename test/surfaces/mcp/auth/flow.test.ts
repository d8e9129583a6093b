/**
 * The authorization server and resource server by hand, as a person's browser and a client
 * send each request: registration or a Client ID Metadata Document, /authorize and its
 * refusals, the Zotero sign-in, /token and its refusals, refresh rotation, revocation, and the
 * bearer check of /mcp (expired, revoked, another resource's, in the query), each answer
 * exactly as the client sees it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlAuthStore } from '../../../../src/core/store/auth-store.js';
import {
  browse,
  BrowserStopped,
  REDIRECT_URI,
  startAuthWorld,
  startCimdServer,
  type AuthWorld,
} from './world.js';
import { openTestDatabase } from './databases.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function world(options: Parameters<typeof startAuthWorld>[0] = {}): Promise<AuthWorld> {
  const w = await startAuthWorld(options);
  closers.push(() => w.close());
  return w;
}

const newVerifier = () => randomBytes(32).toString('base64url');
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function register(w: AuthWorld, redirectUris = [REDIRECT_URI]): Promise<string> {
  const response = await fetch(`${w.base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Hand client',
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'none',
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

function authorizeUrl(w: AuthWorld, params: Record<string, string | undefined>): string {
  const url = new URL(`${w.base}/authorize`);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

interface SignIn {
  clientId: string;
  verifier: string;
  back: URL;
}

/** A whole sign-in up to the code: /authorize, the consent page, Zotero, back to the client. */
async function signIn(
  w: AuthWorld,
  options: {
    clientId?: string;
    scope?: string;
    choose?: 'full access' | 'read-only';
    redirectUri?: string;
  } = {},
): Promise<SignIn> {
  const clientId = options.clientId ?? (await register(w));
  const verifier = newVerifier();
  const back = await browse(
    authorizeUrl(w, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: options.redirectUri ?? REDIRECT_URI,
      code_challenge: challengeOf(verifier),
      code_challenge_method: 'S256',
      resource: w.resource,
      state: 'st-42',
      scope: options.scope,
    }),
    { ...(options.choose ? { choose: options.choose } : {}), stopAt: options.redirectUri ?? REDIRECT_URI },
  );
  return { clientId, verifier, back };
}

interface TokenAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function postForm(w: AuthWorld, path: string, form: Record<string, string>): Promise<TokenAnswer> {
  const response = await fetch(`${w.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const exchangeCode = (w: AuthWorld, s: SignIn, over: Record<string, string> = {}) =>
  postForm(w, '/token', {
    grant_type: 'authorization_code',
    code: s.back.searchParams.get('code') ?? '',
    code_verifier: s.verifier,
    client_id: s.clientId,
    redirect_uri: REDIRECT_URI,
    resource: w.resource,
    ...over,
  });

async function tokensFor(w: AuthWorld, options: Parameters<typeof signIn>[1] = {}) {
  const s = await signIn(w, options);
  const answer = await exchangeCode(w, s);
  expect(answer.status).toBe(200);
  return {
    ...s,
    access: answer.body.access_token as string,
    refresh: answer.body.refresh_token as string,
    answer,
  };
}

/** A stateless (2026-07-28) tools/list with this Authorization header: status, challenge, tool names. */
async function listTools(w: AuthWorld, authorization?: string, url = w.handle.url) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.split('\n').find((line) => line.startsWith('data:'));
  const json = JSON.parse(data ? data.slice(5) : text) as {
    result?: { tools: Array<{ name: string }> };
    error?: { message: string };
  };
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    names: json.result?.tools.map((t) => t.name) ?? [],
    error: json.error,
  };
}

describe('the metadata and the 401 that points to it', () => {
  it('publishes the Protected Resource Metadata at the path and the root, and the authorization server metadata', async () => {
    const w = await world();
    const prm = {
      resource: w.resource,
      authorization_servers: [w.base],
      scopes_supported: ['zotero:read', 'zotero:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Zoteus',
    };
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const response = await fetch(`${w.base}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(prm);
    }
    const asm = await (await fetch(`${w.base}/.well-known/oauth-authorization-server`)).json();
    expect(asm).toEqual({
      issuer: w.base,
      authorization_endpoint: `${w.base}/authorize`,
      token_endpoint: `${w.base}/token`,
      registration_endpoint: `${w.base}/register`,
      revocation_endpoint: `${w.base}/revoke`,
      scopes_supported: ['zotero:read', 'zotero:write'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('answers /mcp without a token 401 naming the metadata, with invalid_token for a bad one, and refuses a token in the query', async () => {
    const w = await world();
    const prmUrl = `${w.base}/.well-known/oauth-protected-resource/mcp`;
    const none = await listTools(w);
    expect(none.status).toBe(401);
    expect(none.challenge).toBe(`Bearer resource_metadata="${prmUrl}"`);
    const bad = await listTools(w, 'Bearer not-a-token-of-ours');
    expect(bad.status).toBe(401);
    expect(bad.challenge).toBe(
      `Bearer resource_metadata="${prmUrl}", error="invalid_token", error_description="The access token is not one this server issued."`,
    );
    const { access } = await tokensFor(w);
    const inQuery = await listTools(w, undefined, `${w.handle.url}?access_token=${access}`);
    expect(inQuery.status).toBe(401);
    expect(inQuery.challenge).toBe(
      `Bearer resource_metadata="${prmUrl}", error="invalid_request", error_description="Send the access token in the Authorization header, never in the URL."`,
    );
    expect((await listTools(w, `Bearer ${access}`)).names).toContain('zotero_whoami');
  });
});

describe('clients', () => {
  it('takes a Client ID Metadata Document as the client, and only its redirect URIs', async () => {
    const w = await world();
    const cimd = await startCimdServer();
    closers.push(() => cimd.close());
    const clientId = cimd.url('/oauth/client.json');
    cimd.documents['/oauth/client.json'] = {
      client_id: clientId,
      client_name: 'CIMD <b>client</b>',
      // A native app's loopback redirect: any port at the time of the request (RFC 8252 §7.3).
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    };
    // The consent page names the client from its document, escaped.
    const consent = await fetch(
      authorizeUrl(w, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challengeOf(newVerifier()),
        code_challenge_method: 'S256',
      }),
    );
    expect(consent.status).toBe(200);
    expect(consent.headers.get('x-frame-options')).toBe('DENY');
    expect(await consent.text()).toContain(
      '<strong>CIMD &lt;b&gt;client&lt;/b&gt;</strong> asks to use your Zotero library',
    );

    const { access } = await tokensFor(w, { clientId });
    expect((await listTools(w, `Bearer ${access}`)).names).toContain('zotero_whoami');
    expect(w.principals.at(-1)?.clientId).toBe(clientId);

    // A redirect URI the document does not list: shown to the person, never redirected to.
    const elsewhere = 'http://127.0.0.1:9/elsewhere';
    const refused = await signIn(w, { clientId, redirectUri: elsewhere }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BrowserStopped);
    expect((refused as BrowserStopped).status).toBe(400);
    expect((refused as BrowserStopped).page).toContain(
      `The redirect_uri ${elsewhere} is not one the client ${clientId} lists; nothing is sent there.`,
    );

    // A document naming another client_id is no client.
    cimd.documents['/oauth/other.json'] = {
      client_id: 'https://other.example/client.json',
      redirect_uris: [REDIRECT_URI],
    };
    const other = await signIn(w, { clientId: cimd.url('/oauth/other.json') }).catch((e: unknown) => e);
    expect((other as BrowserStopped).page).toContain(
      'names another client_id (&quot;https://other.example/client.json&quot;)',
    );
    // Too large a document.
    const big = cimd.url('/big.json');
    cimd.documents['/big.json'] = {
      client_id: big,
      redirect_uris: [REDIRECT_URI],
      padding: 'x'.repeat(6000),
    };
    expect(((await signIn(w, { clientId: big }).catch((e: unknown) => e)) as BrowserStopped).page).toContain(
      'is larger than 5120 bytes',
    );
  });

  it('registers public clients only, with https or loopback redirect URIs', async () => {
    const w = await world();
    const post = (body: unknown) =>
      fetch(`${w.base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await post({ redirect_uris: ['https://app.example/cb', REDIRECT_URI] });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(await ok.json()).toMatchObject({
      client_id: expect.stringMatching(/^zoteus-[A-Za-z0-9_-]{43}$/),
      redirect_uris: ['https://app.example/cb', REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    });
    const plainHttp = await post({ redirect_uris: ['http://app.example/cb'] });
    expect(plainHttp.status).toBe(400);
    expect((await plainHttp.json()) as unknown).toMatchObject({ error: 'invalid_redirect_uri' });
    const secret = await post({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(await secret.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('/authorize', () => {
  it('refuses plain PKCE and a missing challenge back at the client, with state and iss', async () => {
    const w = await world();
    const clientId = await register(w);
    const ask = async (params: Record<string, string | undefined>) => {
      const response = await fetch(
        authorizeUrl(w, {
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT_URI,
          state: 's1',
          ...params,
        }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(302);
      return Object.fromEntries(new URL(response.headers.get('location')!).searchParams);
    };
    const verifier = newVerifier();
    expect(await ask({ code_challenge: verifier, code_challenge_method: 'plain' })).toEqual({
      error: 'invalid_request',
      error_description: "code_challenge_method must be S256; 'plain' is refused.",
      state: 's1',
      iss: w.base,
    });
    expect(await ask({ code_challenge: verifier })).toMatchObject({
      error: 'invalid_request',
      error_description: 'code_challenge_method must be S256; none (that is plain) is refused.',
    });
    expect(await ask({})).toMatchObject({ error: 'invalid_request', state: 's1', iss: w.base });
    expect(
      await ask({
        code_challenge: challengeOf(verifier),
        code_challenge_method: 'S256',
        resource: 'https://other.example/mcp',
      }),
    ).toMatchObject({
      error: 'invalid_target',
      error_description: `resource must be this server, ${w.resource}.`,
    });
    expect(
      await ask({
        code_challenge: challengeOf(verifier),
        code_challenge_method: 'S256',
        scope: 'zotero:admin',
      }),
    ).toMatchObject({
      error: 'invalid_scope',
    });
    // Nothing was started at Zotero for any of them.
    expect(w.zotero.requests).toEqual([]);
  });

  it('completes a sign-in once: the callback replayed, or reached after 10 minutes, is refused', async () => {
    const w = await world();
    const clientId = await register(w);
    const start = () =>
      authorizeUrl(w, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challengeOf(newVerifier()),
        code_challenge_method: 'S256',
        scope: 'zotero:read',
      });
    /** The callback URL Zotero sends the browser to. */
    const callbackFrom = async (url: string) => {
      const toZotero = await fetch(url, { redirect: 'manual' });
      const approved = await fetch(toZotero.headers.get('location')!, { redirect: 'manual' });
      return approved.headers.get('location')!;
    };
    const callback = await callbackFrom(start());
    expect(callback.startsWith(`${w.base}/oauth/zotero/callback?`)).toBe(true);
    const first = await fetch(callback, { redirect: 'manual' });
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/callback\?code=/);
    const replay = await fetch(callback, { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain(
      'This sign-in is unknown, was already completed, or has expired (it lasts 10 minutes).',
    );
    const late = await callbackFrom(start());
    w.clock.offsetMs = 10 * 60 * 1000 + 1;
    expect((await fetch(late, { redirect: 'manual' })).status).toBe(400);
    expect(w.signedIn).toHaveLength(1);
  });

  it('sends the person back with temporarily_unavailable when Zotero cannot be reached', async () => {
    const { startZoteroOAuthServer } = await import('../../../support/zotero-oauth-server.js');
    const zotero = await startZoteroOAuthServer();
    const w = await world({ zotero });
    await zotero.close();
    const clientId = await register(w);
    const response = await fetch(
      authorizeUrl(w, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challengeOf(newVerifier()),
        code_challenge_method: 'S256',
        state: 'st-9',
      }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    expect(Object.fromEntries(new URL(response.headers.get('location')!).searchParams)).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'The sign-in with Zotero could not start; try again in a moment.',
      state: 'st-9',
      iss: w.base,
    });
  });

  it('sends a person who denies at Zotero back with access_denied', async () => {
    const w = await world();
    w.zotero.deny = true;
    const denied = await signIn(w);
    expect(Object.fromEntries(denied.back.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'Access was not allowed at Zotero.',
      state: 'st-42',
      iss: w.base,
    });
    expect(w.signedIn).toEqual([]);
  });
});

describe('/token', () => {
  it('issues tokens once per code: a wrong verifier fails, and a code used twice revokes what it issued', async () => {
    const w = await world();
    const wrong = await signIn(w);
    const refused = await exchangeCode(w, wrong, { code_verifier: newVerifier() });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.body).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge (PKCE S256).',
    });

    const s = await signIn(w);
    const first = await exchangeCode(w, s);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      scope: 'zotero:read zotero:write',
    });
    const access = first.body.access_token as string;
    expect((await listTools(w, `Bearer ${access}`)).status).toBe(200);
    const again = await exchangeCode(w, s);
    expect(again.body).toEqual({
      error: 'invalid_grant',
      error_description:
        'The authorization code was already used; the tokens issued for it are now revoked. Sign in again.',
    });
    const after = await listTools(w, `Bearer ${access}`);
    expect(after.status).toBe(401);
    expect(after.challenge).toContain('error_description="The access token was revoked."');
    const refresh = await postForm(w, '/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token as string,
      client_id: s.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('checks client, redirect_uri, resource and grant type, and takes no client secret', async () => {
    const w = await world();
    const s = await signIn(w);
    expect((await exchangeCode(w, s, { client_id: await register(w) })).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code was issued to another client.',
    });
    const t = await signIn(w);
    expect((await exchangeCode(w, t, { redirect_uri: 'http://127.0.0.1:9/other' })).body.error).toBe(
      'invalid_grant',
    );
    const u = await signIn(w);
    expect((await exchangeCode(w, u, { resource: 'https://other.example/mcp' })).body).toEqual({
      error: 'invalid_target',
      error_description: `resource must be ${w.resource}, the one authorized.`,
    });
    expect(
      (await postForm(w, '/token', { grant_type: 'password', username: 'a', password: 'b' })).body,
    ).toEqual({
      error: 'unsupported_grant_type',
      error_description: 'grant_type "password" is not supported: use authorization_code or refresh_token.',
    });
    const secret = await postForm(w, '/token', {
      grant_type: 'authorization_code',
      client_secret: 'x',
      code: 'c',
    });
    expect(secret.status).toBe(401);
    expect(secret.body.error).toBe('invalid_client');
    expect((await postForm(w, '/token', { grant_type: 'authorization_code' })).body).toEqual({
      error: 'invalid_request',
      error_description: 'code is missing.',
    });
    const json = await fetch(`${w.base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('rotates refresh tokens, and a rotated one presented again revokes the whole sign-in', async () => {
    const w = await world();
    const s = await tokensFor(w);
    const refreshWith = (token: string) =>
      postForm(w, '/token', { grant_type: 'refresh_token', refresh_token: token, client_id: s.clientId });
    const second = await refreshWith(s.refresh);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(s.refresh);
    expect(second.body.scope).toBe('zotero:read zotero:write');
    const third = await refreshWith(second.body.refresh_token as string);
    expect(third.status).toBe(200);
    // The first refresh token again: theft suspected, every token of the family dies.
    const replay = await refreshWith(s.refresh);
    expect(replay.body).toEqual({
      error: 'invalid_grant',
      error_description:
        'The refresh token was already used; every token of this sign-in is now revoked. Sign in again.',
    });
    for (const access of [s.access, second.body.access_token, third.body.access_token]) {
      expect((await listTools(w, `Bearer ${access as string}`)).status).toBe(401);
    }
    expect((await refreshWith(third.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });
});

describe('the bearer check', () => {
  it('refuses an access token after its hour, and the refresh token still brings a new one', async () => {
    const w = await world();
    const s = await tokensFor(w);
    w.clock.offsetMs = 3600 * 1000 + 1;
    const expired = await listTools(w, `Bearer ${s.access}`);
    expect(expired.status).toBe(401);
    expect(expired.challenge).toBe(
      `Bearer resource_metadata="${w.base}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The access token expired."`,
    );
    const renewed = await postForm(w, '/token', {
      grant_type: 'refresh_token',
      refresh_token: s.refresh,
      client_id: s.clientId,
    });
    expect((await listTools(w, `Bearer ${renewed.body.access_token as string}`)).status).toBe(200);
  });

  it('refuses a revoked access token; revoking the refresh token ends the access tokens of its sign-in', async () => {
    const w = await world();
    const a = await tokensFor(w);
    const revoke = await postForm(w, '/revoke', { token: a.access, client_id: a.clientId });
    expect(revoke.status).toBe(200);
    const refused = await listTools(w, `Bearer ${a.access}`);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('error_description="The access token was revoked."');
    // An unknown token is revoked "successfully" too (RFC 7009 §2.2).
    expect((await postForm(w, '/revoke', { token: 'unknown' })).status).toBe(200);

    const b = await tokensFor(w);
    expect((await postForm(w, '/revoke', { token: b.refresh })).status).toBe(200);
    expect((await listTools(w, `Bearer ${b.access}`)).status).toBe(401);
  });

  it('refuses a token issued for another server sharing the same database (audience, RFC 8707)', async () => {
    const database = await openTestDatabase('sqlite');
    closers.push(() => database.close());
    const store = sqlAuthStore(database.db);
    const a = await world({ store });
    const b = await world({ store });
    const { access } = await tokensFor(a);
    expect((await listTools(a, `Bearer ${access}`)).status).toBe(200);
    const elsewhere = await listTools(b, `Bearer ${access}`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.challenge).toBe(
      `Bearer resource_metadata="${b.base}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The access token was issued for another resource, not ${b.resource}."`,
    );
  });
});

describe('read-only grants', () => {
  it('the person may choose read-only on the consent page: zotero:read alone, and the principal is readOnly', async () => {
    const w = await world();
    const s = await tokensFor(w, { choose: 'read-only' });
    expect(s.answer.body.scope).toBe('zotero:read');
    const client = new Client({ name: 'ro', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(w.handle.url), {
        requestInit: { headers: { authorization: `Bearer ${s.access}` } },
      }),
    );
    await client.listTools();
    await client.close();
    expect(w.principals.at(-1)).toEqual({
      tenantId: '475425',
      username: 'z_public',
      scopes: ['zotero:read'],
      readOnly: true,
      clientId: s.clientId,
    });
    // A refresh keeps it read-only and cannot widen it.
    const widened = await postForm(w, '/token', {
      grant_type: 'refresh_token',
      refresh_token: s.refresh,
      client_id: s.clientId,
      scope: 'zotero:read zotero:write',
    });
    expect(widened.body).toEqual({
      error: 'invalid_scope',
      error_description: 'The grant does not include zotero:write.',
    });
  });

  it('a client asking for zotero:read only goes straight to Zotero, without the consent page', async () => {
    const w = await world();
    const clientId = await register(w);
    const response = await fetch(
      authorizeUrl(w, {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challengeOf(newVerifier()),
        code_challenge_method: 'S256',
        scope: 'zotero:read',
      }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(
      new RegExp(`^${w.zotero.base}/authorize\\?oauth_token=`),
    );
    const s = await tokensFor(w, { scope: 'zotero:read' });
    expect(s.answer.body.scope).toBe('zotero:read');
  });
});
