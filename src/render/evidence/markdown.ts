/**
 * The Markdown (GFM) rendering: a caption line, the table, the coverage line, the warnings.
 * Every cell is escaped so that no text can break the table: backslashes and `|` are
 * backslash-escaped, line breaks become spaces, and edge whitespace (which a Markdown table
 * cannot carry) is trimmed. Nothing else is changed; Markdown never gets the CSV apostrophe.
 */
import { foldLineBreaks, hasLocator, hasNote, hasQuotation, locatorQuality, locatorText } from './cells.js';
import type { EvidenceRow } from './types.js';

/** Shown instead of an empty cell when a row has no quotation (missing or only whitespace). */
export const NO_QUOTATION = '(no quotation)';
/** Shown instead of an empty cell when a row has no page locator. */
export const NO_LOCATOR = '(no locator)';

/** What the locator cell adds after the locator: how exact it is. */
export const LOCATOR_QUALITY_LABELS = {
  exact: 'exact',
  approximate: 'approximate',
  unstated: 'exactness unstated',
} as const;

export const MARKDOWN_COLUMNS = ['Study', 'Finding', 'Quotation', 'Locator', 'Coverage', 'Support'] as const;
export const NOTES_COLUMN = 'Notes';

/** One cell's text, made safe for a GFM table row: folded, trimmed, `\` and `|` escaped. */
export function escapeCell(text: string): string {
  return foldLineBreaks(text).trim().replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
}

/** The study label with its item key, unless the label already contains the key. */
export function studyText(row: EvidenceRow): string {
  const label = row.study.trim();
  if (label === '') return row.item_key;
  if (label.includes(row.item_key)) return label;
  return `${label} (${row.item_key})`;
}

function locatorCell(row: EvidenceRow): string {
  if (!hasLocator(row)) return NO_LOCATOR;
  const quality = locatorQuality(row);
  const label = quality === 'none' ? '' : LOCATOR_QUALITY_LABELS[quality];
  return `${escapeCell(locatorText(row))} (${label})`;
}

function line(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

export interface MarkdownInput {
  question: string;
  rows: readonly EvidenceRow[];
  /** The coverage line (see coverage.ts), placed under the table. */
  coverageLine: string;
  warnings: readonly string[];
}

export function renderMarkdown(input: MarkdownInput): string {
  const withNotes = input.rows.some(hasNote);
  const columns: string[] = [...MARKDOWN_COLUMNS, ...(withNotes ? [NOTES_COLUMN] : [])];
  const out: string[] = [
    `Table: ${escapeCell(input.question)}`,
    '',
    line(columns),
    line(columns.map(() => '---')),
  ];
  for (const row of input.rows) {
    const cells = [
      escapeCell(studyText(row)),
      escapeCell(row.finding),
      hasQuotation(row) ? escapeCell(row.quotation as string) : NO_QUOTATION,
      locatorCell(row),
      row.coverage,
      row.support,
    ];
    if (withNotes) cells.push(hasNote(row) ? escapeCell(row.note as string) : '');
    out.push(line(cells));
  }
  out.push('', escapeCell(input.coverageLine));
  if (input.warnings.length > 0) {
    out.push('', 'Warnings:', '', ...input.warnings.map((warning) => `- ${escapeCell(warning)}`));
  }
  return `${out.join('\n')}\n`;
}
