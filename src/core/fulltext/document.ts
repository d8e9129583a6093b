/**
 * A document's text as the full-text tool reads it: one string, the offsets where its pages
 * start (when the source knows them exactly), its page count (for approximate locators) and its
 * headings. Passages, page ranges and the start of a document are cut from it; every offset is
 * a UTF-16 index into `text`.
 */
import { fold, queryWords } from '../local/sqlite/text.js';

export interface Heading {
  offset: number;
  text: string;
  /** 1 for a chapter, 2 for a section, …, when the source says (EPUB h1–h6). */
  level?: number;
}

export interface FullDocument {
  text: string;
  /** Start offset of each page, in order (page n starts at `pageStarts[n - 1]`): exact locators. */
  pageStarts?: number[] | undefined;
  /** Pages of the whole document, for `pageApprox` when `pageStarts` is unknown. */
  totalPages?: number | null | undefined;
  /** Headings the source marked (EPUB); otherwise heading-like lines are detected. */
  headings?: Heading[] | undefined;
}

/** Where a position is: `page` when the source knows it exactly, else `pageApprox` (or neither). */
export interface PageLocator {
  page?: number;
  pageApprox?: number;
}

export interface Passage extends PageLocator {
  start: number;
  end: number;
  text: string;
  heading: string | null;
  score: number;
}

/** The page (1-based) of an offset, from exact page starts. */
export function pageAt(pageStarts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = pageStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pageStarts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * The locator of an offset: exact from page starts; otherwise the character position scaled to
 * the page count (`floor(offset × totalPages / length) + 1`), which assumes pages of even length.
 */
export function locate(doc: FullDocument, offset: number): PageLocator {
  if (doc.pageStarts && doc.pageStarts.length > 0) return { page: pageAt(doc.pageStarts, offset) };
  const total = doc.totalPages;
  if (total && total > 0 && doc.text.length > 0) {
    return { pageApprox: Math.min(total, Math.floor((offset * total) / doc.text.length) + 1) };
  }
  return {};
}

const NUMBERED = /^(\d+(\.\d+)*\.?|[IVX]+\.|[A-Z]\.)\s+\p{Lu}/u;
const NAMED =
  /^(chapter|section|part|appendix|abstract|introduction|conclusions?|references|bibliography|acknowledg(e)?ments|methods|results|discussion|summary)\b/i;

/** Whether a line looks like a heading: short, no closing punctuation, numbered, named or in capitals. */
export function isHeadingLine(line: string): boolean {
  const t = line.trim();
  if (t.length < 3 || t.length > 90) return false;
  if (/[.,;:]$/.test(t) && !/^\d+(\.\d+)*\.?$/.test(t)) return false;
  const words = t.split(/\s+/);
  if (words.length > 12) return false;
  if (NUMBERED.test(t)) return true;
  if (NAMED.test(t) && words.length <= 6) return true;
  const letters = t.replace(/[^\p{L}]/gu, '');
  return letters.length >= 3 && letters === letters.toUpperCase() && letters !== letters.toLowerCase();
}

/** The document's headings: those the source marked, else the heading-like lines. */
export function headingsOf(doc: FullDocument): Heading[] {
  if (doc.headings) return doc.headings;
  const out: Heading[] = [];
  const re = /[^\n]+/g;
  for (let m = re.exec(doc.text); m; m = re.exec(doc.text)) {
    if (isHeadingLine(m[0])) {
      const lead = m[0].length - m[0].trimStart().length;
      out.push({ offset: m.index + lead, text: m[0].trim() });
    }
  }
  doc.headings = out;
  return out;
}

/** The nearest heading at or before an offset. */
export function headingAt(headings: readonly Heading[], offset: number): string | null {
  let lo = 0;
  let hi = headings.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (headings[mid]!.offset <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found < 0 ? null : headings[found]!.text;
}

/** Target and hard limit of a passage's length, in characters. */
const WINDOW = 700;
const MAX_WINDOW = 1200;

/**
 * The document cut into passages: paragraphs (blank lines) and lines grouped up to ~700
 * characters; a passage never crosses a page start or a heading, so its page and heading are
 * those of its start.
 */
export function chunks(doc: FullDocument): Array<{ start: number; end: number }> {
  const text = doc.text;
  const breaks = [...new Set([...(doc.pageStarts ?? []), ...headingsOf(doc).map((h) => h.offset)])].sort(
    (a, b) => a - b,
  );
  let bi = 0;
  const out: Array<{ start: number; end: number }> = [];
  let start = -1;
  let end = -1;
  const flush = () => {
    if (start >= 0 && end > start) out.push({ start, end });
    start = -1;
    end = -1;
  };
  const re = /[^\n]+/g;
  let prevEnd = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const lead = m[0].length - m[0].trimStart().length;
    const s = m.index + lead;
    const e = m.index + m[0].trimEnd().length;
    if (e <= s) continue;
    const blank = /\n[ \t\f\r]*\n/.test(text.slice(prevEnd, m.index));
    prevEnd = m.index + m[0].length;
    const from = end < 0 ? s : end;
    while (bi < breaks.length && breaks[bi]! <= from) bi++;
    const atBreak = bi < breaks.length && breaks[bi]! <= s;
    if (start >= 0 && (atBreak || (blank && end - start >= WINDOW / 3) || e - start > WINDOW)) flush();
    if (start < 0) start = s;
    end = e;
    // A single very long line (text without line breaks) is cut at spaces.
    while (end - start > MAX_WINDOW) {
      let cut = text.lastIndexOf(' ', start + WINDOW);
      if (cut <= start) cut = start + WINDOW;
      out.push({ start, end: cut });
      start = cut + 1;
      while (start < end && /\s/.test(text[start]!)) start++;
    }
  }
  flush();
  return out;
}

/**
 * The passages that best match a query: each query word (case- and accent-insensitive) scores
 * by how often it occurs in the passage, weighted by how rare it is in the document; the whole
 * phrase scores extra. Passages that match no word are left out; ties go to the earlier one.
 */
export function searchPassages(
  doc: FullDocument,
  q: string,
  limit: number,
): { passages: Passage[]; matched: number } {
  const words = queryWords(q);
  if (words.length === 0) return { passages: [], matched: 0 };
  const pieces = chunks(doc);
  const folded = pieces.map((c) => fold(doc.text.slice(c.start, c.end)));
  const counts = folded.map((f) => words.map((w) => occurrences(f, w)));
  const df = words.map((_, i) => counts.filter((c) => c[i]! > 0).length);
  const phrase = words.length > 1 ? words.join(' ') : undefined;
  const scored: Array<{ i: number; score: number }> = [];
  counts.forEach((c, i) => {
    let score = 0;
    let distinct = 0;
    c.forEach((n, w) => {
      if (n === 0) return;
      distinct++;
      score += (1 + Math.log(n)) * Math.log(1 + pieces.length / df[w]!);
    });
    if (distinct === 0) return;
    score *= distinct / words.length;
    if (phrase && folded[i]!.replace(/[^\p{L}\p{N}]+/gu, ' ').includes(phrase)) score *= 2;
    scored.push({ i, score });
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  const headings = headingsOf(doc);
  const passages = scored.slice(0, limit).map(({ i, score }) => {
    const { start, end } = pieces[i]!;
    return {
      start,
      end,
      text: doc.text.slice(start, end),
      heading: headingAt(headings, start),
      ...locate(doc, start),
      score: Math.round(score * 1000) / 1000,
    };
  });
  return { passages, matched: scored.length };
}

function occurrences(haystack: string, word: string): number {
  let n = 0;
  for (let i = haystack.indexOf(word); i >= 0; i = haystack.indexOf(word, i + word.length)) n++;
  return n;
}

/** Cuts `text` at most `max` characters after `from`, at a word boundary when one is near. */
export function cutAt(text: string, from: number, max: number): number {
  const end = Math.min(text.length, from + max);
  if (end >= text.length) return text.length;
  const space = text.lastIndexOf(' ', end);
  const nl = text.lastIndexOf('\n', end);
  const best = Math.max(space, nl);
  return best > from + max * 0.8 ? best : end;
}
