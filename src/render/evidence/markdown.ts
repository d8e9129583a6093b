/**
 * The Markdown (GFM) rendering: a caption line, the table, the coverage line, the warnings.
 * Every cell is escaped so that a Markdown viewer shows its text exactly as given and runs
 * nothing: no text can break the table, become HTML, a link, an image, emphasis or code.
 * Line breaks become spaces and edge whitespace (which a Markdown table cannot carry) is
 * trimmed; everything else is kept, with a backslash before each character that would
 * otherwise mean something (see `escapeCell`). Markdown never gets the CSV apostrophe.
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

/**
 * What a backslash must precede in a cell for every CommonMark/GFM reader to take it as text.
 * Always: `\\`, `|` (the table), `` ` `` (code), `*` and `~` (emphasis, strikethrough) and `$`
 * (math, where a viewer has it). In context, so that ordinary prose stays readable:
 * - `<` unless whitespace or the end follows (no tag or autolink starts that way);
 * - `&` before a letter or `#` (a character reference such as `&lt;`);
 * - `]` before `(`: an inline link or image needs exactly that, and references cannot be
 *   defined inside a table, so `[x](javascript:…)` stays text;
 * - `_` unless between two letters or digits (where it can neither open nor close emphasis);
 * - `:` before `//` and `.` after `www`: the extended autolinks of GFM take the characters of
 *   a URL raw, backslashes included, so a URL must not become one for its escapes to hold.
 */
const MARKDOWN_SPECIAL = /[\\|`*~$]|<(?!\s|$)|&(?=[A-Za-z#])|\](?=\()|_|:(?=\/\/)|(?<=www)\./giu;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** One cell's text, made safe for a GFM table row: folded, trimmed, escaped as above. */
export function escapeCell(text: string): string {
  return foldLineBreaks(text)
    .trim()
    .replace(MARKDOWN_SPECIAL, (char: string, at: number, whole: string) =>
      char === '_' && WORD_CHAR.test(whole[at - 1] ?? '') && WORD_CHAR.test(whole[at + 1] ?? '')
        ? char
        : `\\${char}`,
    );
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
