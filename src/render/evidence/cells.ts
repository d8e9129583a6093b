/**
 * What a row's cells say, decided once for both renderers: whether a quotation or a
 * locator is really there, the locator's text and its quality. Nothing here rewords a cell.
 */
import type { EvidenceRow, LocatorQuality } from './types.js';

/**
 * Line breaks as Markdown parsers see them (CR, LF, CRLF), plus those some parsers and line
 * splitters also honour (VT, FF, FS, GS, RS, NEL, U+2028, U+2029).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const LINE_BREAKS = /\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/g;

/** Each line break becomes one space (Markdown cells; the CSV keeps line breaks as they are). */
export function foldLineBreaks(text: string): string {
  return text.replace(LINE_BREAKS, ' ');
}

/**
 * Missing, or only whitespace and line breaks: a whitespace-only quotation counts as
 * missing (in warnings and in the Markdown placeholders; the CSV still echoes it).
 */
export function isBlank(text: string | null | undefined): boolean {
  return text === undefined || text === null || foldLineBreaks(text).trim() === '';
}

export function hasQuotation(row: EvidenceRow): boolean {
  return !isBlank(row.quotation);
}

/** The locator exactly as given: a number in its JavaScript spelling, a string unchanged. */
export function locatorText(row: EvidenceRow): string {
  if (row.page === undefined || row.page === null) return '';
  return typeof row.page === 'number' ? String(row.page) : row.page;
}

export function hasLocator(row: EvidenceRow): boolean {
  return !isBlank(locatorText(row));
}

export function locatorQuality(row: EvidenceRow): LocatorQuality {
  if (!hasLocator(row)) return 'none';
  if (row.page_exact === true) return 'exact';
  if (row.page_exact === false) return 'approximate';
  return 'unstated';
}

export function hasNote(row: EvidenceRow): boolean {
  return !isBlank(row.note);
}
