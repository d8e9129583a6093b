/**
 * Which field of a hit holds the query, and the passage around it, worked out in JS from the
 * row's stored text: asking FTS5 for it cost eight ranking queries and a snippet per hit (tens
 * of milliseconds each on a large index), this costs one read of the row.
 *
 * A word of the text matches when, folded like the tokenizer folds it, it starts with a query
 * word (the FTS5 query uses the same words as prefixes).
 */
import { TEXT_COLUMNS, type TextColumn } from './columns.js';
import { ftsFold } from './terms.js';

const WORD_RE = /[\p{L}\p{N}]+/gu;
/** Words shown around the best spot of a field. */
const WINDOW = 24;
/** Characters kept before the first word and after the last one of a text (brackets, a full stop). */
const EDGE = 8;

export interface Matched {
  field: TextColumn;
  snippet: string;
}

interface Token {
  start: number;
  end: number;
  hit: boolean;
}

function tokens(text: string, words: readonly string[]): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD_RE)) {
    const folded = ftsFold(m[0]);
    out.push({ start: m.index, end: m.index + m[0].length, hit: words.some((w) => folded.startsWith(w)) });
  }
  return out;
}

/** The window of WINDOW words holding the most matches, query words marked «». */
function snippetOf(text: string, toks: readonly Token[]): string {
  let best = 0;
  let bestAt = 0;
  let inWindow = 0;
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]!.hit) inWindow++;
    if (i >= WINDOW && toks[i - WINDOW]!.hit) inWindow--;
    if (inWindow > best) {
      best = inWindow;
      bestAt = Math.max(0, i - WINDOW + 1);
    }
  }
  const from = bestAt;
  const to = Math.min(toks.length, from + WINDOW);
  let out = '';
  // A window at the text's start or end keeps a few characters before its first word or after
  // its last ("(group copy)", not "(group copy"), in whole code points (no emoji cut in half).
  let at = toks[from]!.start;
  if (from === 0) out += [...text.slice(Math.max(0, at - 4 * EDGE), at)].slice(-EDGE).join('');
  for (let i = from; i < to; i++) {
    const t = toks[i]!;
    out += text.slice(at, t.start);
    out += t.hit ? `«${text.slice(t.start, t.end)}»` : text.slice(t.start, t.end);
    at = t.end;
  }
  if (to === toks.length) out += [...text.slice(at, at + 4 * EDGE)].slice(0, EDGE).join('');
  const snippet = out.replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '…' : ''}${snippet}${to < toks.length ? '…' : ''}`;
}

/**
 * The field with the most weighted matches (a note's first line counts as the note, not as a
 * title) and its best passage; null when no field holds a query word.
 */
export function matchedIn(
  texts: Readonly<Record<TextColumn, string>>,
  words: readonly string[],
  weights: Readonly<Record<TextColumn, number>>,
  isNote: boolean,
): Matched | null {
  let best: { field: TextColumn; score: number; toks: Token[] } | undefined;
  for (const field of TEXT_COLUMNS) {
    if (isNote && field === 'title') continue;
    const text = texts[field];
    if (!text) continue;
    const toks = tokens(text, words);
    const hits = toks.reduce((n, t) => n + (t.hit ? 1 : 0), 0);
    if (hits === 0) continue;
    // Distinct query words found matter more than repeats of one.
    const distinct = words.filter((w) =>
      toks.some((t) => t.hit && ftsFold(text.slice(t.start, t.end)).startsWith(w)),
    ).length;
    const score = weights[field] * (distinct * 10 + Math.min(hits, 10));
    if (!best || score > best.score) best = { field, score, toks };
  }
  if (!best) return null;
  return { field: best.field, snippet: snippetOf(texts[best.field], best.toks) };
}
