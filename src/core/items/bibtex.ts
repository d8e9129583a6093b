/**
 * A small BibTeX/BibLaTeX reader: entries with braced, quoted, numeric and macro values
 * (`#` concatenation, month macros, `@string` definitions), common LaTeX accents, and names
 * in both "Last, First" and "First Last" forms. Each entry becomes a CSL-JSON item.
 */
import type { CslItem } from './csl.js';
import { own } from '../own.js';

export interface BibEntry {
  type: string;
  citekey: string;
  fields: Record<string, string>;
  /** The entry's source text, for retrying only the entries that failed. */
  raw: string;
}

const MONTHS: Record<string, string> = {
  jan: '1',
  feb: '2',
  mar: '3',
  apr: '4',
  may: '5',
  jun: '6',
  jul: '7',
  aug: '8',
  sep: '9',
  oct: '10',
  nov: '11',
  dec: '12',
};

const ACCENTS: Record<string, Record<string, string>> = {
  '"': { a: 'ä', o: 'ö', u: 'ü', e: 'ë', i: 'ï', A: 'Ä', O: 'Ö', U: 'Ü', E: 'Ë', I: 'Ï', y: 'ÿ' },
  "'": {
    a: 'á',
    e: 'é',
    i: 'í',
    o: 'ó',
    u: 'ú',
    y: 'ý',
    c: 'ć',
    n: 'ń',
    s: 'ś',
    z: 'ź',
    A: 'Á',
    E: 'É',
    I: 'Í',
    O: 'Ó',
    U: 'Ú',
    C: 'Ć',
    S: 'Ś',
    Z: 'Ź',
  },
  '`': { a: 'à', e: 'è', i: 'ì', o: 'ò', u: 'ù', A: 'À', E: 'È', I: 'Ì', O: 'Ò', U: 'Ù' },
  '^': { a: 'â', e: 'ê', i: 'î', o: 'ô', u: 'û', A: 'Â', E: 'Ê', I: 'Î', O: 'Ô', U: 'Û' },
  '~': { a: 'ã', n: 'ñ', o: 'õ', A: 'Ã', N: 'Ñ', O: 'Õ' },
  c: { c: 'ç', C: 'Ç', s: 'ş', S: 'Ş' },
  v: { c: 'č', s: 'š', z: 'ž', r: 'ř', e: 'ě', n: 'ň', C: 'Č', S: 'Š', Z: 'Ž', R: 'Ř' },
  u: { a: 'ă', g: 'ğ', A: 'Ă', G: 'Ğ' },
  '=': { a: 'ā', e: 'ē', i: 'ī', o: 'ō', u: 'ū' },
  '.': { z: 'ż', Z: 'Ż' },
  H: { o: 'ő', u: 'ű', O: 'Ő', U: 'Ű' },
};

const SYMBOLS: Record<string, string> = {
  ss: 'ß',
  o: 'ø',
  O: 'Ø',
  ae: 'æ',
  AE: 'Æ',
  oe: 'œ',
  OE: 'Œ',
  aa: 'å',
  AA: 'Å',
  l: 'ł',
  L: 'Ł',
  i: 'ı',
};

/** LaTeX text → Unicode: accents, a few symbols, escaped specials; braces and `~` removed. */
export function latexToText(value: string): string {
  let s = value;
  s = s.replace(
    /\\([`'^"~=.])\s*\{?\\?([A-Za-z])\}?/g,
    (whole, accent: string, letter: string) => ACCENTS[accent]?.[letter] ?? whole,
  );
  s = s.replace(
    /\\([cvuH])\s*\{\\?([A-Za-z])\}/g,
    (whole, accent: string, letter: string) => ACCENTS[accent]?.[letter] ?? whole,
  );
  s = s.replace(/\\(ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i)\b\s*/g, (whole, name: string) => SYMBOLS[name] ?? whole);
  s = s.replace(/\\([&%$#_{}])/g, '$1');
  s = s.replace(/\\textemdash\b\s*|---/g, '\u2014').replace(/\\textendash\b\s*|--/g, '\u2013');
  s = s.replace(/\\(emph|textit|textbf|textsc|mathrm|text)\s*\{/g, '{');
  s = s.replace(/(?<!\\)[{}]/g, '');
  s = s.replace(/~/g, '\u00a0').replace(/\\,/g, ' ');
  return s.replace(/\s+/g, ' ').trim();
}

/** Reads one value (braced, quoted, number or macro, joined by `#`) starting at `i`. */
function readValue(text: string, start: number, macros: Map<string, string>): { value: string; end: number } {
  let i = start;
  const parts: string[] = [];
  for (;;) {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    const c = text[i];
    if (c === '{') {
      let depth = 0;
      const from = i + 1;
      for (; i < text.length; i++) {
        if (text[i] === '\\') {
          i++;
          continue;
        }
        if (text[i] === '{') depth++;
        else if (text[i] === '}' && --depth === 0) break;
      }
      parts.push(text.slice(from, i));
      i++;
    } else if (c === '"') {
      let depth = 0;
      const from = i + 1;
      for (i = from; i < text.length; i++) {
        if (text[i] === '\\') {
          i++;
          continue;
        }
        if (text[i] === '{') depth++;
        else if (text[i] === '}') depth--;
        else if (text[i] === '"' && depth === 0) break;
      }
      parts.push(text.slice(from, i));
      i++;
    } else {
      const found = /^[^\s,#}{)"]+/.exec(text.slice(i));
      const word = found?.[0] ?? '';
      i += word.length;
      const macro = macros.get(word.toLowerCase()) ?? MONTHS[word.toLowerCase().slice(0, 3)];
      parts.push(/^\d+$/.test(word) ? word : (macro ?? word));
    }
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    if (text[i] === '#') {
      i++;
      continue;
    }
    return { value: parts.join(''), end: i };
  }
}

/** The end of an entry body opened at `open` (`{` or `(`), honouring nested braces. */
function bodyEnd(text: string, open: number): number {
  const closer = text[open] === '(' ? ')' : '}';
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{' || (closer === ')' && c === '(' && depth === 0)) depth++;
    else if (c === '}' || (closer === ')' && c === ')')) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return text.length - 1;
}

export function parseBibtex(text: string): BibEntry[] {
  const entries: BibEntry[] = [];
  const macros = new Map<string, string>();
  const at = /@\s*([A-Za-z]+)\s*([{(])/g;
  for (let m = at.exec(text); m; m = at.exec(text)) {
    const type = (m[1] as string).toLowerCase();
    const open = m.index + m[0].length - 1;
    const end = bodyEnd(text, open);
    const body = text.slice(open + 1, end);
    at.lastIndex = end + 1;
    if (type === 'comment' || type === 'preamble') continue;
    if (type === 'string') {
      const def = /^\s*([^\s=]+)\s*=\s*/.exec(body);
      if (def?.[1]) macros.set(def[1].toLowerCase(), readValue(body, def[0].length, macros).value);
      continue;
    }
    const comma = body.indexOf(',');
    const citekey = (comma < 0 ? body : body.slice(0, comma)).trim();
    const fields: Record<string, string> = {};
    let i = comma < 0 ? body.length : comma + 1;
    while (i < body.length) {
      const name = /^\s*,?\s*([A-Za-z][\w:.-]*)\s*=\s*/.exec(body.slice(i));
      if (!name?.[1]) break;
      const read = readValue(body, i + name[0].length, macros);
      fields[name[1].toLowerCase()] = read.value;
      i = read.end;
      while (i < body.length && (body[i] === ',' || /\s/.test(body[i] as string))) i++;
    }
    entries.push({ type, citekey, fields, raw: text.slice(m.index, end + 1) });
  }
  return entries;
}

/** Splits a BibTeX name list on top-level `and`. */
function splitNames(value: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let current = '';
  const words = value.split(/(\s+and\s+|[{}])/i);
  for (const w of words) {
    if (w === '{') depth++;
    else if (w === '}') depth--;
    if (depth === 0 && /^\s+and\s+$/i.test(w)) {
      names.push(current);
      current = '';
    } else current += w;
  }
  names.push(current);
  return names.map((n) => n.trim()).filter(Boolean);
}

function parseName(raw: string): { family?: string; given?: string; literal?: string } {
  const trimmed = raw.trim();
  if (/^\{[^{}]*\}$/.test(trimmed)) return { literal: latexToText(trimmed) };
  const parts = trimmed.split(/\s*,\s*/);
  if (parts.length >= 2) {
    const family = latexToText(parts[0] as string);
    const given = latexToText(parts[parts.length - 1] as string);
    const jr = parts.length === 3 ? `, ${latexToText(parts[1] as string)}` : '';
    return { family, given: `${given}${jr}` };
  }
  const words = trimmed.split(/\s+/);
  if (words.length === 1) return { family: latexToText(trimmed), given: '' };
  // "First von Last": the family name starts at the first lower-case word after the first.
  let start = words.length - 1;
  for (let i = 1; i < words.length - 1; i++) {
    if (/^\{?[a-z]/.test(words[i] as string)) {
      start = i;
      break;
    }
  }
  return {
    family: latexToText(words.slice(start).join(' ')),
    given: latexToText(words.slice(0, start).join(' ')),
  };
}

const BIB_TYPES: Record<string, string> = {
  article: 'article-journal',
  book: 'book',
  mvbook: 'book',
  booklet: 'book',
  manual: 'book',
  proceedings: 'book',
  collection: 'book',
  inbook: 'chapter',
  incollection: 'chapter',
  inproceedings: 'paper-conference',
  conference: 'paper-conference',
  phdthesis: 'thesis',
  mastersthesis: 'thesis',
  thesis: 'thesis',
  techreport: 'report',
  report: 'report',
  unpublished: 'manuscript',
  online: 'webpage',
  electronic: 'webpage',
  www: 'webpage',
  dataset: 'dataset',
  software: 'software',
  patent: 'patent',
  misc: 'document',
};

/** A BibTeX entry as CSL-JSON; an arXiv eprint becomes a preprint (`article`). */
export function bibtexToCsl(entry: BibEntry): CslItem {
  const f = (name: string): string | undefined => {
    const v = entry.fields[name];
    return v === undefined || v.trim() === '' ? undefined : latexToText(v);
  };
  const eprint = f('eprint');
  const arxiv = eprint && /arxiv/i.test(f('archiveprefix') ?? f('eprinttype') ?? '') ? eprint : undefined;
  let type = own(BIB_TYPES, entry.type) ?? 'document';
  if (arxiv && (type === 'document' || type === 'article-journal') && !f('journal') && !f('journaltitle'))
    type = 'article';
  if (type === 'document' && f('url') && !f('publisher')) type = 'webpage';
  const year = f('year');
  const month = f('month');
  const date =
    f('date') ??
    (year ? `${year}${month && /^\d+$/.test(month) ? `-${month.padStart(2, '0')}` : ''}` : undefined);
  const names = (field: string) => {
    const v = entry.fields[field];
    return v ? splitNames(v).map(parseName) : undefined;
  };
  const genre =
    f('type') ??
    (entry.type === 'phdthesis'
      ? 'PhD thesis'
      : entry.type === 'mastersthesis'
        ? "Master's thesis"
        : undefined);
  const csl: CslItem = {
    type,
    title: f('title'),
    'title-short': f('shorttitle'),
    'container-title': f('journal') ?? f('journaltitle') ?? f('booktitle'),
    'container-title-short': f('shortjournal'),
    'collection-title': f('series'),
    volume: f('volume'),
    issue: type === 'article-journal' ? (f('number') ?? f('issue')) : f('issue'),
    number: type === 'article-journal' ? undefined : arxiv ? `arXiv:${arxiv}` : f('number'),
    page: f('pages')?.replace(/\u2013/g, '-'),
    publisher:
      arxiv && type === 'article'
        ? 'arXiv'
        : (f('publisher') ?? f('school') ?? f('institution') ?? f('organization')),
    'publisher-place': f('address') ?? f('location'),
    edition: f('edition'),
    DOI: f('doi'),
    URL: f('url') ?? (arxiv ? `https://arxiv.org/abs/${arxiv}` : undefined),
    ISBN: f('isbn'),
    ISSN: f('issn'),
    abstract: f('abstract'),
    keyword: f('keywords'),
    note: f('note'),
    language: f('language') ?? f('langid'),
    genre,
    issued: date,
    accessed: f('urldate'),
    author: names('author'),
    editor: names('editor'),
    translator: names('translator'),
  };
  if (arxiv) csl.arxiv = arxiv;
  return csl;
}
