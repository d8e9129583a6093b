/**
 * What the evidence table says about spreadsheets (issue 16, point 21). LibreOffice Calc, like
 * most CSV imports, keeps the formula guard's apostrophe visible (`'=1+1` stays `'=1+1`), turns
 * number-like text into numbers or dates and garbles non-ASCII text on its default import. The
 * CSV bytes stay as the seed specifies them; the description tells the truth about the marker,
 * keeping every other promise of the seed's wording; the README says how to import as text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEvidenceTable } from '../../src/render/evidence/index.js';
import evidenceTable from '../../src/tools/evidence/evidence-table.js';
import { renderRefs } from '../../src/core/call/refs.js';
import { mcpRefRenderer } from '../../src/surfaces/mcp/refs.js';

/** The sentences of seeds/002's tool description other than the one about the CSV marker. */
const SEED_SENTENCES = [
  'Render rows of retrieved evidence as a Markdown or CSV table, deterministically, from passages you already retrieved with zotero_get_fulltext and zotero_semantic_search.',
  "This tool does NOT search and does NOT read the library: it formats what you pass it and echoes each row's quotation, locator and coverage back unchanged.",
  'It counts the coverage summary from the rows rather than taking your word for it, and it warns, naming the row, when a row contradicts its own evidence (a page locator with no quotation, coverage claiming a retrieved passage with no quotation, a quotation on a source marked unavailable, or any support verdict other than "unverified" on a row whose coverage is not a retrieved passage); it warns and still renders, and never rewords a cell.',
  'Markdown output carries no such marker.',
  'Use the zotero-evidence-table prompt to gather the rows first.',
  'Each row records one study against one question: the finding, the verbatim quotation that supports it, the page locator, whether that locator is exact or approximate, how well the source was covered (a passage was retrieved, only the abstract was available, or nothing was), and the support status.',
  'Returns the rendered table as text; pass save_path to also write it to a file.',
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

  it('the description says the apostrophe stays visible and stops formulas, and how to import as text', () => {
    const text = evidenceTable.description;
    expect(text).not.toMatch(/consumes/);
    expect(text).toContain('so the CSV writes it with a leading apostrophe');
    expect(text).toContain('and no formula runs');
    expect(text).toContain(
      'A spreadsheet opening the file does not consume that apostrophe: LibreOffice Calc, like most CSV imports, shows it as the first character of the cell',
    );
    expect(text).toContain(
      'every such cell is named in warnings, and a plain number like a page locator of -5 is left alone.',
    );
    expect(text).toContain(
      'importing the CSV as UTF-8 with every column typed as Text keeps each cell as written',
    );
  });

  it("the description still makes every other promise of the seed's, in the seed's words", () => {
    // As MCP publishes it: the seed's pointer to its prompt is said on MCP only.
    const published = renderRefs(evidenceTable.description, mcpRefRenderer);
    for (const sentence of SEED_SENTENCES) expect(published).toContain(sentence);
    expect(evidenceTable.description).toContain('One byte is added and only in CSV');
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
