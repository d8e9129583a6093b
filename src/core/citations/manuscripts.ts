/**
 * The citation keys a manuscript cites, for checking them against the library: LaTeX (`\cite`
 * and its natbib and biblatex relatives, multi-key and with optional arguments), the `.aux`
 * files LaTeX and biber leave behind, pandoc Markdown (`[@key]`, `@key`, `[-@key]`) and `.bib`
 * files (their entry keys). Each key is reported once, with the line it first appears on.
 */
import { extname } from 'node:path';

export type ManuscriptKind = 'tex' | 'aux' | 'markdown' | 'bib';

export interface CitedKey {
  key: string;
  /** 1-based line of the first citation. */
  line: number;
  /** How many times the manuscript cites it. */
  count: number;
}

const KINDS: Record<string, ManuscriptKind> = {
  '.tex': 'tex',
  '.ltx': 'tex',
  '.latex': 'tex',
  '.aux': 'aux',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.qmd': 'markdown',
  '.rmd': 'markdown',
  '.bib': 'bib',
};

/** The kind of a manuscript by its file name, or undefined for one this module cannot read. */
export function manuscriptKind(path: string): ManuscriptKind | undefined {
  return KINDS[extname(path).toLowerCase()];
}

export const MANUSCRIPT_EXTENSIONS = Object.keys(KINDS);

/** Keys in the order first cited, with their first line and count. */
class Collected {
  private readonly keys = new Map<string, CitedKey>();
  add(key: string, line: number): void {
    const k = key.trim();
    if (k === '' || k === '*') return;
    const seen = this.keys.get(k);
    if (seen) seen.count += 1;
    else this.keys.set(k, { key: k, line, count: 1 });
  }
  list(): CitedKey[] {
    return [...this.keys.values()];
  }
}

/**
 * The 1-based line of an offset, by binary search over the line starts (counted once per
 * text): a `.bib` of tens of thousands of entries stays linear, not quadratic.
 */
function lineFinder(text: string): (index: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (index) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The text without LaTeX comments (a `%` not escaped as `\%`), keeping line breaks. */
function withoutTexComments(text: string): string {
  return text.replace(/(^|[^\\])%.*$/gm, '$1');
}

/**
 * `\cite`, `\citep`, `\citet*`, `\parencite`, `\textcite`, `\autocite`, `\footcite`,
 * `\smartcite`, `\supercite`, `\fullcite`, `\citeauthor`, `\nocite`, capitalised forms, with up
 * to two optional arguments (`\cite[see][12]{a,b}`); biblatex's multicite forms (`\cites{a}{b}`,
 * `\parencites[1]{a}[2]{b}`, `\cites(pre)(post){a}{b}`) too. `\nocite{*}` cites nothing.
 */
const TEX_COMMAND = /\\([a-zA-Z]*[Cc]ite[a-zA-Z]*)\*?/g;
/** One optional or group argument at the start of `rest`: `[…]`, `(…)` (multicite) or `{…}`. */
const ARGUMENT = /^\s*(?:\[([^\]]*)\]|\(([^)]*)\)|\{([^{}]*)\})/;

function texKeys(text: string, out: Collected): void {
  const source = withoutTexComments(text);
  const lineAt = lineFinder(source);
  for (const m of source.matchAll(TEX_COMMAND)) {
    const name = m[1] as string;
    const multi = /cites$/i.test(name);
    const line = lineAt(m.index);
    let rest = source.slice(m.index + m[0].length);
    for (;;) {
      const arg = ARGUMENT.exec(rest);
      if (!arg) break;
      rest = rest.slice(arg[0].length);
      if (arg[3] === undefined) continue;
      for (const key of arg[3].split(',')) out.add(key, line);
      // A single cite has one group of keys; a multicite takes every group that follows.
      if (!multi) break;
    }
  }
}

/** `\citation{a,b}` (LaTeX) and `\abx@aux@cite{0}{a}` / `\abx@aux@cite{a}` (biblatex). */
function auxKeys(text: string, out: Collected): void {
  const lineAt = lineFinder(text);
  for (const m of text.matchAll(/\\citation\{([^{}]*)\}/g)) {
    const line = lineAt(m.index);
    for (const key of (m[1] as string).split(',')) out.add(key, line);
  }
  for (const m of text.matchAll(/\\abx@aux@cite\{(?:[^{}]*\}\{)?([^{}]*)\}/g))
    out.add(m[1] as string, lineAt(m.index));
}

/**
 * Pandoc's citation syntax: `@key` after a non-word character (so e-mail addresses are not
 * citations), `-@key` suppressing the author, `@{key with odd characters}`. A key starts with
 * a letter, digit or `_` and may hold `:.#$%&-+?<>~/` inside; trailing punctuation is not part
 * of it. Code spans and fenced code blocks cite nothing.
 */
function markdownKeys(text: string, out: Collected): void {
  const blanked = text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
  const lineAt = lineFinder(blanked);
  for (const m of blanked.matchAll(
    /(?<![\w@.])-?@(?:\{([^{}]+)\}|([\p{L}\p{N}_][\p{L}\p{N}_:.#$%&\-+?<>~/]*))/gu,
  )) {
    const key = m[1] ?? (m[2] as string).replace(/[:.#$%&\-+?<>~/]+$/u, '');
    out.add(key, lineAt(m.index));
  }
}

/** Entry keys of a `.bib` file (`@article{key,`), not `@string`, `@preamble` or `@comment`. */
function bibKeys(text: string, out: Collected): void {
  const lineAt = lineFinder(text);
  for (const m of text.matchAll(/^[ \t]*@([a-zA-Z]+)\s*[{(]\s*([^,\s{}()]+)\s*,/gm)) {
    const type = (m[1] as string).toLowerCase();
    if (type === 'string' || type === 'preamble' || type === 'comment') continue;
    out.add(m[2] as string, lineAt(m.index));
  }
}

const READERS: Record<ManuscriptKind, (text: string, out: Collected) => void> = {
  tex: texKeys,
  aux: auxKeys,
  markdown: markdownKeys,
  bib: bibKeys,
};

/** The keys `text` (a manuscript of this kind) cites, in the order first cited. */
export function citedKeys(text: string, kind: ManuscriptKind): CitedKey[] {
  const out = new Collected();
  READERS[kind](text, out);
  return out.list();
}
