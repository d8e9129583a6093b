/**
 * The one outbound HTTP layer. Every client of a remote server (the Zotero Web API and the
 * desktop's local API through core/zotero/http.ts, the embeddings server, the metadata
 * resolvers) sends through `createHttpLayer(...).send`, and keeps only what is its own: headers,
 * URLs, the meaning of an answer and the wording of its errors. Stacked around `fetch` here:
 *
 * - an optional in-flight limit, the server's pauses (`Backoff`, `Retry-After`) and the waits
 *   of 429/503 (or the client's statuses, and answers the client says to wait out, such as
 *   Zotero's 409 "library locked"), all charged to the call's retry budget;
 * - a timeout per attempt, an optional caller's abort signal, bounded resends of a request that
 *   may be sent twice after a reset;
 * - redirects followed by hand, at most MAX_REDIRECTS: credentials (and the client's own
 *   `homeHeaders`) go only to the origin they were configured for, and a request that changes
 *   something is never sent to another origin;
 * - `stream`: the final answer's body handed over as chunks as they arrive (a file download),
 *   under the same timeout, applied to each wait for the next chunk, and the same redaction;
 * - redaction: log lines, and every ZoteusError that leaves `send` (its own and those the
 *   client's `read` throws), pass through the redactor, so no client can forget it.
 */
import { isZoteusError, ZoteusError } from '../errors.js';
import type { Redactor } from '../redact.js';
import { isTimeout, redactError, transportReason } from './errors.js';
import {
  backoffDelayMs,
  createRateLimiter,
  MAX_NETWORK_RETRIES,
  MAX_RATE_RETRIES,
  networkRetryDelayMs,
  parseBackoff,
  retryAfterMs,
  type RateLimiter,
} from './ratelimit.js';
import { refuseNonPublic } from './public-address.js';
import type { CallContext, Clock, FetchLike, SharedLimits, Slots } from './types.js';

/** Redirects followed for one request; the next one is refused. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Headers that carry credentials: never sent to an origin other than the configured one, however
 * a client set them.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'zotero-api-key',
]);

export interface RetryPolicy {
  /** Answers waited out and sent again (default 429 and 503). */
  statuses?: ReadonlySet<number>;
  /** Retries of such answers for one request (default MAX_RATE_RETRIES). */
  maxRetries?: number;
  /** A single wait longer than this is not waited out: the request fails at once. */
  maxWaitMs?: number;
  /**
   * Whether a transport failure (by its code, e.g. `ECONNRESET`) is worth an immediate resend of
   * a resendable request. Default: any failure but a timeout, which already took long enough.
   */
  transient?: (reason: string) => boolean;
  /** Honour Zotero's `Backoff: N` header (a pause for every later request to the server). */
  backoffHeader?: boolean;
  /**
   * Other answers that applied nothing and are worth sending again after a wait (Zotero's 409
   * "the target library is locked" to a write), judged by status, body and method. They are waited out like
   * `statuses` (Retry-After, else the backoff), with the same retries and budget, but hold no
   * other request; once the retries or the budget run out, the answer itself goes to `read`.
   */
  waitOut?: (status: number, text: string, method: string) => boolean;
}

export interface HttpLayerOptions {
  clock: Clock;
  /** Applied to every log line and every error that leaves the layer. */
  redact: Redactor;
  timeoutMs: number;
  fetch?: FetchLike | undefined;
  /** Jitter of the backoffs, in [0, 1). */
  random?: (() => number) | undefined;
  /** One line per exchange (method, what, status, ms), already redacted. */
  log?: ((line: string) => void) | undefined;
  slots?: Slots | undefined;
  /** On a deployment of several replicas: the bound and the pauses they share (SharedLimits). */
  shared?: SharedLimits | undefined;
  /**
   * Fetch only public addresses (a shared deployment fetching a URL a caller gave): each request
   * and each redirect hop is refused when its host is loopback, private or reserved.
   */
  publicOnly?: boolean | undefined;
  /**
   * The origin the client's credentials were configured for (its base URL's). Default: the
   * origin of each request's own URL.
   */
  credentialOrigin?: string | undefined;
  retry?: RetryPolicy | undefined;
  /**
   * The client's own headers that, like credentials, stay with the credential origin: a
   * redirect to another host (a file's storage server) goes without them.
   */
  homeHeaders?: ((name: string) => boolean) | undefined;
}

/** Why a wait is needed: a pause the server asked for earlier, or this request's own answer. */
/** `asked`: the answer said how long (Retry-After); else the wait is the layer's own backoff. */
export type WaitCause = { kind: 'pause' } | { kind: 'status'; status: number; asked: boolean };

/** The client's wording of the failures the layer decides on. */
export interface Failures {
  /**
   * A wait the call's budget cannot take (`exhausted` false), or the retries are used up or the
   * wait exceeds `maxWaitMs` (`exhausted` true).
   */
  rateLimited(seconds: number, cause: WaitCause, exhausted: boolean): ZoteusError;
  /** No answer: refused, reset, unknown host, a URL fetch will not take, or a timeout. */
  unreachable(reason: string, timedOut: boolean): ZoteusError;
  /** A streamed body that broke off or stalled after the answer began (default: `unreachable`). */
  broken?(reason: string, timedOut: boolean): ZoteusError;
}

export interface HttpRequest {
  method: string;
  url: string;
  /** Names the server in the layer's own messages: "the Zotero API", "Crossref". */
  server: string;
  /** What log lines and the layer's messages show after the method (default the URL). */
  label?: string | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * A text, or a function opening the bytes afresh (a file's upload): each attempt, resend or
   * redirect sends a new stream, never one an earlier attempt consumed.
   */
  body?: string | (() => ReadableStream<Uint8Array>) | undefined;
  /** Nothing happens twice if it arrives twice (GET, a create with a write token): may be resent after a reset. */
  resendable: boolean;
  /**
   * Runs once, when the request holds its in-flight slot and its first attempt is about to go
   * out. What it throws, `send` rejects with, and nothing was sent (a batch that stopped).
   */
  beforeSend?: (() => void) | undefined;
  call: CallContext;
  /** The caller's abort: `send` rejects with its reason. */
  signal?: AbortSignal | undefined;
  failures: Failures;
  /**
   * A 2xx answer's body is not read as text but handed over as `HttpAnswer.stream`, chunk by
   * chunk (never held whole). Other answers are read as text, as without it.
   */
  stream?: boolean | undefined;
}

/**
 * A streamed body: iterate it once, or cancel it. Each wait for a chunk has the layer's
 * timeout; a failure mid-body is the client's `unreachable` error, redacted. The request's
 * in-flight slot is held until the body ends or is cancelled.
 */
export interface BodyStream extends AsyncIterable<Uint8Array> {
  cancel(): Promise<void>;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** The body as received: parse it, but quote it only through `excerpt` (errors.ts). */
  text: string;
  /** Where the answer came from, after redirects. */
  url: string;
  /** The request was sent again after a transport failure (its first attempt may have landed). */
  resent: boolean;
  /** `stream` requests, 2xx answers: the body (`text` is then empty). */
  stream?: BodyStream | undefined;
}

export interface HttpLayer {
  /**
   * Sends `request` (waits, retries, redirects) and hands the final answer to `read`, which
   * returns the client's result or throws its error. Any ZoteusError out of here is redacted.
   */
  send<T>(request: HttpRequest, read: (answer: HttpAnswer) => T | Promise<T>): Promise<T>;
  readonly redact: Redactor;
  /** The pauses of this server, shared by every request of the layer. */
  readonly rate: RateLimiter;
}

export function createHttpLayer(options: HttpLayerOptions): HttpLayer {
  const { redact, timeoutMs } = options;
  const fetchFn: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const random = options.random ?? Math.random;
  const rate = createRateLimiter(options.clock);
  const policy = options.retry ?? {};
  const statuses = policy.statuses ?? new Set([429, 503]);
  const maxRetries = policy.maxRetries ?? MAX_RATE_RETRIES;
  const maxWaitMs = policy.maxWaitMs ?? Number.POSITIVE_INFINITY;
  const transient = policy.transient ?? (() => true);
  const log = (line: string): void => options.log?.(redact(line));
  const home = options.homeHeaders ?? (() => false);
  const abroad = (headers: Readonly<Record<string, string>>) => withoutCredentials(headers, home);

  /** One attempt: the request and the redirects it is answered with, under one signal. */
  async function exchange(
    request: HttpRequest,
    signal: AbortSignal,
  ): Promise<HttpAnswer & { raw?: ReadableStream<Uint8Array> | null }> {
    const label = request.label ?? request.url;
    const first = new URL(request.url);
    const credentialOrigin = options.credentialOrigin ?? first.origin;
    let url = first;
    let method = request.method;
    let body = request.body;
    let headers = { ...request.headers };
    for (let hop = 0; ; hop++) {
      if (options.publicOnly) await refuseNonPublic(url);
      const started = performance.now();
      const opened = typeof body === 'function' ? body() : body;
      const response = await fetchFn(url.href, {
        method,
        headers: url.origin === credentialOrigin ? headers : abroad(headers),
        body: opened,
        signal,
        redirect: 'manual',
        // A stream goes out as it is read (fetch's `duplex`, not in every RequestInit typing).
        ...(typeof opened === 'object' ? ({ duplex: 'half' } as object) : {}),
      });
      const what = hop === 0 ? label : url.href;
      const location = response.headers.get('location');
      if (!REDIRECT_STATUSES.has(response.status) || location === null) {
        if (request.stream && response.status >= 200 && response.status < 300) {
          log(`${method} ${what} ${response.status} ${Math.round(performance.now() - started)}ms (streamed)`);
          const answer = { status: response.status, headers: response.headers, text: '', url: url.href };
          return { ...answer, resent: false, raw: response.body };
        }
        const text = await response.text();
        log(`${method} ${what} ${response.status} ${Math.round(performance.now() - started)}ms`);
        return { status: response.status, headers: response.headers, text, url: url.href, resent: false };
      }
      // The body of a redirect is never read: drop it and free the connection.
      await response.body?.cancel().catch(() => undefined);
      log(`${method} ${what} ${response.status} ${Math.round(performance.now() - started)}ms`);
      const refuse = (why: string, to?: URL): ZoteusError =>
        new ZoteusError(
          'api_error',
          `${capital(request.server)} redirected ${request.method} ${label}${to ? ` to ${to.origin}${to.pathname}` : ''} (HTTP ${response.status}), and Zoteus did not follow: ${why}.`,
          {
            status: response.status,
            retryable: false,
            hint: 'Check the server URL: point it at the server itself rather than at an address that forwards elsewhere.',
          },
        );
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw refuse('its Location is not a URL');
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw refuse('not an http(s) URL', next);
      if (next.username || next.password) throw refuse('the new URL carries credentials', next);
      if (hop >= MAX_REDIRECTS) throw refuse(`more than ${MAX_REDIRECTS} redirects`, next);
      const reading = method === 'GET' || method === 'HEAD';
      if (!reading) {
        // 301/302/303 would turn a write into a read whose answer looks like success; and the
        // body, library data meant for this server, never goes anywhere else.
        if (response.status !== 307 && response.status !== 308)
          throw refuse(`a ${method} is only followed when the redirect keeps it (307 or 308)`, next);
        if (next.origin !== first.origin)
          throw refuse(`a ${method} is never sent on to another server`, next);
      }
      url = next;
      if (next.origin !== credentialOrigin) headers = abroad(headers);
      if (response.status === 303 && method !== 'HEAD') {
        method = 'GET';
        body = undefined;
      }
    }
  }

  async function deliver(request: HttpRequest): Promise<HttpAnswer> {
    const { call, failures } = request;
    const pause = (seconds: number) => failures.rateLimited(seconds, { kind: 'pause' }, false);
    let rateRetries = 0;
    let networkRetries = 0;
    let first = true;
    for (;;) {
      await rate.waitUntil(call, rate.pausedUntil, pause);
      request.signal?.throwIfAborted();
      const local = options.slots ? await options.slots.acquire() : undefined;
      const shared = options.shared ? await options.shared.acquire() : undefined;
      const release =
        shared || local
          ? () => {
              shared?.release();
              local?.();
            }
          : undefined;
      // Another replica may have been asked to pause: its pause is ours too.
      if (shared) rate.pauseUntil(shared.pausedUntil);
      if (rate.pausedUntil > rate.now()) {
        // A pause arrived while this request queued for a slot: it applies to us too.
        release?.();
        continue;
      }
      if (first) {
        first = false;
        try {
          request.beforeSend?.();
        } catch (error) {
          release?.();
          throw error;
        }
      }
      const started = performance.now();
      const attempt = attemptSignal(timeoutMs, request.signal);
      let answer: (HttpAnswer & { raw?: ReadableStream<Uint8Array> | null }) | undefined;
      let failure: unknown;
      try {
        answer = await exchange(request, attempt.signal);
      } catch (error) {
        failure = error;
      } finally {
        // A streamed body keeps its attempt (the timeout of each chunk) and its slot until it ends.
        if (answer?.raw === undefined) {
          attempt.dispose();
          release?.();
        }
      }
      if (answer === undefined) {
        if (isZoteusError(failure)) throw failure;
        request.signal?.throwIfAborted();
        const timedOut = isTimeout(failure);
        const reason = timedOut ? `no answer within ${timeoutMs} ms` : transportReason(failure);
        const ms = Math.round(performance.now() - started);
        log(`${request.method} ${request.label ?? request.url} ${timedOut ? 'timeout' : reason} ${ms}ms`);
        if (!timedOut && request.resendable && networkRetries < MAX_NETWORK_RETRIES && transient(reason)) {
          const until = rate.now() + networkRetryDelayMs(networkRetries++, random);
          await rate.waitUntil(call, until, () => failures.unreachable(reason, false));
          continue;
        }
        throw failures.unreachable(reason, timedOut);
      }

      if (policy.backoffHeader) {
        const backoff = parseBackoff(answer.headers);
        if (backoff !== undefined) {
          rate.pauseUntil(rate.now() + backoff);
          options.shared?.pause(rate.pausedUntil);
        }
      }
      const locked =
        !statuses.has(answer.status) && policy.waitOut?.(answer.status, answer.text, request.method) === true;
      if (statuses.has(answer.status) || locked) {
        const retryAfter = retryAfterMs(answer.headers, rate.now());
        const cause: WaitCause = { kind: 'status', status: answer.status, asked: retryAfter !== undefined };
        const wait = retryAfter ?? backoffDelayMs(rateRetries, random);
        if (rateRetries >= maxRetries || wait > maxWaitMs) {
          // A waited-out answer that kept coming is the failure itself: the client reads it.
          if (locked) return { ...answer, resent: networkRetries > 0 };
          throw failures.rateLimited(Math.max(1, Math.ceil(wait / 1000)), cause, true);
        }
        rateRetries++;
        const until = rate.now() + wait;
        try {
          // While we wait out a Retry-After, hold this server's other requests too: they would
          // only collect 429s. A call that gives up instead leaves no pause behind. A locked
          // library is one library's state, not the server's: nothing else waits for it.
          await rate.waitUntil(
            call,
            until,
            (seconds) => (locked ? new OutOfBudget() : failures.rateLimited(seconds, cause, false)),
            retryAfter === undefined || locked
              ? undefined
              : () => {
                  rate.pauseUntil(until);
                  options.shared?.pause(until);
                },
          );
        } catch (error) {
          if (error instanceof OutOfBudget) return { ...answer, resent: networkRetries > 0 };
          throw error;
        }
        continue;
      }
      const { raw, ...rest } = answer;
      if (raw === undefined) return { ...rest, resent: networkRetries > 0 };
      const stream = bodyStream(raw, attempt, release, request, timeoutMs, redact);
      return { ...rest, resent: networkRetries > 0, stream };
    }
  }

  return {
    redact,
    rate,
    async send(request, read) {
      let answer: HttpAnswer | undefined;
      try {
        answer = await deliver(request);
        return await read(answer);
      } catch (error) {
        // A body no one will read frees its connection and slot.
        await answer?.stream?.cancel();
        // The one boundary every client's errors cross: whatever a client quoted, no secret leaves.
        throw isZoteusError(error) ? redactError(error, redact) : error;
      }
    },
  };
}

/** The budget cannot take the wait of a waited-out answer: that answer is handed to `read`. */
class OutOfBudget extends Error {}

function withoutCredentials(
  headers: Readonly<Record<string, string>>,
  home: (name: string) => boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase()) && !home(name)) out[name] = value;
  }
  return out;
}

interface Attempt {
  signal: AbortSignal;
  /** The timeout starts again (a streamed body's next chunk arrived). */
  refresh(): void;
  dispose(): void;
}

/**
 * The attempt's signal: the caller's abort or the timeout, whichever comes first. By hand
 * rather than AbortSignal.any/timeout, which cannot be restarted (and Node 20 gained `any`
 * only in 20.3).
 */
function attemptSignal(timeoutMs: number, outer?: AbortSignal): Attempt {
  const controller = new AbortController();
  const fire = () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError'));
  let timer = setTimeout(fire, timeoutMs);
  const onOuter = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuter, { once: true });
  if (outer?.aborted) onOuter();
  return {
    signal: controller.signal,
    refresh: () => {
      clearTimeout(timer);
      timer = setTimeout(fire, timeoutMs);
    },
    dispose: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/** The body of a streamed answer, read chunk by chunk under the attempt's (restarted) timeout. */
function bodyStream(
  raw: ReadableStream<Uint8Array> | null,
  attempt: Attempt,
  release: (() => void) | undefined,
  request: HttpRequest,
  timeoutMs: number,
  redact: Redactor,
): BodyStream {
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    attempt.dispose();
    release?.();
  };
  // Nobody reading (or a stalled server) must not hold the slot for ever: the timeout frees it.
  attempt.signal.addEventListener('abort', finish, { once: true });
  const reader = raw?.getReader();
  return {
    async cancel() {
      finish();
      await reader?.cancel().catch(() => undefined);
    },
    async *[Symbol.asyncIterator]() {
      if (!reader) return finish();
      try {
        for (;;) {
          const chunk = await reader.read().catch((error: unknown) => {
            request.signal?.throwIfAborted();
            const timedOut = attempt.signal.aborted && isTimeout(attempt.signal.reason);
            const reason = timedOut ? `no data for ${timeoutMs} ms` : transportReason(error);
            const { failures } = request;
            const broke = failures.broken
              ? failures.broken(reason, timedOut)
              : failures.unreachable(reason, timedOut);
            throw redactError(broke, redact);
          });
          if (chunk.done) return;
          attempt.refresh();
          yield chunk.value;
        }
      } finally {
        finish();
        await reader.cancel().catch(() => undefined);
      }
    },
  };
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
