/**
 * One request to the Zotero API. The layers every call needs (the per-client in-flight limit,
 * the server's Backoff pause, 429/503 and 409 "library locked" retries within the call's
 * budget, a timeout, bounded
 * resends of safe requests after a reset, redirects that keep the key at home, redaction) are
 * the shared outbound HTTP layer's (core/http/send.ts); this file adds what is Zotero's: the
 * headers, the URL, typed errors and the parsed answer. Everything above (paging, batches, the
 * write engine) goes through here.
 */
import { createHttpLayer, excerpt, type BodyStream, type Failures } from '../http/index.js';
import { randomHex } from '../node-crypto.js';
import { ZoteusError } from '../errors.js';
import { createRedactor, type Redactor } from '../redact.js';
import {
  httpError,
  isLockedWrite,
  networkError,
  rateLimitedError,
  throttledError,
  type RequestDescription,
} from './errors.js';
import { newCall } from './ratelimit.js';
import { createSemaphore } from './semaphore.js';
import type {
  CallContext,
  Clock,
  Query,
  RequestOptions,
  ZoteroClientOptions,
  ZoteroResponse,
} from './types.js';

export const DEFAULT_API_URL = 'https://api.zotero.org';
export const DEFAULT_RETRY_BUDGET_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_IN_FLIGHT = 4;

const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A file's bytes as the Web API serves them (`GET …/items/{key}/file`, its redirect followed). */
export interface ZoteroDownload {
  status: number;
  headers: Headers;
  /** The body, chunk by chunk: iterate it once, or cancel it. */
  body: BodyStream;
  /** `Content-Length` of the final answer, when it says. */
  size: number | undefined;
}

export interface Http {
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ZoteroResponse<T>>;
  /**
   * A GET whose 2xx body is streamed, not read as text (a file); redirects to the storage host
   * are followed without the key or any Zotero header. Non-2xx throws as `request` does.
   */
  download(path: string, options?: Pick<RequestOptions, 'call' | 'query' | 'field'>): Promise<ZoteroDownload>;
  /** A fresh call context: one retry budget shared by the requests that carry it. */
  newCall(): CallContext;
  readonly redact: Redactor;
  readonly hasKey: boolean;
}

/** 32 random hex characters: makes a create safe to resend (a reused token answers 412). */
export function newWriteToken(): string {
  return randomHex(16);
}

/** `/users/1/items` + query → `/users/1/items?a=1&b=2`; repeated parameters for arrays. */
/**
 * Lets callers write `/users/1/items?sort=title`: the embedded parameters join the query
 * object (whose values win), so paging, caching and the key check see them all.
 */
export function splitPath(
  path: string,
  query: Query | undefined,
): { path: string; query: Query | undefined } {
  const at = path.indexOf('?');
  if (at < 0) return { path, query };
  const merged: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(path.slice(at + 1))) {
    const prev = merged[name];
    merged[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return { path: path.slice(0, at), query: { ...merged, ...query } };
}

export function buildPath(path: string, query: Query | undefined): string {
  const clean = path.startsWith('/') ? path : `/${path}`;
  if (clean.includes('?')) {
    throw new ZoteusError(
      'internal_error',
      'Internal error in Zoteus (a request path carried its own query string).',
    );
  }
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    // The key goes in a header only: a URL ends up in logs, proxies and browser histories.
    if (/^(key|api_key|apikey)$/i.test(name)) {
      throw new ZoteusError(
        'internal_error',
        'Internal error in Zoteus (an API key was about to be put in a URL).',
      );
    }
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, String(v));
    else params.append(name, String(value));
  }
  const search = params.toString();
  return search ? `${clean}?${search}` : clean;
}

/** `Link: <url>; rel="next", …` → `{next: url, …}`. */
export function parseLinks(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  if (!header) return links;
  for (const part of header.split(',')) {
    const found = /<([^>]*)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (found?.[1] !== undefined && found[2] !== undefined) links[found[2]] = found[1];
  }
  return links;
}

function intHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function parseBody(text: string, headers: Headers): unknown {
  const type = headers.get('content-type') ?? '';
  const looksJson = /json/i.test(type) || /^\s*[[{]/.test(text);
  if (!looksJson || text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function failuresOf(desc: RequestDescription): Failures {
  return {
    rateLimited: (seconds, cause, exhausted) =>
      cause.kind === 'pause'
        ? rateLimitedError(desc, seconds, 'Backoff')
        : cause.asked
          ? rateLimitedError(desc, seconds, `HTTP ${cause.status}`)
          : throttledError(desc, seconds, cause.status, exhausted),
    unreachable: (reason, timedOut) => networkError(desc, reason, timedOut),
  };
}

export function createHttp(options: ZoteroClientOptions = {}): Http {
  const root = (options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
  const apiKey = options.apiKey;
  const redact = (options.redact ?? createRedactor()).with([apiKey]);
  let origin: string;
  try {
    origin = new URL(root).origin;
  } catch {
    throw new ZoteusError('validation_error', redact(`The Zotero API URL '${root}' is not a URL.`), {
      field: 'ZOTERO_API_URL',
    });
  }
  const layer = createHttpLayer({
    fetch: options.fetch,
    clock: options.clock ?? realClock,
    redact,
    log: options.log,
    random: options.random,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    slots: createSemaphore(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT),
    shared: options.shared,
    // The key is the configured server's: a redirect elsewhere goes without it.
    credentialOrigin: origin,
    // Nor do Zotero's own headers (the API version, write tokens, version preconditions): a
    // file's storage server is told nothing of Zotero.
    homeHeaders: (name) => /^(zotero-|if-)/i.test(name),
    // A write that found the library locked by another write applied nothing: wait, send again.
    retry: { backoffHeader: true, waitOut: (status, text, method) => isLockedWrite(method, status, text) },
  });
  const budgetMs = options.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;

  async function request<T>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ZoteroResponse<T>> {
    const split = splitPath(path, opts.query);
    const relative = buildPath(split.path, split.query);
    const desc: RequestDescription = { method, path: relative, origin, redact };
    const headers: Record<string, string> = { ...opts.headers, 'Zotero-API-Version': '3' };
    if (apiKey) headers['Zotero-API-Key'] = apiKey;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    } else if (opts.form !== undefined) {
      body = new URLSearchParams(opts.form).toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    if (opts.ifModifiedSinceVersion !== undefined)
      headers['If-Modified-Since-Version'] = String(opts.ifModifiedSinceVersion);
    if (opts.ifUnmodifiedSinceVersion !== undefined)
      headers['If-Unmodified-Since-Version'] = String(opts.ifUnmodifiedSinceVersion);
    if (opts.writeToken !== undefined) headers['Zotero-Write-Token'] = opts.writeToken;
    const failures = failuresOf(desc);
    return layer.send(
      {
        method,
        url: root + relative,
        server: 'the Zotero API',
        label: relative,
        headers,
        body,
        // Only a request whose repeat cannot do anything twice may be resent after a reset.
        resendable: method === 'GET' || method === 'HEAD' || opts.writeToken !== undefined,
        call: opts.call ?? newCall(budgetMs),
        beforeSend: opts.beforeSend,
        failures,
      },
      (answer) => {
        const { status, text } = answer;
        if ((status >= 200 && status < 300) || status === 304) {
          return {
            status,
            headers: answer.headers,
            data: parseBody(text, answer.headers) as T,
            text,
            lastModifiedVersion: intHeader(answer.headers, 'last-modified-version'),
            totalResults: intHeader(answer.headers, 'total-results'),
            links: parseLinks(answer.headers.get('link')),
          };
        }
        if (status === 412 && opts.writeToken !== undefined && answer.resent) {
          // The connection broke after the server took the first attempt: the token is spent.
          throw new ZoteusError(
            'conflict',
            `${method} ${relative} was resent after a connection reset and the server reports its write token already used: the first attempt was saved, but its answer was lost.`,
            {
              status,
              retryable: false,
              hint: 'Do not resend: read the library (recently added objects) to find what was created.',
            },
          );
        }
        throw httpError(desc, status, text, opts.field);
      },
    );
  }

  async function download(
    path: string,
    opts: Pick<RequestOptions, 'call' | 'query' | 'field'> = {},
  ): Promise<ZoteroDownload> {
    const split = splitPath(path, opts.query);
    const relative = buildPath(split.path, split.query);
    const desc: RequestDescription = { method: 'GET', path: relative, origin, redact };
    const headers: Record<string, string> = { 'Zotero-API-Version': '3' };
    if (apiKey) headers['Zotero-API-Key'] = apiKey;
    return layer.send(
      {
        method: 'GET',
        url: root + relative,
        server: 'the Zotero API',
        label: relative,
        headers,
        resendable: true,
        call: opts.call ?? newCall(budgetMs),
        failures: {
          ...failuresOf(desc),
          broken: (reason, timedOut) =>
            new ZoteusError(
              'network_error',
              redact(
                `The download of GET ${relative} broke off (${reason}${timedOut ? ', no data came' : ''}).`,
              ),
              { hint: 'Ask again: the download starts over from the beginning.' },
            ),
        },
        stream: true,
      },
      (answer) => {
        if (answer.stream && answer.status >= 200 && answer.status < 300) {
          return {
            status: answer.status,
            headers: answer.headers,
            body: answer.stream,
            size: intHeader(answer.headers, 'content-length'),
          };
        }
        const landed = new URL(answer.url).origin;
        if (landed !== origin) {
          // The storage host's answer, not the API's: the key and its permissions are not in question.
          const said = excerpt(answer.text, redact);
          throw new ZoteusError(
            'api_error',
            `The storage server that the Zotero API sent GET ${relative} on to (${landed}) answered HTTP ${answer.status}${said ? `: ${said}` : ''}.`,
            {
              status: answer.status,
              retryable: true,
              hint: 'Ask again: each request gets a fresh, short-lived link to the storage server.',
            },
          );
        }
        throw httpError(desc, answer.status, answer.text, opts.field);
      },
    );
  }

  return {
    request,
    download,
    newCall: () => newCall(budgetMs),
    redact,
    hasKey: apiKey !== undefined && apiKey !== '',
  };
}
