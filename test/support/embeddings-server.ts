/**
 * In-process fake embeddings server (`node:http` on 127.0.0.1, random port) for the vector
 * path: the OpenAI route (`POST /v1/embeddings`) and the Ollama route (`POST /api/embed`).
 * Test code only.
 *
 * Its embeddings are deterministic and carry a little meaning, so ranking tests can show
 * vectors finding what keywords miss: words are folded (case, accents), crudely singularised,
 * mapped through a small synonym table ("automobile" → "car", "ocean" → "sea") and hashed into
 * the vector's dimensions. Texts sharing words or synonyms point the same way. Vectors are
 * deliberately not unit length, so the client's normalisation shows.
 *
 * Like test/support/zotero-server, it logs every request and injects faults: each rule answers
 * the next `times` requests (default 1), in the order the rules were added.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Route = 'openai' | 'ollama';

export interface EmbeddingsRequestLog {
  route: Route | 'unknown';
  method: string;
  path: string;
  /** The Authorization header as received (tests check no key goes to Ollama). */
  authorization: string | undefined;
  model: string | undefined;
  /** The texts of the batch (empty when the body was unreadable). */
  inputs: string[];
  status: number;
  /** The fault that answered, if any. */
  fault?: FaultKind;
}

export type FaultKind = 'rateLimit' | 'status' | 'malformed' | 'reset' | 'slow';
/**
 * `count`: one vector too few; `nonNumber`: a string inside a vector; `dimension`: the last vector
 * one dimension short; `allDimension`: every vector one dimension longer (consistent within the
 * batch, not with earlier ones); `notJson`: a body that is not JSON.
 */
export type Malformation = 'count' | 'nonNumber' | 'dimension' | 'allDimension' | 'notJson';

interface Rule {
  kind: FaultKind;
  remaining: number;
  status?: number;
  body?: string;
  /** Sent as is: seconds (`7`) or an HTTP date. */
  retryAfter?: number | string;
  malformation?: Malformation;
  ms?: number;
}

export interface EmbeddingsFaults {
  /** 429 (or 503) with an optional Retry-After, in the answering route's error format. */
  rateLimit(o?: { times?: number; retryAfter?: number | string; status?: 429 | 503 }): void;
  /** Any status; the body defaults to the route's error format with a generic message. */
  status(o: { status: number; body?: string; times?: number }): void;
  malformed(o: { kind: Malformation; times?: number }): void;
  /** A TCP reset instead of an answer. */
  reset(o?: { times?: number }): void;
  /** Answers normally after `ms` (for timeouts). */
  slow(o: { ms: number; times?: number }): void;
  clear(): void;
}

export interface EmbeddingsServerOptions {
  /** Dimensions of every vector (default 64). */
  dimension?: number;
  /** When set, the OpenAI route answers 401 unless `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** When set, other models answer 404 (as Ollama does for a model not pulled). */
  models?: string[];
  /** OpenAI route: list `data` in reverse order (the client must sort by `index`). */
  reverseOrder?: boolean;
}

export interface EmbeddingsServer {
  /** `http://127.0.0.1:PORT`: the Ollama base URL. */
  url: string;
  /** `${url}/v1`: the OpenAI-compatible base URL. */
  openaiUrl: string;
  log: EmbeddingsRequestLog[];
  faults: EmbeddingsFaults;
  /** The raw (not normalised) vector the server answers for a text. */
  embed(text: string): number[];
  setDimension(dimension: number): void;
  clearLog(): void;
  close(): Promise<void>;
}

/** Each group's words all embed as its first word. */
const SYNONYMS: readonly string[][] = [
  ['car', 'automobile', 'vehicle', 'auto', 'motorcar'],
  ['sea', 'ocean', 'marine', 'maritime'],
  ['doctor', 'physician', 'clinician'],
  ['child', 'kid', 'pediatric', 'paediatric', 'children'],
  ['heart', 'cardiac', 'cardiovascular'],
  ['film', 'movie', 'cinema'],
  ['ice', 'glacier', 'icesheet'],
  ['warming', 'heating'],
];
const CANONICAL = new Map(SYNONYMS.flatMap((group) => group.map((word) => [word, group[0]!] as const)));
/** Words too common to mean anything. */
const STOP = new Set(['a', 'an', 'and', 'the', 'of', 'in', 'on', 'for', 'to', 'with', 'is', 'are', 'by']);

function words(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !STOP.has(w))
    .map((w) => CANONICAL.get(w) ?? CANONICAL.get(singular(w)) ?? singular(w));
}

function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** FNV-1a, 32 bits: a stable hash with no dependency. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function fakeEmbedding(text: string, dimension: number): number[] {
  const v = new Array<number>(dimension).fill(0);
  for (const word of words(text)) {
    // Two slots per word, with signs, so that unrelated words rarely look alike.
    const h = hash(word);
    v[h % dimension]! += h & 0x100 ? 3 : -3;
    const g = hash(`${word}#`);
    v[g % dimension]! += g & 0x100 ? 2 : -2;
  }
  return v;
}

export async function startEmbeddingsServer(
  options: EmbeddingsServerOptions = {},
): Promise<EmbeddingsServer> {
  let dimension = options.dimension ?? 64;
  let rules: Rule[] = [];
  const log: EmbeddingsRequestLog[] = [];
  const pending = new Set<NodeJS.Timeout>();

  const add = (rule: Omit<Rule, 'remaining'>, times = 1): void => {
    if (!(times >= 1)) throw new Error(`times must be at least 1, got ${times}`);
    rules.push({ ...rule, remaining: times });
  };
  const take = (): Rule | undefined => {
    const rule = rules.find((r) => r.remaining > 0);
    if (rule) rule.remaining--;
    rules = rules.filter((r) => r.remaining > 0);
    return rule;
  };

  const httpServer = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const route: EmbeddingsRequestLog['route'] =
      path === '/v1/embeddings' ? 'openai' : path === '/api/embed' ? 'ollama' : 'unknown';
    const entry: EmbeddingsRequestLog = {
      route,
      method: req.method ?? 'GET',
      path,
      authorization: req.headers.authorization,
      model: undefined,
      inputs: [],
      status: 0,
    };
    log.push(entry);
    const raw = await readBody(req);
    let body: { model?: unknown; input?: unknown } | undefined;
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      body = undefined;
    }
    if (typeof body?.model === 'string') entry.model = body.model;
    const input = typeof body?.input === 'string' ? [body.input] : body?.input;
    if (Array.isArray(input)) entry.inputs = input.map(String);

    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      entry.status = status;
      if (res.destroyed) return;
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(text);
    };
    const error = (status: number, message: string, headers: Record<string, string> = {}): void =>
      answer(status, route === 'ollama' ? { error: message } : { error: { message, type: 'fake' } }, headers);

    if (route === 'unknown' || req.method !== 'POST') return error(404, `No route ${req.method} ${path}`);

    let rule = take();
    if (rule?.kind === 'slow') {
      entry.fault = 'slow';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => (pending.delete(timer), resolve()), rule!.ms ?? 0);
        pending.add(timer);
      });
      if (res.destroyed) return;
      rule = undefined;
    }
    if (rule) entry.fault = rule.kind;
    if (rule?.kind === 'reset') {
      // A TCP RST, so the client sees ECONNRESET rather than a clean close.
      req.socket.resetAndDestroy();
      return;
    }
    if (rule?.kind === 'rateLimit') {
      const headers: Record<string, string> = {};
      if (rule.retryAfter !== undefined) headers['Retry-After'] = String(rule.retryAfter);
      return error(rule.status ?? 429, 'Rate limit reached, slow down.', headers);
    }
    if (rule?.kind === 'status') {
      if (rule.body !== undefined) return answer(rule.status ?? 500, rule.body);
      return error(rule.status ?? 500, `Fault injected: HTTP ${rule.status ?? 500}.`);
    }

    if (route === 'openai' && options.apiKey !== undefined) {
      const auth = req.headers.authorization;
      // Like OpenAI, quote the key it got (the real API masks most of it): the client must not
      // copy this body into its messages.
      if (auth !== `Bearer ${options.apiKey}`)
        return error(401, `Incorrect API key provided: ${auth?.replace(/^Bearer /, '') ?? '(none)'}.`);
    }
    if (
      !Array.isArray(input) ||
      !input.every((t) => typeof t === 'string') ||
      typeof body?.model !== 'string'
    )
      return error(400, 'Expected {"model": string, "input": string[]}.');
    if (options.models && !options.models.includes(body.model))
      return error(404, `model "${body.model}" not found, try pulling it first`);

    let vectors: unknown[][] = (input as string[]).map((t) => fakeEmbedding(t, dimension));
    if (rule?.kind === 'malformed') {
      switch (rule.malformation) {
        case 'notJson':
          return answer(200, '<html>Bad gateway</html>');
        case 'count':
          vectors = vectors.slice(1);
          break;
        case 'nonNumber':
          vectors[0]![0] = 'NaN';
          break;
        case 'dimension':
          vectors[vectors.length - 1] = vectors[vectors.length - 1]!.slice(1);
          break;
        case 'allDimension':
          vectors = vectors.map((v) => [...v, 1]);
          break;
      }
    }
    if (route === 'ollama') return answer(200, { model: body.model, embeddings: vectors });
    const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }));
    if (options.reverseOrder) data.reverse();
    return answer(200, {
      object: 'list',
      data,
      model: body.model,
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiUrl: `${url}/v1`,
    log,
    faults: {
      rateLimit: (o = {}) =>
        add({ kind: 'rateLimit', status: o.status ?? 429, retryAfter: o.retryAfter }, o.times),
      status: (o) => add({ kind: 'status', status: o.status, body: o.body }, o.times),
      malformed: (o) => add({ kind: 'malformed', malformation: o.kind }, o.times),
      reset: (o = {}) => add({ kind: 'reset' }, o.times),
      slow: (o) => add({ kind: 'slow', ms: o.ms }, o.times),
      clear: () => {
        rules = [];
      },
    },
    embed: (text) => fakeEmbedding(text, dimension),
    setDimension: (d) => {
      dimension = d;
    },
    clearLog: () => {
      // In place, so a test holding `server.log` sees the cleared array.
      log.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        // Keep-alive sockets would otherwise hold close() open.
        httpServer.closeAllConnections();
        httpServer.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}
