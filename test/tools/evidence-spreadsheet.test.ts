/**
 * What the evidence table says about spreadsheets (issue 16, point 21). LibreOffice Calc, like
 * most CSV imports, keeps the formula guard's apostrophe visible (`'=1+1` stays `'=1+1`), turns
 * number-like text into numbers or dates and garbles non-ASCII text on its default import. The
 * CSV bytes stay as the seed specifies them; the description tells the truth about the marker,
 * keeping every other promise of the seed's (in fewer words, issue 22); the README says how to
 * import as text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEvidenceTable } from '../../src/render/evidence/index.js';
import evidenceTable from '../../src/tools/evidence/evidence-table.js';
import { renderRefs } from '../../src/core/call/refs.js';
import { mcpRefRenderer } from '../../src/surfaces/mcp/refs.js';

/**
 * What seeds/002's tool description promises, said in fewer words within the tools/list budget
 * (issue 22): each promise an agent needs stays, in the words it reads on MCP (that save_path
 * also writes a file, the seed's own save_path text says).
 */
const SEED_PROMISES = [
  'Render evidence rows as a Markdown/CSV table from passages retrieved with zotero_get_fulltext and zotero_semantic_search;',
  'offline, no key: it does NOT search or read the library, keeps every cell as given, counts coverage from the rows.',
  'warnings: self-contradicting rows (still rendered)',
  'Use the zotero-evidence-table prompt to gather the rows first.',
];

describe('the evidence table and spreadsheets', () => {
  it('keeps the CSV bytes: one apostrophe on a formula cell, number-like and non-ASCII text as given', () => {
    const { table } = renderEvidenceTable({
      question: 'Q',
      format: 'csv',
      rows: [
        {
          item_key: 'ABCD2345',
          study: 'Zoë Müller 2021',
          finding: '=1+1',
          quotation: '0012 samples, 北京',
          page: '2020-01-02',
          page_exact: true,
          coverage: 'passage',
          support: 'supported',
          note: '-5',
        },
      ],
    });
    expect(Buffer.from(table, 'utf8').toString('hex')).toBe(
      Buffer.from(
        'Item key,Study,Finding,Quotation,Locator,Locator quality,Coverage,Support,Notes\r\n' +
          'ABCD2345,Zoë Müller 2021,\'=1+1,"0012 samples, 北京",2020-01-02,exact,passage,supported,-5\r\n',
        'utf8',
      ).toString('hex'),
    );
  });

  it('the description says the apostrophe stays visible and stops formulas, and warnings name the cell', () => {
    const text = evidenceTable.description;
    expect(text).not.toMatch(/consumes/);
    expect(text).toContain(
      'warnings: self-contradicting rows (still rendered), CSV cells starting =, +, -, @ (a visible apostrophe stops formulas).',
    );
    // Markdown has no such marker: only the CSV sentence speaks of one.
    expect(text.match(/apostrophe/g)).toHaveLength(1);
  });

  it("the description still makes every other promise of the seed's", () => {
    // As MCP publishes it: the seed's pointer to its prompt is said on MCP only.
    const published = renderRefs(evidenceTable.description, mcpRefRenderer);
    for (const sentence of SEED_PROMISES) expect(published).toContain(sentence);
    expect(renderRefs(evidenceTable.description, { ...mcpRefRenderer, surface: 'cli' })).not.toContain(
      'zotero-evidence-table prompt',
    );
  });

  it('the README says how to open the CSV in LibreOffice Calc and in Excel so every cell stays text', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const start = readme.indexOf('## Opening an evidence CSV in a spreadsheet\n');
    expect(start).toBeGreaterThan(0);
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    expect(section).toContain("(`'=1+1` shows as `'=1+1`)");
    expect(section).toMatch(/\*\*LibreOffice Calc\*\*: File → Open/);
    expect(section).toMatch(/\*\*Character set\*\* to _Unicode \(UTF-8\)_/);
    expect(section).toMatch(/select all columns, set \*\*Column type\*\* to\s+_Text_/);
    expect(section).toMatch(/\*\*Excel\*\*: Data → From Text\/CSV/);
    expect(section).toMatch(/\*\*File origin\*\* to\s+_65001: Unicode \(UTF-8\)_/);
    expect(section).toMatch(/Transform → \*\*Data Type: Text\*\*/);
  });
});
