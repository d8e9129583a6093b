/**
 * Ranked retrieval over one owner's PostgreSQL index (`postgres.ts`), the twin of `rank.ts` and
 * `candidates.ts` over the SQLite file: the same candidate plan (rare words decide; only common
 * ones: the CANDIDATE_CAP most recently indexed matches), BM25 computed as FTS5's `bm25()`
 * computes it (k1 = 1.2, b = 0.75, the same field weights, IDF over every row of the library,
 * the row's length in tokens over the average), vectors compared in the database, both merged
 * by the same reciprocal-rank fusion. The answer has the shape of `rankIndex`'s.
 *
 * Vectors: with the pgvector extension installed in the database, `vector` inner product;
 * without it (these machines), the dot product of the `real[]` arrays in SQL. Either way the
 * whole library's vectors are compared (no ANN index), as in the SQLite index.
 */
import { toolRef } from '../call/refs.js';
import type { SqlClient } from '../store/sql.js';
import { CANDIDATE_CAP, PREFIX_TERMS, RARE_DOCS } from './candidates.js';
import { reciprocalRankFusion } from './fusion.js';
import { tsLexeme } from './postgres.js';
import {
  DEPTH,
  WEIGHTS,
  type RankOptions,
  type RankedHit,
  type ScoredHit,
  type VectorState,
} from './rank.js';
import type { RankAnswer, RankedIndex } from './ranked.js';
import { matchedIn } from './snippet.js';
import { keywordWords } from './stopwords.js';
import { TEXT_COLUMNS, type TextColumn } from './store.js';
import { ftsWords } from './terms.js';

/** FTS5's bm25() constants. */
const K1 = 1.2;
const B = 0.75;

interface Plan {
  /** The tsquery of the rows to score; undefined when no query word occurs in the library. */
  tsquery: string | undefined;
  /** The terms BM25 scores (FTS5's phrases), each with its number of rows. */
  terms: Array<{ term: string; docs: number }>;
  minRid: number | undefined;
  capped: { words: string[]; matches: number } | undefined;
  words: string[];
}

interface KeywordRow {
  top: string;
  rid: number;
  key: string;
  itemType: string;
  score: number;
}

/** One owner's rows of a PostgreSQL search index as a RankedIndex. */
export function postgresRankedIndex(db: SqlClient, owner: string): RankedIndex {
  return { engine: 'postgres', rank: (query, options) => rankPgIndex(db, owner, query, options) };
}

/**
 * How many rows hold each term: one GIN count per term (a single pass over the rows holding
 * any of them reads every row's tsvector once per term: ten times slower on 10,000 items).
 */
async function docFreqs(
  db: SqlClient,
  owner: string,
  terms: readonly string[],
): Promise<Map<string, number>> {
  if (terms.length === 0) return new Map();
  const rows = await db.query<{ term: string; n: number }>(
    `SELECT u.term, (SELECT count(*) FROM search_items i WHERE i.owner = ? AND i.tsv @@ u.q::tsquery)::int AS n
     FROM unnest(?::text[], ?::text[]) AS u(term, q)`,
    [owner, terms, terms.map(tsLexeme)],
  );
  return new Map(rows.map((r) => [r.term, Number(r.n)]));
}

async function planCandidates(db: SqlClient, owner: string, query: string): Promise<Plan> {
  const groups: Array<{ word: string; terms: string[]; docs: number }> = [];
  const words = keywordWords(query);
  const exact = await docFreqs(db, owner, words);
  const freq = new Map(exact);
  for (const word of words) {
    const n = exact.get(word) ?? 0;
    if (n > 0) {
      groups.push({ word, terms: [word], docs: n });
      continue;
    }
    const terms = (
      await db.query<{ term: string }>(
        `SELECT term FROM search_terms WHERE owner = ? AND term >= ? AND term < ? ORDER BY term LIMIT ?`,
        [owner, word, `${word}\uffff`, PREFIX_TERMS],
      )
    ).map((r) => r.term);
    const counts = await docFreqs(db, owner, terms);
    for (const [t, c] of counts) freq.set(t, c);
    const docs = terms.reduce((sum, t) => sum + (counts.get(t) ?? 0), 0);
    if (docs > 0) groups.push({ word, terms, docs });
  }
  const found = groups.flatMap((g) => g.terms);
  const none: Plan = { tsquery: undefined, terms: [], minRid: undefined, capped: undefined, words: found };
  if (groups.length === 0) return none;
  const termsOf = (gs: typeof groups) =>
    gs.flatMap((g) => g.terms).map((term) => ({ term, docs: freq.get(term) ?? 0 }));
  const anyOf = (gs: typeof groups) => gs.flatMap((g) => g.terms.map(tsLexeme)).join(' | ');
  const allOf = (gs: typeof groups) => gs.map((g) => `(${g.terms.map(tsLexeme).join(' | ')})`).join(' & ');

  const rare = groups.filter((g) => g.docs <= RARE_DOCS);
  if (rare.length > 0) return { ...none, tsquery: anyOf(rare), terms: termsOf(rare) };

  const newest = async (tsquery: string, offset: number): Promise<number | undefined> => {
    const [row] = await db.query<{ rid: number }>(
      'SELECT rid FROM search_items WHERE owner = ? AND tsv @@ ?::tsquery ORDER BY rid DESC LIMIT 1 OFFSET ?',
      [owner, tsquery, offset],
    );
    return row ? Number(row.rid) : undefined;
  };
  for (const tsquery of groups.length > 1 ? [allOf(groups), anyOf(groups)] : [anyOf(groups)]) {
    const last = await newest(tsquery, CANDIDATE_CAP - 1);
    if (last === undefined) {
      if ((await newest(tsquery, 0)) !== undefined) return { ...none, tsquery, terms: termsOf(groups) };
      continue;
    }
    const matches = Math.max(...groups.map((g) => g.docs));
    return {
      ...none,
      tsquery,
      terms: termsOf(groups),
      minRid: last,
      capped: { words: groups.map((g) => g.word), matches },
    };
  }
  return none;
}

async function keywordRanking(
  db: SqlClient,
  owner: string,
  plan: Plan,
  options: RankOptions,
): Promise<KeywordRow[]> {
  if (!plan.tsquery) return [];
  // The row count and token total of the last update (postgres.ts), else counted now.
  const meta = new Map(
    (
      await db.query<{ k: string; v: string }>(
        "SELECT k, v FROM search_meta WHERE owner = ? AND k IN ('rows', 'tokens')",
        [owner],
      )
    ).map((r) => [r.k, Number(r.v)]),
  );
  let n = meta.get('rows');
  let tokens = meta.get('tokens');
  if (n === undefined || tokens === undefined) {
    const [live] = await db.query<{ n: number; tokens: number }>(
      'SELECT count(*)::int AS n, coalesce(sum(ntok), 0)::bigint AS tokens FROM search_items WHERE owner = ?',
      [owner],
    );
    n = Number(live?.n ?? 0);
    tokens = Number(live?.tokens ?? 0);
  }
  const avgdl = n > 0 && tokens > 0 ? tokens / n : 1;
  // FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), at least 1e-6.
  const idf = plan.terms.map((t) => {
    const v = Math.log((n - t.docs + 0.5) / (t.docs + 0.5));
    return v > 0 ? v : 1e-6;
  });
  const score = `(SELECT coalesce(sum(q.idf * f.f * ${K1 + 1} / (f.f + ${K1} * (${1 - B} + ${B} * i.ntok / ?::float8))), 0)
      FROM unnest(?::text[], ?::float8[]) AS q(term, idf)
      CROSS JOIN LATERAL (SELECT coalesce((i.tf ->> q.term)::float8, 0) AS f) AS f)`;
  const params: unknown[] = [avgdl, plan.terms.map((t) => t.term), idf, owner, plan.tsquery];
  if (plan.minRid !== undefined) params.push(plan.minRid);
  // The matching rows with their term frequencies read once: the score refers to them once per
  // query term, and a TOASTed jsonb is read (and decompressed) again at each reference.
  const matching = `(SELECT owner, rid, key, top, item_type, deleted, ntok, (tf || '{}'::jsonb) AS tf
     FROM search_items WHERE owner = ? AND tsv @@ ?::tsquery ${plan.minRid !== undefined ? 'AND rid >= ?' : ''}
     OFFSET 0) AS i`;
  const filters: string[] = [];
  if (options.itemType) {
    filters.push('t.item_type = ?');
    params.push(options.itemType);
  }
  if (options.collectionKey) {
    filters.push('t.rid IN (SELECT rid FROM search_item_collections WHERE owner = t.owner AND ckey = ?)');
    params.push(options.collectionKey);
  }
  let rows: KeywordRow[];
  if (filters.length === 0) {
    // As rank.ts: the best rows by their text alone, then their items (trashed ones dropped).
    const ranked = await db.query<{ rid: number; score: number }>(
      `SELECT i.rid, ${score} AS score FROM ${matching} ORDER BY score DESC, i.rid LIMIT ${DEPTH * 5}`,
      params,
    );
    const items = new Map(
      (
        await db.query<Omit<KeywordRow, 'score'>>(
          `SELECT i.rid, t.key AS top, i.key, i.item_type AS "itemType"
           FROM search_items i JOIN search_items t ON t.owner = i.owner AND t.key = i.top
           WHERE i.owner = ? AND i.rid = ANY(?::bigint[]) AND i.deleted = 0 AND t.deleted = 0`,
          [owner, ranked.map((r) => Number(r.rid))],
        )
      ).map((r) => [Number(r.rid), r]),
    );
    rows = [];
    for (const r of ranked) {
      const item = items.get(Number(r.rid));
      if (item) rows.push({ ...item, rid: Number(r.rid), score: Number(r.score) });
    }
  } else {
    rows = (
      await db.query<KeywordRow>(
        `SELECT t.key AS top, i.rid, i.key, i.item_type AS "itemType", ${score} AS score
         FROM ${matching} JOIN search_items t ON t.owner = i.owner AND t.key = i.top
         WHERE i.deleted = 0 AND t.deleted = 0 ${filters.map((f) => `AND ${f}`).join(' ')}
         ORDER BY score DESC, i.rid LIMIT ${DEPTH * 4}`,
        params,
      )
    ).map((r) => ({ ...r, rid: Number(r.rid), score: Number(r.score) }));
  }
  const best = new Map<string, KeywordRow>();
  for (const r of rows) if (!best.has(r.top)) best.set(r.top, r);
  return [...best.values()].slice(0, DEPTH);
}

/** Whether the pgvector extension is installed in this database (checked once per client). */
const pgvector = new WeakMap<SqlClient, Promise<boolean>>();
function hasPgvector(db: SqlClient): Promise<boolean> {
  let known = pgvector.get(db);
  if (!known) {
    known = db
      .query("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
      .then((rows) => rows.length > 0)
      .catch(() => false);
    pgvector.set(db, known);
  }
  return known;
}

async function vectorRanking(
  db: SqlClient,
  owner: string,
  query: string,
  options: RankOptions,
): Promise<{ ranked: Array<{ key: string; score: number }>; state: VectorState }> {
  const embedder = options.embedder;
  if (!embedder) return { ranked: [], state: { used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' } };
  const model = `${embedder.provider}:${embedder.model}`;
  const [count] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM search_vectors WHERE owner = ? AND model = ?',
    [owner, model],
  );
  if (Number(count?.n ?? 0) === 0) {
    return {
      ranked: [],
      state: {
        used: false,
        model,
        reason: `The index has no vectors of ${model} yet: bring it up to date with ${toolRef('zotero_index', { action: 'update' })}.`,
      },
    };
  }
  let q: Float32Array;
  try {
    [q] = (await embedder.embed([query])) as [Float32Array];
  } catch (error) {
    return {
      ranked: [],
      state: { used: false, model, reason: `The embeddings server failed: ${(error as Error).message}` },
    };
  }
  const params: unknown[] = [[...q], owner, model, q.length];
  const filters: string[] = [];
  if (options.itemType) {
    filters.push('i.item_type = ?');
    params.push(options.itemType);
  }
  if (options.collectionKey) {
    filters.push('i.rid IN (SELECT rid FROM search_item_collections WHERE owner = i.owner AND ckey = ?)');
    params.push(options.collectionKey);
  }
  const similarity = (await hasPgvector(db))
    ? '-(v.vec::vector <#> ?::real[]::vector)'
    : '(SELECT sum(a::float8 * b::float8) FROM unnest(v.vec, ?::real[]) AS x(a, b))';
  const rows = await db.query<{ key: string; score: number }>(
    `SELECT i.key, ${similarity} AS score FROM search_vectors v
     JOIN search_items i ON i.owner = v.owner AND i.rid = v.rid
     WHERE v.owner = ? AND v.model = ? AND cardinality(v.vec) = ? AND i.deleted = 0
     ${filters.map((f) => `AND ${f}`).join(' ')}
     ORDER BY score DESC, v.rid LIMIT ${DEPTH}`,
    params,
  );
  return { ranked: rows.map((r) => ({ key: r.key, score: Number(r.score) })), state: { used: true, model } };
}

export async function rankPgIndex(
  db: SqlClient,
  owner: string,
  query: string,
  options: RankOptions,
): Promise<RankAnswer> {
  const plan = options.mode === 'vector' ? undefined : await planCandidates(db, owner, query);
  const keyword = plan ? await keywordRanking(db, owner, plan, options) : [];
  const vector =
    options.mode === 'keyword'
      ? { ranked: [], state: { used: false, reason: 'Keyword ranking was asked for.' } as VectorState }
      : await vectorRanking(db, owner, query, options);
  const fused = reciprocalRankFusion([keyword.map((r) => r.top), vector.ranked.map((v) => v.key)]).slice(
    0,
    options.limit,
  );
  const byTop = new Map(keyword.map((r) => [r.top, r]));
  const similarity = new Map(vector.ranked.map((v) => [v.key, v.score]));
  const words = plan?.words ?? ftsWords(query);
  const wantedRids = fused.flatMap((f) => {
    const row = byTop.get(f.id);
    return row ? [row.rid] : [];
  });
  const info = new Map(
    (
      await db.query<{
        key: string;
        itemType: string;
        title: string;
        creatorSummary: string;
        dateSql: string;
      }>(
        `SELECT key, item_type AS "itemType", title, creator_summary AS "creatorSummary", date_sql AS "dateSql"
         FROM search_items WHERE owner = ? AND key = ANY(?::text[])`,
        [owner, fused.map((f) => f.id)],
      )
    ).map((r) => [r.key, r]),
  );
  const texts = new Map(
    wantedRids.length && words.length
      ? (
          await db.query<Record<TextColumn, string> & { rid: number }>(
            `SELECT rid, ${TEXT_COLUMNS.join(', ')} FROM search_items WHERE owner = ? AND rid = ANY(?::bigint[])`,
            [owner, wantedRids],
          )
        ).map((r) => [Number(r.rid), r])
      : [],
  );
  const matched = (row: KeywordRow): RankedHit['matched'] => {
    const t = texts.get(row.rid);
    if (!t) return null;
    const found = matchedIn(t, words, WEIGHTS, row.itemType === 'note');
    return found ? { field: found.field, itemKey: row.key, snippet: found.snippet } : null;
  };
  const hits = fused.map((f): ScoredHit => {
    const row = byTop.get(f.id);
    const meta = info.get(f.id);
    const year = meta?.dateSql.slice(0, 4);
    return {
      key: f.id,
      title: meta?.title ?? '',
      creatorSummary: meta?.creatorSummary ?? '',
      year: year && year !== '0000' ? year : null,
      itemType: meta?.itemType ?? '',
      scores: { keyword: row ? row.score : null, vector: similarity.get(f.id) ?? null, fusion: f.score },
      ranks: { keyword: f.ranks[0] ?? null, vector: f.ranks[1] ?? null },
      matched: row && words.length ? matched(row) : null,
    };
  });
  const capped = plan?.capped;
  return {
    hits,
    vectors: vector.state,
    ...(capped
      ? {
          notice: `${capped.words.join(', ')} occur${capped.words.length === 1 ? 's' : ''} in ${capped.matches.toLocaleString('en-US')} items: keyword ranking scored the ${CANDIDATE_CAP.toLocaleString('en-US')} most recently indexed of them; add a rarer word to rank them all.`,
        }
      : {}),
  };
}
