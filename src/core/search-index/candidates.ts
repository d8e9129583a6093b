/**
 * Which rows a ranked search scores. FTS5's bm25() costs about 10 µs per matching row, so a
 * word found in 50,000 items costs half a second to rank in full. The plan keeps the scored set
 * small while keeping what ranks well:
 *
 * 1. Query words that are rare in the library (in at most RARE_DOCS rows) decide: rows holding
 *    any of them are scored (by those words: the common ones add little to BM25 anyway).
 * 2. Only common words: rows holding all of them, else any of them; when more than CANDIDATE_CAP rows
 *    qualify, the CANDIDATE_CAP most recently indexed of them are scored, and the answer says so.
 *
 * Stop words (`stopwords.ts`) are not query words here. A query word absent from the
 * library's vocabulary stands for the words it begins
 * (`transform` → `transformer`, `transformers`), at most PREFIX_TERMS of them.
 */
import type { IndexDb } from './store.js';
import { keywordWords } from './stopwords.js';
import { ftsQuote } from './terms.js';

export const RARE_DOCS = 1500;
export const CANDIDATE_CAP = 3000;
export const PREFIX_TERMS = 50;

export interface CandidatePlan {
  /** The FTS5 expression to score, or undefined when no query word occurs in the library. */
  expr: string | undefined;
  /** Only rows at or above this rowid (the CANDIDATE_CAP newest matches), when the set was capped. */
  minRowid: number | undefined;
  /** Words whose rows were too many to score all of, for the answer to say. */
  capped: { words: string[]; matches: number } | undefined;
  /** The query's words as they occur in the index (prefix expansions included): for snippets. */
  words: string[];
}

export function planCandidates(db: IndexDb, query: string): CandidatePlan {
  const docFreq = db.prepare('SELECT doc FROM docs_vocab WHERE term = ?').pluck();
  const expand = db
    .prepare('SELECT term FROM terms WHERE term >= ? AND term < ? ORDER BY term LIMIT ?')
    .pluck();
  // Each query word as a group of index terms (itself, or the words it begins) and its rows.
  const groups: Array<{ word: string; terms: string[]; docs: number }> = [];
  // Stop words are left out: they would make every item a candidate and add nothing to BM25.
  for (const word of keywordWords(query)) {
    const exact = (docFreq.get(word) as number | undefined) ?? 0;
    if (exact > 0) {
      groups.push({ word, terms: [word], docs: exact });
      continue;
    }
    const terms = expand.all(word, `${word}\uffff`, PREFIX_TERMS) as string[];
    const docs = terms.reduce((n, t) => n + ((docFreq.get(t) as number | undefined) ?? 0), 0);
    if (docs > 0) groups.push({ word, terms, docs });
  }
  const words = groups.flatMap((g) => g.terms);
  if (groups.length === 0) return { expr: undefined, minRowid: undefined, capped: undefined, words };
  const anyOf = (gs: typeof groups) => gs.flatMap((g) => g.terms.map(ftsQuote)).join(' OR ');
  const allOf = (gs: typeof groups) =>
    gs
      .map((g) => (g.terms.length === 1 ? ftsQuote(g.terms[0]!) : `(${g.terms.map(ftsQuote).join(' OR ')})`))
      .join(' AND ');

  const rare = groups.filter((g) => g.docs <= RARE_DOCS);
  if (rare.length > 0) return { expr: anyOf(rare), minRowid: undefined, capped: undefined, words };

  const newest = db
    .prepare('SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?')
    .pluck();
  for (const expr of groups.length > 1 ? [allOf(groups), anyOf(groups)] : [anyOf(groups)]) {
    const last = newest.get(expr, CANDIDATE_CAP - 1) as number | undefined;
    if (last === undefined) {
      // Fewer than CANDIDATE_CAP rows: all of them (if any).
      if (newest.get(expr, 0) !== undefined) return { expr, minRowid: undefined, capped: undefined, words };
      continue;
    }
    const matches = Math.max(...groups.map((g) => g.docs));
    return { expr, minRowid: last, capped: { words: groups.map((g) => g.word), matches }, words };
  }
  return { expr: undefined, minRowid: undefined, capped: undefined, words };
}
