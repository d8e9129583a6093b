/**
 * Signing in with a Zotero account: Zotero's OAuth 1.0a handshake (RFC 5849, HMAC-SHA1), as a
 * client. Three steps: a request token for a callback (1), the person approves at Zotero in
 * their browser (2, not signed), and the verifier Zotero hands back is exchanged for an ordinary
 * API key with the user's id and name (3). The client secret, the request token's secret and the
 * API key never appear in a message: none is ever sent (they only key the signature) except
 * the key, which only comes back in a successful answer, and every text quoted from Zotero
 * passes through a redactor that knows all three.
 */
import type * as NodeCrypto from 'node:crypto';
import { builtin } from '../builtin.js';
import { ZoteusError } from '../errors.js';
import { excerpt, transportReason, isTimeout } from '../http/errors.js';
import { randomHex } from '../node-crypto.js';
import { createRedactor, MIN_SECRET_RUN, type Redactor } from '../redact.js';

export const DEFAULT_ZOTERO_OAUTH_URL = 'https://www.zotero.org/oauth';
/** Where a Zotero user registers an application for its client key and secret. */
export const ZOTERO_OAUTH_APPS_URL = 'https://www.zotero.org/oauth/apps';
export const OAUTH_TIMEOUT_MS = 30_000;
/** The label of the key Zotero creates, as the person sees it in their key settings. */
export const ZOTERO_KEY_NAME = 'Zoteus';

export interface ZoteroSignIn {
  /** Step 1: a request token for this callback; returns where to send the browser and the token's secret to keep. */
  begin(
    callbackUrl: string,
  ): Promise<{ authorizeUrl: string; requestToken: string; requestTokenSecret: string }>;
  /** Step 3: exchange the verifier; returns the user's API key (oauth_token_secret), id and name. */
  complete(
    requestToken: string,
    requestTokenSecret: string,
    verifier: string,
  ): Promise<{ apiKey: string; userId: number; username: string }>;
}

export interface ZoteroOAuthSettings {
  clientKey: string;
  clientSecret: string;
  requestUrl: string;
  authorizeUrl: string;
  accessUrl: string;
}

export interface ZoteroSignInDeps {
  fetch?: typeof fetch;
  /** Milliseconds since the epoch (the signature's timestamp is in seconds). */
  now?: () => number;
  nonce?: () => string;
}

/** Name and value, as RFC 5849 §3.4.1.3 lists parameters (a name may repeat). */
export type OAuthParam = readonly [name: string, value: string];

let crypto: typeof NodeCrypto | undefined;
function nodeCrypto(): typeof NodeCrypto {
  // Loaded on first use, as core/node-crypto.ts does: most commands never sign anything.
  return (crypto ??= builtin<typeof NodeCrypto>('node:crypto'));
}

/** RFC 5849 §3.6: UTF-8, then everything but `A-Za-z0-9-._~` as uppercase `%XX`. */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * RFC 5849 §3.4.1.2: lowercase scheme and host, the port only when not the scheme's default,
 * the path, no query and no fragment.
 */
export function baseStringUri(url: string): string {
  const parsed = new URL(url);
  // URL already lowercases scheme and host and drops a default port (80 for http, 443 for https).
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** RFC 5849 §3.4.1.3.2: encoded, sorted by name then value, `n=v` joined with `&`. */
export function normalizeParameters(params: Iterable<OAuthParam>): string {
  const encoded = [...params].map(([n, v]) => [percentEncode(n), percentEncode(v)] as const);
  encoded.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return encoded.map(([n, v]) => `${n}=${v}`).join('&');
}

/**
 * RFC 5849 §3.4.1: `METHOD&enc(URI)&enc(params)`. `params` are the protocol parameters (from the
 * `Authorization` header, without `realm`) and the form body's; the URL's query joins them, and
 * `oauth_signature` is left out wherever it stands.
 */
export function signatureBaseString(method: string, url: string, params: Iterable<OAuthParam>): string {
  const all: OAuthParam[] = [...new URL(url).searchParams];
  for (const param of params) if (param[0] !== 'oauth_signature') all.push(param);
  return [
    method.toUpperCase(),
    percentEncode(baseStringUri(url)),
    percentEncode(normalizeParameters(all)),
  ].join('&');
}

/** RFC 5849 §3.4.2: base64 of HMAC-SHA1 keyed `enc(clientSecret)&enc(tokenSecret)`. */
export function hmacSha1Signature(baseString: string, clientSecret: string, tokenSecret = ''): string {
  const key = `${percentEncode(clientSecret)}&${percentEncode(tokenSecret)}`;
  return nodeCrypto().createHmac('sha1', key).update(baseString).digest('base64');
}

/** RFC 5849 §3.5.1: `OAuth name="value", …`, names and values encoded. */
export function authorizationHeader(params: Iterable<OAuthParam>): string {
  return `OAuth ${[...params].map(([n, v]) => `${percentEncode(n)}="${percentEncode(v)}"`).join(', ')}`;
}

export interface SignOptions {
  method: string;
  url: string;
  clientKey: string;
  clientSecret: string;
  token?: string;
  tokenSecret?: string;
  /** More protocol parameters (`oauth_callback`, `oauth_verifier`), sent in the header. */
  extra?: Readonly<Record<string, string>>;
  /** Form body parameters, which the signature covers too. */
  body?: readonly OAuthParam[];
  /** Seconds since the epoch. */
  timestamp: number;
  nonce: string;
}

/** The protocol parameters of a signed request, `oauth_signature` last. */
export function signRequest(options: SignOptions): OAuthParam[] {
  const params: OAuthParam[] = [
    ['oauth_consumer_key', options.clientKey],
    ['oauth_nonce', options.nonce],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', String(options.timestamp)],
    ['oauth_version', '1.0'],
  ];
  if (options.token !== undefined) params.push(['oauth_token', options.token]);
  for (const [name, value] of Object.entries(options.extra ?? {})) params.push([name, value]);
  const base = signatureBaseString(options.method, options.url, [...params, ...(options.body ?? [])]);
  params.push(['oauth_signature', hmacSha1Signature(base, options.clientSecret, options.tokenSecret)]);
  return params;
}

const KEY_VAR = 'ZOTEUS_ZOTERO_OAUTH_KEY';
const SECRET_VAR = 'ZOTEUS_ZOTERO_OAUTH_SECRET';
const URL_VAR = 'ZOTEUS_ZOTERO_OAUTH_URL';

function setting(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Sign-in with Zotero from the environment: the registered application's client key and secret
 * (both or neither; neither: no sign-in, `undefined`), and the base of Zotero's OAuth endpoints.
 * Never echoes the secret.
 */
export function zoteroOAuthSettings(
  env: Record<string, string | undefined>,
): ZoteroOAuthSettings | undefined {
  const clientKey = setting(env, KEY_VAR);
  const clientSecret = setting(env, SECRET_VAR);
  if (clientKey === undefined && clientSecret === undefined) return undefined;
  if (clientKey === undefined || clientSecret === undefined) {
    const [missing, present] = clientKey === undefined ? [KEY_VAR, SECRET_VAR] : [SECRET_VAR, KEY_VAR];
    throw new ZoteusError(
      'validation_error',
      `${missing} is not set, but ${present} is: signing in with Zotero needs both the client key and the client secret of the application registered at Zotero.`,
      {
        field: missing,
        hint: `Set ${missing} from ${ZOTERO_OAUTH_APPS_URL} (or unset ${present} to turn sign-in with Zotero off).`,
      },
    );
  }
  for (const [name, what, value] of [
    [KEY_VAR, 'client key', clientKey],
    [SECRET_VAR, 'client secret', clientSecret],
  ] as const) {
    if (!/^[\x21-\x7e]+$/.test(value)) {
      throw new ZoteusError(
        'validation_error',
        `${name} is malformed: the ${what} is printable ASCII characters, no spaces or control characters.`,
        { field: name, hint: `Copy the ${what} again from ${ZOTERO_OAUTH_APPS_URL}.` },
      );
    }
  }
  if (clientSecret.length < MIN_SECRET_RUN) {
    throw new ZoteusError(
      'validation_error',
      `${SECRET_VAR} is too short (${clientSecret.length} characters; at least ${MIN_SECRET_RUN} are needed so that it can be redacted from every output).`,
      { field: SECRET_VAR, hint: `Copy the client secret again from ${ZOTERO_OAUTH_APPS_URL}.` },
    );
  }
  const base = (setting(env, URL_VAR) ?? DEFAULT_ZOTERO_OAUTH_URL).replace(/\/+$/, '');
  let parsed: URL | undefined;
  try {
    parsed = new URL(base);
  } catch {
    parsed = undefined;
  }
  if (
    parsed === undefined ||
    !/^https?:$/.test(parsed.protocol) ||
    parsed.search !== '' ||
    parsed.hash !== ''
  ) {
    throw new ZoteusError(
      'validation_error',
      `${URL_VAR} must be the http(s) URL of Zotero's OAuth endpoints without a query, such as ${DEFAULT_ZOTERO_OAUTH_URL}; got '${base}'.`,
      { field: URL_VAR, hint: `Fix or unset ${URL_VAR}.` },
    );
  }
  return {
    clientKey,
    clientSecret,
    requestUrl: `${base}/request`,
    authorizeUrl: `${base}/authorize`,
    accessUrl: `${base}/access`,
  };
}

interface Step {
  n: 1 | 3;
  what: string;
  url: string;
}

/** What to do next, by the `oauth_problem` Zotero names (the Problem Reporting extension) and the step. */
function refusalHint(step: Step, problem: string | undefined): string {
  if (problem === 'nonce_used' || problem === 'timestamp_refused') {
    return "Check this machine's clock, then start the sign-in again.";
  }
  if (step.n === 1) {
    return `Check ${KEY_VAR} and ${SECRET_VAR} against the application registered at ${ZOTERO_OAUTH_APPS_URL}.`;
  }
  if (problem === 'consumer_key_unknown' || problem === 'consumer_key_rejected') {
    return `Check ${KEY_VAR} and ${SECRET_VAR} against the application registered at ${ZOTERO_OAUTH_APPS_URL}.`;
  }
  return 'Start the sign-in again: each sign-in at Zotero can be completed once.';
}

function parseForm(text: string): URLSearchParams | undefined {
  const body = text.trim();
  // A form is `name=value` pairs; an HTML page or JSON is not, whatever its Content-Type says.
  if (!/^[A-Za-z0-9._~%+-]+=[^&\s<>{}]*(?:&[A-Za-z0-9._~%+-]+=[^&\s<>{}]*)*$/.test(body)) return undefined;
  return new URLSearchParams(body);
}

export function zoteroSignIn(settings: ZoteroOAuthSettings, deps: ZoteroSignInDeps = {}): ZoteroSignIn {
  const send = deps.fetch ?? globalThis.fetch;
  const now = deps.now ?? Date.now;
  const nonce = deps.nonce ?? (() => randomHex(16));
  const baseRedact = createRedactor([settings.clientSecret]);

  /** The answer's form fields, or a ZoteusError in the person's terms. */
  async function post(
    step: Step,
    signing: Pick<SignOptions, 'token' | 'tokenSecret' | 'extra'>,
    redact: Redactor,
  ): Promise<URLSearchParams> {
    const origin = new URL(step.url).origin;
    const params = signRequest({
      method: 'POST',
      url: step.url,
      clientKey: settings.clientKey,
      clientSecret: settings.clientSecret,
      ...signing,
      timestamp: Math.floor(now() / 1000),
      nonce: nonce(),
    });
    let response: Response;
    let text: string;
    try {
      response = await send(step.url, {
        method: 'POST',
        headers: { Authorization: authorizationHeader(params), Accept: 'application/x-www-form-urlencoded' },
        redirect: 'manual',
        signal: AbortSignal.timeout(OAUTH_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      const reason = isTimeout(error)
        ? `no answer within ${OAUTH_TIMEOUT_MS / 1000} s`
        : transportReason(error);
      throw new ZoteusError(
        'network_error',
        redact(
          `Could not reach Zotero's sign-in service at ${origin} (step ${step.n} of 3, ${step.what}): ${reason}.`,
        ),
        {
          hint:
            step.n === 1
              ? `Check the network connection and ${URL_VAR}, then retry.`
              : `Check the network connection and ${URL_VAR}, then start the sign-in again.`,
        },
      );
    }
    const status = response.status;
    if (status === 401 || status === 400 || status >= 300) {
      const said = excerpt(text, redact);
      const problem = /(?:^|&)oauth_problem=([a-z_]+)/.exec(text.trim())?.[1];
      const message = redact(
        `Zotero refused step ${step.n} of the sign-in (${step.what}): HTTP ${status}${said ? `: ${said}` : ''}.`,
      );
      if (status === 401) {
        throw new ZoteusError('auth_invalid', message, { hint: redact(refusalHint(step, problem)), status });
      }
      throw new ZoteusError('api_error', message, {
        status,
        retryable: status >= 500,
        hint:
          status >= 500
            ? 'Zotero failed on its side; retry in a moment.'
            : `Zotero did not take the request as its OAuth endpoint should: check ${URL_VAR}.`,
      });
    }
    const form = status >= 200 && status < 300 ? parseForm(text) : undefined;
    if (form === undefined) {
      const type = response.headers.get('content-type') ?? 'no Content-Type';
      // A 2xx body may hold the token's secret or the key: it is described, never quoted.
      throw new ZoteusError(
        'api_error',
        `Zotero's sign-in service at ${origin} answered step ${step.n} of the sign-in (${step.what}) with HTTP ${status} and ${type}, not the form it answers with.`,
        { status, hint: `Check ${URL_VAR}: it must lead to Zotero's OAuth endpoints.` },
      );
    }
    return form;
  }

  function malformed(step: Step, missing: string): ZoteusError {
    return new ZoteusError(
      'api_error',
      `Zotero's answer to step ${step.n} of the sign-in (${step.what}) lacks ${missing}.`,
      { hint: `Check ${URL_VAR}: it must lead to Zotero's OAuth endpoints.` },
    );
  }

  function required(name: string, value: string): void {
    if (value === '') {
      throw new ZoteusError('validation_error', `The sign-in with Zotero needs a non-empty ${name}.`, {
        field: name,
      });
    }
  }

  return {
    async begin(callbackUrl) {
      let callback: URL | undefined;
      try {
        callback = new URL(callbackUrl);
      } catch {
        callback = undefined;
      }
      if (callback === undefined || !/^https?:$/.test(callback.protocol)) {
        throw new ZoteusError(
          'validation_error',
          `The callback of a sign-in with Zotero must be an absolute http(s) URL; got '${callbackUrl}'.`,
          { field: 'oauth_callback' },
        );
      }
      const step: Step = { n: 1, what: 'getting a request token', url: settings.requestUrl };
      const form = await post(step, { extra: { oauth_callback: callbackUrl } }, baseRedact);
      const requestToken = form.get('oauth_token') ?? '';
      const requestTokenSecret = form.get('oauth_token_secret') ?? '';
      if (requestToken === '') throw malformed(step, 'oauth_token');
      if (requestTokenSecret === '') throw malformed(step, 'oauth_token_secret');
      if (form.get('oauth_callback_confirmed') !== 'true')
        throw malformed(step, 'oauth_callback_confirmed=true');
      const authorize = new URL(settings.authorizeUrl);
      const options: Array<[string, string]> = [
        ['oauth_token', requestToken],
        // Pre-filled only: the person may change them at Zotero, so what the key can do is
        // read from the key itself afterwards.
        ['library_access', '1'],
        ['notes_access', '1'],
        ['write_access', '1'],
        ['all_groups', 'write'],
        ['name', ZOTERO_KEY_NAME],
      ];
      for (const [name, value] of options) authorize.searchParams.set(name, value);
      return { authorizeUrl: authorize.toString(), requestToken, requestTokenSecret };
    },

    async complete(requestToken, requestTokenSecret, verifier) {
      required('oauth_token', requestToken);
      required('oauth_token_secret', requestTokenSecret);
      required('oauth_verifier', verifier);
      const step: Step = { n: 3, what: 'exchanging the verifier for an API key', url: settings.accessUrl };
      const redact = baseRedact.with([requestTokenSecret]);
      const form = await post(
        step,
        { token: requestToken, tokenSecret: requestTokenSecret, extra: { oauth_verifier: verifier } },
        redact,
      );
      const apiKey = form.get('oauth_token_secret') ?? '';
      const userID = form.get('userID') ?? '';
      const username = form.get('username') ?? '';
      if (apiKey === '') throw malformed(step, 'oauth_token_secret (the API key)');
      if (!/^[1-9][0-9]{0,15}$/.test(userID) || !Number.isSafeInteger(Number(userID)))
        throw malformed(step, 'a userID');
      if (username === '') throw malformed(step, 'a username');
      return { apiKey, userId: Number(userID), username };
    },
  };
}
