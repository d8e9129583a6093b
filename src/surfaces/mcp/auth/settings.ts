/**
 * The settings of the MCP HTTP server's authentication, read from the environment:
 *   ZOTEUS_AUTH                 `zotero`: the built-in authorization server, which signs people
 *                               in with their Zotero account; `oidc`: an external OpenID Connect
 *                               provider issues the tokens, and each person supplies their Zotero
 *                               key once (unset: no authentication, and the server stays on loopback)
 *   ZOTEUS_OIDC_ISSUER          with `oidc`: the provider's issuer URL, exactly as its tokens' `iss`
 *   ZOTEUS_OIDC_AUDIENCE        with `oidc`: the audience tokens must carry (default `<public>/mcp`)
 *   ZOTEUS_PUBLIC_URL           the address clients reach the server at (`https://zoteus.example.org`):
 *                               the tokens' audience (`<url>/mcp`), the issuer, the metadata URLs
 *   ZOTEUS_ACCESS_TOKEN_TTL_S   lifetime of an access token in seconds (default 3600)
 *   ZOTEUS_REFRESH_TOKEN_TTL_S  lifetime of a refresh token in seconds (default 2592000, 30 days)
 * The Zotero application's key and secret (ZOTEUS_ZOTERO_OAUTH_KEY, _SECRET) are read by the
 * Zotero sign-in client, not here.
 */
import { ZoteusError } from '../../../core/errors.js';
import type { Env } from '../../../core/paths.js';
import { TOOLSETS } from '../../../core/toolsets.js';

export const SCOPE_READ = 'zotero:read';
export const SCOPE_WRITE = 'zotero:write';
/** The access scopes, the ones the metadata advertises (clients may ask for every advertised scope). */
export const SUPPORTED_SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;
/**
 * A grant may also name the toolsets its client is shown (`zotero:toolset:citations`, as
 * ZOTEUS_TOOLSETS names them); a grant naming none is shown the server's. Not advertised: a
 * client asking for every advertised scope would otherwise ask for every tool.
 */
export const SCOPE_TOOLSET_PREFIX = 'zotero:toolset:';
export const TOOLSET_SCOPES: readonly string[] = ['default', 'all', ...TOOLSETS].map(
  (name) => `${SCOPE_TOOLSET_PREFIX}${name}`,
);

export const DEFAULT_ACCESS_TOKEN_TTL_S = 3600;
export const DEFAULT_REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
/** A sign-in waiting for the user to come back from Zotero. */
export const PENDING_TTL_MS = 10 * 60 * 1000;
/** An authorization code, from the redirect to its exchange. */
export const CODE_TTL_MS = 60 * 1000;

/** An external OpenID Connect provider (ZOTEUS_AUTH=oidc). */
export interface OidcSettings {
  /** The issuer, exactly as configured: tokens' `iss` must equal it. */
  issuer: string;
  /** The audience tokens must carry; undefined: the resource, `<public>/mcp`. */
  audience: string | undefined;
}

export interface AuthSettings {
  mode: 'zotero' | 'oidc';
  /** With mode `oidc`: the provider. */
  oidc?: OidcSettings;
  /** The public origin, without a trailing slash: `https://zoteus.example.org`. */
  publicUrl: string;
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
}

/** The variables that turn authentication on, for messages that say how. */
export const AUTH_ENABLING_SETTINGS =
  'ZOTEUS_AUTH=zotero with ZOTEUS_PUBLIC_URL (and ZOTEUS_ZOTERO_OAUTH_KEY, ZOTEUS_ZOTERO_OAUTH_SECRET), or ZOTEUS_AUTH=oidc with ZOTEUS_PUBLIC_URL and ZOTEUS_OIDC_ISSUER';

function seconds(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim();
  if (!/^\d{1,10}$/.test(value) || Number(value) < 60 || Number(value) > 31_536_000) {
    throw new ZoteusError(
      'validation_error',
      `${name} must be a number of seconds from 60 to 31536000; got '${raw}'.`,
      {
        field: name,
        hint: `Fix or unset ${name} (default ${fallback}).`,
      },
    );
  }
  return Number(value);
}

function isLoopbackName(hostname: string): boolean {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * `https://host[:port]` as given, normalised (no trailing slash). A path is refused: the
 * server answers at `/mcp` and `/.well-known/…` of its own origin. Plain http only on loopback.
 */
export function parsePublicUrl(raw: string, name = 'ZOTEUS_PUBLIC_URL'): string {
  const url = URL.canParse(raw.trim()) ? new URL(raw.trim()) : undefined;
  const problem = !url
    ? 'is not a URL'
    : !/^https?:$/.test(url.protocol)
      ? 'must be an https URL'
      : url.protocol === 'http:' && !isLoopbackName(url.hostname)
        ? 'must be https (plain http only for a loopback address)'
        : url.pathname !== '/' || url.search || url.hash || url.username || url.password
          ? 'must be an origin only (scheme://host[:port]), without a path'
          : undefined;
  if (problem || !url) {
    throw new ZoteusError('validation_error', `${name} ${problem ?? 'is not a URL'}; got '${raw}'.`, {
      field: name,
      hint: `Set ${name} to the address clients reach the server at, e.g. https://zoteus.example.org (a reverse proxy terminating TLS forwards to --host/--port).`,
    });
  }
  return url.origin;
}

/** The authentication the environment configures, or undefined when none is. */
export function authSettings(env: Env): AuthSettings | undefined {
  const mode = env.ZOTEUS_AUTH?.trim() ?? '';
  if (mode === '') return undefined;
  if (mode !== 'zotero' && mode !== 'oidc') {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_AUTH must be 'zotero' (sign in with a Zotero account) or 'oidc' (an OpenID Connect provider); got '${mode}'.`,
      {
        field: 'ZOTEUS_AUTH',
        hint: 'Set ZOTEUS_AUTH=zotero or ZOTEUS_AUTH=oidc, or unset it to serve loopback only without authentication.',
      },
    );
  }
  const publicUrl = env.ZOTEUS_PUBLIC_URL?.trim() ?? '';
  if (publicUrl === '') {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_AUTH=${mode} needs ZOTEUS_PUBLIC_URL, the address clients reach the server at.`,
      {
        field: 'ZOTEUS_PUBLIC_URL',
        hint: 'Set ZOTEUS_PUBLIC_URL (or --public-url), e.g. https://zoteus.example.org.',
      },
    );
  }
  return {
    mode,
    ...(mode === 'oidc' ? { oidc: oidcSettings(env) } : {}),
    publicUrl: parsePublicUrl(publicUrl),
    accessTokenTtlMs: seconds(env, 'ZOTEUS_ACCESS_TOKEN_TTL_S', DEFAULT_ACCESS_TOKEN_TTL_S) * 1000,
    refreshTokenTtlMs: seconds(env, 'ZOTEUS_REFRESH_TOKEN_TTL_S', DEFAULT_REFRESH_TOKEN_TTL_S) * 1000,
  };
}

/** `https://issuer[/path]`, kept exactly as given (tokens' `iss` is compared as a string). */
function oidcSettings(env: Env): OidcSettings {
  const raw = env.ZOTEUS_OIDC_ISSUER?.trim() ?? '';
  const url = raw !== '' && URL.canParse(raw) ? new URL(raw) : undefined;
  const problem =
    raw === ''
      ? 'is needed with ZOTEUS_AUTH=oidc'
      : !url || !/^https?:$/.test(url.protocol)
        ? 'must be an https URL'
        : url.protocol === 'http:' && !isLoopbackName(url.hostname)
          ? 'must be https (plain http only for a loopback address)'
          : url.search || url.hash || url.username || url.password
            ? 'must have no query, fragment or credentials'
            : undefined;
  if (problem) {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_OIDC_ISSUER ${problem}${raw === '' ? '' : `; got '${raw}'`}.`,
      {
        field: 'ZOTEUS_OIDC_ISSUER',
        hint: "Set ZOTEUS_OIDC_ISSUER to the provider's issuer, exactly as its tokens' iss claim (its discovery document is at <issuer>/.well-known/openid-configuration).",
      },
    );
  }
  const audience = env.ZOTEUS_OIDC_AUDIENCE?.trim();
  return { issuer: raw, audience: audience ? audience : undefined };
}
