/**
 * The clients the authorization server knows, in the order the MCP specification asks clients
 * to try them:
 *   - a Client ID Metadata Document: the client_id is an https URL with a path, whose JSON
 *     document (fetched without redirects, at most 5 KiB, within 5 s) names the same client_id
 *     and lists the redirect URIs; plain http is accepted only on loopback, and only when the
 *     server itself is on loopback (tests, a developer's machine);
 *   - a client registered here by RFC 7591 dynamic registration (`/register`, for the older
 *     clients): public (`token_endpoint_auth_method: none`), redirect URIs https or loopback http.
 * A redirect URI must be one the client lists, exactly, except that a loopback one may name any
 * port (RFC 8252 §7.3: a native app listens on whatever port it was given).
 *
 * Fetching a document is a request the server makes on a stranger's word (SSRF): unless the
 * server itself is on loopback, a host that resolves to a loopback, private, link-local or
 * otherwise non-public address is refused before anything is sent.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress } from '../../../core/http/public-address.js';
import type { AuthStore } from '../../../core/store/auth-store.js';

export { isPublicAddress };
import { isLoopbackHost } from '../loopback.js';
import { newOpaqueValue } from './opaque.js';

export const CIMD_MAX_BYTES = 5 * 1024;
export const CIMD_TIMEOUT_MS = 5000;
/** A DCR client's id is `zoteus-` and random, so it can never be taken for a URL. */
const DCR_PREFIX = 'zoteus-';

export interface KnownClient {
  clientId: string;
  clientName?: string | undefined;
  redirectUris: string[];
}

export type ClientLookup = { ok: true; client: KnownClient } | { ok: false; message: string };

/** True when `asked` is one of `registered`: exactly, or a loopback URI differing only in its port. */
export function redirectUriListed(registered: readonly string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  if (!URL.canParse(asked)) return false;
  const url = new URL(asked);
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return false;
  return registered.some((entry) => {
    if (!URL.canParse(entry)) return false;
    const listed = new URL(entry);
    return (
      listed.protocol === 'http:' &&
      listed.hostname === url.hostname &&
      listed.pathname === url.pathname &&
      listed.search === url.search &&
      !listed.hash
    );
  });
}

/** A redirect URI a public client may use: https, or http to a loopback address; no fragment. */
export function redirectUriAcceptable(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  const url = new URL(uri);
  if (url.hash || url.username || url.password) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/** A body read up to `limit` bytes; undefined when it is longer (nothing more is read). */
export async function readCapped(response: Response, limit: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Why this URL cannot be a client_id, or undefined when it can. */
function cimdUrlProblem(url: URL, allowLoopbackHttp: boolean): string | undefined {
  const httpOk = url.protocol === 'http:' && allowLoopbackHttp && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !httpOk) return 'must be an https URL';
  if (url.pathname === '/' || url.pathname === '') return 'must have a path';
  if (url.hash || url.username || url.password) return 'must have no fragment and no user name';
  if (/\/\.\.?(\/|$)/.test(url.pathname)) return "must have no '.' or '..' path segments";
  return undefined;
}

async function fetchMetadataDocument(clientId: string, allowLoopbackHttp: boolean): Promise<ClientLookup> {
  const url = new URL(clientId);
  const problem = cimdUrlProblem(url, allowLoopbackHttp);
  if (problem) return { ok: false, message: `client_id ${clientId} ${problem}.` };
  if (!allowLoopbackHttp) {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const addresses = isIP(host)
      ? [host]
      : await lookup(host, { all: true, verbatim: true }).then(
          (found) => found.map((entry) => entry.address),
          () => [],
        );
    if (addresses.length === 0) {
      return { ok: false, message: `The host of client_id ${clientId} cannot be resolved.` };
    }
    if (!addresses.every(isPublicAddress)) {
      return {
        ok: false,
        message: `client_id ${clientId} points to a non-public address; a Client ID Metadata Document must be on the public internet.`,
      };
    }
  }
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'error',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(CIMD_TIMEOUT_MS),
    });
  } catch {
    return { ok: false, message: `The client's metadata document at ${clientId} could not be fetched.` };
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    return {
      ok: false,
      message: `The client's metadata document at ${clientId} answered ${response.status}, not 200.`,
    };
  }
  const text = await readCapped(response, CIMD_MAX_BYTES);
  if (text === undefined) {
    return {
      ok: false,
      message: `The client's metadata document at ${clientId} is larger than ${CIMD_MAX_BYTES} bytes.`,
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { ok: false, message: `The client's metadata document at ${clientId} is not JSON.` };
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    return { ok: false, message: `The client's metadata document at ${clientId} is not a JSON object.` };
  }
  const doc = document as Record<string, unknown>;
  if (doc.client_id !== clientId) {
    return {
      ok: false,
      message: `The client's metadata document at ${clientId} names another client_id (${JSON.stringify(doc.client_id)}).`,
    };
  }
  const method = doc.token_endpoint_auth_method;
  if ((method !== undefined && method !== 'none') || doc.client_secret !== undefined) {
    return {
      ok: false,
      message: `The client at ${clientId} is not a public client (token_endpoint_auth_method must be none); this server takes public clients only.`,
    };
  }
  const uris = Array.isArray(doc.redirect_uris)
    ? doc.redirect_uris.filter((uri): uri is string => typeof uri === 'string')
    : [];
  if (uris.length === 0) {
    return { ok: false, message: `The client's metadata document at ${clientId} lists no redirect_uris.` };
  }
  return {
    ok: true,
    client: {
      clientId,
      ...(typeof doc.client_name === 'string' ? { clientName: doc.client_name.slice(0, 200) } : {}),
      redirectUris: uris,
    },
  };
}

/** The client behind a client_id: its metadata document, or its registration here. */
export async function lookUpClient(
  clientId: string,
  options: { store: AuthStore; allowLoopbackHttp: boolean },
): Promise<ClientLookup> {
  if (/^https?:\/\//i.test(clientId) && URL.canParse(clientId)) {
    return fetchMetadataDocument(clientId, options.allowLoopbackHttp);
  }
  const registered = clientId.startsWith(DCR_PREFIX) ? await options.store.client(clientId) : undefined;
  if (!registered) {
    return {
      ok: false,
      message: `Unknown client_id ${JSON.stringify(clientId.slice(0, 200))}: use the URL of a Client ID Metadata Document, or register at the registration endpoint first.`,
    };
  }
  return {
    ok: true,
    client: {
      clientId: registered.clientId,
      ...(registered.clientName !== undefined ? { clientName: registered.clientName } : {}),
      redirectUris: registered.redirectUris,
    },
  };
}

export type RegistrationResult =
  | { ok: true; status: 201; body: Record<string, unknown> }
  | { ok: false; status: 400; body: { error: string; error_description: string } };

const invalid = (error: string, description: string): RegistrationResult => ({
  ok: false,
  status: 400,
  body: { error, error_description: description },
});

/** RFC 7591 registration of a public client. */
export async function registerClient(
  request: unknown,
  options: { store: AuthStore; now: number },
): Promise<RegistrationResult> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return invalid('invalid_client_metadata', 'The registration request must be a JSON object.');
  }
  const meta = request as Record<string, unknown>;
  const uris = meta.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) {
    return invalid('invalid_redirect_uri', 'redirect_uris must list 1 to 10 redirect URIs.');
  }
  for (const uri of uris) {
    if (typeof uri !== 'string' || uri.length > 2000 || !redirectUriAcceptable(uri)) {
      return invalid(
        'invalid_redirect_uri',
        `Redirect URI ${JSON.stringify(uri)} is refused: it must be https, or http to a loopback address (127.0.0.1, [::1], localhost), without a fragment.`,
      );
    }
  }
  const method = meta.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') {
    return invalid(
      'invalid_client_metadata',
      `token_endpoint_auth_method ${JSON.stringify(method)} is not supported: this server registers public clients only (none), which prove themselves with PKCE.`,
    );
  }
  for (const [field, allowed] of [
    ['grant_types', ['authorization_code', 'refresh_token']],
    ['response_types', ['code']],
  ] as const) {
    const value = meta[field];
    if (value === undefined) continue;
    if (!Array.isArray(value) || value.some((v) => !(allowed as readonly unknown[]).includes(v))) {
      return invalid('invalid_client_metadata', `${field} may hold only ${allowed.join(', ')}.`);
    }
  }
  const clientName = typeof meta.client_name === 'string' ? meta.client_name.slice(0, 200) : undefined;
  const clientId = `${DCR_PREFIX}${newOpaqueValue()}`;
  const redirectUris = uris as string[];
  await options.store.putClient({ clientId, clientName, redirectUris, createdAt: options.now });
  return {
    ok: true,
    status: 201,
    body: {
      client_id: clientId,
      client_id_issued_at: Math.floor(options.now / 1000),
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(clientName !== undefined ? { client_name: clientName } : {}),
      ...(typeof meta.scope === 'string' ? { scope: meta.scope } : {}),
    },
  };
}
