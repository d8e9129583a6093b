/**
 * The whole sign-in as a third-party MCP client makes it: the SDK's own OAuth client
 * (`@modelcontextprotocol/client`) meets a 401, reads the Protected Resource Metadata and the
 * authorization server's metadata, registers (RFC 7591), sends the person to /authorize with
 * PKCE S256 and `resource`; the person signs in at (the loopback fake of) Zotero; the SDK
 * checks `iss`, exchanges the code, and lists the tools with its token.
 */
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES } from './databases.js';
import { browse, REDIRECT_URI, startAuthWorld, type AuthWorld } from './world.js';

const worlds: AuthWorld[] = [];
afterEach(async () => {
  while (worlds.length) await worlds.pop()!.close();
});

/** A client's OAuth state, in memory, as an application would keep it. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(private readonly scope?: string) {}
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: OAuthDiscoveryState | undefined;
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

describe.each(DATABASES)(
  'an MCP SDK client signing in through the built-in authorization server (%s)',
  (database) => {
    it('discovers, registers, signs in with Zotero, lists the tools with its token, and refreshes it an hour later', async () => {
      const world = await startAuthWorld({ database });
      worlds.push(world);
      const provider = new MemoryProvider();
      const first = new StreamableHTTPClientTransport(new URL(world.handle.url), { authProvider: provider });
      await expect(new Client({ name: 'sdk', version: '0' }).connect(first)).rejects.toBeInstanceOf(
        UnauthorizedError,
      );

      // The SDK registered itself and chose PKCE S256 and this server as the resource.
      expect(provider.info?.client_id).toMatch(/^zoteus-/);
      const authorize = provider.authorizationUrl!;
      expect(authorize.origin + authorize.pathname).toBe(`${world.base}/authorize`);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('resource')).toBe(world.resource);

      const back = await browse(authorize.href);
      expect(back.searchParams.get('iss')).toBe(world.base);
      expect(back.searchParams.get('state')).toBe(authorize.searchParams.get('state'));
      await first.finishAuth(back.searchParams);
      expect(provider.saved).toMatchObject({
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'zotero:read zotero:write',
      });
      expect(provider.saved!.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const client = new Client({ name: 'sdk', version: '0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(world.handle.url), { authProvider: provider }),
      );
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('zotero_whoami');
      await client.close();

      // An hour later the access token has expired: the SDK refreshes it (rotation) and goes on.
      const before = provider.saved!;
      world.clock.offsetMs = 3600 * 1000 + 1;
      const later = new Client({ name: 'sdk', version: '0' });
      await later.connect(
        new StreamableHTTPClientTransport(new URL(world.handle.url), { authProvider: provider }),
      );
      expect((await later.listTools()).tools.length).toBe(tools.length);
      await later.close();
      expect(provider.saved!.access_token).not.toBe(before.access_token);
      expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);

      // The signed-in user: handed on with their Zotero key, and the principal of every request.
      expect(world.signedIn).toEqual([
        { tenantId: '475425', userId: 475425, username: 'z_public', apiKey: world.zotero.user.apiKey },
      ]);
      expect(world.principals.length).toBeGreaterThan(0);
      for (const principal of world.principals) {
        expect(principal).toEqual({
          tenantId: '475425',
          username: 'z_public',
          scopes: ['zotero:read', 'zotero:write'],
          readOnly: false,
          clientId: provider.info!.client_id,
        });
      }
      // Zotero was asked for a request token, authorized, and asked for the key once each.
      expect(world.zotero.requests.map((r) => `${r.path} ${r.status}`)).toEqual([
        '/oauth/request 200',
        '/oauth/authorize 302',
        '/oauth/access 200',
      ]);
      // The key never reaches the log.
      expect(world.log.join('\n')).not.toContain(world.zotero.user.apiKey);
    });
  },
);
