/**
 * The token endpoint (RFC 6749 §3.2, OAuth 2.1) and revocation (RFC 7009), for public
 * clients: no client secret, the client proves itself with PKCE.
 *   - `authorization_code`: the code once (a second use revokes what the first issued), the
 *     verifier against the challenge, the same client_id and redirect_uri, the same resource;
 *   - `refresh_token`: rotation (the old one dies; presenting it again revokes the family);
 *     the scope may only narrow.
 * Tokens are opaque (32 random bytes, base64url), stored as their SHA-256; every answer is
 * `Cache-Control: no-store`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenRecord } from '../../../core/store/auth-store.js';
import type { AuthContext } from './context.js';
import { hashOpaque, newOpaqueValue } from './opaque.js';
import { verifierMatches } from './pkce.js';
import { mediaType, readText, sendJson, sendOAuthError } from './respond.js';

type Form = URLSearchParams;

/** The form body, or why it cannot be read (answered already). */
async function readForm(req: IncomingMessage, res: ServerResponse): Promise<Form | undefined> {
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    sendOAuthError(res, 400, 'invalid_request', 'The body must be application/x-www-form-urlencoded.');
    return undefined;
  }
  const text = await readText(req);
  if (text === undefined) {
    sendOAuthError(res, 413, 'invalid_request', 'The body is too large.');
    return undefined;
  }
  const form = new URLSearchParams(text);
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) {
      sendOAuthError(res, 400, 'invalid_request', `${name} is repeated.`);
      return undefined;
    }
  }
  return form;
}

/** Public clients only: a client secret or HTTP Basic credentials are refused. */
function refuseClientSecret(req: IncomingMessage, form: Form, res: ServerResponse): boolean {
  if (/^basic\s/i.test(req.headers.authorization ?? '') || form.has('client_secret')) {
    sendOAuthError(
      res,
      401,
      'invalid_client',
      'This server has public clients only (token_endpoint_auth_method none): send client_id without a secret.',
      { 'www-authenticate': 'Basic realm="zoteus"' },
    );
    return true;
  }
  return false;
}

async function issue(
  ctx: AuthContext,
  res: ServerResponse,
  grant: Pick<TokenRecord, 'familyId' | 'clientId' | 'scopes' | 'resource' | 'tenantId' | 'username'>,
): Promise<void> {
  const now = ctx.now();
  const access = newOpaqueValue();
  const refresh = newOpaqueValue();
  await ctx.store.putTokens([
    {
      ...grant,
      tokenHash: hashOpaque(access),
      kind: 'access',
      expiresAt: now + ctx.settings.accessTokenTtlMs,
    },
    {
      ...grant,
      tokenHash: hashOpaque(refresh),
      kind: 'refresh',
      expiresAt: now + ctx.settings.refreshTokenTtlMs,
    },
  ]);
  sendJson(res, 200, {
    access_token: access,
    token_type: 'Bearer',
    expires_in: Math.floor(ctx.settings.accessTokenTtlMs / 1000),
    refresh_token: refresh,
    scope: grant.scopes.join(' '),
  });
}

async function authorizationCodeGrant(ctx: AuthContext, form: Form, res: ServerResponse): Promise<void> {
  const code = form.get('code');
  const verifier = form.get('code_verifier');
  const clientId = form.get('client_id');
  for (const [name, value] of [
    ['code', code],
    ['code_verifier', verifier],
    ['client_id', clientId],
  ] as const) {
    if (!value) return sendOAuthError(res, 400, 'invalid_request', `${name} is missing.`);
  }
  const redeemed = await ctx.store.redeemCode(hashOpaque(code!), ctx.now());
  if (redeemed.kind === 'reused') {
    ctx.log(
      `zoteus: oauth: a code was presented twice; its tokens are revoked (client ${redeemed.code.clientId.slice(0, 80)})`,
    );
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'The authorization code was already used; the tokens issued for it are now revoked. Sign in again.',
    );
  }
  if (redeemed.kind !== 'redeemed') {
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'The authorization code is unknown or expired (it lasts 60 seconds).',
    );
  }
  const grant = redeemed.code;
  if (grant.clientId !== clientId) {
    return sendOAuthError(res, 400, 'invalid_grant', 'The authorization code was issued to another client.');
  }
  const redirectUri = form.get('redirect_uri');
  if (redirectUri !== null && redirectUri !== grant.redirectUri) {
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'redirect_uri is not the one the authorization request used.',
    );
  }
  if (!verifierMatches(verifier!, grant.codeChallenge)) {
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'code_verifier does not match the code_challenge (PKCE S256).',
    );
  }
  const resource = form.get('resource');
  if (resource !== null && resource !== grant.resource) {
    return sendOAuthError(
      res,
      400,
      'invalid_target',
      `resource must be ${grant.resource}, the one authorized.`,
    );
  }
  return issue(ctx, res, grant);
}

async function refreshTokenGrant(ctx: AuthContext, form: Form, res: ServerResponse): Promise<void> {
  const refresh = form.get('refresh_token');
  const clientId = form.get('client_id');
  if (!refresh) return sendOAuthError(res, 400, 'invalid_request', 'refresh_token is missing.');
  if (!clientId) return sendOAuthError(res, 400, 'invalid_request', 'client_id is missing.');
  const hash = hashOpaque(refresh);
  const found = await ctx.store.token(hash);
  if (!found || found.kind !== 'refresh') {
    return sendOAuthError(res, 400, 'invalid_grant', 'The refresh token is unknown.');
  }
  if (found.clientId !== clientId) {
    return sendOAuthError(res, 400, 'invalid_grant', 'The refresh token was issued to another client.');
  }
  const resource = form.get('resource');
  if (resource !== null && resource !== found.resource) {
    return sendOAuthError(
      res,
      400,
      'invalid_target',
      `resource must be ${found.resource}, the one authorized.`,
    );
  }
  let scopes = found.scopes;
  const asked = form.get('scope');
  if (asked !== null && asked.trim() !== '') {
    const wanted = asked.split(' ').filter((s) => s !== '');
    const extra = wanted.filter((s) => !found.scopes.includes(s));
    if (extra.length) {
      return sendOAuthError(res, 400, 'invalid_scope', `The grant does not include ${extra.join(' ')}.`);
    }
    scopes = found.scopes.filter((s) => wanted.includes(s));
  }
  const rotated = await ctx.store.rotateRefresh(hash, ctx.now());
  if (rotated.kind === 'reused') {
    ctx.log(
      `zoteus: oauth: a rotated refresh token was presented again; its family is revoked (user ${found.tenantId})`,
    );
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'The refresh token was already used; every token of this sign-in is now revoked. Sign in again.',
    );
  }
  if (rotated.kind !== 'rotated') {
    return sendOAuthError(
      res,
      400,
      'invalid_grant',
      'The refresh token has expired or was revoked. Sign in again.',
    );
  }
  return issue(ctx, res, { ...found, scopes });
}

export async function handleToken(
  ctx: AuthContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const form = await readForm(req, res);
  if (!form || refuseClientSecret(req, form, res)) return;
  const grantType = form.get('grant_type');
  if (grantType === 'authorization_code') return authorizationCodeGrant(ctx, form, res);
  if (grantType === 'refresh_token') return refreshTokenGrant(ctx, form, res);
  if (!grantType) return sendOAuthError(res, 400, 'invalid_request', 'grant_type is missing.');
  return sendOAuthError(
    res,
    400,
    'unsupported_grant_type',
    `grant_type ${JSON.stringify(grantType.slice(0, 100))} is not supported: use authorization_code or refresh_token.`,
  );
}

/** RFC 7009: 200 whether or not the token was known (§2.2). */
export async function handleRevoke(
  ctx: AuthContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const form = await readForm(req, res);
  if (!form || refuseClientSecret(req, form, res)) return;
  const token = form.get('token');
  if (!token) return sendOAuthError(res, 400, 'invalid_request', 'token is missing.');
  await ctx.store.revokeToken(hashOpaque(token), ctx.now());
  sendJson(res, 200, {});
}
