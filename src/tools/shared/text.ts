/** The one-line summaries of pages, and the words of ready-to-run `next` suggestions. */
import { count, plural } from '../../core/words.js';

/** " Continue with start=25." when a page follows (cut short by the size bound: said so). */
export function continuation(out: {
  nextStart?: number | undefined;
  truncated?: boolean | undefined;
}): string {
  if (out.nextStart === undefined) return '';
  return ` ${out.truncated ? 'Cut at the size bound; continue' : 'Continue'} with start=${out.nextStart}.`;
}

/**
 * What a listing counts, for one: its first plural word made singular ("items matching "x""
 * → "item matching "x"", "top-level collections" → "top-level collection"); a quoted query is
 * left alone.
 */
export function singular(what: string): string {
  return what.replace(/^([^"]*?)\b([A-Za-z-]+?)s\b/, '$1$2');
}

/** `1 item matching "x"`, `120 items matching "x"`: a count and what it counts. */
export function counted(n: number, what: string): string {
  return plural(n, singular(what), what);
}

/** "Showing 1–25 of 120 items matching "x" (sqlite). Continue with start=25." and its empty variants. */
export function pageLine(
  out: {
    totalResults: number;
    start: number;
    backend: string;
    nextStart?: number | undefined;
    truncated?: boolean | undefined;
  },
  shown: number,
  what: string,
): string {
  const via = ` (${out.backend})`;
  if (out.totalResults === 0) return `No ${what}${via}.`;
  if (shown === 0)
    return `No ${what} on this page (start ${count(out.start)}); there are ${count(out.totalResults)} in total${via}.`;
  return `Showing ${count(out.start + 1)}–${count(out.start + shown)} of ${counted(out.totalResults, what)}${via}.${continuation(out)}`;
}

/** Quotes a value for a `next` suggestion (the suggestion checker splits like a shell). */
export function quoted(value: string): string {
  return /^[\w.:/-]+$/.test(value) ? value : `"${value.replace(/"/g, "'")}"`;
}

/** At most this many keys go into a `next` suggestion; longer lists get no suggestion. */
export const SUGGESTION_KEYS = 10;

/** A word for a `next` suggestion, quoted so that the suggestion parser reads it back whole. */
export function quoteWord(text: string): string | undefined {
  // A value that starts with a dash would be read as a flag.
  if (text.startsWith('-')) return undefined;
  if (!text.includes('"')) return `"${text}"`;
  if (!text.includes("'")) return `'${text}'`;
  return undefined;
}

/** ` --library-id N --library-type T`: suggestions address the library the call addressed. */
export function libraryFlags(input: {
  library_id?: number | undefined;
  library_type?: string | undefined;
}): string {
  let out = '';
  if (input.library_id !== undefined) out += ` --library-id ${input.library_id}`;
  if (input.library_type !== undefined) out += ` --library-type ${input.library_type}`;
  return out;
}
