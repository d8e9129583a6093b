/**
 * The one door of the metadata services (Crossref, OpenAlex, arXiv, Semantic Scholar) to the
 * network: every request goes through the shared outbound HTTP layer (core/http/send.ts), so
 * 429 and `Retry-After` are waited out within the call's retry budget like every other client's.
 * Each service gets one layer per deps (`deps.services`), with its own in-flight limit and
 * its own pace (requests started per second), as its terms ask (metadata-services.md):
 *
 * | service                  | in flight | started per second                 |
 * | ------------------------ | --------- | ---------------------------------- |
 * | Crossref lists, polite   | 3         | 3 (with ZOTEUS_CROSSREF_MAILTO)    |
 * | Crossref lists, public   | 1         | 1                                  |
 * | OpenAlex singletons      | 10        | 50 (its cap is 100)                |
 * | arXiv                    | 1         | one request every 3 seconds        |
 * | Semantic Scholar         | 1         | 1                                  |
 *
 * A service's answers that are not what it serves (HTML, truncated JSON) are `api_error`
 * naming it; no answer at all is `network_error` naming it. No Zotero credential is ever sent.
 */
import { ZoteusError } from '../errors.js';
import { createHttpLayer, newCall, type CallContext, type HttpLayer, type Slots } from '../http/index.js';
import { createSemaphore } from '../zotero/semaphore.js';
import type { Clock, Deps } from '../tool.js';

export type ServiceId = 'crossref' | 'openalex' | 'arxiv' | 'semantic-scholar';

/** How each service is named in messages. */
export const SERVICE_NAMES: Record<ServiceId, string> = {
  crossref: 'Crossref',
  openalex: 'OpenAlex',
  arxiv: 'arXiv',
  'semantic-scholar': 'Semantic Scholar',
};

/** The variable that points Zoteus at each service. */
export const SERVICE_URL_VARIABLES: Record<ServiceId, string> = {
  crossref: 'ZOTEUS_CROSSREF_URL',
  openalex: 'ZOTEUS_OPENALEX_URL',
  arxiv: 'ZOTEUS_ARXIV_URL',
  'semantic-scholar': 'ZOTEUS_SEMANTIC_SCHOLAR_URL',
};

export interface Pace {
  /** Requests on the wire at once. */
  inFlight: number;
  /** Least time between the starts of two requests (ms). */
  intervalMs: number;
}

/** Each service's limits (see the table above). */
export function paceOf(service: ServiceId, deps: Pick<Deps, 'config'>): Pace {
  switch (service) {
    case 'crossref':
      return deps.config.resolvers.mailto
        ? { inFlight: 3, intervalMs: Math.ceil(1000 / 3) }
        : { inFlight: 1, intervalMs: 1000 };
    case 'openalex':
      return { inFlight: 10, intervalMs: 20 };
    case 'arxiv':
      return { inFlight: 1, intervalMs: 3000 };
    case 'semantic-scholar':
      return { inFlight: 1, intervalMs: 1000 };
  }
}

/** Attempts of one request (network errors, 429, 502-504) before its entries fail. */
const MAX_ATTEMPTS = 4;
/** A Retry-After longer than this is not waited out: the entries fail as `rate_limited`. */
const MAX_WAIT_MS = 60_000;
const BUSY: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * In-flight slots that also keep the pace: a slot is handed out no sooner than `intervalMs`
 * after the previous one (every attempt, retries included, takes one).
 */
export function pacedSlots(pace: Pace, clock: Clock): Slots {
  const semaphore = createSemaphore(pace.inFlight);
  let nextStart = Number.NEGATIVE_INFINITY;
  return {
    async acquire() {
      const release = await semaphore.acquire();
      const now = clock.now();
      const at = Math.max(now, nextStart);
      nextStart = at + pace.intervalMs;
      if (at > now) await clock.sleep(at - now);
      return release;
    },
  };
}

export interface ServiceClient {
  service: ServiceId;
  name: string;
  /** Answers received (after any retries), for benchmarks. */
  readonly sent: number;
  /**
   * One request; the answer's status and text (non-2xx statuses other than the retried ones
   * are returned too). Throws `network_error` or `rate_limited` naming the service.
   */
  request(
    call: CallContext,
    options: {
      method?: 'GET' | 'POST';
      url: string;
      /** What log lines and messages show instead of the URL (one without a key in it). */
      label?: string;
      headers?: Record<string, string>;
      body?: string;
    },
  ): Promise<{ status: number; text: string }>;
}

/** The client of `service` for these deps: one per deps, so its pace holds across calls of a server. */
export function serviceClient(
  deps: Pick<Deps, 'config' | 'clock' | 'redact' | 'log' | 'services' | 'version'>,
  service: ServiceId,
  secrets: ReadonlyArray<string | undefined> = [],
): Promise<ServiceClient> {
  return deps.services.get<ServiceClient>(`metadata:${service}`, () => {
    const name = SERVICE_NAMES[service];
    const redact = deps.redact.with([...secrets]);
    const layer: HttpLayer = createHttpLayer({
      clock: deps.clock,
      redact,
      log: (line) => deps.log.debug(line),
      timeoutMs: deps.config.timeoutMs,
      slots: pacedSlots(paceOf(service, deps), deps.clock),
      retry: { statuses: BUSY, maxRetries: MAX_ATTEMPTS - 1, maxWaitMs: MAX_WAIT_MS },
    });
    const mailto = deps.config.resolvers.mailto;
    const userAgent = `Zoteus/${deps.version}${mailto ? ` (mailto:${mailto})` : ''}`;
    let sent = 0;
    // A service that refused the connection (nothing listens), whose name did not resolve, or
    // whose port fetch will never use is down for the rest of that call: its other requests
    // fail at once with the same error, instead of each waiting out its own resends. A reset
    // or a timeout stays per request.
    const down = new WeakMap<CallContext, ZoteusError>();
    const client: ServiceClient = {
      service,
      name,
      get sent() {
        return sent;
      },
      async request(call, options) {
        const known = down.get(call);
        if (known) throw known;
        const origin = new URL(options.url).origin;
        try {
          return await send(call, options, origin);
        } catch (error) {
          if (
            error instanceof ZoteusError &&
            error.code === 'network_error' &&
            /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN)\b|: bad port\.$/.test(error.message)
          )
            down.set(call, error);
          throw error;
        }
      },
    };
    function send(
      call: CallContext,
      options: Parameters<ServiceClient['request']>[1],
      origin: string,
    ): Promise<{ status: number; text: string }> {
      return layer.send(
        {
          method: options.method ?? 'GET',
          url: options.url,
          label: options.label,
          server: name,
          headers: { 'User-Agent': userAgent, ...options.headers },
          body: options.body,
          // GETs, and Semantic Scholar's batch read (a POST that changes nothing).
          resendable: true,
          call,
          failures: {
            rateLimited: (seconds, cause) =>
              cause.kind === 'status' && cause.status !== 429
                ? serviceFailed(name, cause.status)
                : new ZoteusError('rate_limited', `${name} is throttling requests (HTTP 429).`, {
                    retryAfterSeconds: seconds,
                    hint: `Wait ${seconds} seconds, then retry.`,
                  }),
            unreachable: (reason) =>
              new ZoteusError('network_error', `Could not reach ${name} (${origin}): ${reason}.`, {
                hint: `Check the network (and ${SERVICE_URL_VARIABLES[service]}), then retry.`,
              }),
          },
        },
        ({ status, text }) => {
          sent += 1;
          return { status, text };
        },
      );
    }
    return client;
  });
}

/** A new call context: the retry budget every request of one check shares. */
export function serviceCall(deps: Pick<Deps, 'config'>): CallContext {
  return newCall(deps.config.retryBudgetMs);
}

/** A status the service answered that is neither success nor "not found". */
export function serviceFailed(name: string, status: number): ZoteusError {
  if (status >= 500) {
    return new ZoteusError('api_error', `${name} failed on its side (HTTP ${status}).`, {
      retryable: true,
      status,
      hint: 'Retry in a moment.',
    });
  }
  return new ZoteusError('api_error', `${name} refused the request (HTTP ${status}).`, { status });
}

/** An answer that is not the JSON the service serves (an HTML page, a cut-off body). */
export function notJson(name: string, service: ServiceId): ZoteusError {
  return new ZoteusError('api_error', `${name} answered with something that is not its JSON.`, {
    retryable: true,
    hint: `Retry in a moment; if it persists, check ${SERVICE_URL_VARIABLES[service]}.`,
  });
}

/** The JSON object of an answer, or `api_error` naming the service. */
export function parseObject(
  client: Pick<ServiceClient, 'name' | 'service'>,
  text: string,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw notJson(client.name, client.service);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw notJson(client.name, client.service);
  return value as Record<string, unknown>;
}

export function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export function str(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** Runs `work` over `batches` with at most `parallel` at once (the client's slots keep the pace). */
export async function eachBatch<T>(
  batches: readonly T[],
  parallel: number,
  work: (batch: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(parallel, batches.length) }, async () => {
    while (next < batches.length) {
      const index = next++;
      await work(batches[index] as T, index);
    }
  });
  await Promise.all(lanes);
}

export function chunk<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}
