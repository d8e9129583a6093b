/**
 * Text embeddings for vector ranking, from an OpenAI-compatible API (`POST {url}/embeddings`)
 * or an Ollama server (`POST {url}/api/embed`), chosen by ZOTEUS_EMBEDDINGS (docs/search.md).
 *
 * Texts go in batches of ZOTEUS_EMBEDDINGS_BATCH, one request at a time: embedding a library
 * is a background chore, and a single stream of requests is the easiest on a rate limit.
 * Requests go through the shared outbound HTTP layer (core/http/send.ts), as the Zotero
 * client's do: 429/503 answers are waited out (Retry-After or `retry-after-ms` when given, else
 * capped exponential backoff, all charged to one retry budget, ZOTEUS_RETRY_BUDGET_MS, per
 * `embed` call), a reset is resent, redirects never carry the key to another origin, and every
 * error is redacted. Each finished batch is handed to `onBatch`, so a
 * caller that stores vectors as they come can resume after a failure instead of starting over.
 *
 * Every vector returned is scaled to unit length, so cosine similarity is a dot product and
 * vectors from different batches compare fairly. The key travels only in the Authorization
 * header; messages never quote it or the server's body of an auth failure (OpenAI echoes part
 * of a rejected key there).
 */
import { endianness } from 'node:os';
import { EMBEDDINGS_DEFAULTS, type Config } from '../config.js';
import { ZoteusError, type ErrorCode, type ZoteusErrorOptions } from '../errors.js';
import {
  createHttpLayer,
  excerpt as quote,
  MAX_RATE_RETRIES,
  newCall,
  RESETS,
  type CallContext,
  type FetchLike,
  type Failures,
} from '../http/index.js';
import { createRedactor, type Redactor } from '../redact.js';
import type { Deps } from '../tool.js';

export interface EmbedOptions {
  /** Aborts the call: the pending request is cancelled and `embed` rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * After each batch: texts done so far, the total, and that batch's vectors (for texts
   * `done - vectors.length` to `done - 1`), so they can be stored before the next request.
   */
  onBatch?: (done: number, total: number, vectors: readonly Float32Array[]) => void;
}

export interface Embedder {
  readonly provider: 'openai' | 'ollama';
  readonly model: string;
  /**
   * One unit-length vector per text, in input order. Texts should not be empty: OpenAI refuses
   * an empty input, and an empty text has no meaning to rank by anyway.
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
}

export type EmbedderConfig = Pick<
  Config,
  | 'embeddings'
  | 'embeddingsUrl'
  | 'embeddingsModel'
  | 'embeddingsApiKey'
  | 'embeddingsBatch'
  | 'retryBudgetMs'
  | 'timeoutMs'
>;

/**
 * What the embedder needs from `Deps`. Deps carries no `fetch`: tests point the URL at a
 * loopback server instead, and `fetch` is injectable only for callers that need a transport.
 */
export type EmbedderDeps = Pick<Deps, 'clock'> &
  Partial<Pick<Deps, 'redact' | 'log'>> & {
    fetch?: FetchLike;
    /** Jitter of the exponential backoff, in [0, 1). */
    random?: () => number;
  };

/** Which batch a request carries, for messages that say where a long run stopped. */
interface Batch {
  number: number;
  count: number;
  /** 0-based index of its first text; `end` is exclusive. */
  start: number;
  end: number;
}

const KEY_VARS = 'ZOTEUS_EMBEDDINGS_API_KEY (or OPENAI_API_KEY)';

/** The embedder configured by ZOTEUS_EMBEDDINGS, or undefined when vector ranking is off. */
export function createEmbedder(config: EmbedderConfig, deps: EmbedderDeps): Embedder | undefined {
  if (config.embeddings === 'off') return undefined;
  const provider = config.embeddings;
  const url = (config.embeddingsUrl ?? EMBEDDINGS_DEFAULTS[provider].url).replace(/\/+$/, '');
  const model = config.embeddingsModel ?? EMBEDDINGS_DEFAULTS[provider].model;
  // Ollama takes no key: sending an OpenAI key to whatever answers on its port would leak it.
  const apiKey = provider === 'openai' ? config.embeddingsApiKey : undefined;
  const endpoint = provider === 'openai' ? `${url}/embeddings` : `${url}/api/embed`;
  const batchSize = Math.max(1, config.embeddingsBatch);
  const redact = (deps.redact ?? createRedactor()).with([config.embeddingsApiKey]);
  // One layer per embedder: a Retry-After seen by one call holds back the next one too.
  const layer = createHttpLayer({
    fetch: deps.fetch,
    clock: deps.clock,
    redact,
    log: deps.log ? (line) => deps.log?.debug(line) : undefined,
    random: deps.random,
    timeoutMs: config.timeoutMs,
    credentialOrigin: new URL(url).origin,
    // A reset is worth a quick resend (the request changes nothing); a refused connection, an
    // unknown host or a refused URL will not heal in a second, and a timeout took long enough.
    retry: { transient: (reason) => RESETS.has(reason) },
  });
  const server = provider === 'openai' ? `the embeddings server at ${url}` : `the Ollama server at ${url}`;
  // Every vector of one embedder must compare with every other: a changed dimension means the
  // server switched models under us.
  let dimension: number | undefined;

  const where = (b: Batch): string => `batch ${b.number} of ${b.count} (texts ${b.start + 1}-${b.end})`;

  function fail(code: ErrorCode, message: string, hint: string, extra: ZoteusErrorOptions = {}): ZoteusError {
    return new ZoteusError(code, redact(message), { ...extra, hint: redact(hint) });
  }

  function rateLimited(b: Batch, seconds: number, what: string): ZoteusError {
    return fail(
      'rate_limited',
      `${capital(server)} asked to wait ${seconds} s (${what}) before ${where(b)}, beyond this call's retry budget (ZOTEUS_RETRY_BUDGET_MS=${config.retryBudgetMs}).`,
      `Wait ${seconds} seconds, then retry; or raise ZOTEUS_RETRY_BUDGET_MS.`,
      { retryAfterSeconds: seconds },
    );
  }

  function malformed(b: Batch, what: string): ZoteusError {
    return fail(
      'api_error',
      `${capital(server)} answered ${where(b)} with ${what}.`,
      `Check that ZOTEUS_EMBEDDINGS_URL points at ${provider === 'openai' ? 'an OpenAI-compatible' : 'an Ollama'} API and that ZOTEUS_EMBEDDINGS_MODEL ('${model}') is an embedding model.`,
    );
  }

  function httpFailure(b: Batch, status: number, text: string): ZoteusError {
    const base = `${capital(server)} answered HTTP ${status} to ${where(b)}`;
    if (status === 401 || status === 403) {
      // No body: OpenAI quotes part of a rejected key in it.
      if (provider === 'ollama') {
        return fail(
          'permission_denied',
          `${base}: it wants credentials, and Zoteus sends none to Ollama.`,
          'Point ZOTEUS_EMBEDDINGS_URL at the Ollama server itself, or use ZOTEUS_EMBEDDINGS=openai with ZOTEUS_EMBEDDINGS_API_KEY for a server that takes a key.',
          { status },
        );
      }
      if (apiKey === undefined) {
        return fail(
          'auth_missing',
          `${base}: it needs a key, and ${KEY_VARS} is not set.`,
          `Set ${KEY_VARS}.`,
          {
            status,
          },
        );
      }
      return fail(
        status === 401 ? 'auth_invalid' : 'permission_denied',
        status === 401
          ? `${base}: it refused the key in ${KEY_VARS}.`
          : `${base}: the key in ${KEY_VARS} may not use model '${model}' or this endpoint.`,
        `Check ${KEY_VARS} and its permissions at the provider.`,
        { status },
      );
    }
    const said = excerpt(text, redact);
    const message = `${base}${said ? `: ${said}` : ''}.`;
    if (status === 404) {
      return fail(
        'api_error',
        message,
        provider === 'ollama'
          ? `Check ZOTEUS_EMBEDDINGS_URL, and pull the model: \`ollama pull ${model}\` (ZOTEUS_EMBEDDINGS_MODEL).`
          : `Check ZOTEUS_EMBEDDINGS_URL (it ends before /embeddings) and ZOTEUS_EMBEDDINGS_MODEL ('${model}').`,
        { status },
      );
    }
    if (status >= 500) {
      return fail('api_error', message, 'The embeddings server failed on its side; retry in a moment.', {
        status,
        retryable: true,
      });
    }
    return fail(
      'api_error',
      message,
      'The server refused the batch: lower ZOTEUS_EMBEDDINGS_BATCH, shorten the texts or check ZOTEUS_EMBEDDINGS_MODEL.',
      { status },
    );
  }

  /** One batch's answer, parsed as JSON, after rate-limit retries. */
  function post(
    input: readonly string[],
    b: Batch,
    call: CallContext,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (apiKey !== undefined) headers.Authorization = `Bearer ${apiKey}`;
    const failures: Failures = {
      rateLimited: (seconds, cause, exhausted) =>
        cause.kind === 'status' && exhausted
          ? fail(
              'rate_limited',
              `${capital(server)} still answered HTTP ${cause.status} to ${where(b)} after ${MAX_RATE_RETRIES} retries.`,
              `Wait ${seconds} seconds, then retry.`,
              { retryAfterSeconds: seconds, status: cause.status },
            )
          : rateLimited(
              b,
              seconds,
              cause.kind === 'pause' ? 'an earlier Retry-After' : `HTTP ${cause.status}`,
            ),
      unreachable: (reason, timedOut) => unreachable(b, reason, timedOut),
    };
    return layer.send(
      {
        method: 'POST',
        url: endpoint,
        server,
        label: `${endpoint} ${where(b)}`,
        headers,
        body: JSON.stringify({ model, input }),
        resendable: true,
        call,
        signal,
        failures,
      },
      ({ status, text }) => {
        if (status < 200 || status >= 300) throw httpFailure(b, status, text);
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw malformed(b, 'a body that is not JSON');
        }
      },
    );
  }

  function unreachable(b: Batch, reason: string, timedOut = false): ZoteusError {
    return fail(
      'network_error',
      `Could not reach ${server} (POST ${endpoint}, ${where(b)}): ${reason}.`,
      timedOut
        ? 'The server is slow or busy; retry, lower ZOTEUS_EMBEDDINGS_BATCH or raise ZOTEUS_TIMEOUT_MS.'
        : provider === 'ollama'
          ? 'Start Ollama (`ollama serve`) or fix ZOTEUS_EMBEDDINGS_URL; ZOTEUS_EMBEDDINGS=off turns vector ranking off.'
          : 'Check the network and ZOTEUS_EMBEDDINGS_URL; ZOTEUS_EMBEDDINGS=off turns vector ranking off.',
    );
  }

  /** The batch's raw vectors in input order, or the reason they are unusable. */
  function read(answer: unknown, count: number, b: Batch): number[][] {
    let rows: unknown[];
    if (provider === 'openai') {
      const data = (answer as { data?: unknown } | null)?.data;
      if (!Array.isArray(data)) throw malformed(b, 'no "data" array');
      rows = new Array<unknown>(data.length);
      data.forEach((entry: unknown, position) => {
        const index = (entry as { index?: unknown } | null)?.index ?? position;
        // The API documents `index` as the input position; answers need not come in order.
        if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= data.length)
          throw malformed(b, `an entry with index ${JSON.stringify(index)}`);
        if (rows[index as number] !== undefined) throw malformed(b, `index ${index as number} twice`);
        rows[index as number] = (entry as { embedding?: unknown }).embedding;
      });
    } else {
      const embeddings = (answer as { embeddings?: unknown } | null)?.embeddings;
      if (!Array.isArray(embeddings)) throw malformed(b, 'no "embeddings" array');
      rows = embeddings;
    }
    if (rows.length !== count) throw malformed(b, `${rows.length} vectors for ${count} texts`);
    return rows.map((row, i) => {
      if (!Array.isArray(row) || row.length === 0)
        throw malformed(b, `no vector for text ${b.start + i + 1}`);
      if (!row.every((x) => typeof x === 'number' && Number.isFinite(x)))
        throw malformed(b, `a vector that is not all numbers (text ${b.start + i + 1})`);
      if (dimension !== undefined && row.length !== dimension)
        throw malformed(b, `a ${row.length}-dimension vector where earlier ones had ${dimension}`);
      dimension = row.length;
      return row as number[];
    });
  }

  return {
    provider,
    model,
    async embed(texts, options = {}) {
      const out: Float32Array[] = [];
      const count = Math.ceil(texts.length / batchSize);
      const call = newCall(config.retryBudgetMs);
      for (let n = 0; n < count; n++) {
        options.signal?.throwIfAborted();
        const start = n * batchSize;
        const input = texts.slice(start, start + batchSize);
        const b: Batch = { number: n + 1, count, start, end: start + input.length };
        const vectors = read(await post(input, b, call, options.signal), input.length, b).map(unitVector);
        out.push(...vectors);
        options.onBatch?.(out.length, texts.length, vectors);
      }
      return out;
    },
  };
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The server's own words: `error.message` (OpenAI), `error` (Ollama), else the body's start;
 * redacted, then cut (core/http's excerpt).
 */
function excerpt(text: string, redact: Redactor): string {
  let said = text;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown } | null;
    const error = body?.error;
    const message = typeof error === 'string' ? error : (error as { message?: unknown } | null)?.message;
    if (typeof message === 'string') said = message;
    else if (typeof body?.message === 'string') said = body.message;
  } catch {
    // Not JSON: quote the text itself.
  }
  return quote(said, redact);
}

/** Scaled to length 1 (computed in double precision); an all-zero vector stays zero. */
export function unitVector(values: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!;
  const norm = Math.sqrt(sum);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = norm > 0 ? values[i]! / norm : 0;
  return out;
}

/**
 * The `k` vectors most similar to `query` by cosine similarity, best first; equal scores keep
 * the order of `vectors`. Norms are computed rather than assumed, so vectors stored by another
 * tool work too; an all-zero vector scores 0. A vector of another dimension is an error: the
 * vectors then come from two models and their scores would mean nothing.
 */
export function cosineTopK(
  query: Float32Array,
  vectors: Iterable<[id: string, vec: Float32Array]>,
  k: number,
): Array<{ id: string; score: number }> {
  const top: Array<{ id: string; score: number }> = [];
  if (!(k >= 1)) return top;
  const qNorm = Math.sqrt(dot(query, query));
  for (const [id, vec] of vectors) {
    if (vec.length !== query.length) {
      throw new ZoteusError(
        'internal_error',
        `Vector '${id}' has ${vec.length} dimensions where the query has ${query.length}.`,
        { hint: 'The vectors come from different embedding models: rebuild the search index.' },
      );
    }
    const norms = qNorm * Math.sqrt(dot(vec, vec));
    const score = norms > 0 ? dot(query, vec) / norms : 0;
    if (top.length === Math.floor(k) && score <= top[top.length - 1]!.score) continue;
    // Insert after every entry with a score >= this one: ties keep their arrival order.
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (top[mid]!.score >= score) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, { id, score });
    if (top.length > k) top.pop();
  }
  return top;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** Little-endian float32 bytes, for a SQLite BLOB (the same bytes on every machine). */
export function encodeVector(v: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i]!, i * 4);
  return out;
}

/** The inverse of {@link encodeVector}; a length that is not a multiple of 4 is a corrupt BLOB. */
export function decodeVector(b: Buffer): Float32Array {
  if (b.length % 4 !== 0) {
    throw new ZoteusError('internal_error', `A stored vector has ${b.length} bytes, not a multiple of 4.`, {
      hint: 'The search index is damaged: rebuild it.',
    });
  }
  // Copied into a fresh buffer: a Buffer's offset into its pool need not be 4-byte aligned.
  if (LITTLE_ENDIAN) return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const out = new Float32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}
