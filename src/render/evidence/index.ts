/**
 * Renders an evidence table: pure and deterministic, the same input gives the same bytes.
 * It formats what it is given; it never searches and never reads the library.
 */
import { countCoverage, coverageLine } from './coverage.js';
import { renderCsv } from './csv.js';
import { renderMarkdown } from './markdown.js';
import type { CoverageCounts, EvidenceRow, TableFormat } from './types.js';
import { warningsOfRow } from './warnings.js';

export interface EvidenceTableInput {
  question: string;
  rows: readonly EvidenceRow[];
  format: TableFormat;
}

export interface RenderedEvidenceTable {
  table: string;
  format: TableFormat;
  coverage: CoverageCounts;
  /** Evidence warnings per row, then (CSV only) one per cell that got the formula guard. */
  warnings: string[];
  /** Rows with at least one evidence warning. */
  contradictingRows: number;
  /** The coverage line: counts, contradicting rows, warnings. */
  summary: string;
}

export function renderEvidenceTable(input: EvidenceTableInput): RenderedEvidenceTable {
  const { rows, format } = input;
  const coverage = countCoverage(rows);
  const perRow = rows.map((row, index) => warningsOfRow(row, index));
  const contradictingRows = perRow.filter((own) => own.length > 0).length;

  if (format === 'csv') {
    const csv = renderCsv(rows);
    const warnings = perRow.flatMap((own, index) => [...own, ...(csv.formulaWarnings[index] ?? [])]);
    const summary = coverageLine(coverage, rows.length, contradictingRows, warnings.length);
    return { table: csv.text, format, coverage, warnings, contradictingRows, summary };
  }

  const warnings = perRow.flat();
  const summary = coverageLine(coverage, rows.length, contradictingRows, warnings.length);
  const table = renderMarkdown({ question: input.question, rows, coverageLine: summary, warnings });
  return { table, format, coverage, warnings, contradictingRows, summary };
}

export { countCoverage, coverageLine } from './coverage.js';
export { CSV_COLUMNS, csvField, needsFormulaGuard, renderCsv } from './csv.js';
export { foldLineBreaks, hasLocator, hasQuotation, isBlank, locatorQuality, locatorText } from './cells.js';
export {
  escapeCell,
  LOCATOR_QUALITY_LABELS,
  MARKDOWN_COLUMNS,
  NO_LOCATOR,
  NO_QUOTATION,
  NOTES_COLUMN,
  renderMarkdown,
  studyText,
} from './markdown.js';
export { rowPrefix, warningsOfRow } from './warnings.js';
export * from './types.js';
