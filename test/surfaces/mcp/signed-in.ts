/**
 * A person signing in to a shared deployment as an MCP client would: dynamic registration,
 * PKCE S256, the (fake) Zotero sign-in in a browser, the code for an access token; then an SDK
 * client that sends the token with every request.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { REDIRECT_URI, browse } from './auth/world.js';

export interface ZoteroUser {
  userID: number;
  username: string;
  apiKey: string;
}

/** Signs `user` in at the server whose public URL is `base`; resolves to an access token. */
export async function signIn(
  base: string,
  oauth: ZoteroOAuthFake,
  user: ZoteroUser,
  choose?: 'read-only',
  scope = 'zotero:read zotero:write',
): Promise<string> {
  oauth.user = user;
  const registered = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    }),
  });
  const { client_id } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${base}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: `${base}/mcp`,
    scope,
    state: 's',
  }))
    authorize.searchParams.set(k, v);
  const back = await browse(authorize.href, choose ? { choose } : {});
  const token = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id,
      redirect_uri: REDIRECT_URI,
      resource: `${base}/mcp`,
    }).toString(),
  });
  if (token.status !== 200) throw new Error(`token endpoint answered ${token.status}: ${await token.text()}`);
  return ((await token.json()) as { access_token: string }).access_token;
}

/** An SDK client of `mcpUrl` that sends `token` as its bearer. */
export async function clientWith(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'deployment-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** A tool result's text, every content item. */
export const textOf = (result: unknown): string =>
  (result as { content: Array<{ type: string; text: string }> }).content.map((c) => c.text).join('\n');
