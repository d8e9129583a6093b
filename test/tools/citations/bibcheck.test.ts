/**
 * `zot bibcheck` / `zotero_check_citations` (issue 17, deliverable 6) on the sample library's
 * zotero.sqlite: crafted `.tex`, `.aux`, Markdown and `.bib` manuscripts checked against the
 * library's keys (CHURCH22 has Extra `Citation Key: church2011`, the others the keys Zotero's
 * formula gives them), `--write-bib` read back by an independent BibTeX parser, the exit codes
 * of a check with missing keys, and the errors of manuscripts that cannot be read.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@retorquere/bibtex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { I, startSample, structured, texts, type Sample } from '../items/read/setup.js';

let sample: Sample;
let dir: string;
beforeAll(async () => {
  sample = await startSample();
  dir = join(sample.dir, 'manuscripts');
  mkdirSync(dir, { recursive: true });
});
afterAll(async () => {
  await sample?.close();
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

type Data = Record<string, unknown> & {
  counts: Record<string, number>;
  found: Array<Record<string, unknown>>;
  missing: Array<Record<string, unknown>>;
  unstable: Array<Record<string, unknown>>;
  failed: Array<Record<string, unknown>>;
};
const data = (r: Awaited<ReturnType<typeof zotAt>>) => r.json().data as Data;
const error = (r: Awaited<ReturnType<typeof zotAt>>) =>
  r.json().error as { code: string; message: string; hint?: string; field?: string; failed?: unknown[] };

const PAPER_TEX = [
  '\\documentclass{article}', // 1
  '\\begin{document}', // 2
  'As \\citet{church2011} show, and others \\parencite[see][12]{vaswani_attention_2017, goodfellow_deep_2016},', // 3
  '% \\cite{commented_out_2020} is a comment, and \\% is not one: \\cite{church2011}', // 4
  'see also \\autocite{vaswani2017} and \\textcite{nosuchkey_2020}.', // 5
  '\\cites[3]{he_deep_2016}{church_sea_2013} \\nocite{*}', // 6
  '\\end{document}', // 7
].join('\n');

describe('zot bibcheck on a .tex manuscript', () => {
  it('found, missing with did-you-mean, unstable: a partial result, exit 7', async () => {
    const path = write('paper.tex', PAPER_TEX);
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(7);
    expect(r.json().ok).toBe('partial');
    const d = data(r);
    expect(d).toMatchObject({
      manuscripts: [{ file: path, kind: 'tex', keys: 7, citations: 7 }],
      cited: 7,
      counts: { found: 5, missing: 2, ambiguous: 0, unstable: 4 },
      backend: 'sqlite',
      library: 'users/8675309',
    });
    expect(d.found).toEqual([
      {
        citation_key: 'church2011',
        item_key: I.seaLevelArticle,
        title: 'Sea-level rise from the late 19th to the early 21st century',
        source: 'extra',
      },
      {
        citation_key: 'vaswani_attention_2017',
        item_key: I.attentionPaper,
        title: 'Attention Is All You Need',
        source: 'generated',
      },
      {
        citation_key: 'goodfellow_deep_2016',
        item_key: I.deepLearningBook,
        title: 'Deep Learning',
        source: 'generated',
      },
      {
        citation_key: 'he_deep_2016',
        item_key: 'XPMBKHPJ',
        title: 'Deep Residual Learning for Image Recognition',
        source: 'generated',
      },
      {
        citation_key: 'church_sea_2013',
        item_key: 'SFVT8NV6',
        title: 'Sea Level Change',
        source: 'generated',
      },
    ]);
    expect(d.succeeded).toEqual([
      'church2011',
      'vaswani_attention_2017',
      'goodfellow_deep_2016',
      'he_deep_2016',
      'church_sea_2013',
    ]);
    // The commented-out citation is no citation; \% did not start a comment.
    expect(d.missing).toEqual([
      { citation_key: 'vaswani2017', file: path, line: 5, did_you_mean: ['vaswani_attention_2017'] },
      { citation_key: 'nosuchkey_2020', file: path, line: 5, did_you_mean: [] },
    ]);
    expect(d.failed).toEqual([
      {
        index: 3,
        key: 'vaswani2017',
        code: 404,
        message: `No item in the library has the citation key "vaswani2017" (${path}, line 5). Did you mean "vaswani_attention_2017"?`,
        reason: 'not_found',
        retryable: false,
      },
      {
        index: 4,
        key: 'nosuchkey_2020',
        code: 404,
        message: `No item in the library has the citation key "nosuchkey_2020" (${path}, line 5).`,
        reason: 'not_found',
        retryable: false,
      },
    ]);
    expect(d.unstable.map((u) => u.citation_key)).toEqual([
      'vaswani_attention_2017',
      'goodfellow_deep_2016',
      'he_deep_2016',
      'church_sea_2013',
    ]);
    expect(d.warnings).toEqual([
      expect.stringContaining(
        'Pin one by adding the line "Citation Key: <key>" to its item’s Extra field (`zot update KEY`',
      ),
    ]);
    expect(d.provenance).toMatch(/never as instructions/);
    // Read-only against the library, and nothing written without --write-bib.
    expect(r.json().meta).toMatchObject({ total: 7 });
  });

  it('in a terminal: one line per missing, unstable and found key, and the failures on stderr', async () => {
    const path = write('terminal.tex', PAPER_TEX);
    const r = await zotAt(['bibcheck', path], { env: sample.env(), stdoutTTY: true });
    expect(r.code).toBe(7);
    expect(r.stdout).toContain(`missing    vaswani2017  ${path}:5 (did you mean vaswani_attention_2017?)`);
    expect(r.stdout).toContain('unstable   church_sea_2013  SFVT8NV6  Sea Level Change');
    expect(r.stdout).toContain(
      'found      church2011  CHURCH22  Sea-level rise from the late 19th to the early 21st century',
    );
  });
});

describe('zot bibcheck on .aux, Markdown and .bib manuscripts', () => {
  it('an .aux of LaTeX and biblatex whose keys are all found: ok, exit 0, no failed entries', async () => {
    const path = write(
      'paper.aux',
      [
        '\\relax',
        '\\citation{church2011}',
        '\\citation{he_deep_2016,bahdanau_neural_2015}',
        '\\abx@aux@cite{0}{devlin_bert_2019}',
        '\\bibstyle{plain}',
      ].join('\n'),
    );
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(0);
    expect(r.json().ok).toBe(true);
    const d = data(r);
    expect(d.counts).toEqual({ found: 4, missing: 0, ambiguous: 0, unstable: 3 });
    expect(d.found.map((f) => [f.citation_key, f.item_key])).toEqual([
      ['church2011', I.seaLevelArticle],
      ['he_deep_2016', 'XPMBKHPJ'],
      ['bahdanau_neural_2015', 'UCZ8PUVF'],
      ['devlin_bert_2019', 'QIQ8LZWR'],
    ]);
    expect(d.failed).toEqual([]);
  });

  it('pandoc Markdown: [@key], -@key, @key in text; not e-mail addresses or code; a key in the wrong case is missing with its right spelling', async () => {
    const path = write(
      'chapter.md',
      [
        '# Results',
        '',
        'Sea level rises [@church2011, p. 3; see -@kuhn_structure_1962].',
        'Write to someone@example.org, and run `@not_a_citation` in code.',
        '',
        '```',
        '@also_not_a_citation',
        '```',
        '',
        'As @Church2011 said, and [@murray_writing_2020].',
      ].join('\n'),
    );
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(7);
    const d = data(r);
    expect(d.cited).toBe(4);
    expect(d.found.map((f) => f.citation_key)).toEqual([
      'church2011',
      'kuhn_structure_1962',
      'murray_writing_2020',
    ]);
    expect(d.missing).toEqual([
      { citation_key: 'Church2011', file: path, line: 10, did_you_mean: ['church2011'] },
    ]);
  });

  it('.qmd and .bib files together, and a manuscript on stdin with --text - --kind', async () => {
    const qmd = write('notes.qmd', 'Deep nets [@goodfellow_deep_2016].\n');
    const bib = write(
      'old.bib',
      [
        '@string{j = "Journal"}',
        '@comment{not an entry}',
        '@article{hofstadter_go_1979,',
        '  title = {Gödel, Escher, Bach}',
        '}',
        '@book{hofstadter1979,',
        '  title = {GEB}',
        '}',
      ].join('\n'),
    );
    const r = await zotAt(['bibcheck', qmd, bib, '--text', '-', '--kind', 'tex'], {
      env: sample.env(),
      stdin: 'Kuhn \\cite{kuhn_structure_1962}.',
    });
    expect(r.code).toBe(7);
    const d = data(r);
    expect(d.manuscripts).toEqual([
      { file: qmd, kind: 'markdown', keys: 1, citations: 1 },
      { file: bib, kind: 'bib', keys: 2, citations: 2 },
      { file: '(text)', kind: 'tex', keys: 1, citations: 1 },
    ]);
    expect(d.found.map((f) => f.citation_key)).toEqual([
      'goodfellow_deep_2016',
      'hofstadter_go_1979',
      'kuhn_structure_1962',
    ]);
    expect(d.missing).toEqual([
      { citation_key: 'hofstadter1979', file: bib, line: 6, did_you_mean: ['hofstadter_go_1979'] },
    ]);
  });

  it('a key of an item in the trash is found, and says so', async () => {
    const path = write('trash.md', 'Retracted [@onymous_retracted_2012].\n');
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(d.found).toEqual([
      {
        citation_key: 'onymous_retracted_2012',
        item_key: I.trashedArticle,
        title: 'A retracted study of sea level in the trash',
        source: 'generated',
        in_trash: true,
      },
    ]);
    expect(d.warnings).toContain('1 cited item is in the trash (in_trash in found): TRASHED2.');
  });
});

describe('zot bibcheck --write-bib', () => {
  it('writes exactly the cited items found, under the keys they are cited by, in read-only mode too; refuses to replace a file without --overwrite', async () => {
    const tex = write('written.tex', PAPER_TEX);
    const bibPath = join(dir, 'out', 'refs.bib');
    const env = sample.env({ ZOTEUS_READ_ONLY: 'true' });
    const r = await zotAt(['bibcheck', tex, '--write-bib', bibPath], { env });
    expect(r.code).toBe(7);
    const text = readFileSync(bibPath, 'utf8');
    const d = data(r);
    expect(d.saved).toEqual({ path: bibPath, bytes: Buffer.byteLength(text, 'utf8'), entries: 5 });
    const bib = parse(text, { english: false });
    expect(bib.errors).toEqual([]);
    expect(bib.entries.map((e) => [e.key, e.type])).toEqual([
      ['church2011', 'article'],
      ['vaswani_attention_2017', 'inproceedings'],
      ['goodfellow_deep_2016', 'book'],
      ['he_deep_2016', 'inproceedings'],
      ['church_sea_2013', 'incollection'],
    ]);
    expect(bib.entries[0]?.fields).toMatchObject({
      journal: 'Surveys in Geophysics',
      doi: '10.1007/s10712-011-9119-1',
    });
    expect(d.warnings).toContain(
      `${bibPath} holds the 5 cited items found; the 2 keys missing or ambiguous are not in it.`,
    );

    writeFileSync(bibPath, 'mine');
    const again = await zotAt(['bibcheck', tex, '--write-bib', bibPath], { env });
    expect(again.code).toBe(6);
    expect(error(again)).toMatchObject({ code: 'conflict', field: 'write_bib' });
    expect(readFileSync(bibPath, 'utf8')).toBe('mine');

    const over = await zotAt(['bibcheck', tex, '--write-bib', bibPath, '--overwrite'], { env });
    expect(over.code).toBe(7);
    expect(readFileSync(bibPath, 'utf8')).toBe(text);
  });

  it('--dry-run writes nothing and reads nothing', async () => {
    const bibPath = join(dir, 'dry.bib');
    const r = await zotAt(['bibcheck', join(dir, 'never-read.tex'), '--write-bib', bibPath, '--dry-run'], {
      env: sample.env(),
    });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      dry_run: true,
      data: { would: { command: 'bibcheck', write_bib: bibPath, write_bib_exists: false, overwrite: false } },
    });
    expect(existsSync(bibPath)).toBe(false);
  });
});

describe('manuscripts that cannot be checked', () => {
  it('a file that does not exist: not_found naming it, exit 4', async () => {
    const path = join(dir, 'absent.tex');
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(4);
    expect(error(r)).toMatchObject({
      code: 'not_found',
      message: `No manuscript at ${path}: the file ${path} does not exist.`,
      field: 'files[0]',
    });
  });

  it('an unknown extension: validation_error listing the known ones, exit 3; --kind reads it all the same', async () => {
    const path = write('draft.txt', 'See [@church2011].');
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(3);
    expect(error(r)).toMatchObject({
      code: 'validation_error',
      message: `Cannot tell what kind of manuscript ${path} is: its extension is not one of .tex, .ltx, .latex, .aux, .md, .markdown, .qmd, .rmd, .bib.`,
      hint: 'Give --kind tex (or aux, markdown, bib) to read it as that kind.',
      field: 'files[0]',
    });
    const read = await zotAt(['bibcheck', path, '--kind', 'markdown'], { env: sample.env() });
    expect(read.code).toBe(0);
    expect(data(read).succeeded).toEqual(['church2011']);
  });

  it('a folder, "-" among the files, a text without its kind, nothing at all: validation errors, exit 3', async () => {
    const folder = join(dir, 'chapters.tex');
    mkdirSync(folder, { recursive: true });
    const asFolder = await zotAt(['bibcheck', folder], { env: sample.env() });
    expect(asFolder.code).toBe(3);
    expect(error(asFolder).message).toBe(`${folder} is a folder, not a manuscript.`);

    const dash = await zotAt(['bibcheck', '-'], { env: sample.env(), stdin: '\\cite{x}' });
    expect(dash.code).toBe(3);
    expect(error(dash)).toMatchObject({
      message: '"-" names no file: a manuscript from stdin is a text.',
      hint: 'Give --text - with --kind tex (or aux, markdown, bib) to read it from stdin.',
    });

    const noKind = await zotAt(['bibcheck', '--text', '-'], { env: sample.env(), stdin: '\\cite{x}' });
    expect(noKind.code).toBe(3);
    expect(error(noKind)).toMatchObject({ field: 'kind', hint: 'Add --kind tex (or aux, markdown, bib).' });

    const nothing = await zotAt(['bibcheck'], { env: sample.env() });
    expect(nothing.code).toBe(3);
    expect(error(nothing).message).toBe('Nothing to check: give the manuscripts’ paths, or a text.');
  });

  it('every key missing: not_found, exit 4, each key in error.failed with its suggestion; no .bib written', async () => {
    const path = write('wrong.tex', '\\cite{vaswani2017,goodfellow2016}');
    const bibPath = join(dir, 'none.bib');
    const r = await zotAt(['bibcheck', path, '--write-bib', bibPath], { env: sample.env() });
    expect(r.code).toBe(4);
    const e = error(r);
    expect(e).toMatchObject({
      code: 'not_found',
      message:
        'None of the 2 cited keys names exactly one item of the library: no item has 2 of them (see error.failed).',
    });
    expect(e.failed).toEqual([
      expect.objectContaining({
        index: 0,
        key: 'vaswani2017',
        message: expect.stringContaining('Did you mean "vaswani_attention_2017"?'),
      }),
      expect.objectContaining({
        index: 1,
        key: 'goodfellow2016',
        message: expect.stringContaining('Did you mean "goodfellow_deep_2016", "goodfellow_sequence_2016"?'),
      }),
    ]);
    expect(existsSync(bibPath)).toBe(false);
  });

  it('a manuscript that cites nothing: ok, and says so', async () => {
    const path = write('empty.tex', 'No citations here. \\nocite{*}');
    const r = await zotAt(['bibcheck', path], { env: sample.env() });
    expect(r.code).toBe(0);
    expect(data(r)).toMatchObject({ cited: 0, warnings: ['The manuscript cites no key.'] });
  });
});

describe('zotero_check_citations over MCP', () => {
  it('text and kind: a partial result (not an error) with the lists in structuredContent', async () => {
    const mcp = await sample.mcp();
    try {
      const r = await mcp.call('zotero_check_citations', {
        text: 'See \\parencite{church2011} and \\cite{kuhn1962}.',
        kind: 'tex',
      });
      expect(r.isError).toBeFalsy();
      const out = structured<Data>(r);
      expect(out.counts).toEqual({ found: 1, missing: 1, ambiguous: 0, unstable: 0 });
      expect(out.missing).toEqual([
        { citation_key: 'kuhn1962', file: '(text)', line: 1, did_you_mean: ['kuhn_structure_1962'] },
      ]);
      expect(texts(r)[0]).toContain('2 cited keys in (text): 1 found, 1 missing.');
      // Offered in read-only mode, which protects the library: the tool writes only a local file.
      const readOnly = await sample.mcp({ ZOTEUS_READ_ONLY: 'true' });
      try {
        expect(await readOnly.listTools()).toContain('zotero_check_citations');
      } finally {
        await readOnly.close();
      }
      const unknown = await mcp.call('zotero_check_citations', { files: [join(dir, 'a.docx')] });
      expect(unknown.isError).toBe(true);
      expect(texts(unknown)[0]).toMatch(/^validation_error: Cannot tell what kind of manuscript/);
    } finally {
      await mcp.close();
    }
  });
});
