/**
 * The authorization server and resource server of the MCP HTTP endpoint, as one object the
 * transport mounts (http.ts): `handle` answers the OAuth and metadata paths (and says whether
 * it did), `authenticate` checks a `/mcp` request's bearer token, `hostAllowed` accepts the
 * public URL's host besides loopback names (DNS rebinding: nothing else).
 *
 * The metadata, token, registration and revocation endpoints answer CORS requests from any
 * origin (browser-based clients call them; they hold no cookie and PKCE guards the code).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAuthorize, handleContinue, handleZoteroCallback } from './authorize.js';
import { checkBearer, type BearerCheck } from './bearer.js';
import { registerClient } from './clients.js';
import { filesRoutes } from './files.js';
import { isLoopbackHost } from '../loopback.js';
import type { AuthContext, AuthServerOptions as BuiltInOptions } from './context.js';
import {
  AS_METADATA_PATH,
  AUTHORIZE_PATH,
  CONTINUE_PATH,
  PRM_PATH,
  REGISTER_PATH,
  REVOKE_PATH,
  TOKEN_PATH,
  ZOTERO_CALLBACK_PATH,
  authUrls,
  authorizationServerMetadata,
  protectedResourceMetadata,
} from './metadata.js';
import { createOidcServer, type OidcServerOptions } from './oidc.js';
import { mediaType, readText, sendJson, sendOAuthError } from './respond.js';
import { handleRevoke, handleToken } from './token.js';

export type { BearerCheck } from './bearer.js';
export type { OidcServerOptions } from './oidc.js';
/** The built-in authorization server's options (context.ts), or an external OpenID provider's (oidc.ts). */
export type AuthServerOptions = BuiltInOptions | OidcServerOptions;

/** How often expired sign-ins, codes and tokens are swept from the store (on the next request). */
const PURGE_EVERY_MS = 10 * 60 * 1000;

export interface AuthServer {
  /** The public origin: issuer, and the host a request's Host header may name. */
  readonly publicUrl: string;
  /** The resource (`<public>/mcp`): the audience tokens must carry. */
  readonly resource: string;
  /** Answers the request if it is one of the authorization paths; false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  authenticate(req: IncomingMessage): Promise<BearerCheck>;
  /** Loopback names, or the public URL's host (with its port when it has one). */
  hostAllowed(host: string): boolean;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version',
  'access-control-max-age': '600',
};

export function createAuthServer(
  options: AuthServerOptions,
  context: { mcpPath: string; log: (line: string) => void },
): AuthServer {
  // An external OpenID provider: only the resource server and the account routes are mounted.
  if ('oidc' in options) return createOidcServer(options, context);
  const urls = authUrls(options.settings.publicUrl, context.mcpPath);
  const publicHost = new URL(options.settings.publicUrl);
  const ctx: AuthContext = {
    settings: options.settings,
    store: options.store,
    signIn: options.signIn,
    onSignIn: options.onSignIn,
    now: options.now ?? Date.now,
    urls,
    allowLoopbackHttp: isLoopbackHost(publicHost.hostname),
    log: context.log,
  };
  const prm = protectedResourceMetadata(urls);
  const asm = authorizationServerMetadata(urls);
  let lastPurge = 0;
  const purgeSometimes = () => {
    const now = ctx.now();
    if (now - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = now;
    ctx.store
      .purgeExpired(now)
      .catch((error: unknown) =>
        ctx.log(
          `zoteus: oauth: purging expired tokens failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  };

  type Route = {
    method: 'GET' | 'POST';
    cors: boolean;
    run: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
  };
  const json = (body: unknown) => async (_req: IncomingMessage, res: ServerResponse) =>
    sendJson(res, 200, body, { ...CORS_HEADERS, 'cache-control': 'public, max-age=300' });
  const routes: Record<string, Route> = {
    [PRM_PATH]: { method: 'GET', cors: true, run: json(prm) },
    [`${PRM_PATH}${context.mcpPath}`]: { method: 'GET', cors: true, run: json(prm) },
    [AS_METADATA_PATH]: { method: 'GET', cors: true, run: json(asm) },
    [AUTHORIZE_PATH]: { method: 'GET', cors: false, run: (_req, res, url) => handleAuthorize(ctx, url, res) },
    [CONTINUE_PATH]: { method: 'GET', cors: false, run: (_req, res, url) => handleContinue(ctx, url, res) },
    [ZOTERO_CALLBACK_PATH]: {
      method: 'GET',
      cors: false,
      run: (req, res, url) => handleZoteroCallback(ctx, url, req, res),
    },
    [TOKEN_PATH]: { method: 'POST', cors: true, run: (req, res) => handleToken(ctx, req, res) },
    [REVOKE_PATH]: { method: 'POST', cors: true, run: (req, res) => handleRevoke(ctx, req, res) },
    [REGISTER_PATH]: {
      method: 'POST',
      cors: true,
      run: async (req, res) => {
        if (mediaType(req) !== 'application/json') {
          return sendOAuthError(
            res,
            400,
            'invalid_client_metadata',
            'The registration request must be JSON.',
            CORS_HEADERS,
          );
        }
        const text = await readText(req);
        let body: unknown;
        try {
          body = text === undefined ? undefined : JSON.parse(text);
        } catch {
          body = undefined;
        }
        const result = await registerClient(body, { store: ctx.store, now: ctx.now() });
        sendJson(res, result.status, result.body, CORS_HEADERS);
      },
    },
  };

  const files = options.files
    ? filesRoutes(options.files, { authenticate: (req) => checkBearer(ctx, req), corsHeaders: CORS_HEADERS })
    : undefined;

  return {
    publicUrl: urls.issuer,
    resource: urls.resource,
    async handle(req, res, path) {
      if (files && (await files.handle(req, res, path))) return true;
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) return false;
      if (req.method === 'OPTIONS' && route.cors) {
        res.writeHead(204, CORS_HEADERS);
        res.end();
        return true;
      }
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (method !== route.method) {
        sendOAuthError(res, 405, 'invalid_request', `Use ${route.method} for ${path}.`, {
          allow: route.method === 'GET' ? 'GET, HEAD' : 'POST',
          ...(route.cors ? CORS_HEADERS : {}),
        });
        return true;
      }
      purgeSometimes();
      const url = new URL(req.url ?? '/', urls.issuer);
      if (route.cors) res.setHeader('access-control-allow-origin', '*');
      await route.run(req, res, url);
      return true;
    },
    authenticate: (req) => checkBearer(ctx, req),
    hostAllowed(host) {
      const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
      if (isLoopbackHost(name.toLowerCase())) return true;
      return host.toLowerCase() === publicHost.host;
    },
  };
}
