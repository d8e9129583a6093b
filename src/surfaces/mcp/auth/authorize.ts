/**
 * The authorization endpoint and the two legs of the Zotero sign-in behind it.
 *
 * `GET /authorize` checks the request in the order RFC 6749 §4.1.2.1 asks: a bad client_id or
 * redirect_uri is shown to the person (never redirected to an unchecked address); anything
 * else wrong goes back to the client's redirect_uri as `error`, with `state` and `iss`. A good
 * request starts Zotero's OAuth 1.0a (a request token for our callback), is kept as a pending
 * authorization under that token for 10 minutes, and the browser goes to Zotero; when the
 * client asked for `zotero:write`, a page first lets the person choose full or read-only
 * access (a read-only grant holds `zotero:read` alone).
 *
 * `GET /oauth/zotero/callback` takes the pending authorization (once), exchanges the verifier
 * for the user's key, hands the signed-in user to `onSignIn`, and sends the browser back to
 * the client with a single-use code (60 s), `state` and `iss` (RFC 9207).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PendingAuthorization } from '../../../core/store/auth-store.js';
import { lookUpClient, redirectUriListed } from './clients.js';
import type { AuthContext } from './context.js';
import { hashOpaque, newOpaqueValue } from './opaque.js';
import { S256_CHALLENGE_PATTERN } from './pkce.js';
import { html, redirect, sendPage, withParams } from './respond.js';
import {
  CODE_TTL_MS,
  PENDING_TTL_MS,
  SCOPE_READ,
  SCOPE_TOOLSET_PREFIX,
  SCOPE_WRITE,
  SUPPORTED_SCOPES,
  TOOLSET_SCOPES,
} from './settings.js';

/** The one value of a query parameter; `multiple` when it is repeated (RFC 6749 §3.1: an error). */
function single(query: URLSearchParams, name: string): string | undefined | { multiple: true } {
  const values = query.getAll(name);
  if (values.length > 1) return { multiple: true };
  return values[0];
}

/**
 * Scopes granted for a requested `scope`: write implies read; no access scope asked means both.
 * Toolset scopes asked are kept as they are (the grant's tool list, principal.ts).
 */
export function grantedScopes(requested: string | undefined): string[] | { unknown: string[] } {
  const asked = [...new Set((requested ?? '').split(' ').filter((s) => s !== ''))];
  const known = (s: string) =>
    (SUPPORTED_SCOPES as readonly string[]).includes(s) || TOOLSET_SCOPES.includes(s);
  const unknown = asked.filter((s) => !known(s));
  if (unknown.length) return { unknown };
  const toolsets = asked.filter((s) => TOOLSET_SCOPES.includes(s));
  const access = asked.filter((s) => !TOOLSET_SCOPES.includes(s));
  const write = access.length === 0 || access.includes(SCOPE_WRITE);
  return [...(write ? [SCOPE_READ, SCOPE_WRITE] : [SCOPE_READ]), ...toolsets];
}

function badRequestPage(res: ServerResponse, message: string): void {
  sendPage(
    res,
    400,
    'This sign-in cannot continue',
    html`<p>${message}</p>
      <p>Go back to the application you came from and try again, or tell its developers.</p>`,
  );
}

export async function handleAuthorize(ctx: AuthContext, url: URL, res: ServerResponse): Promise<void> {
  const q = url.searchParams;
  const clientId = single(q, 'client_id');
  if (typeof clientId !== 'string' || clientId === '') {
    return badRequestPage(res, 'The request names no client (client_id), or names more than one.');
  }
  const looked = await lookUpClient(clientId, { store: ctx.store, allowLoopbackHttp: ctx.allowLoopbackHttp });
  if (!looked.ok) return badRequestPage(res, looked.message);
  const client = looked.client;
  const askedRedirect = single(q, 'redirect_uri');
  if (typeof askedRedirect === 'object')
    return badRequestPage(res, 'The request names more than one redirect_uri.');
  const redirectUri =
    askedRedirect ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (redirectUri === undefined) {
    return badRequestPage(res, 'The request names no redirect_uri, and the client has more than one.');
  }
  if (!redirectUriListed(client.redirectUris, redirectUri)) {
    return badRequestPage(
      res,
      `The redirect_uri ${redirectUri} is not one the client ${clientId} lists; nothing is sent there.`,
    );
  }

  const state = single(q, 'state');
  const back = (error: string, description: string) =>
    redirect(
      res,
      withParams(redirectUri, {
        error,
        error_description: description,
        ...(typeof state === 'string' ? { state } : {}),
        iss: ctx.urls.issuer,
      }),
    );
  if (typeof state === 'object') return back('invalid_request', 'state is repeated.');

  const responseType = single(q, 'response_type');
  if (responseType !== 'code') {
    return back(
      'unsupported_response_type',
      'Only response_type=code is supported (the authorization code flow).',
    );
  }
  const challenge = single(q, 'code_challenge');
  const method = single(q, 'code_challenge_method');
  if (typeof challenge !== 'string' || challenge === '') {
    return back('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  }
  if (method !== 'S256') {
    return back(
      'invalid_request',
      `code_challenge_method must be S256; ${typeof method === 'string' ? `'${method}'` : 'none (that is plain)'} is refused.`,
    );
  }
  if (!S256_CHALLENGE_PATTERN.test(challenge)) {
    return back('invalid_request', 'code_challenge must be the 43 base64url characters of a SHA-256 (S256).');
  }
  const resources = q.getAll('resource');
  if (resources.length > 1 || (resources.length === 1 && resources[0] !== ctx.urls.resource)) {
    return back('invalid_target', `resource must be this server, ${ctx.urls.resource}.`);
  }
  const scopeParam = single(q, 'scope');
  if (typeof scopeParam === 'object') return back('invalid_scope', 'scope is repeated.');
  const scopes = grantedScopes(scopeParam);
  if (!Array.isArray(scopes)) {
    return back(
      'invalid_scope',
      `Unknown scope ${scopes.unknown.join(' ')}; this server grants ${SUPPORTED_SCOPES.join(' and ')}, and ${SCOPE_TOOLSET_PREFIX}<toolset> for the toolsets ${TOOLSET_SCOPES.map((t) => t.slice(SCOPE_TOOLSET_PREFIX.length)).join(', ')}.`,
    );
  }

  let started: Awaited<ReturnType<AuthContext['signIn']['begin']>>;
  try {
    started = await ctx.signIn.begin(ctx.urls.zoteroCallback);
  } catch (error) {
    ctx.log(
      `zoteus: oauth: Zotero sign-in could not start: ${error instanceof Error ? error.message : String(error)}`,
    );
    return back('temporarily_unavailable', 'The sign-in with Zotero could not start; try again in a moment.');
  }
  const pending: PendingAuthorization = {
    requestToken: started.requestToken,
    requestTokenSecret: started.requestTokenSecret,
    authorizeUrl: started.authorizeUrl,
    clientId,
    redirectUri,
    codeChallenge: challenge,
    scopes,
    resource: ctx.urls.resource,
    ...(typeof state === 'string' ? { state } : {}),
    expiresAt: ctx.now() + PENDING_TTL_MS,
  };
  await ctx.store.putPending(pending);
  if (!scopes.includes(SCOPE_WRITE)) return redirect(res, started.authorizeUrl);
  return consentPage(ctx, res, client.clientName ?? clientId, started.requestToken, scopes);
}

function consentPage(
  ctx: AuthContext,
  res: ServerResponse,
  clientName: string,
  requestToken: string,
  scopes: readonly string[],
): void {
  const choice = (access: 'write' | 'read') =>
    withParams(ctx.urls.continueSignIn, { oauth_token: requestToken, access });
  const toolsets = scopes
    .filter((s) => s.startsWith(SCOPE_TOOLSET_PREFIX))
    .map((s) => s.slice(SCOPE_TOOLSET_PREFIX.length));
  sendPage(
    res,
    200,
    'Sign in with Zotero',
    html`<p><strong>${clientName}</strong> asks to use your Zotero library through Zoteus.</p>` +
      (toolsets.length > 0 ? html`<p>It asks for these tools: ${toolsets.join(', ')}.</p>` : '') +
      html`<p>
        Full access lets it add and change items; read-only access lets it search and read only. You sign in
        at zotero.org next.
      </p>` +
      html`<p><a class="button" href="${choice('write')}">Continue with full access</a></p>` +
      html`<a class="button" href="${choice('read')}">Continue read-only</a></p>`,
  );
}

/** The consent page's choice: narrow to read-only if asked, then on to Zotero. */
export async function handleContinue(ctx: AuthContext, url: URL, res: ServerResponse): Promise<void> {
  const token = url.searchParams.get('oauth_token') ?? '';
  const access = url.searchParams.get('access');
  const pending = token === '' ? undefined : await ctx.store.pending(token, ctx.now());
  if (!pending) {
    return badRequestPage(res, 'This sign-in is unknown or has expired (it lasts 10 minutes).');
  }
  if (access === 'read')
    await ctx.store.narrowPending(
      token,
      pending.scopes.filter((s) => s !== SCOPE_WRITE),
    );
  else if (access !== 'write') return badRequestPage(res, 'Choose full access or read-only access.');
  return redirect(res, pending.authorizeUrl);
}

export async function handleZoteroCallback(
  ctx: AuthContext,
  url: URL,
  _req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const token = url.searchParams.get('oauth_token') ?? '';
  const verifier = url.searchParams.get('oauth_verifier') ?? '';
  const pending = token === '' ? undefined : await ctx.store.takePending(token, ctx.now());
  if (!pending) {
    return badRequestPage(
      res,
      'This sign-in is unknown, was already completed, or has expired (it lasts 10 minutes).',
    );
  }
  const back = (params: Record<string, string>) =>
    redirect(
      res,
      withParams(pending.redirectUri, {
        ...params,
        ...(pending.state !== undefined ? { state: pending.state } : {}),
        iss: ctx.urls.issuer,
      }),
    );
  if (verifier === '') {
    return back({ error: 'access_denied', error_description: 'Access was not allowed at Zotero.' });
  }
  let signedIn: { apiKey: string; userId: number; username: string };
  try {
    signedIn = await ctx.signIn.complete(pending.requestToken, pending.requestTokenSecret, verifier);
  } catch (error) {
    ctx.log(
      `zoteus: oauth: Zotero sign-in failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    return back({ error: 'access_denied', error_description: 'Zotero did not complete the sign-in.' });
  }
  const tenant = {
    tenantId: String(signedIn.userId),
    userId: signedIn.userId,
    username: signedIn.username,
    apiKey: signedIn.apiKey,
  };
  try {
    await ctx.onSignIn(tenant);
  } catch (error) {
    ctx.log(
      `zoteus: oauth: the signed-in user could not be recorded: ${error instanceof Error ? error.message : String(error)}`,
    );
    return back({
      error: 'server_error',
      error_description: 'The sign-in could not be recorded; try again.',
    });
  }
  const code = newOpaqueValue();
  await ctx.store.putCode({
    codeHash: hashOpaque(code),
    familyId: newOpaqueValue(),
    clientId: pending.clientId,
    redirectUri: pending.redirectUri,
    codeChallenge: pending.codeChallenge,
    scopes: pending.scopes,
    resource: pending.resource,
    tenantId: tenant.tenantId,
    username: tenant.username,
    expiresAt: ctx.now() + CODE_TTL_MS,
  });
  ctx.log(`zoteus: oauth: user ${tenant.tenantId} signed in for client ${pending.clientId.slice(0, 80)}`);
  return back({ code });
}
