/** Every rendering rule and every warning, one at a time. */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import {
  countCoverage,
  escapeCell,
  renderEvidenceTable,
  type EvidenceRow,
  type TableFormat,
} from '../../src/render/evidence/index.js';
import { HOSTILE_QUESTION, HOSTILE_ROWS } from './fixtures.js';

const base: EvidenceRow = {
  item_key: 'ABCD2345',
  study: 'Smith 2020',
  finding: 'It helps.',
  quotation: 'It helped a lot.',
  page: 4,
  page_exact: true,
  coverage: 'passage',
  support: 'supported',
};

const render = (rows: EvidenceRow[], format: TableFormat = 'markdown') =>
  renderEvidenceTable({ question: 'Q?', rows, format });
const one = (patch: Partial<EvidenceRow>, format: TableFormat = 'markdown') =>
  render([{ ...base, ...patch }], format);
const csvRows = (table: string) => parse(table, { record_delimiter: '\r\n' }) as string[][];

describe('warnings', () => {
  it('a consistent row has none, and `warnings` lists nothing', () => {
    expect(one({}).warnings).toEqual([]);
    expect(one({}, 'csv').warnings).toEqual([]);
  });

  it('a page locator with no quotation', () => {
    expect(one({ quotation: undefined, coverage: 'abstract-only', support: 'unverified' }).warnings).toEqual([
      'Row 1 (ABCD2345): has a page locator but no quotation; a locator should point at quoted text.',
    ]);
  });

  it('coverage "passage" with no quotation (a whitespace-only quotation counts as none)', () => {
    expect(one({ quotation: ' \t\r\n ', page: undefined, support: 'unverified' }).warnings).toEqual([
      'Row 1 (ABCD2345): coverage is "passage" but there is no quotation; a retrieved passage should be quoted verbatim.',
    ]);
  });

  it('a quotation on a source marked unavailable', () => {
    expect(one({ coverage: 'unavailable', page: undefined, support: 'unverified' }).warnings).toEqual([
      'Row 1 (ABCD2345): has a quotation but coverage is "unavailable"; text that was not retrieved cannot be quoted.',
    ]);
  });

  it.each(['supported', 'contradicted', 'uncertain'] as const)(
    'support "%s" on a row whose coverage is not "passage"',
    (support) => {
      for (const coverage of ['abstract-only', 'unavailable'] as const) {
        const out = one({ coverage, support, quotation: undefined, page: undefined });
        expect(out.warnings).toEqual([
          `Row 1 (ABCD2345): support is "${support}" but coverage is "${coverage}"; only a retrieved passage can back a verdict, so mark it "unverified" or retrieve the passage.`,
        ]);
      }
    },
  );

  it('"unverified" on a non-passage row, and any support on a passage row, are fine', () => {
    expect(one({ coverage: 'abstract-only', support: 'unverified', page: undefined }).warnings).toEqual([]);
    for (const support of ['supported', 'contradicted', 'uncertain', 'unverified'] as const) {
      expect(one({ support }).warnings).toEqual([]);
    }
  });

  it('several warnings on one row, rows named from 1 with their keys, the table still renders', () => {
    const rows: EvidenceRow[] = [
      { ...base },
      { ...base, item_key: 'BCDE3456', quotation: null, page: '7', support: 'supported' },
    ];
    const out = render(rows);
    expect(out.warnings).toEqual([
      'Row 2 (BCDE3456): has a page locator but no quotation; a locator should point at quoted text.',
      'Row 2 (BCDE3456): coverage is "passage" but there is no quotation; a retrieved passage should be quoted verbatim.',
    ]);
    expect(out.contradictingRows).toBe(1);
    expect(out.table).toContain('| Smith 2020 (BCDE3456) |');
    expect(out.summary).toContain('1 row contradicts its own evidence; 2 warnings.');
  });

  it('CSV names every formula cell: row, column and the original text; Markdown has no such warning', () => {
    const out = renderEvidenceTable({ question: HOSTILE_QUESTION, rows: HOSTILE_ROWS, format: 'csv' });
    const formula = out.warnings.filter((w) => w.includes('formula'));
    expect(formula).toEqual([
      `Row 2 (BCDE3456): the Finding cell begins with "=", which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "=SUM(A1:A9)"`,
      `Row 3 (CDEF4567): the Quotation cell begins with "-", which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "-5 mg/kg was \\t toxic"`,
      `Row 4 (DEFG5678): the Study cell begins with "@", which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "@home study"`,
      `Row 4 (DEFG5678): the Finding cell begins with a tab, which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "\\tTabbed finding"`,
      `Row 4 (DEFG5678): the Notes cell begins with "-", which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "-- see appendix"`,
      `Row 5 (EFGH6789): the Quotation cell begins with a carriage return, which a spreadsheet would run as a formula, so the CSV writes it with a leading apostrophe (the spreadsheet's marker for literal text); original text: "\\rCarriage start"`,
    ]);
    expect(out.warnings.length).toBe(12);
    expect(out.warnings.every((w) => /^Row \d+ \([2-9A-Z]{8}\): /.test(w))).toBe(true);
    // Warnings come row by row: a row's own warnings, then its formula cells.
    const rowsInOrder = out.warnings.map((w) => Number(/^Row (\d+)/.exec(w)![1]));
    expect([...rowsInOrder].sort((a, b) => a - b)).toEqual(rowsInOrder);
    const md = renderEvidenceTable({ question: HOSTILE_QUESTION, rows: HOSTILE_ROWS, format: 'markdown' });
    expect(md.warnings.some((w) => w.includes('formula'))).toBe(false);
    expect(md.warnings.length).toBe(6);
    expect(out.summary).toContain('3 rows contradict their own evidence; 12 warnings.');
  });
});

describe('coverage', () => {
  it('is counted from the rows: exactly three integers', () => {
    const rows: EvidenceRow[] = [
      { ...base },
      { ...base, coverage: 'abstract-only', support: 'unverified' },
      { ...base, coverage: 'unavailable', support: 'unverified', quotation: undefined, page: undefined },
      { ...base, coverage: 'unavailable', support: 'unverified', quotation: undefined, page: undefined },
    ];
    const out = render(rows);
    expect(out.coverage).toEqual({ passage: 1, abstractOnly: 1, unavailable: 2 });
    expect(Object.keys(countCoverage(rows))).toEqual(['passage', 'abstractOnly', 'unavailable']);
    expect(out.summary).toBe(
      'Coverage: 1 of 4 rows rest on a retrieved passage, 1 on the abstract only, 2 on no retrieved text. 0 rows contradict their own evidence; 0 warnings.',
    );
    expect(out.table).toContain(`\n\n${out.summary}\n`);
  });

  it('speaks of one row in the singular', () => {
    expect(one({}).summary).toBe(
      'Coverage: 1 of 1 row rests on a retrieved passage, 0 on the abstract only, 0 on no retrieved text. 0 rows contradict their own evidence; 0 warnings.',
    );
  });
});

describe('Markdown cells', () => {
  it('the study carries its key unless the label contains it; a blank label is the key', () => {
    expect(one({ study: 'Smith 2020' }).table).toContain('| Smith 2020 (ABCD2345) |');
    expect(one({ study: 'ABCD2345: Smith' }).table).toContain('| ABCD2345: Smith |');
    expect(one({ study: '  ' }).table).toContain('| ABCD2345 |');
  });

  it('placeholders for a missing quotation and locator; the locator says exact, approximate or unstated', () => {
    expect(one({ quotation: undefined }).table).toContain('| (no quotation) |');
    expect(one({ quotation: '  ' }).table).toContain('| (no quotation) |');
    expect(one({ page: undefined }).table).toContain('| (no locator) |');
    expect(one({ page: ' ' }).table).toContain('| (no locator) |');
    expect(one({ page: 4, page_exact: true }).table).toContain('| 4 (exact) |');
    expect(one({ page: '4', page_exact: false }).table).toContain('| 4 (approximate) |');
    expect(one({ page: 'pp. 4-5', page_exact: undefined }).table).toContain(
      '| pp. 4-5 (exactness unstated) |',
    );
    expect(one({ page: -5 }).table).toContain('| -5 (exact) |');
  });

  it('escapes | and backslashes and folds line breaks, so a cell cannot break the table', () => {
    expect(escapeCell('a|b')).toBe('a\\|b');
    expect(escapeCell('a\\b')).toBe('a\\\\b');
    expect(escapeCell('a\\|b')).toBe('a\\\\\\|b');
    expect(escapeCell('one\r\ntwo\nthree\rfour\u2028five')).toBe('one two three four five');
    expect(escapeCell('  edge  ')).toBe('edge');
  });

  it('escapes what a viewer would run or restyle, and leaves ordinary prose alone', () => {
    expect(escapeCell('<script>x</script>')).toBe('\\<script>x\\</script>');
    expect(escapeCell('p < 0.05, p<0.05, a <')).toBe('p < 0.05, p\\<0.05, a <');
    expect(escapeCell('[x](javascript:y) ![i](z) [12]')).toBe('[x\\](javascript:y) ![i\\](z) [12]');
    expect(escapeCell('&lt; &#60; & Jones')).toBe('\\&lt; \\&#60; & Jones');
    expect(escapeCell('*a* _b_ `c` ~d~ $e$')).toBe('\\*a\\* \\_b\\_ \\`c\\` \\~d\\~ \\$e\\$');
    expect(escapeCell('snake_case 1_000 é_ü')).toBe('snake_case 1_000 é_ü');
    expect(escapeCell('https://a.org www.b.org WWW.c.org')).toBe('https\\://a.org www\\.b.org WWW\\.c.org');
    expect(escapeCell("O'Brien = -5 @home")).toBe("O'Brien = -5 @home");
  });

  it('a Notes column only when a row has a note', () => {
    expect(one({}).table).not.toContain('Notes');
    expect(one({ note: '   ' }).table).not.toContain('Notes');
    const out = render([
      { ...base, note: 'n=12' },
      { ...base, item_key: 'BCDE3456' },
    ]);
    expect(out.table).toContain('| Study | Finding | Quotation | Locator | Coverage | Support | Notes |');
    expect(out.table).toContain('| supported | n=12 |');
    expect(out.table).toContain('| supported |  |');
  });

  it('never gets the apostrophe; cells are echoed otherwise unchanged', () => {
    const out = one({ finding: '=1+1', quotation: '@cmd', note: '-x' });
    expect(out.table).toContain('| =1+1 | @cmd |');
    expect(out.table).not.toContain("'=");
  });

  it('starts with the caption and ends with the coverage line, then the warnings', () => {
    const out = render([{ ...base, quotation: undefined }]);
    const lines = out.table.split('\n');
    expect(lines[0]).toBe('Table: Q?');
    expect(lines[1]).toBe('');
    expect(out.table.endsWith(`${out.summary}\n\nWarnings:\n\n- ${out.warnings.join('\n- ')}\n`)).toBe(true);
  });
});

describe('CSV cells', () => {
  it('header, CRLF everywhere, the final CRLF, rows only', () => {
    const out = one({}, 'csv');
    expect(out.table).toBe(
      'Item key,Study,Finding,Quotation,Locator,Locator quality,Coverage,Support,Notes\r\n' +
        'ABCD2345,Smith 2020,It helps.,It helped a lot.,4,exact,passage,supported,\r\n',
    );
  });

  it('quotes fields with quotes, commas, line breaks or edge whitespace, doubling quotes', () => {
    const out = one({ finding: 'say "hi", ok', quotation: 'a\nb', note: ' pad ', study: 'plain' }, 'csv');
    expect(out.table).toContain(',plain,"say ""hi"", ok","a\nb",');
    expect(out.table).toContain(',supported," pad "\r\n');
    expect(csvRows(out.table)[1]).toEqual([
      'ABCD2345',
      'plain',
      'say "hi", ok',
      'a\nb',
      '4',
      'exact',
      'passage',
      'supported',
      ' pad ',
    ]);
  });

  it('echoes the locator exactly, its quality in its own column; a missing locator has quality none', () => {
    const cells = (patch: Partial<EvidenceRow>) => csvRows(one(patch, 'csv').table)[1]!.slice(4, 6);
    expect(cells({ page: 12, page_exact: true })).toEqual(['12', 'exact']);
    expect(cells({ page: 'e1043', page_exact: false })).toEqual(['e1043', 'approximate']);
    expect(cells({ page: '  xii ', page_exact: undefined })).toEqual(['  xii ', 'unstated']);
    expect(cells({ page: undefined })).toEqual(['', 'none']);
  });

  it('guards formula starters with one apostrophe, but not plain numbers', () => {
    const cell = (finding: string) => csvRows(one({ finding }, 'csv').table)[1]![2];
    expect(cell('=1+1')).toBe("'=1+1");
    expect(cell('+1+1')).toBe("'+1+1");
    expect(cell('-x')).toBe("'-x");
    expect(cell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(cell('\tx')).toBe("'\tx");
    expect(cell('\rx')).toBe("'\rx");
    expect(cell('-5')).toBe('-5');
    expect(cell('+12')).toBe('+12');
    expect(cell(' =1')).toBe(' =1');
    expect(cell("'quoted")).toBe("'quoted");
    expect(one({ page: -5 }, 'csv').warnings).toEqual([]);
  });
});
