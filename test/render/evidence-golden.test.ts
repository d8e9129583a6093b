/**
 * Golden files: the exact bytes of the Markdown and CSV renderings of hostile and plain rows.
 * Regenerate after an intended change with `UPDATE_GOLDEN=1 npx vitest run test/render`,
 * then review the diff.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEvidenceTable, type EvidenceRow, type TableFormat } from '../../src/render/evidence/index.js';
import {
  HOSTILE_QUESTION,
  HOSTILE_ROWS,
  MARKUP_QUESTION,
  MARKUP_ROWS,
  PLAIN_QUESTION,
  PLAIN_ROWS,
} from './fixtures.js';
import { viewMarkdown } from './markdown-view.js';

const GOLDEN = join(import.meta.dirname, 'golden');

function checkGolden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual);
  expect(existsSync(path), `${name} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  // Compared as bytes: line ends (CRLF in CSV) and every escape count.
  expect(Buffer.from(actual, 'utf8').equals(readFileSync(path)), `${name} differs from its golden file`).toBe(
    true,
  );
}

const cases: Array<[string, string, EvidenceRow[]]> = [
  ['hostile', HOSTILE_QUESTION, HOSTILE_ROWS],
  ['markup', MARKUP_QUESTION, MARKUP_ROWS],
  ['plain', PLAIN_QUESTION, PLAIN_ROWS],
];

describe.each(cases)('%s rows', (name, question, rows) => {
  it.each<[TableFormat, string]>([
    ['markdown', 'md'],
    ['csv', 'csv'],
  ])('renders %s exactly as the golden file', (format, ext) => {
    const rendered = renderEvidenceTable({ question, rows, format });
    checkGolden(`evidence-${name}.${ext}`, rendered.table);
    // Deterministic: a second rendering gives the same bytes.
    expect(renderEvidenceTable({ question, rows, format }).table).toBe(rendered.table);
  });
});

describe('the hostile golden files', () => {
  const read = (name: string) => readFileSync(join(GOLDEN, name), 'utf8');

  it('Markdown: caption, six columns plus Notes, placeholders, coverage line, warnings; LF only', () => {
    const md = read('evidence-hostile.md');
    const lines = md.split('\n');
    expect(lines[0]).toBe('Table: Does drug X \\| drug Y reduce risk? A "second" line, with \\\\ backslash');
    expect(lines[2]).toBe('| Study | Finding | Quotation | Locator | Coverage | Support | Notes |');
    expect(md).not.toContain('\r');
    expect(md).toContain('| (no quotation) |');
    expect(md).toContain('| (no locator) |');
    expect(md).toContain('| 12 (exact) |');
    expect(md).toContain('| e1043 (approximate) |');
    expect(md).toContain('| -5 (exactness unstated) |');
    expect(md).toContain('| Lee 2019 (BCDE3456) |'); // the label already carries the key
    expect(md).toContain('| Smith \\| Jones 2020 (ABCD2345) |');
    expect(md).toContain('| FGHJ7892 |'); // blank label: the key alone
    expect(md).toContain(
      'Coverage: 5 of 8 rows rest on a retrieved passage, 1 on the abstract only, 2 on no retrieved text. 3 rows contradict their own evidence; 6 warnings.',
    );
    expect(md).toContain('\nWarnings:\n\n- Row 2 (BCDE3456): has a page locator but no quotation');
    expect(md).not.toContain("'="); // no apostrophe in Markdown
    expect(md).not.toContain('formula');
  });

  it('CSV: CRLF line ends including the last, the header, apostrophes only where a formula would run', () => {
    const csv = read('evidence-hostile.csv');
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(
      csv.startsWith('Item key,Study,Finding,Quotation,Locator,Locator quality,Coverage,Support,Notes\r\n'),
    ).toBe(true);
    expect(csv).toContain(",'=SUM(A1:A9),");
    expect(csv).toContain(',+12,'); // a plain number is left alone
    expect(csv).toContain(',-5,unstated,'); // the page -5 too
    expect(csv).toContain(`,"'\rCarriage start",`);
    expect(csv).toContain(`,"'\tTabbed finding",`);
    expect(csv).toContain(",'@home study,");
    expect(csv).toContain(",'-- see appendix\r\n");
    expect(csv).toContain('"  Müller 2021  "'); // edge whitespace is quoted, not trimmed
    expect(csv).toContain('"Line one\r\nline ""two"", with comma"');
    expect(csv).toContain(',"   ",'); // a whitespace-only quotation is echoed as given
    expect(csv).not.toContain('Coverage:'); // rows only
  });
});

describe('the markup golden file, as a Markdown viewer shows it (marked, GFM)', () => {
  // Read when the tests run, after the golden files are (re)written above.
  const read = () => readFileSync(join(GOLDEN, 'evidence-markup.md'), 'utf8');

  it('produces no tag, handler or link of its own: every script, image and link stays text', () => {
    const view = viewMarkdown(read());
    expect(view.liveMarkup).toEqual([]);
    expect(view.html).not.toMatch(/<(?:script|img|b|em|strong|del|code)\b/);
    expect(view.html).not.toMatch(/<[^>]*\son\w+=/); // a handler inside a real tag
    // The one link: an email address in angle brackets becomes mailto:, which runs nothing.
    expect([...view.html.matchAll(/(?:href|src)="([^"]*)"/g)].map((m) => m[1])).toEqual(['mailto:a@b.co']);
    expect(view.html).not.toContain('<!--');
  });

  it('shows every cell exactly as given, the caption and the locator too', () => {
    const view = viewMarkdown(read());
    expect(view.blocks[0]).toBe(`Table: ${MARKUP_QUESTION}`);
    const [first, second] = MARKUP_ROWS as [EvidenceRow, EvidenceRow];
    expect(view.rows[1]).toEqual([
      `${first.study} (${first.item_key})`,
      first.finding,
      first.quotation,
      `${String(first.page)} (exact)`,
      'passage',
      'supported',
      first.note,
    ]);
    expect(view.rows[2]).toEqual([
      `${second.study} (${second.item_key})`,
      second.finding,
      second.quotation,
      `${String(second.page)} (exactness unstated)`,
      'passage',
      'supported',
      second.note,
    ]);
  });

  it('keeps ordinary prose readable: escapes only what would otherwise mean something', () => {
    const md = read();
    expect(md).toContain('p\\<0.05 and p < 0.05, [12], snake_case_name, 1_000');
    expect(md).toContain('Smith & Jones');
    expect(md).toContain('[click me\\](javascript:alert(3))');
    expect(md).not.toContain("'<"); // no apostrophe in Markdown
  });
});
