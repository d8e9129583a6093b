/**
 * Ranked retrieval over one index: BM25 over every row's text (a child note, annotation or
 * attachment's full text counts for its top-level item), vectors when the index has them,
 * both merged with reciprocal-rank fusion. Each hit says which field or passage matched, and
 * keeps each ranking's own score: which one a hit shows depends on what ran in every library
 * of the search (semantic.ts).
 */
import { decodeVector, type Embedder } from './embeddings.js';
import { reciprocalRankFusion } from './fusion.js';
import { TEXT_COLUMNS, type IndexDb, type TextColumn } from './store.js';
import { CANDIDATE_CAP, planCandidates, type CandidatePlan } from './candidates.js';
import { matchedIn } from './snippet.js';
import { ftsWords } from './terms.js';
import { toolRef } from '../call/refs.js';

/** BM25 weight of each column (TEXT_COLUMNS order): a title hit says more than a full-text one. */
export const WEIGHTS: Readonly<Record<TextColumn, number>> = {
  title: 10,
  creators: 4,
  abstract: 4,
  tags: 5,
  notes: 2,
  annotations: 3,
  fields: 1,
  fulltext: 1,
};

/** Candidates read from each ranking before fusion. */
export const DEPTH = 200;

export interface RankedHit {
  key: string;
  title: string;
  /** Zotero's creatorSummary: `Smith`, `Smith and Jones`, `Smith et al.`; '' without creators. */
  creatorSummary: string;
  /** The year of the item's date, null when it has none. */
  year: string | null;
  itemType: string;
  score: number;
  ranks: { keyword: number | null; vector: number | null };
  /** Where the query matched (keyword hits): the field, the child item holding it, a snippet. */
  matched: { field: TextColumn; itemKey: string; snippet: string } | null;
}

/**
 * A hit with each ranking's score, before one is chosen: `keyword` the BM25 score of its best
 * row (FTS5's bm25() negated, so higher is better), `vector` the cosine similarity of its
 * vector and the query's, `fusion` the reciprocal-rank fusion of both ranks.
 */
export interface ScoredHit extends Omit<RankedHit, 'score'> {
  scores: { keyword: number | null; vector: number | null; fusion: number };
}

export interface VectorState {
  used: boolean;
  model?: string | undefined;
  /** Why vectors were not used (off, not indexed, the embeddings server failed). */
  reason?: string | undefined;
}

export interface RankOptions {
  limit: number;
  mode: 'hybrid' | 'keyword' | 'vector';
  embedder: Embedder | undefined;
  /** Only items of this type / in this collection. */
  itemType?: string | undefined;
  collectionKey?: string | undefined;
}

interface KeywordRow {
  top: string;
  rid: number;
  key: string;
  itemType: string;
  score: number;
}

function keywordRanking(db: IndexDb, plan: CandidatePlan, options: RankOptions): KeywordRow[] {
  const expr = plan.expr;
  if (!expr) return [];
  const weights = TEXT_COLUMNS.map((c) => WEIGHTS[c]).join(', ');
  const filters: string[] = [];
  const params: unknown[] = [expr];
  if (plan.minRowid !== undefined) {
    filters.push('docs.rowid >= CAST(? AS INTEGER)');
    params.push(plan.minRowid);
  }
  const textOnly = filters.length;
  if (options.itemType) {
    filters.push('t.item_type = ?');
    params.push(options.itemType);
  }
  if (options.collectionKey) {
    filters.push('t.rid IN (SELECT rid FROM item_collections WHERE ckey = ?)');
    params.push(options.collectionKey);
  }
  let rows: KeywordRow[];
  if (filters.length === textOnly) {
    // Rank the text alone first (no join for every match: tens of thousands for a common
    // word), then map the best few rows to their items; trashed ones are rare among them.
    const ranked = db
      .prepare(
        `SELECT rowid, bm25(docs, ${weights}) AS score FROM docs WHERE docs MATCH ?
         ${filters.map((f) => `AND ${f}`).join(' ')} ORDER BY score LIMIT ${DEPTH * 5}`,
      )
      .raw()
      .all(...params) as Array<[number, number]>;
    const items = new Map(
      (
        db
          .prepare(
            `SELECT i.rid AS rid, t.key AS top, i.key AS key, i.item_type AS itemType
             FROM items i JOIN items t ON t.key = i.top
             WHERE i.rid IN (SELECT value FROM json_each(?)) AND i.deleted = 0 AND t.deleted = 0`,
          )
          .all(JSON.stringify(ranked.map((r) => r[0]))) as Array<Omit<KeywordRow, 'score'>>
      ).map((r) => [r.rid, r]),
    );
    rows = [];
    for (const [rid, score] of ranked) {
      const item = items.get(rid);
      if (item) rows.push({ ...item, score });
    }
  } else {
    rows = db
      .prepare(
        `SELECT t.key AS top, i.rid AS rid, i.key AS key, i.item_type AS itemType, bm25(docs, ${weights}) AS score
         FROM docs JOIN items i ON i.rid = docs.rowid JOIN items t ON t.key = i.top
         WHERE docs MATCH ? AND i.deleted = 0 AND t.deleted = 0 ${filters.map((f) => `AND ${f}`).join(' ')}
         ORDER BY score LIMIT ${DEPTH * 4}`,
      )
      .all(...params) as KeywordRow[];
  }
  // One entry per top-level item: its best-ranked row.
  const best = new Map<string, KeywordRow>();
  for (const r of rows) if (!best.has(r.top)) best.set(r.top, r);
  return [...best.values()].slice(0, DEPTH);
}

async function vectorRanking(
  db: IndexDb,
  query: string,
  options: RankOptions,
): Promise<{ ranked: Array<{ key: string; score: number }>; state: VectorState }> {
  const embedder = options.embedder;
  if (!embedder) return { ranked: [], state: { used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' } };
  const model = `${embedder.provider}:${embedder.model}`;
  const count = db.prepare('SELECT count(*) FROM vectors WHERE model = ?').pluck().get(model) as number;
  if (count === 0) {
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
  const scored: Array<{ key: string; score: number }> = [];
  const rows = db
    .prepare(
      `SELECT i.key, v.vec FROM vectors v JOIN items i ON i.rid = v.rid
       WHERE v.model = ? AND i.deleted = 0 ${options.itemType ? 'AND i.item_type = ?' : ''}
       ${options.collectionKey ? 'AND i.rid IN (SELECT rid FROM item_collections WHERE ckey = ?)' : ''}`,
    )
    .raw()
    .iterate(
      ...[
        model,
        ...(options.itemType ? [options.itemType] : []),
        ...(options.collectionKey ? [options.collectionKey] : []),
      ],
    ) as Iterable<[string, Buffer]>;
  for (const [key, blob] of rows) {
    const v = decodeVector(blob);
    if (v.length !== q.length) continue;
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * q[i]!;
    scored.push({ key, score: dot });
  }
  scored.sort((a, b) => b.score - a.score);
  return { ranked: scored.slice(0, DEPTH), state: { used: true, model } };
}

/** Which field of a row holds the query best, and a snippet of it (`snippet.ts`). */
function matchedField(db: IndexDb, row: KeywordRow, words: readonly string[]): RankedHit['matched'] {
  const texts = db
    .prepare(`SELECT ${TEXT_COLUMNS.join(', ')} FROM docs WHERE rowid = CAST(? AS INTEGER)`)
    .get(row.rid) as Record<TextColumn, string> | undefined;
  if (!texts) return null;
  const found = matchedIn(texts, words, WEIGHTS, row.itemType === 'note');
  return found ? { field: found.field, itemKey: row.key, snippet: found.snippet } : null;
}

export async function rankIndex(
  db: IndexDb,
  query: string,
  options: RankOptions,
): Promise<{ hits: ScoredHit[]; vectors: VectorState; notice?: string }> {
  const plan = options.mode === 'vector' ? undefined : planCandidates(db, query);
  const keyword = plan ? keywordRanking(db, plan, options) : [];
  const vector =
    options.mode === 'keyword'
      ? { ranked: [], state: { used: false, reason: 'Keyword ranking was asked for.' } as VectorState }
      : await vectorRanking(db, query, options);
  const fused = reciprocalRankFusion([keyword.map((r) => r.top), vector.ranked.map((v) => v.key)]).slice(
    0,
    options.limit,
  );
  const byTop = new Map(keyword.map((r) => [r.top, r]));
  const similarity = new Map(vector.ranked.map((v) => [v.key, v.score]));
  const words = plan?.words ?? ftsWords(query);
  const info = db.prepare(
    `SELECT i.item_type AS itemType, d.title AS title, i.creator_summary AS creatorSummary, i.date_sql AS dateSql
     FROM items i JOIN docs d ON d.rowid = i.rid WHERE i.key = ?`,
  );
  const hits = fused.map((f): ScoredHit => {
    const row = byTop.get(f.id);
    const meta = info.get(f.id) as
      { itemType: string; title: string; creatorSummary: string; dateSql: string } | undefined;
    const year = meta?.dateSql.slice(0, 4);
    return {
      key: f.id,
      title: meta?.title ?? '',
      creatorSummary: meta?.creatorSummary ?? '',
      year: year && year !== '0000' ? year : null,
      itemType: meta?.itemType ?? '',
      // bm25() is lower for better matches (negative): negated, a higher score is a better match.
      scores: { keyword: row ? -row.score : null, vector: similarity.get(f.id) ?? null, fusion: f.score },
      ranks: { keyword: f.ranks[0] ?? null, vector: f.ranks[1] ?? null },
      matched: row && words.length ? matchedField(db, row, words) : null,
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
