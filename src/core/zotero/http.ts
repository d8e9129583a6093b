/**
 * One request to the Zotero API, with the layers every call needs stacked around `fetch`:
 * the per-client in-flight limit, the server's Backoff pause, 429/503 retries within the
 * call's budget, a timeout, bounded resends of safe requests after a reset, typed errors and
 * a redacted log line. Everything above (paging, batches, the write engine) goes through here.
 */
import { randomHex } from '../node-crypto.js';
import { ZoteusError } from '../errors.js';
import { createRedactor, type Redactor } from '../redact.js';
import {
  describeTransportError,
  httpError,
  isTimeout,
  networkError,
  rateLimitedError,
  type RequestDescription,
} from './errors.js';
import {
  backoffDelayMs,
  createRateLimiter,
  MAX_NETWORK_RETRIES,
  MAX_RATE_RETRIES,
  networkRetryDelayMs,
  newCall,
  parseBackoff,
  parseRetryAfter,
} from './ratelimit.js';
import { createSemaphore } from './semaphore.js';
import type {
  CallContext,
  Clock,
  FetchLike,
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

export interface Http {
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ZoteroResponse<T>>;
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
  const fetchFn: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const budgetMs = options.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  const random = options.random ?? Math.random;
  const slots = createSemaphore(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
  const rate = createRateLimiter(clock);
  const log = (line: string): void => options.log?.(redact(line));

  async function request<T>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ZoteroResponse<T>> {
    const call = opts.call ?? newCall(budgetMs);
    const split = splitPath(path, opts.query);
    const relative = buildPath(split.path, split.query);
    const desc: RequestDescription = { method, path: relative, origin, redact };
    const headers: Record<string, string> = { ...opts.headers, 'Zotero-API-Version': '3' };
    if (apiKey) headers['Zotero-API-Key'] = apiKey;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    if (opts.ifModifiedSinceVersion !== undefined)
      headers['If-Modified-Since-Version'] = String(opts.ifModifiedSinceVersion);
    if (opts.ifUnmodifiedSinceVersion !== undefined)
      headers['If-Unmodified-Since-Version'] = String(opts.ifUnmodifiedSinceVersion);
    if (opts.writeToken !== undefined) headers['Zotero-Write-Token'] = opts.writeToken;
    // Only a request whose repeat cannot do anything twice may be resent after a reset.
    const resendable = method === 'GET' || method === 'HEAD' || opts.writeToken !== undefined;
    let rateRetries = 0;
    let networkRetries = 0;

    for (;;) {
      await rate.waitUntil(call, rate.pausedUntil, (s) => rateLimitedError(desc, s, 'Backoff'));
      const release = await slots.acquire();
      if (rate.pausedUntil > rate.now()) {
        // A Backoff arrived while this request queued for a slot: it applies to us too.
        release();
        continue;
      }
      const started = performance.now();
      let response: Response;
      let text: string;
      try {
        response = await fetchFn(root + relative, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        release();
        const ms = Math.round(performance.now() - started);
        log(`${method} ${relative} ${isTimeout(error) ? 'timeout' : describeTransportError(error)} ${ms}ms`);
        if (!isTimeout(error) && resendable && networkRetries < MAX_NETWORK_RETRIES) {
          const until = rate.now() + networkRetryDelayMs(networkRetries, random);
          networkRetries++;
          await rate.waitUntil(call, until, () => networkError(desc, error, timeoutMs));
          continue;
        }
        throw networkError(desc, error, timeoutMs);
      }
      release();
      const status = response.status;
      log(`${method} ${relative} ${status} ${Math.round(performance.now() - started)}ms`);

      const backoff = parseBackoff(response.headers);
      if (backoff !== undefined) rate.pauseUntil(rate.now() + backoff);

      if (status === 429 || status === 503) {
        const retryAfter = parseRetryAfter(response.headers, clock.now());
        const wait = retryAfter ?? backoffDelayMs(rateRetries, random);
        if (rateRetries >= MAX_RATE_RETRIES)
          throw rateLimitedError(desc, Math.max(1, Math.ceil(wait / 1000)), `HTTP ${status}`);
        rateRetries++;
        const until = rate.now() + wait;
        // While we wait out a Retry-After, hold this client's other requests too: they would
        // only collect 429s. A call that gives up instead leaves no pause behind.
        await rate.waitUntil(
          call,
          until,
          (s) => rateLimitedError(desc, s, `HTTP ${status}`),
          retryAfter === undefined ? undefined : () => rate.pauseUntil(until),
        );
        continue;
      }

      if ((status >= 200 && status < 300) || status === 304) {
        return {
          status,
          headers: response.headers,
          data: parseBody(text, response.headers) as T,
          text,
          lastModifiedVersion: intHeader(response.headers, 'last-modified-version'),
          totalResults: intHeader(response.headers, 'total-results'),
          links: parseLinks(response.headers.get('link')),
        };
      }

      if (status === 412 && opts.writeToken !== undefined && networkRetries > 0) {
        // The connection broke after the server took the first attempt: the token is spent.
        throw new ZoteusError(
          'conflict',
          redact(
            `${method} ${relative} was resent after a connection reset and the server reports its write token already used: the first attempt was saved, but its answer was lost.`,
          ),
          {
            status,
            retryable: false,
            hint: 'Do not resend: read the library (recently added objects) to find what was created.',
          },
        );
      }
      throw httpError(desc, status, text, opts.field);
    }
  }

  return {
    request,
    newCall: () => newCall(budgetMs),
    redact,
    hasKey: apiKey !== undefined && apiKey !== '',
  };
}
