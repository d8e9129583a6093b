/**
 * Property tests: whatever the cell text, a real CSV parser (csv-parse) gives back every
 * cell exactly, apart from the one documented apostrophe of the formula guard, and a real
 * Markdown parser (marked, GFM) sees a table with the right number of cells in every row,
 * and the HTML it renders holds no markup from a cell and shows each cell's text exactly
 * (line breaks folded, edges trimmed).
 */
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { marked, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import {
  CSV_COLUMNS,
  MARKDOWN_COLUMNS,
  NO_LOCATOR,
  NO_QUOTATION,
  NOTES_COLUMN,
  foldLineBreaks,
  needsFormulaGuard,
  renderEvidenceTable,
  studyText,
  type EvidenceRow,
} from '../../src/render/evidence/index.js';
import { evidenceRows, hostileText } from './arbitraries.js';
import { viewMarkdown } from './markdown-view.js';

const RUNS = { numRuns: Number(process.env.FC_RUNS ?? 300) };

const raw = (value: string | number | null | undefined): string =>
  value === undefined || value === null ? '' : String(value);
const blank = (value: string | number | null | undefined) => foldLineBreaks(raw(value)).trim() === '';

/** The cells of a row as given, in CSV column order. */
function givenCells(row: EvidenceRow): string[] {
  const quality = blank(row.page)
    ? 'none'
    : row.page_exact === true
      ? 'exact'
      : row.page_exact === false
        ? 'approximate'
        : 'unstated';
  return [
    row.item_key,
    row.study,
    row.finding,
    raw(row.quotation),
    raw(row.page),
    quality,
    row.coverage,
    row.support,
    raw(row.note),
  ];
}

const shown = (text: string) => foldLineBreaks(text).trim();

describe('CSV, parsed back by csv-parse', () => {
  it('gives back every cell exactly, apart from one leading apostrophe on formula cells', () => {
    fc.assert(
      fc.property(fc.string(), evidenceRows, (question, rows) => {
        const out = renderEvidenceTable({ question, rows, format: 'csv' });
        expect(out.table.endsWith('\r\n')).toBe(true);
        const records = parse(out.table, {
          record_delimiter: '\r\n',
          relax_column_count: false,
        }) as string[][];
        expect(records[0]).toEqual([...CSV_COLUMNS]);
        expect(records.length).toBe(rows.length + 1);
        let guarded = 0;
        rows.forEach((row, i) => {
          const parsed = records[i + 1]!;
          const given = givenCells(row);
          expect(parsed.length).toBe(CSV_COLUMNS.length);
          given.forEach((cell, c) => {
            if (needsFormulaGuard(cell)) {
              guarded += 1;
              expect(parsed[c]).toBe(`'${cell}`);
            } else {
              expect(parsed[c]).toBe(cell);
            }
          });
        });
        // One warning per guarded cell, each naming its row.
        const formula = out.warnings.filter((w) => w.includes('would run as a formula'));
        expect(formula.length).toBe(guarded);
      }),
      RUNS,
    );
  });

  it('guards exactly the cells that begin with = + - @ tab or CR and are not plain numbers', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const first = text[0];
        const expected =
          first !== undefined &&
          ['=', '+', '-', '@', '\t', '\r'].includes(first) &&
          !/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text);
        expect(needsFormulaGuard(text)).toBe(expected);
      }),
      RUNS,
    );
    for (const n of ['-5', '+12', '-3.5', '+0', '-1e5']) expect(needsFormulaGuard(n)).toBe(false);
    for (const f of ['=1+1', '+1+1', '-', '@SUM(A1)', '\t5', '\r-5', '-5 mg', '='])
      expect(needsFormulaGuard(f)).toBe(true);
  });
});

describe('Markdown, parsed back by marked (GFM)', () => {
  it('is one table whose every row has the header count of cells, each showing its text', () => {
    fc.assert(
      fc.property(hostileText, evidenceRows, (question, rows) => {
        fc.pre(question.trim() !== '');
        const out = renderEvidenceTable({ question, rows, format: 'markdown' });
        const tables = marked.lexer(out.table).filter((t): t is Tokens.Table => t.type === 'table');
        expect(tables.length).toBe(1);
        const table = tables[0]!;
        const withNotes = rows.some((r) => !blank(r.note));
        const columns = [...MARKDOWN_COLUMNS, ...(withNotes ? [NOTES_COLUMN] : [])];
        expect(table.header.map((h) => h.text)).toEqual(columns);
        expect(table.rows.length).toBe(rows.length);
        // What a viewer shows: the HTML marked renders, read back as text.
        const view = viewMarkdown(out.table);
        expect(view.liveMarkup).toEqual([]);
        expect(view.rows[0]).toEqual(columns);
        expect(view.rows.length).toBe(rows.length + 1);
        expect(view.blocks[0]).toBe(`Table: ${shown(question)}`);
        rows.forEach((row, i) => {
          const text = view.rows[i + 1]!;
          expect(text.length).toBe(columns.length);
          expect(text[0]).toBe(shown(studyText(row)));
          expect(text[0]).toContain(row.item_key);
          expect(text[1]).toBe(shown(row.finding));
          expect(text[2]).toBe(blank(row.quotation) ? NO_QUOTATION : shown(raw(row.quotation)));
          if (blank(row.page)) expect(text[3]).toBe(NO_LOCATOR);
          else expect(text[3]!.startsWith(`${shown(raw(row.page))} (`)).toBe(true);
          expect(text[4]).toBe(row.coverage);
          expect(text[5]).toBe(row.support);
          if (withNotes) expect(text[6]).toBe(blank(row.note) ? '' : shown(raw(row.note)));
          // Never an empty quotation or locator cell, and never the CSV apostrophe.
          expect(text[2]).not.toBe('');
          expect(text[3]).not.toBe('');
        });
        expect(out.table).toContain(`\n\n${out.summary}\n`);
      }),
      RUNS,
    );
  });
});

describe('determinism', () => {
  it('gives the same bytes for the same input, in both formats', () => {
    fc.assert(
      fc.property(
        fc.string(),
        evidenceRows,
        fc.constantFrom('markdown' as const, 'csv' as const),
        (q, rows, format) => {
          const copy = structuredClone(rows);
          expect(renderEvidenceTable({ question: q, rows: copy, format }).table).toBe(
            renderEvidenceTable({ question: q, rows, format }).table,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
