/**
 * Words as the FTS5 `unicode61 remove_diacritics 2` tokenizer makes them: lower case, marks
 * removed, runs of letters and digits. The index keeps every such word in `terms`, so a query
 * word can match inside longer words (`level` finds `sea-levels`) by scanning the distinct
 * words, not the text.
 */
const MARKS_RE = /\p{M}+/gu;
const WORD_RE = /[\p{L}\p{N}]+/gu;
const ASCII_WORD_RE = /[a-z0-9]+/g;

/** Folds like the tokenizer (canonical decomposition only: `ﬁ` and `ß` stay themselves). */
export function ftsFold(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  return text.normalize('NFD').replace(MARKS_RE, '').toLowerCase();
}

/** The distinct words of a text, folded like the tokenizer. */
export function ftsWords(text: string): string[] {
  const folded = ftsFold(text);
  // eslint-disable-next-line no-control-regex
  const words = /^[\x00-\x7f]*$/.test(folded) ? folded.match(ASCII_WORD_RE) : folded.match(WORD_RE);
  return words ? [...new Set(words)] : [];
}

/** An FTS5 string literal (a term, never an operator). */
export function ftsQuote(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}
