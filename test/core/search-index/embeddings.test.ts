/**
 * The embeddings client against the loopback fake (test/support/embeddings-server.ts): both
 * request shapes, batching, rate limits waited out on a fake clock (nothing really waits),
 * typed errors that never quote the key, and the vector helpers.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createRedactor } from '../../../src/core/redact.js';
import {
  cosineTopK,
  createEmbedder,
  decodeVector,
  encodeVector,
  unitVector,
  type Embedder,
} from '../../../src/core/search-index/embeddings.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../support/embeddings-server.js';
import { caught, errorTexts, fakeClock, type FakeClock } from '../zotero/helpers.js';

/** Shaped like an OpenAI project key: it must appear in no message. */
const KEY = 'sk-proj-Abc123SECRETkey456Def789';

let server: EmbeddingsServer;
let clock: FakeClock;
beforeEach(async () => {
  server = await startEmbeddingsServer({ dimension: 32 });
  clock = fakeClock();
});
afterEach(async () => {
  await server.close();
});

function embedder(env: Record<string, string>): Embedder {
  const config = loadConfig({ HOME: '/nonexistent', ZOT_CONFIG_DIR: '/nonexistent', ...env });
  const made = createEmbedder(config, { clock, random: () => 0.5, redact: createRedactor() });
  if (!made) throw new Error('expected an embedder');
  return made;
}

const openai = (env: Record<string, string> = {}) =>
  embedder({
    ZOTEUS_EMBEDDINGS: 'openai',
    ZOTEUS_EMBEDDINGS_URL: server.openaiUrl,
    ZOTEUS_EMBEDDINGS_API_KEY: KEY,
    ...env,
  });
const ollama = (env: Record<string, string> = {}) =>
  embedder({ ZOTEUS_EMBEDDINGS: 'ollama', ZOTEUS_EMBEDDINGS_URL: server.url, ...env });

const texts = (n: number) => Array.from({ length: n }, (_, i) => `text number ${i} about topic ${i % 3}`);
const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe('createEmbedder', () => {
  it('is undefined when ZOTEUS_EMBEDDINGS is off', () => {
    const config = loadConfig({ HOME: '/nonexistent', ZOT_CONFIG_DIR: '/nonexistent' });
    expect(createEmbedder(config, { clock })).toBeUndefined();
  });

  it('names its provider and model', () => {
    expect(openai()).toMatchObject({ provider: 'openai', model: 'text-embedding-3-small' });
    expect(ollama({ ZOTEUS_EMBEDDINGS_MODEL: 'mxbai-embed-large' })).toMatchObject({
      provider: 'ollama',
      model: 'mxbai-embed-large',
    });
  });
});

describe('OpenAI-compatible API', () => {
  it('posts batches of ZOTEUS_EMBEDDINGS_BATCH with the Bearer key and returns unit vectors in order', async () => {
    const input = texts(10);
    const progress: Array<[number, number, number]> = [];
    const vectors = await openai({ ZOTEUS_EMBEDDINGS_BATCH: '4' }).embed(input, {
      onBatch: (done, total, batch) => progress.push([done, total, batch.length]),
    });
    expect(server.log.map((e) => e.inputs.length)).toEqual([4, 4, 2]);
    expect(server.log.map((e) => e.inputs).flat()).toEqual(input);
    expect(server.log.every((e) => e.path === '/v1/embeddings' && e.model === 'text-embedding-3-small')).toBe(
      true,
    );
    expect(server.log.every((e) => e.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(progress).toEqual([
      [4, 10, 4],
      [8, 10, 4],
      [10, 10, 2],
    ]);
    expect(vectors).toHaveLength(10);
    vectors.forEach((v, i) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect([...v]).toEqual([...unitVector(server.embed(input[i]!))]);
    });
  });

  it('puts answers listed out of order back in input order by `index`', async () => {
    await server.close();
    server = await startEmbeddingsServer({ dimension: 32, reverseOrder: true });
    const input = ['red car', 'blue sea', 'green heart'];
    const vectors = await openai().embed(input);
    vectors.forEach((v, i) => expect([...v]).toEqual([...unitVector(server.embed(input[i]!))]));
  });

  it('sends no request for no texts', async () => {
    expect(await openai().embed([])).toEqual([]);
    expect(server.log).toHaveLength(0);
  });

  it('works without a key for servers that need none', async () => {
    const vectors = await embedder({
      ZOTEUS_EMBEDDINGS: 'openai',
      ZOTEUS_EMBEDDINGS_URL: server.openaiUrl,
    }).embed(['one']);
    expect(vectors).toHaveLength(1);
    expect(server.log[0]!.authorization).toBeUndefined();
  });
});

describe('Ollama', () => {
  it('posts {model, input} to /api/embed, reads `embeddings`, and never sends a key', async () => {
    const input = texts(5);
    const vectors = await ollama({ ZOTEUS_EMBEDDINGS_BATCH: '2', OPENAI_API_KEY: KEY }).embed(input);
    expect(server.log.map((e) => [e.path, e.model, e.inputs.length])).toEqual([
      ['/api/embed', 'nomic-embed-text', 2],
      ['/api/embed', 'nomic-embed-text', 2],
      ['/api/embed', 'nomic-embed-text', 1],
    ]);
    expect(server.log.every((e) => e.authorization === undefined)).toBe(true);
    vectors.forEach((v, i) => expect([...v]).toEqual([...unitVector(server.embed(input[i]!))]));
  });

  it('reports a model that is not pulled, with the pull command', async () => {
    await server.close();
    server = await startEmbeddingsServer({ models: ['all-minilm'] });
    const error = await caught(ollama().embed(['x']));
    expect(error.code).toBe('api_error');
    expect(error.message).toContain('model "nomic-embed-text" not found');
    expect(error.hint).toContain('ollama pull nomic-embed-text');
  });
});

describe('rate limits', () => {
  it('waits out a 429 with Retry-After in seconds (fake clock), then succeeds', async () => {
    server.faults.rateLimit({ retryAfter: 7 });
    const vectors = await openai().embed(['a', 'b']);
    expect(vectors).toHaveLength(2);
    expect(clock.sleeps).toEqual([7000]);
    expect(server.log.map((e) => e.status)).toEqual([429, 200]);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    // The fake clock starts on a whole second, as HTTP dates are.
    server.faults.rateLimit({ retryAfter: new Date(clock.now() + 12_000).toUTCString() });
    await ollama().embed(['a']);
    expect(clock.sleeps).toEqual([12_000]);
  });

  it('backs off exponentially on 503s without Retry-After', async () => {
    server.faults.rateLimit({ status: 503, times: 3 });
    await openai().embed(['a']);
    // random() = 0.5: 3/4 of 1 s, 2 s, 4 s.
    expect(clock.sleeps).toEqual([750, 1500, 3000]);
    expect(server.log.map((e) => e.status)).toEqual([503, 503, 503, 200]);
  });

  it('a wait beyond the retry budget is rate_limited at once, naming the batch', async () => {
    server.faults.rateLimit({ retryAfter: 120 });
    const error = await caught(openai({ ZOTEUS_EMBEDDINGS_BATCH: '2' }).embed(texts(5)));
    expect(error.code).toBe('rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterSeconds).toBe(120);
    expect(error.message).toContain('batch 1 of 3 (texts 1-2)');
    expect(clock.sleeps).toEqual([]);
  });

  it('repeated 429s exhaust the budget: rate_limited, and nothing waits beyond it', async () => {
    server.faults.rateLimit({ retryAfter: 2, times: 10 });
    const run = openai({ ZOTEUS_EMBEDDINGS_BATCH: '2', ZOTEUS_RETRY_BUDGET_MS: '5000' });
    const error = await caught(run.embed(texts(5)));
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain('batch 1 of 3');
    expect(error.message).toContain('ZOTEUS_RETRY_BUDGET_MS=5000');
    // Two waits of 2 s fit in 5 s; the third would not.
    expect(clock.sleeps).toEqual([2000, 2000]);
    expect(server.log.map((e) => e.status)).toEqual([429, 429, 429]);
  });

  it('gives up after 10 retries even when the server asks for no wait', async () => {
    server.faults.rateLimit({ retryAfter: 0, times: 20 });
    const error = await caught(ollama().embed(['a']));
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain('after 10 retries');
    expect(server.log).toHaveLength(11);
  });

  it('says which batch failed when the budget runs out after earlier batches succeeded', async () => {
    const done: number[] = [];
    const run = openai({ ZOTEUS_EMBEDDINGS_BATCH: '2', ZOTEUS_RETRY_BUDGET_MS: '3000' });
    const input = texts(5);
    // Let batch 1 through, then throttle: the fault is added once batch 1 is done.
    const error = await caught(
      run.embed(input, {
        onBatch: (n) => {
          done.push(n);
          if (n === 2) server.faults.rateLimit({ retryAfter: 2, times: 5 });
        },
      }),
    );
    expect(done).toEqual([2]);
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain('batch 2 of 3 (texts 3-4)');
    expect(clock.sleeps).toEqual([2000]);
  });
});

describe('auth errors', () => {
  beforeEach(async () => {
    await server.close();
    server = await startEmbeddingsServer({ apiKey: 'sk-the-right-key-000000' });
  });

  it('a refused key is auth_invalid naming the variable, and no text quotes the key', async () => {
    const error = await caught(openai().embed(['a']));
    expect(error.code).toBe('auth_invalid');
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('ZOTEUS_EMBEDDINGS_API_KEY');
    // The fake echoes the whole key in its body, as a careless server would.
    expect(errorTexts(error)).not.toContain(KEY);
    expect(errorTexts(error)).not.toContain('SECRET');
  });

  it('no key at all is auth_missing naming the variables to set', async () => {
    const error = await caught(
      embedder({ ZOTEUS_EMBEDDINGS: 'openai', ZOTEUS_EMBEDDINGS_URL: server.openaiUrl }).embed(['a']),
    );
    expect(error.code).toBe('auth_missing');
    expect(error.hint).toContain('ZOTEUS_EMBEDDINGS_API_KEY (or OPENAI_API_KEY)');
  });

  it('takes OPENAI_API_KEY when ZOTEUS_EMBEDDINGS_API_KEY is unset', async () => {
    const vectors = await embedder({
      ZOTEUS_EMBEDDINGS: 'openai',
      ZOTEUS_EMBEDDINGS_URL: server.openaiUrl,
      OPENAI_API_KEY: 'sk-the-right-key-000000',
    }).embed(['a']);
    expect(vectors).toHaveLength(1);
  });

  it('403 is permission_denied naming the variable', async () => {
    server.faults.status({
      status: 403,
      body: JSON.stringify({ error: { message: `key ${KEY} lacks scope` } }),
    });
    const error = await caught(openai().embed(['a']));
    expect(error.code).toBe('permission_denied');
    expect(error.message).toContain('ZOTEUS_EMBEDDINGS_API_KEY');
    expect(errorTexts(error)).not.toContain(KEY);
  });
});

describe('transport and server errors', () => {
  it('a refused connection is a network_error naming the URL', async () => {
    const dead = await startEmbeddingsServer();
    await dead.close();
    const error = await caught(ollama({ ZOTEUS_EMBEDDINGS_URL: dead.url }).embed(['a']));
    expect(error.code).toBe('network_error');
    expect(error.message).toContain(dead.url);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.hint).toContain('ollama serve');
    expect(clock.sleeps).toEqual([]);
  });

  it('a URL fetch refuses outright says why', async () => {
    // Port 9 is on fetch's list of blocked ports (test/support/cli.ts uses it as a dead end).
    const error = await caught(ollama({ ZOTEUS_EMBEDDINGS_URL: 'http://127.0.0.1:9' }).embed(['a']));
    expect(error.code).toBe('network_error');
    expect(error.message).toContain('bad port');
    expect(clock.sleeps).toEqual([]);
  });

  it('resends after a connection reset', async () => {
    server.faults.reset();
    const vectors = await openai().embed(['a']);
    expect(vectors).toHaveLength(1);
    expect(server.log).toHaveLength(2);
  });

  it('a server slower than ZOTEUS_TIMEOUT_MS is a network_error that says so', async () => {
    server.faults.slow({ ms: 10_000 });
    const error = await caught(openai({ ZOTEUS_TIMEOUT_MS: '200' }).embed(['a']));
    expect(error.code).toBe('network_error');
    expect(error.message).toContain('no answer within 200 ms');
    expect(error.hint).toContain('ZOTEUS_TIMEOUT_MS');
  });

  it('a 500 is a retryable api_error quoting the server', async () => {
    server.faults.status({ status: 500 });
    const error = await caught(openai().embed(['a']));
    expect(error).toMatchObject({ code: 'api_error', retryable: true, status: 500 });
    expect(error.message).toContain('Fault injected: HTTP 500');
  });

  it('a 400 suggests a smaller batch', async () => {
    server.faults.status({ status: 400, body: '{"error":{"message":"too many inputs"}}' });
    const error = await caught(openai().embed(['a']));
    expect(error).toMatchObject({ code: 'api_error', retryable: false });
    expect(error.message).toContain('too many inputs');
    expect(error.hint).toContain('ZOTEUS_EMBEDDINGS_BATCH');
  });

  it('an aborted signal rejects with its reason and sends nothing', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(openai().embed(['a'], { signal: controller.signal })).rejects.toThrow('stop');
    expect(server.log).toHaveLength(0);
  });
});

describe('malformed answers', () => {
  it.each([
    ['count', 'openai', '1 vectors for 2 texts'],
    ['count', 'ollama', '1 vectors for 2 texts'],
    ['nonNumber', 'openai', 'not all numbers'],
    ['dimension', 'ollama', '31-dimension vector where earlier ones had 32'],
    ['notJson', 'openai', 'not JSON'],
  ] as const)('%s (%s) is an api_error saying what is wrong', async (kind, provider, words) => {
    server.faults.malformed({ kind });
    const run = provider === 'openai' ? openai() : ollama();
    const error = await caught(run.embed(['first text', 'second text']));
    expect(error.code).toBe('api_error');
    expect(error.message).toContain(words);
    expect(error.message).toContain('batch 1 of 1');
  });

  it('a later batch of another dimension is an error (the server switched models)', async () => {
    const run = ollama({ ZOTEUS_EMBEDDINGS_BATCH: '1' });
    const error = await caught(
      run.embed(['a', 'b'], { onBatch: () => server.faults.malformed({ kind: 'allDimension' }) }),
    );
    expect(error.code).toBe('api_error');
    expect(error.message).toContain('batch 2 of 2');
    expect(error.message).toContain('33-dimension vector where earlier ones had 32');
  });
});

describe('vectors find what keywords miss', () => {
  it('"automobile exhaust" ranks the car paper first though they share no word', async () => {
    const docs: Array<[string, string]> = [
      ['A', 'Ice sheet loss in Greenland'],
      ['B', 'Cars and their tailpipe emissions in cities'],
      ['C', 'Ocean acidification and coral reefs'],
    ];
    const run = openai();
    const vectors = await run.embed(docs.map(([, t]) => t));
    const [query] = await run.embed(['automobile emission']);
    const ranked = cosineTopK(
      query!,
      docs.map(([id], i) => [id, vectors[i]!] as [string, Float32Array]),
      3,
    );
    expect(ranked[0]!.id).toBe('B');
    const [sea] = await run.embed(['marine acidification']);
    expect(
      cosineTopK(
        sea!,
        docs.map(([id], i) => [id, vectors[i]!] as [string, Float32Array]),
        1,
      )[0]!.id,
    ).toBe('C');
  });
});

describe('cosineTopK', () => {
  const v = (...xs: number[]) => new Float32Array(xs);

  it('ranks by cosine similarity, best first, keeping k', () => {
    const entries: Array<[string, Float32Array]> = [
      ['x', v(1, 0)],
      ['y', v(0, 1)],
      ['diag', v(3, 3)], // not unit length: the norm is computed
      ['minus', v(-1, 0)],
    ];
    const top = cosineTopK(v(2, 0), entries, 2);
    expect(top.map((t) => t.id)).toEqual(['x', 'diag']);
    expect(top[0]!.score).toBeCloseTo(1, 6);
    expect(top[1]!.score).toBeCloseTo(Math.SQRT1_2, 6);
    expect(cosineTopK(v(2, 0), entries, 10).map((t) => t.id)).toEqual(['x', 'diag', 'y', 'minus']);
  });

  it('keeps arrival order for equal scores, scores a zero vector 0, and returns nothing for k < 1', () => {
    const entries: Array<[string, Float32Array]> = [
      ['zero', v(0, 0)],
      ['first', v(1, 1)],
      ['second', v(2, 2)],
    ];
    expect(cosineTopK(v(1, 1), entries, 3).map((t) => [t.id, Math.round(t.score * 1e6) / 1e6])).toEqual([
      ['first', 1],
      ['second', 1],
      ['zero', 0],
    ]);
    expect(cosineTopK(v(1, 1), entries, 0)).toEqual([]);
  });

  it('takes any iterable, such as a generator over stored rows', () => {
    function* rows(): Generator<[string, Float32Array]> {
      for (let i = 0; i < 100; i++) yield [`id${i}`, v(Math.cos(i / 10), Math.sin(i / 10))];
    }
    expect(cosineTopK(v(1, 0), rows(), 3).map((t) => t.id)).toEqual(['id0', 'id63', 'id62']);
  });

  it('refuses vectors of another dimension', () => {
    expect(() => cosineTopK(v(1, 0), [['odd', v(1, 0, 0)]], 1)).toThrow(/3 dimensions where the query has 2/);
  });
});

describe('encodeVector / decodeVector', () => {
  it('stores little-endian float32 and reads it back', () => {
    const bytes = encodeVector(new Float32Array([1, -2.5]));
    expect([...bytes]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0]);
    expect([...decodeVector(bytes)]).toEqual([1, -2.5]);
  });

  it('round-trips a view into a larger buffer and an unaligned Buffer', () => {
    const whole = new Float32Array([9, 0.1, 0.2, 0.3]);
    const view = whole.subarray(1);
    const encoded = encodeVector(view);
    expect(encoded.length).toBe(12);
    const unaligned = Buffer.concat([Buffer.from([7]), encoded]).subarray(1);
    expect([...decodeVector(unaligned)]).toEqual([...view]);
  });

  it('refuses a BLOB whose length is not a multiple of 4', () => {
    expect(() => decodeVector(Buffer.alloc(5))).toThrow(/5 bytes/);
  });
});
