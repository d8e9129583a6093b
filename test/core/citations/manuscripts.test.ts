/** The keys a manuscript cites (issue 17, deliverable 6): crafted .tex, .aux, Markdown and .bib. */
import { describe, expect, it } from 'vitest';
import { citedKeys, manuscriptKind } from '../../../src/core/citations/manuscripts.js';

const keys = (text: string, kind: Parameters<typeof citedKeys>[1]) => citedKeys(text, kind).map((k) => k.key);

describe('LaTeX', () => {
  it('reads the cite family, multi-key forms and optional arguments, and skips comments', () => {
    const tex = [
      '\\documentclass{article}',
      'As shown \\cite{smith2020} and \\citep[see][p.~12]{jones2019, lee2021}.',
      '\\textcite{vaswani2017} and \\parencite[42]{church2013} and \\autocite*{doe2000}.',
      '% \\cite{commented-out}',
      'A percent sign 50\\% is text \\citet{after_percent}.',
      '\\footcite{foot:key} \\Textcite{Capital.Key} \\citeauthor{smith2020} \\nocite{*} \\nocite{uncited}',
      '\\parencites[1]{multi-a}[2]{multi-b} \\cites(pre)(post)[3]{multi-c}{multi-d}',
    ].join('\n');
    expect(keys(tex, 'tex')).toEqual([
      'smith2020',
      'jones2019',
      'lee2021',
      'vaswani2017',
      'church2013',
      'doe2000',
      'after_percent',
      'foot:key',
      'Capital.Key',
      'uncited',
      'multi-a',
      'multi-b',
      'multi-c',
      'multi-d',
    ]);
    const first = citedKeys(tex, 'tex');
    expect(first.find((k) => k.key === 'smith2020')).toEqual({ key: 'smith2020', line: 2, count: 2 });
    expect(first.find((k) => k.key === 'multi-c')?.line).toBe(7);
  });
});

describe('.aux', () => {
  it('reads \\citation lines of LaTeX and biblatex’s \\abx@aux@cite', () => {
    const aux = [
      '\\relax',
      '\\citation{smith2020,jones2019}',
      '\\citation{smith2020}',
      '\\abx@aux@cite{0}{lee2021}',
      '\\abx@aux@cite{old-form}',
      '\\bibstyle{plain}',
    ].join('\n');
    expect(citedKeys(aux, 'aux')).toEqual([
      { key: 'smith2020', line: 2, count: 2 },
      { key: 'jones2019', line: 2, count: 1 },
      { key: 'lee2021', line: 4, count: 1 },
      { key: 'old-form', line: 5, count: 1 },
    ]);
  });
});

describe('pandoc Markdown', () => {
  it('reads [@key], @key, [-@key], locators and @{odd keys}, not e-mail addresses or code', () => {
    const md = [
      '# Results',
      'Sea levels rose [@church2013; see @jones2019, p. 33].',
      '@vaswani2017 says that attention [-@vaswani2017] is enough.',
      'Write to me@example.org or see [@doi:10.1000/182].',
      'The key ends before punctuation: @smith2020.',
      '`@incode` is code, and so is',
      '```',
      '@fenced',
      '```',
      'An odd key: [@{weird key}].',
    ].join('\n');
    expect(keys(md, 'markdown')).toEqual([
      'church2013',
      'jones2019',
      'vaswani2017',
      'doi:10.1000/182',
      'smith2020',
      'weird key',
    ]);
    expect(citedKeys(md, 'markdown').find((k) => k.key === 'vaswani2017')).toEqual({
      key: 'vaswani2017',
      line: 3,
      count: 2,
    });
  });
});

describe('.bib', () => {
  it('lists the entry keys, not @string, @preamble or @comment', () => {
    const bib = [
      '@string{jgr = "J. Geophys. Res."}',
      '@preamble{"\\newcommand{\\noop}[1]{}"}',
      '@article{church2013,',
      '  title = {Sea level},',
      '}',
      '@Book{ goodfellow2016 ,',
      '  title = {Deep Learning}}',
      '@comment{not-an-entry,}',
      '@misc(paren-entry, title = {x})',
    ].join('\n');
    expect(keys(bib, 'bib')).toEqual(['church2013', 'goodfellow2016', 'paren-entry']);
  });
});

describe('kinds', () => {
  it('by extension, case-insensitively; unknown is undefined', () => {
    expect(manuscriptKind('paper.TEX')).toBe('tex');
    expect(manuscriptKind('paper.aux')).toBe('aux');
    expect(manuscriptKind('notes.qmd')).toBe('markdown');
    expect(manuscriptKind('refs.bib')).toBe('bib');
    expect(manuscriptKind('paper.docx')).toBeUndefined();
  });
});

describe('size', () => {
  it('a .bib of 50,000 entries is read in linear time (each key with its line)', () => {
    const bib = Array.from({ length: 50_000 }, (_, i) => `@article{key${i},\n  title = {T${i}},\n}\n`).join(
      '',
    );
    const keys = citedKeys(bib, 'bib');
    expect(keys).toHaveLength(50_000);
    expect(keys[49_999]).toEqual({ key: 'key49999', line: 149_998, count: 1 });
  });
});
