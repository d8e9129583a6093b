/**
 * The settings of the Streamable HTTP transport, read from the environment when `--http` is
 * given (stdio needs none of them):
 *   ZOTEUS_HTTP_SESSION_IDLE_S    seconds after which a session of the older revisions with no
 *                                 request and no open stream is closed (default 1800)
 *   ZOTEUS_HTTP_MAX_SESSIONS      sessions of the older revisions open at once (default 100)
 *   ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT  with sign-in, sessions one person may hold (default 20)
 *   ZOTEUS_HTTP_ALLOWED_ORIGINS   browser origins allowed besides loopback ones, comma-separated
 *                                 (`https://app.example.org,http://tool.local:8080`)
 * A bad value is a validation_error naming the variable, as core/config.ts reports its own.
 */
import { ZoteusError } from '../../core/errors.js';
import type { Env } from '../../core/paths.js';

export interface HttpSettings {
  /** Idle time after which a session is closed, in milliseconds. */
  sessionIdleMs: number;
  maxSessions: number;
  /** With sign-in: sessions one tenant may have open at once on this server. */
  maxSessionsPerTenant: number;
  /** Exact origins (`scheme://host[:port]`) allowed besides loopback ones. */
  allowedOrigins: readonly string[];
}

export const DEFAULT_SESSION_IDLE_S = 1800;
export const DEFAULT_MAX_SESSIONS = 100;
/** One person's share of a shared server's sessions (several clients, a few agents each). */
export const DEFAULT_MAX_SESSIONS_PER_TENANT = 20;

function positiveInt(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim();
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ZoteusError('validation_error', `${name} must be an integer from 1 to ${max}; got '${raw}'.`, {
      field: name,
      hint: `Fix or unset ${name} (default ${fallback}).`,
    });
  }
  return Number(value);
}

/** `https://app.example.org` as the browser sends it in `Origin`: scheme, host, port if not the default. */
function parseOrigin(name: string, entry: string): string {
  const url = URL.canParse(entry) ? new URL(entry) : undefined;
  const bare = url !== undefined && url.pathname === '/' && !url.search && !url.hash;
  if (!url || !bare || !/^https?:$/.test(url.protocol) || url.username || url.password) {
    throw new ZoteusError(
      'validation_error',
      `${name} holds '${entry}', which is not an origin (scheme://host[:port], http or https, no path).`,
      { field: name, hint: `List origins separated by commas, e.g. ${name}=https://app.example.org` },
    );
  }
  return url.origin;
}

export function httpSettings(env: Env): HttpSettings {
  const origins = (env.ZOTEUS_HTTP_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => parseOrigin('ZOTEUS_HTTP_ALLOWED_ORIGINS', entry));
  return {
    sessionIdleMs: positiveInt(env, 'ZOTEUS_HTTP_SESSION_IDLE_S', DEFAULT_SESSION_IDLE_S, 31_536_000) * 1000,
    maxSessions: positiveInt(env, 'ZOTEUS_HTTP_MAX_SESSIONS', DEFAULT_MAX_SESSIONS, 100_000),
    maxSessionsPerTenant: positiveInt(
      env,
      'ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT',
      DEFAULT_MAX_SESSIONS_PER_TENANT,
      100_000,
    ),
    allowedOrigins: [...new Set(origins)],
  };
}
