/**
 * Ranked retrieval over one index: BM25 over every row's text (a child note, annotation or
 * attachment's full text counts for its top-level item), vectors when the index has them,
 * both merged with reciprocal-rank fusion. Each hit says which field or passage matched.
 */
import { decodeVector, type Embedder } from './embeddings.js';
import { reciprocalRankFusion } from './fusion.js';
import { TEXT_COLUMNS, type IndexDb, type TextColumn } from './store.js';
import { ftsQuote, ftsWords } from './terms.js';

/** BM25 weight of each column (TEXT_COLUMNS order): a title hit says more than a full-text one. */
const WEIGHTS: Readonly<Record<TextColumn, number>> = {
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
const DEPTH = 200;

export interface RankedHit {
  key: string;
  title: string;
  itemType: string;
  score: number;
  ranks: { keyword: number | null; vector: number | null };
  /** Where the query matched (keyword hits): the field, the child item holding it, a snippet. */
  matched: { field: TextColumn; itemKey: string; snippet: string } | null;
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

/** The query as FTS5 prefix terms, any of which may match (BM25 ranks rows with more first). */
export function keywordExpression(query: string): string | undefined {
  const words = ftsWords(query);
  return words.length ? words.map((w) => `${ftsQuote(w)}*`).join(' OR ') : undefined;
}

function keywordRanking(db: IndexDb, query: string, options: RankOptions): KeywordRow[] {
  const expr = keywordExpression(query);
  if (!expr) return [];
  const weights = TEXT_COLUMNS.map((c) => WEIGHTS[c]).join(', ');
  const filters: string[] = [];
  const params: unknown[] = [expr];
  if (options.itemType) {
    filters.push('t.item_type = ?');
    params.push(options.itemType);
  }
  if (options.collectionKey) {
    filters.push('t.rid IN (SELECT rid FROM item_collections WHERE ckey = ?)');
    params.push(options.collectionKey);
  }
  const rows = db
    .prepare(
      `SELECT t.key AS top, i.rid AS rid, i.key AS key, i.item_type AS itemType, bm25(docs, ${weights}) AS score
       FROM docs JOIN items i ON i.rid = docs.rowid JOIN items t ON t.key = i.top
       WHERE docs MATCH ? AND i.deleted = 0 AND t.deleted = 0 ${filters.map((f) => `AND ${f}`).join(' ')}
       ORDER BY score LIMIT ${DEPTH * 4}`,
    )
    .all(...params) as KeywordRow[];
  // One entry per top-level item: its best-ranked row.
  const best = new Map<string, KeywordRow>();
  for (const r of rows) if (!best.has(r.top)) best.set(r.top, r);
  return [...best.values()].slice(0, DEPTH);
}

async function vectorRanking(
  db: IndexDb,
  query: string,
  options: RankOptions,
): Promise<{ keys: string[]; state: VectorState }> {
  const embedder = options.embedder;
  if (!embedder) return { keys: [], state: { used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' } };
  const model = `${embedder.provider}:${embedder.model}`;
  const count = db.prepare('SELECT count(*) FROM vectors WHERE model = ?').pluck().get(model) as number;
  if (count === 0) {
    return {
      keys: [],
      state: {
        used: false,
        model,
        reason: `The index has no vectors of ${model} yet: run zot index update (zotero_index action "update").`,
      },
    };
  }
  let q: Float32Array;
  try {
    [q] = (await embedder.embed([query])) as [Float32Array];
  } catch (error) {
    return {
      keys: [],
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
  return { keys: scored.slice(0, DEPTH).map((s) => s.key), state: { used: true, model } };
}

/**
 * Which column of a row holds the query best, and a snippet of it. The rowid is cast: bound
 * as a JS number it arrives as REAL, and FTS5 then ignores a `rowid =` constraint next to MATCH.
 */
function matchedField(db: IndexDb, row: KeywordRow, expr: string): RankedHit['matched'] {
  let best: { field: TextColumn; rank: number } | undefined;
  TEXT_COLUMNS.forEach((field, i) => {
    const weights = TEXT_COLUMNS.map((_, j) => (j === i ? 1 : 0)).join(', ');
    const r = db
      .prepare(
        `SELECT bm25(docs, ${weights}) AS rank FROM docs WHERE docs MATCH ? AND rowid = CAST(? AS INTEGER)`,
      )
      .get(`{${field}} : (${expr})`, row.rid) as { rank: number } | undefined;
    if (r && (best === undefined || r.rank * WEIGHTS[field] < best.rank))
      best = { field, rank: r.rank * WEIGHTS[field] };
  });
  if (!best) return null;
  // Fix (tests): a note's title column is its own first line, so a word there was reported as a
  // match in the title (of the hit, one would read) instead of in the note.
  if (best.field === 'title' && row.itemType === 'note') best.field = 'notes';
  const col = TEXT_COLUMNS.indexOf(best.field);
  const snippet = db
    .prepare(
      `SELECT snippet(docs, ${col}, '«', '»', '…', 24) FROM docs WHERE docs MATCH ? AND rowid = CAST(? AS INTEGER)`,
    )
    .pluck()
    .get(expr, row.rid) as string | undefined;
  return { field: best.field, itemKey: row.key, snippet: (snippet ?? '').replace(/\s+/g, ' ').trim() };
}

export async function rankIndex(
  db: IndexDb,
  query: string,
  options: RankOptions,
): Promise<{ hits: RankedHit[]; vectors: VectorState }> {
  const keyword = options.mode === 'vector' ? [] : keywordRanking(db, query, options);
  const vector =
    options.mode === 'keyword'
      ? { keys: [], state: { used: false, reason: 'Keyword ranking was asked for.' } as VectorState }
      : await vectorRanking(db, query, options);
  const fused = reciprocalRankFusion([keyword.map((r) => r.top), vector.keys]).slice(0, options.limit);
  const byTop = new Map(keyword.map((r) => [r.top, r]));
  const expr = keywordExpression(query);
  const info = db.prepare(
    'SELECT i.item_type AS itemType, d.title AS title FROM items i JOIN docs d ON d.rowid = i.rid WHERE i.key = ?',
  );
  const hits = fused.map((f): RankedHit => {
    const row = byTop.get(f.id);
    const meta = info.get(f.id) as { itemType: string; title: string } | undefined;
    return {
      key: f.id,
      title: meta?.title ?? '',
      itemType: meta?.itemType ?? '',
      score: Number(f.score.toFixed(6)),
      ranks: { keyword: f.ranks[0] ?? null, vector: f.ranks[1] ?? null },
      matched: row && expr ? matchedField(db, row, expr) : null,
    };
  });
  return { hits, vectors: vector.state };
}
