/**
 * The resource server with an external OpenID Connect provider (ZOTEUS_AUTH=oidc): bearer
 * tokens are JWTs the provider signed, checked here without asking it about each one:
 *   - the signature, RS256 or ES256 only (`alg: none` and every other algorithm refused), with
 *     the key the header's `kid` names in the provider's JWKS (discovered from
 *     `<issuer>/.well-known/openid-configuration` → `jwks_uri`; kept, and fetched again when a
 *     token names a key it does not hold, at most once a minute: a rotation is picked up, a
 *     stream of forged `kid`s costs the provider nothing; and again once 10 minutes old, so a key
 *     the provider retired stops being accepted);
 *   - `iss` exactly the configured issuer, `aud` naming this server (ZOTEUS_OIDC_AUDIENCE,
 *     default the resource `<public>/mcp`), `exp` and `nbf` with 60 s of clock skew, a `sub`.
 * The tenant is `oidc:<sub>` (never a Zotero user id); `zotero:write` in `scope` or `scp`
 * grants writes, else the grant is read-only. The Protected Resource Metadata names the
 * provider; the built-in authorization server's routes are not mounted. The account routes
 * (account.ts) take each person's Zotero key.
 */
import { readCapped } from './clients.js';
import { createPublicKey, verify as verifySignature, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { accountRoutes, type AccountOptions } from './account.js';
import { challenge, type BearerCheck } from './bearer.js';
import { isLoopbackHost } from '../loopback.js';
import { filesRoutes, type FilesAccess } from './files.js';
import { PRM_PATH, authUrls, protectedResourceMetadata, type AuthUrls } from './metadata.js';
import { grantOf, type Principal } from './principal.js';
import { sendJson, sendOAuthError } from './respond.js';
import type { AuthSettings, OidcSettings } from './settings.js';

/** Clock skew allowed on `exp` and `nbf`. */
export const CLOCK_SKEW_S = 60;
/** A token naming an unknown key fetches the JWKS again at most this often. */
export const JWKS_REFETCH_MS = 60_000;
/** The JWKS is fetched again when older than this, so a key the provider retired stops working. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** The provider's discovery document and JWKS: time allowed, and size read. */
const FETCH_TIMEOUT_MS = 10_000;
const FETCH_LIMIT = 256 * 1024;
/** A provider that could not be reached is not asked again for this long (each request would). */
const FAILURE_HOLD_MS = 5_000;
/** A JWT longer than this is refused unread. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** The tenant id of an OpenID Connect subject: never a Zotero user id. */
export const OIDC_TENANT_PREFIX = 'oidc:';

export const SUPPORTED_ALGORITHMS = ['RS256', 'ES256'] as const;
type Algorithm = (typeof SUPPORTED_ALGORITHMS)[number];

export interface OidcServerOptions {
  settings: AuthSettings;
  oidc: OidcSettings;
  /** Each person's Zotero key (account.ts). */
  account: AccountOptions;
  /** Each person's saved files (files.ts): `/account/files`. */
  files?: FilesAccess | undefined;
  /** For tests: the clock of expiries (milliseconds). */
  now?: () => number;
}

export type JwtCheck =
  { ok: true; claims: Record<string, unknown> } | { ok: false; description: string; unavailable?: boolean };

export interface JwtVerifier {
  verify(token: string): Promise<JwtCheck>;
}

class ProviderUnavailable extends Error {}

async function fetchJson(url: string, what: string): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ProviderUnavailable(
      `${what} (${url}) could not be fetched: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new ProviderUnavailable(`${what} (${url}) answered ${response.status}`);
  }
  // Read at most FETCH_LIMIT bytes: a provider's document is small, and never held whole when not.
  const text = await readCapped(response, FETCH_LIMIT);
  if (text === undefined) throw new ProviderUnavailable(`${what} (${url}) is too large`);
  try {
    const body = JSON.parse(text) as unknown;
    if (body !== null && typeof body === 'object' && !Array.isArray(body))
      return body as Record<string, unknown>;
  } catch {
    // below
  }
  throw new ProviderUnavailable(`${what} (${url}) is not a JSON object`);
}

function base64urlJson(part: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

interface Jwk {
  kid?: string;
  kty?: string;
  crv?: string;
  alg?: string;
  use?: string;
}

/** Whether a JWKS entry may check a signature of `alg`. */
function fits(jwk: Jwk, alg: Algorithm): boolean {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  return alg === 'RS256' ? jwk.kty === 'RSA' : jwk.kty === 'EC' && jwk.crv === 'P-256';
}

export function createJwtVerifier(options: {
  issuer: string;
  audience: string;
  now: () => number;
  log: (line: string) => void;
}): JwtVerifier {
  const discoveryUrl = `${options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let jwksUri: string | undefined;
  let keys: Jwk[] | undefined;
  let fetchedAt = -Infinity;
  let inflight: Promise<void> | undefined;
  const publicKeys = new Map<Jwk, KeyObject>();

  const refresh = async () => {
    if (!jwksUri) {
      const discovery = await fetchJson(discoveryUrl, "The OpenID provider's discovery document");
      if (discovery.issuer !== options.issuer) {
        throw new ProviderUnavailable(
          `The OpenID provider's discovery document names the issuer ${JSON.stringify(discovery.issuer)}, not ${options.issuer} (ZOTEUS_OIDC_ISSUER)`,
        );
      }
      if (typeof discovery.jwks_uri !== 'string' || !URL.canParse(discovery.jwks_uri)) {
        throw new ProviderUnavailable("The OpenID provider's discovery document has no jwks_uri");
      }
      jwksUri = discovery.jwks_uri;
    }
    const jwks = await fetchJson(jwksUri, "The OpenID provider's JWKS");
    if (!Array.isArray(jwks.keys)) throw new ProviderUnavailable(`The JWKS at ${jwksUri} has no keys`);
    keys = jwks.keys.filter((k): k is Jwk => k !== null && typeof k === 'object' && !Array.isArray(k));
    publicKeys.clear();
  };

  /** Why the last fetch failed, while no keys are held: repeated for a few seconds, not refetched. */
  let failure: { message: string; at: number } | undefined;

  /** Fetches the keys once at a time; `force` (an unknown kid) at most once a minute. */
  const load = async (force: boolean): Promise<void> => {
    if (keys && !force && options.now() - fetchedAt < JWKS_MAX_AGE_MS) return;
    if (inflight) return inflight;
    if (keys && options.now() - fetchedAt < JWKS_REFETCH_MS) return;
    if (!keys && failure && options.now() - failure.at < FAILURE_HOLD_MS) {
      throw new ProviderUnavailable(failure.message);
    }
    fetchedAt = options.now();
    inflight = refresh()
      .then(() => {
        failure = undefined;
      })
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        options.log(`zoteus: oidc: ${message}`);
        failure = { message, at: options.now() };
        throw error instanceof ProviderUnavailable ? error : new ProviderUnavailable(message);
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  const find = (kid: string | undefined, alg: Algorithm): Jwk | undefined => {
    const candidates = (keys ?? []).filter((k) => fits(k, alg));
    if (kid !== undefined) return candidates.find((k) => k.kid === kid);
    return candidates.length === 1 ? candidates[0] : undefined;
  };

  const publicKey = (jwk: Jwk): KeyObject | undefined => {
    let key = publicKeys.get(jwk);
    if (!key) {
      try {
        key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      } catch {
        return undefined;
      }
      publicKeys.set(jwk, key);
    }
    return key;
  };

  return {
    async verify(token) {
      const refused = (description: string): JwtCheck => ({ ok: false, description });
      if (token.length > MAX_TOKEN_LENGTH) return refused('The access token is too long.');
      const parts = token.split('.');
      if (parts.length !== 3) return refused('The access token is not a JWT.');
      const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
      const header = base64urlJson(headerPart);
      const claims = base64urlJson(payloadPart);
      if (!header || !claims) return refused('The access token is not a JWT.');
      const alg = header.alg;
      if (typeof alg !== 'string' || !(SUPPORTED_ALGORITHMS as readonly string[]).includes(alg)) {
        return refused(
          `The access token's algorithm ${JSON.stringify(alg ?? null)} is not accepted (only ${SUPPORTED_ALGORITHMS.join(', ')}).`,
        );
      }
      if (header.crit !== undefined) return refused('The access token has critical header parameters.');
      if (!/^[A-Za-z0-9_-]+$/.test(signaturePart)) return refused('The access token signature is invalid.');
      const kid = typeof header.kid === 'string' ? header.kid : undefined;
      try {
        await load(false);
        if (!find(kid, alg as Algorithm)) await load(true);
      } catch (error) {
        return {
          ok: false,
          unavailable: true,
          description: `The OpenID provider's keys cannot be fetched now (${error instanceof Error ? error.message : String(error)}).`,
        };
      }
      const jwk = find(kid, alg as Algorithm);
      if (!jwk)
        return refused("The access token is signed with a key the OpenID provider's JWKS does not hold.");
      const key = publicKey(jwk);
      if (!key) return refused("The OpenID provider's key for this token cannot be read.");
      const signature = Buffer.from(signaturePart, 'base64url');
      if (alg === 'ES256' && signature.length !== 64)
        return refused('The access token signature is invalid.');
      const signed = Buffer.from(`${headerPart}.${payloadPart}`);
      const good = verifySignature(
        'sha256',
        signed,
        alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key,
        signature,
      );
      if (!good) return refused('The access token signature is invalid.');

      if (claims.iss !== options.issuer) {
        return refused(`The access token was issued by another issuer, not ${options.issuer}.`);
      }
      const aud = claims.aud;
      const audiences = Array.isArray(aud) ? aud : [aud];
      if (!audiences.includes(options.audience)) {
        return refused(`The access token was issued for another audience, not ${options.audience}.`);
      }
      const nowS = options.now() / 1000;
      if (typeof claims.exp !== 'number') return refused('The access token has no expiry (exp).');
      if (claims.exp + CLOCK_SKEW_S <= nowS) return refused('The access token expired.');
      if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - CLOCK_SKEW_S > nowS)) {
        return refused('The access token is not valid yet (nbf).');
      }
      if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255) {
        return refused('The access token names no subject (sub).');
      }
      return { ok: true, claims };
    },
  };
}

/** The scopes a JWT grants: `scope` (space-separated) or `scp` (a list or a string). */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const raw = claims.scope ?? claims.scp;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(' ') : [];
  return list.filter((s): s is string => typeof s === 'string' && s !== '');
}

export function principalOf(claims: Record<string, unknown>): Principal {
  const scopes = scopesOf(claims);
  const name = [claims.preferred_username, claims.email, claims.sub].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  const client = [claims.azp, claims.client_id].find((v): v is string => typeof v === 'string');
  return {
    tenantId: `${OIDC_TENANT_PREFIX}${claims.sub as string}`,
    username: name ?? '',
    scopes,
    ...grantOf(scopes),
    clientId: client ?? '',
  };
}

/** Checks a request's bearer token (from the header, or a form's `access_token`) as a JWT. */
export async function checkJwtBearer(
  verifier: JwtVerifier,
  urls: Pick<AuthUrls, 'resourceMetadata'>,
  req: IncomingMessage,
  formToken?: string,
): Promise<BearerCheck> {
  const ctx = { urls };
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
  if (query.has('access_token')) {
    const description = 'Send the access token in the Authorization header, never in the URL.';
    return {
      ok: false,
      status: 401,
      wwwAuthenticate: challenge(ctx, { code: 'invalid_request', description }),
      message: `Unauthorized: ${description}`,
    };
  }
  const match = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  const token = match?.[1] ?? formToken;
  if (token === undefined || token === '') {
    return {
      ok: false,
      status: 401,
      wwwAuthenticate: challenge(ctx),
      message:
        'Unauthorized: this server needs an access token from its OpenID provider (Authorization: Bearer); its Protected Resource Metadata names the provider.',
    };
  }
  const check = await verifier.verify(token);
  if (!check.ok) {
    return {
      ok: false,
      status: check.unavailable ? 503 : 401,
      wwwAuthenticate: challenge(ctx, { code: 'invalid_token', description: check.description }),
      message: `${check.unavailable ? 'Service Unavailable' : 'Unauthorized'}: ${check.description}`,
    };
  }
  return { ok: true, principal: principalOf(check.claims) };
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version',
  'access-control-max-age': '600',
};

/** The AuthServer (routes.ts) of an OpenID Connect deployment. */
export function createOidcServer(
  options: OidcServerOptions,
  context: { mcpPath: string; log: (line: string) => void },
) {
  const urls = authUrls(options.settings.publicUrl, context.mcpPath);
  const publicHost = new URL(options.settings.publicUrl);
  const now = options.now ?? Date.now;
  const verifier = createJwtVerifier({
    issuer: options.oidc.issuer,
    audience: options.oidc.audience ?? urls.resource,
    now,
    log: context.log,
  });
  const prm = { ...protectedResourceMetadata(urls), authorization_servers: [options.oidc.issuer] };
  const authenticate = (req: IncomingMessage, formToken?: string) =>
    checkJwtBearer(verifier, urls, req, formToken);
  const account = accountRoutes(options.account, {
    authenticate,
    log: context.log,
    corsHeaders: CORS_HEADERS,
  });
  const files = options.files
    ? filesRoutes(options.files, { authenticate: (req) => authenticate(req), corsHeaders: CORS_HEADERS })
    : undefined;

  return {
    publicUrl: urls.issuer,
    resource: urls.resource,
    async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
      if (path === PRM_PATH || path === `${PRM_PATH}${context.mcpPath}`) {
        if (req.method === 'OPTIONS') {
          res.writeHead(204, CORS_HEADERS);
          res.end();
        } else if (req.method !== 'GET' && req.method !== 'HEAD') {
          sendOAuthError(res, 405, 'invalid_request', `Use GET for ${path}.`, {
            allow: 'GET, HEAD',
            ...CORS_HEADERS,
          });
        } else {
          sendJson(res, 200, prm, { ...CORS_HEADERS, 'cache-control': 'public, max-age=300' });
        }
        return true;
      }
      if (files && (await files.handle(req, res, path))) return true;
      return account.handle(req, res, path);
    },
    authenticate: (req: IncomingMessage) => authenticate(req),
    hostAllowed(host: string): boolean {
      const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
      if (isLoopbackHost(name.toLowerCase())) return true;
      return host.toLowerCase() === publicHost.host;
    },
  };
}
