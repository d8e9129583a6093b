/**
 * What a ranked hit's score is (issue 16, point 16): in keyword mode the BM25 score that
 * SQLite FTS5's own bm25() gives the item's best-matching row on the same index, with the
 * documented field weights, negated (higher is better), to six significant digits; in hybrid
 * mode the fusion score Σ 1/(60 + rank); in vector mode the cosine similarity of the query's
 * vector and the item's. Stop words are left out of a query that has other words, and the
 * answer's `mode` says what ran.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createEmbedder, decodeVector } from '../../../src/core/search-index/embeddings.js';
import { indexFile } from '../../../src/core/search-index/store.js';
import type { Deps } from '../../../src/core/tool.js';
import indexTool from '../../../src/tools/search/zotero-index.js';
import semanticTool from '../../../src/tools/search/semantic-search.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../support/embeddings-server.js';
import { SAMPLE_KEYS, SAMPLE_USER, startSample, type Sample } from '../../tools/items/read/setup.js';

type Output = Awaited<ReturnType<typeof semanticTool.run>>;
type Input = Parameters<typeof semanticTool.run>[0];

const GROUP = `groups/${SAMPLE_KEYS.group.groupID}`;
/** The documented field weights (docs/search.md), in the FTS5 columns' order. */
const WEIGHTS = 'title 10, creators 4, abstract 4, tags 5, notes 2, annotations 3, fields 1, fulltext 1';
const BM25 = `bm25(docs, ${WEIGHTS.split(', ')
  .map((w) => w.split(' ')[1])
  .join(', ')})`;

let sample: Sample;
beforeEach(async () => {
  sample = await startSample();
});
afterEach(async () => {
  await sample.close();
});

async function search(input: Input, d: Deps = sample.deps()): Promise<Output> {
  const parsed = semanticTool.input.parse(input);
  semanticTool.check!(parsed, { config: d.config });
  const out = await semanticTool.run(parsed, d);
  expect(semanticTool.output.safeParse(out).success).toBe(true);
  return out;
}

/**
 * BM25 of every top-level item for an FTS5 expression, as FTS5 computes it on the index file:
 * the best (highest, once negated) of the item's own row and its children's rows.
 */
function bm25ByItem(library: string, expr: string): Map<string, number> {
  const db = new Database(indexFile(sample.env().ZOTEUS_DATA_DIR as string, library), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT t.key AS top, -${BM25} AS score FROM docs
         JOIN items i ON i.rid = docs.rowid JOIN items t ON t.key = i.top
         WHERE docs MATCH ? AND i.deleted = 0 AND t.deleted = 0`,
      )
      .all(expr) as Array<{ top: string; score: number }>;
    const best = new Map<string, number>();
    for (const r of rows) best.set(r.top, Math.max(best.get(r.top) ?? -Infinity, r.score));
    return best;
  } finally {
    db.close();
  }
}

const sig6 = (x: number) => Number(x.toPrecision(6));

/** The hits are those FTS5 ranks first, each with FTS5's score, best first. */
function expectBm25(out: Output, expected: Map<string, number>, limit: number) {
  const best = [...expected.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  expect(out.hits.length).toBe(best.length);
  for (const h of out.hits) expect(h.score).toBe(sig6(expected.get(h.key)!));
  const scores = out.hits.map((h) => h.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  expect(scores).toEqual(best.map(([, s]) => sig6(s)));
}

describe('keyword mode: the score is the BM25 score', () => {
  it('hybrid asked with embeddings off: mode "keyword", each score FTS5 bm25() negated, not 1/61', async () => {
    const out = await search({ q: 'Greenland ice sheet' });
    expect(out.mode).toBe('keyword');
    expect(out.libraries[0]!.vectors).toEqual({ used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' });
    const expected = bm25ByItem(SAMPLE_USER, '"greenland" OR "ice" OR "sheet"');
    expect(expected.size).toBeGreaterThan(1);
    expectBm25(out, expected, 10);
    expect(out.hits[0]!.key).toBe(SAMPLE_KEYS.user.items.greenlandArticle);
    expect(out.hits[0]!.score).toBeGreaterThan(1);
    expect(out.hits.map((h) => h.score)).not.toContain(sig6(1 / 61));
    // The ranks stay: the keyword rank is the hit's place, the vector rank null.
    expect(out.hits.map((h) => h.ranks)).toEqual(out.hits.map((_, i) => ({ keyword: i + 1, vector: null })));
    // mode "keyword" asked: the same answer.
    const keyword = await search({ q: 'Greenland ice sheet', mode: 'keyword' });
    expect(keyword.mode).toBe('keyword');
    expect(keyword.hits).toEqual(out.hits);
    // More matches than the limit: the ten FTS5 scores best.
    const many = await search({ q: 'sea level rise' });
    const all = bm25ByItem(SAMPLE_USER, '"sea" OR "level" OR "rise"');
    expect(all.size).toBeGreaterThan(10);
    expectBm25(many, all, 10);
  });

  it('a hit found through a child (the attachment’s title) scores that row’s BM25; limit applies after', async () => {
    const out = await search({ q: 'accepted version', limit: 3 });
    expect(out.hits[0]).toMatchObject({ key: SAMPLE_KEYS.user.items.greenlandArticle });
    expect(out.hits[0]!.matched!.itemKey).not.toBe(SAMPLE_KEYS.user.items.greenlandArticle);
    expectBm25(out, bm25ByItem(SAMPLE_USER, '"accepted" OR "version"'), 3);
  });

  it('stop words beside other words are left out: the same hits and scores as without them', async () => {
    const plain = await search({ q: 'mass balance Greenland' });
    const wordy = await search({ q: 'The mass balance of the Greenland' });
    expect(wordy.hits.map((h) => [h.key, h.score])).toEqual(plain.hits.map((h) => [h.key, h.score]));
    expectBm25(wordy, bm25ByItem(SAMPLE_USER, '"mass" OR "balance" OR "greenland"'), 10);
    // No «the» or «of» marked in a snippet.
    expect(wordy.hits.some((h) => /«(the|of)»/i.test(h.matched?.snippet ?? ''))).toBe(false);
  });

  it('several libraries: every hit keeps its own library’s BM25 score, merged best first', async () => {
    const out = await search({
      q: 'coral reef',
      libraries: [{}, { library_id: SAMPLE_KEYS.group.groupID, library_type: 'group' }],
      limit: 50,
    });
    expect(out.mode).toBe('keyword');
    const user = bm25ByItem(SAMPLE_USER, '"coral" OR "reef"');
    const group = bm25ByItem(GROUP, '"coral" OR "reef"');
    expect(group.size).toBeGreaterThan(0);
    expect(out.hits.length).toBe(user.size + group.size);
    for (const h of out.hits) expect(h.score).toBe(sig6((h.library === GROUP ? group : user).get(h.key)!));
    const scores = out.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});

describe('with vectors', () => {
  let emb: EmbeddingsServer;
  beforeEach(async () => {
    emb = await startEmbeddingsServer({ dimension: 64 });
  });
  afterEach(async () => {
    await emb.close();
  });
  const env = () => ({ ZOTEUS_EMBEDDINGS: 'openai', ZOTEUS_EMBEDDINGS_URL: emb.openaiUrl });

  it('hybrid: mode "hybrid", the score Σ 1/(60 + rank); vector: mode "vector", the cosine similarity', async () => {
    const d = sample.deps({ env: env() });
    await indexTool.run({ action: 'build' }, d);

    const hybrid = await search({ q: 'Greenland ice sheet' }, d);
    expect(hybrid.mode).toBe('hybrid');
    expect(hybrid.libraries[0]!.vectors).toEqual({ used: true, model: 'openai:text-embedding-3-small' });
    for (const h of hybrid.hits) {
      const fused = [h.ranks.keyword, h.ranks.vector].reduce<number>(
        (sum, r) => (r === null ? sum : sum + 1 / (60 + r)),
        0,
      );
      expect(h.score).toBe(sig6(fused));
    }

    const vector = await search({ q: 'Greenland ice sheet', mode: 'vector' }, d);
    expect(vector.mode).toBe('vector');
    // The query's vector as the server gives it, and each item's vector from the index file.
    const embedder = createEmbedder(loadConfig({ ...sample.env(), ...env() }), {
      clock: d.clock,
      redact: d.redact,
      log: d.log,
    })!;
    const [q] = (await embedder.embed(['Greenland ice sheet'])) as [Float32Array];
    const db = new Database(indexFile(sample.env().ZOTEUS_DATA_DIR as string, SAMPLE_USER), {
      readonly: true,
    });
    try {
      const vecOf = db
        .prepare('SELECT v.vec FROM vectors v JOIN items i ON i.rid = v.rid WHERE i.key = ?')
        .pluck();
      expect(vector.hits.length).toBeGreaterThan(0);
      for (const h of vector.hits) {
        const v = decodeVector(vecOf.get(h.key) as Buffer);
        const dot = v.reduce((sum, x, i) => sum + x * q[i]!, 0);
        expect(h.score).toBeCloseTo(dot, 5);
        expect(h.score).toBeLessThanOrEqual(1);
      }
    } finally {
      db.close();
    }
    const scores = vector.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});
