/**
 * The resource server's check of every `/mcp` request (RFC 6750, RFC 8707, RFC 9728): the
 * access token comes in `Authorization: Bearer`, never in the query; it must be known, live,
 * not revoked, and issued for this server's resource. A refusal is a 401 whose
 * `WWW-Authenticate` names the Protected Resource Metadata, with `error="invalid_token"` when a
 * token was sent (and `invalid_request` for a token in the query).
 */
import type { IncomingMessage } from 'node:http';
import type { AuthContext } from './context.js';
import { hashOpaque } from './opaque.js';
import { grantOf, type Principal } from './principal.js';

export type BearerCheck =
  | { ok: true; principal: Principal }
  // 503: the OpenID provider's keys cannot be fetched now (oidc.ts), or the state database is down.
  | { ok: false; status: 401 | 503; wwwAuthenticate: string; message: string };

/** Token characters (RFC 6750 §2.1, b64token). */
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function challenge(
  ctx: { urls: Pick<AuthContext['urls'], 'resourceMetadata'> },
  error?: { code: string; description: string },
): string {
  const parts = [`resource_metadata="${ctx.urls.resourceMetadata}"`];
  if (error) parts.push(`error="${error.code}"`, `error_description="${error.description}"`);
  return `Bearer ${parts.join(', ')}`;
}

function refused(
  ctx: AuthContext,
  message: string,
  error?: { code: string; description: string },
): BearerCheck {
  return { ok: false, status: 401, wwwAuthenticate: challenge(ctx, error), message };
}

export async function checkBearer(ctx: AuthContext, req: IncomingMessage): Promise<BearerCheck> {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
  if (query.has('access_token')) {
    const description = 'Send the access token in the Authorization header, never in the URL.';
    return refused(ctx, `Unauthorized: ${description}`, { code: 'invalid_request', description });
  }
  const header = req.headers.authorization ?? '';
  const match = /^bearer +(\S+) *$/i.exec(header);
  if (!match) {
    return refused(
      ctx,
      'Unauthorized: this server needs an access token (Authorization: Bearer); its Protected Resource Metadata says where to get one.',
    );
  }
  const invalid = (description: string) =>
    refused(ctx, `Unauthorized: ${description}`, { code: 'invalid_token', description });
  const token = match[1]!;
  if (!TOKEN_PATTERN.test(token) || token.length > 512) return invalid('The access token is malformed.');
  let record: Awaited<ReturnType<AuthContext['store']['token']>>;
  try {
    record = await ctx.store.token(hashOpaque(token));
  } catch {
    // The state database does not answer: not the token's fault, and nothing was done.
    return {
      ok: false,
      status: 503,
      wwwAuthenticate: challenge(ctx),
      message:
        'Service Unavailable: the server cannot check access tokens now (its state database does not answer). Nothing was done; retry shortly.',
    };
  }
  if (!record || record.kind !== 'access') return invalid('The access token is not one this server issued.');
  if (record.revokedAt !== undefined) return invalid('The access token was revoked.');
  if (record.expiresAt <= ctx.now()) return invalid('The access token expired.');
  if (record.resource !== ctx.urls.resource) {
    return invalid(`The access token was issued for another resource, not ${ctx.urls.resource}.`);
  }
  return {
    ok: true,
    principal: {
      tenantId: record.tenantId,
      username: record.username,
      scopes: record.scopes,
      ...grantOf(record.scopes),
      clientId: record.clientId,
    },
  };
}
