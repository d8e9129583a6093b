/**
 * Field values in LaTeX: every special character escaped (and read back as itself by an
 * independent BibTeX parser), non-ASCII as LaTeX commands in ASCII mode or kept in UTF-8 mode,
 * capitals and acronyms braced in title fields, Zotero's rich-text markup as LaTeX commands.
 */
import { parse } from '@retorquere/bibtex-parser';
import { describe, expect, it } from 'vitest';
import { latexValue, toAsciiLatex } from '../../../src/core/exports/latex.js';

const ascii = (s: string) => latexValue(s, { charset: 'ascii' });
const utf8 = (s: string) => latexValue(s, { charset: 'utf8' });
const title = (s: string, charset: 'ascii' | 'utf8' = 'utf8') =>
  latexValue(s, { charset, protectCase: true });

/** What an independent parser reads back from `note = {value}` (no case changes, no markup). */
function readBack(value: string): string {
  const lib = parse(`@misc{k,\n\tnote = {${value}}\n}\n`, { english: false, caseProtection: false });
  expect(lib.errors).toEqual([]);
  return (lib.entries[0]?.fields.note as string).normalize('NFC');
}

describe('special characters', () => {
  it.each<[string, string]>([
    ['#', '\\#'],
    ['$', '\\$'],
    ['%', '\\%'],
    ['&', '\\&'],
    ['_', '\\_'],
    ['~', '{\\textasciitilde}'],
    ['^', '{\\textasciicircum}'],
    ['\\', '{\\textbackslash}'],
    ['<', '{\\textless}'],
    ['>', '{\\textgreater}'],
    ['|', '{\\textbar}'],
    ['{a}', '\\{a\\}'],
    ['{', '\\{\\vphantom{\\}}'],
    ['}', '\\vphantom{\\{}\\}'],
  ])('%s → %s', (input, expected) => {
    expect(utf8(input)).toBe(expected);
    expect(ascii(input)).toBe(expected);
  });

  it('a value with all of them reads back as itself, braces balanced', () => {
    const text = 'R&D: 50% of #1 costs $3_000 ~ x^2 \\ a|b <tag> {set} and a lone { brace';
    const tex = utf8(text);
    expect(tex).toBe(
      'R\\&D: 50\\% of \\#1 costs \\$3\\_000 {\\textasciitilde} x{\\textasciicircum}2 {\\textbackslash} a{\\textbar}b ' +
        '{\\textless}tag{\\textgreater} \\{set\\} and a lone \\{\\vphantom{\\}} brace',
    );
    let depth = 0;
    for (const c of tex.replace(/\\[{}]/g, '')) {
      if (c === '{') depth++;
      if (c === '}') depth--;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth).toBe(0);
    expect(readBack(tex)).toBe(text);
  });
});

describe('non-ASCII', () => {
  it.each<[string, string]>([
    ['é', "{\\'e}"],
    ['ü', '{\\"u}'],
    ['Ü', '{\\"U}'],
    ['ø', '{\\o}'],
    ['Ø', '{\\O}'],
    ['ß', '{\\ss}'],
    ['ł', '{\\l}'],
    ['Ł', '{\\L}'],
    ['ç', '{\\c c}'],
    ['č', '{\\v c}'],
    ['ą', '{\\k a}'],
    ['å', '{\\r a}'],
    ['ő', '{\\H o}'],
    ['ñ', '{\\~n}'],
    ['æ', '{\\ae}'],
    ['–', '{\\textendash}'],
    ['“”', '{\\textquotedblleft}{\\textquotedblright}'],
    ['€', '{\\texteuro}'],
    ['α', '$\\alpha$'],
    ['中文', '{中文}'],
    ['Москва', '{Москва}'],
  ])('ascii: %s → %s', (input, expected) => {
    expect(ascii(input)).toBe(expected);
  });

  it('decomposed and composed accents give the same command', () => {
    expect(ascii('e\u0301')).toBe(ascii('é'));
  });

  it('ascii output is ASCII except what LaTeX cannot spell, and reads back as the original', () => {
    const text = 'Éric Müller, Søren Kierkegaard, Straße, Łódź, 中国科学院 and Ærø';
    const tex = ascii(text);
    expect(tex).toBe(
      "{\\'E}ric M{\\\"u}ller, S{\\o}ren Kierkegaard, Stra{\\ss}e, {\\L}{\\'o}d{\\'z}, {中国科学院} and {\\AE}r{\\o}",
    );
    // eslint-disable-next-line no-control-regex
    expect(tex.replace('{中国科学院}', '')).toMatch(/^[\u0000-\u007f]*$/);
    expect(readBack(tex)).toBe(text);
  });

  it('utf8 keeps every character as it is', () => {
    const text = 'Éric Müller, Søren, Straße, Łódź, 中国科学院';
    expect(utf8(text)).toBe(text);
    expect(readBack(utf8(text))).toBe(text);
  });

  it('toAsciiLatex leaves ASCII alone', () => {
    expect(toAsciiLatex('plain {\\textit{x}}')).toBe('plain {\\textit{x}}');
  });
});

describe('case protection in titles', () => {
  it.each<[string, string]>([
    ['The theory of everything', 'The theory of everything'],
    ['The Theory of DNA in Paris', 'The {Theory} of {DNA} in {Paris}'],
    ['DNA repair in yeast', '{DNA} repair in yeast'],
    ['iPhone apps: A review', '{iPhone} apps: {A} review'],
    ['COVID-19 and the NHS', '{COVID}-19 and the {NHS}'],
    ['Climate change in 3D', 'Climate change in {3D}'],
    ["O'Brien's law", "O'{Brien}'s law"],
  ])('%s', (input, expected) => {
    expect(title(input)).toBe(expected);
  });

  it('works in every script and with ASCII conversion', () => {
    expect(title('Études sur Émile Zola')).toBe('Études sur {Émile} {Zola}');
    expect(title('Études sur Émile Zola', 'ascii')).toBe("{\\'E}tudes sur {{\\'E}mile} {Zola}");
    expect(title('Geschichte der Stadt Москва', 'ascii')).toBe('Geschichte der {Stadt} {Москва}');
  });

  it('braces survive an independent parser as case protection', () => {
    const lib = parse(`@article{k,\n\ttitle = {${title('The Theory of DNA')}}\n}\n`, {
      caseProtection: 'strict',
    });
    expect(lib.entries[0]?.fields.title).toBe(
      'The <span class="nocase">Theory</span> of <span class="nocase">DNA</span>',
    );
  });
});

describe("Zotero's rich-text markup", () => {
  it.each<[string, string]>([
    ['<i>Homo sapiens</i> genes', '\\textit{Homo sapiens} genes'],
    ['<b>bold</b>', '\\textbf{bold}'],
    ['H<sub>2</sub>O', 'H\\textsubscript{2}O'],
    ['x<sup>2</sup>', 'x\\textsuperscript{2}'],
    ['<sc>Small</sc>', '\\textsc{Small}'],
    ['<span style="font-variant:small-caps;">Small</span>', '\\textsc{Small}'],
    ['a <span class="nocase">pH</span> b', 'a {pH} b'],
    ['<i>one <b>two</b></i>', '\\textit{one \\textbf{two}}'],
    ['a <i>lone tag', 'a {\\textless}i{\\textgreater}lone tag'],
    ['1 < 2 > 0', '1 {\\textless} 2 {\\textgreater} 0'],
    ['<span>plain</span>', '{\\textless}span{\\textgreater}plain{\\textless}/span{\\textgreater}'],
  ])('%s', (input, expected) => {
    expect(utf8(input)).toBe(expected);
  });

  it('words inside markup are protected in titles', () => {
    expect(title('Evolution of <i>Homo Sapiens</i> in Africa')).toBe(
      'Evolution of \\textit{{Homo} {Sapiens}} in {Africa}',
    );
  });
});
