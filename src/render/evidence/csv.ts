/**
 * The CSV rendering: RFC 4180, CRLF line ends (the last line too), a header row, then the
 * rows; no caption, coverage line or warnings. A field is quoted when it holds a quote, a
 * comma, a line break, a tab, a semicolon or edge whitespace, with quotes doubled.
 *
 * Formula guard: a cell whose text begins with `=`, `+`, `-`, `@`, a tab or a carriage
 * return is a formula to Excel, LibreOffice and Sheets. Such a cell is written with one
 * leading apostrophe (the spreadsheet's own marker for literal text) and gets a warning
 * naming its row and column and quoting its original text. A plain number such as `-5` or
 * `+12` is not a formula and is left alone.
 */
import { locatorQuality, locatorText } from './cells.js';
import { rowPrefix } from './warnings.js';
import type { EvidenceRow } from './types.js';

export const CSV_COLUMNS = [
  'Item key',
  'Study',
  'Finding',
  'Quotation',
  'Locator',
  'Locator quality',
  'Coverage',
  'Support',
  'Notes',
] as const;

export type CsvColumn = (typeof CSV_COLUMNS)[number];

const FORMULA_STARTS = new Set(['=', '+', '-', '@', '\t', '\r']);
/** A number as a spreadsheet reads it, not a formula: `-5`, `+12`, `3.5`, `-1e3`. */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Whether a spreadsheet would run this text as a formula. */
export function needsFormulaGuard(text: string): boolean {
  return text.length > 0 && FORMULA_STARTS.has(text[0] as string) && !PLAIN_NUMBER.test(text);
}

/**
 * RFC 4180 quoting: a field with a quote, a comma or a line break is quoted, quotes doubled.
 * So is a field with edge whitespace (so that no reader trims it), and one holding a tab or
 * a semicolon, which spreadsheet import dialogs often also take as separators.
 */
export function csvField(text: string): string {
  return /[",\r\n\t;]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function describeStart(text: string): string {
  const first = text[0];
  if (first === '\t') return 'a tab';
  if (first === '\r') return 'a carriage return';
  return `"${first}"`;
}

/** The cells of one row, exactly as given (missing values are empty fields). */
export function csvCells(row: EvidenceRow): Record<CsvColumn, string> {
  const quality = locatorQuality(row);
  return {
    'Item key': row.item_key,
    Study: row.study,
    Finding: row.finding,
    Quotation: row.quotation ?? '',
    Locator: locatorText(row),
    'Locator quality': quality,
    Coverage: row.coverage,
    Support: row.support,
    Notes: row.note ?? '',
  };
}

export interface CsvResult {
  text: string;
  /** One warning per guarded cell, in row then column order; `[]` when none. */
  formulaWarnings: string[][];
}

/** Renders the CSV; `formulaWarnings[i]` holds the guard warnings of row i. */
export function renderCsv(rows: readonly EvidenceRow[]): CsvResult {
  const lines: string[] = [CSV_COLUMNS.map(csvField).join(',')];
  const formulaWarnings: string[][] = [];
  rows.forEach((row, index) => {
    const cells = csvCells(row);
    const own: string[] = [];
    const fields = CSV_COLUMNS.map((column) => {
      const text = cells[column];
      if (!needsFormulaGuard(text)) return csvField(text);
      own.push(
        `${rowPrefix(index, row)}the ${column} cell begins with ${describeStart(text)}, which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: ${JSON.stringify(text)}`,
      );
      return csvField(`'${text}`);
    });
    formulaWarnings.push(own);
    lines.push(fields.join(','));
  });
  return { text: `${lines.map((l) => `${l}\r\n`).join('')}`, formulaWarnings };
}
