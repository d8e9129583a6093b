/**
 * What Zotero formats and exports on item requests (`zotero/web-api.md`, `zotero/citations.md`):
 * `format=bib` (a whole bibliography, XHTML; at most 150 items on the Web API, which ignores
 * paging and sorting for it), `include=bib,citation,data,<export format>` on `format=json`
 * (`data` only when asked for, as soon as `include` is given), `style` (default
 * chicago-note-bibliography on the Web API, chicago-shortened-notes-bibliography on the local
 * API), `locale` (default en-US), and the export formats (`bibtex`, `biblatex`, `ris`,
 * `csljson`: `{"items": […]}` from the Web API, the translator's array from the local API).
 * Parameters, shapes, wrappers (csl-bib-body, `<span>` around a Web API citation, COinS after a
 * local API entry, `<ol>` around a note style's citation list) and errors are Zotero's; the
 * formatting itself is a small deterministic stand-in for citeproc-js and the translators.
 */
import { HttpError } from './http.js';
import type { ItemData } from './types.js';

/** Every export format Zotero knows; this server writes the four Zoteus uses. */
export const EXPORT_FORMATS = [
  'bibtex',
  'biblatex',
  'bookmarks',
  'coins',
  'csljson',
  'csv',
  'mods',
  'refer',
  'rdf_bibliontology',
  'rdf_dc',
  'rdf_zotero',
  'ris',
  'tei',
  'wikipedia',
] as const;
const WRITTEN = new Set(['bibtex', 'biblatex', 'ris', 'csljson']);

/** The Web API's cap on `format=bib`. */
export const MAX_BIBLIOGRAPHY_ITEMS = 150;

export interface OutputCtx {
  /** The desktop's local API rather than the Web API. */
  local: boolean;
  /** The library's own prefix (`users/1`), for item URIs. */
  prefix: string;
  params: URLSearchParams;
}

// ---------------------------------------------------------------------------------------------
// Styles: the stand-in of a few repository styles.

interface StandIn {
  class: 'in-text' | 'note';
  numeric?: boolean;
  entry(item: ItemData, t: Terms): string;
  citation(item: ItemData, t: Terms): string;
  /** Bibliography order of `format=bib`; none: the order of the listing. */
  sort?: (a: ItemData, b: ItemData) => number;
}

interface Terms {
  and: string;
  noDate: string;
}

const TERMS: Record<string, Terms> = {
  en: { and: 'and', noDate: 'n.d.' },
  de: { and: 'und', noDate: 'o. J.' },
  fr: { and: 'et', noDate: 's. d.' },
  es: { and: 'y', noDate: 's. f.' },
};

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const esc = (s: string): string => s.replace(/&/g, '&#38;').replace(/</g, '&#60;').replace(/>/g, '&#62;');

interface Person {
  family: string;
  given: string;
}

function authors(item: ItemData): Person[] {
  const list = Array.isArray(item.creators) ? (item.creators as Array<Record<string, unknown>>) : [];
  return list
    .filter((c) => c.creatorType === 'author' || c.creatorType === undefined)
    .map((c) => ({ family: str(c.lastName ?? c.name), given: str(c.firstName) }));
}

const year = (item: ItemData): string => /\d{4}/.exec(str(item.date))?.[0] ?? '';
const initials = (given: string): string =>
  given
    .split(/\s+/)
    .filter(Boolean)
    .map((g) => `${g[0]}.`)
    .join(' ');
const container = (item: ItemData): string =>
  str(item.publicationTitle) || str(item.bookTitle) || str(item.publisher);

function join(names: string[], and: string): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} ${and} ${names[names.length - 1]}`;
}

const byAuthorYear = (a: ItemData, b: ItemData): number =>
  `${authors(a)[0]?.family ?? ''}\u0000${year(a)}\u0000${str(a.title)}`.localeCompare(
    `${authors(b)[0]?.family ?? ''}\u0000${year(b)}\u0000${str(b.title)}`,
  ) || a.key.localeCompare(b.key);

const NOTE_STYLE: StandIn = {
  class: 'note',
  entry: (i, t) => {
    const names = authors(i).map((p, n) => (n === 0 ? `${p.family}, ${p.given}` : `${p.given} ${p.family}`));
    return esc(`${join(names, t.and)}. `) + `<i>${esc(str(i.title))}</i>` + esc(`. ${year(i) || t.noDate}.`);
  },
  citation: (i, t) =>
    esc(
      `${join(
        authors(i).map((p) => `${p.given} ${p.family}`),
        t.and,
      )}, `,
    ) + `<i>${esc(str(i.title))}</i>.`,
  sort: byAuthorYear,
};

const STYLES: Record<string, StandIn> = {
  apa: {
    class: 'in-text',
    entry: (i, t) => {
      const names = authors(i).map((p) => `${p.family}, ${initials(p.given)}`);
      const by =
        names.length > 1 ? `${names.slice(0, -1).join(', ')}, & ${names[names.length - 1]}` : names.join('');
      const venue = container(i);
      // Without authors, the title takes their place.
      const head = by
        ? `${by} (${year(i) || t.noDate}). ${str(i.title)}.`
        : `${str(i.title)}. (${year(i) || t.noDate}).`;
      return esc(head) + (venue ? ` <i>${esc(venue)}</i>.` : '');
    },
    citation: (i, t) => {
      const a = authors(i);
      const who = a.length > 2 ? `${a[0]?.family} et al.` : a.map((p) => p.family).join(' & ');
      return esc(`(${who}, ${year(i) || t.noDate})`);
    },
    sort: byAuthorYear,
  },
  ieee: {
    class: 'in-text',
    numeric: true,
    entry: (i, t) => {
      const venue = container(i);
      return (
        esc(
          `${join(
            authors(i).map((p) => `${initials(p.given)} ${p.family}`),
            t.and,
          )}, “${str(i.title)},” `,
        ) +
        (venue ? `<i>${esc(venue)}</i>, ` : '') +
        esc(`${year(i) || t.noDate}.`)
      );
    },
    citation: () => '[1]',
  },
  'chicago-note-bibliography': NOTE_STYLE,
  'chicago-shortened-notes-bibliography': NOTE_STYLE,
};

const REGULAR = (i: ItemData): boolean => !['note', 'attachment', 'annotation'].includes(i.itemType);

/** The style and terms a request names; an unknown style answers 400 as Zotero does. */
function styleOf(o: OutputCtx): { style: StandIn; terms: Terms } {
  const raw =
    o.params.get('style') ?? (o.local ? 'chicago-shortened-notes-bibliography' : 'chicago-note-bibliography');
  const id = raw.replace(/^https?:\/\/www\.zotero\.org\/styles\//, '');
  const style = STYLES[id];
  if (!style) {
    // The dataserver takes letters, digits and hyphens (or a URL); the desktop tries to install it.
    throw new HttpError(400, o.local ? `Invalid style: ${raw} (Style not found)` : 'Invalid style');
  }
  const locale = o.params.get('locale') ?? 'en-US';
  return { style, terms: TERMS[locale.slice(0, 2).toLowerCase()] ?? (TERMS.en as Terms) };
}

function coins(item: ItemData): string {
  return `  <span class="Z3988" title="url_ver=Z39.88-2004&amp;ctx_ver=Z39.88-2004&amp;rft.title=${encodeURIComponent(str(item.title))}"></span>\n`;
}

/** The XHTML bibliography of `items` (Zotero's makeFormattedBibliography, with its inline CSS). */
export function bibliographyHtml(items: ItemData[], o: OutputCtx): string {
  const { style, terms } = styleOf(o);
  const regular = items.filter(REGULAR);
  const ordered = style.sort ? [...regular].sort(style.sort) : regular;
  if (style.numeric) {
    const entries = ordered.map(
      (item, n) =>
        `  <div class="csl-entry" style="clear: left; ">\n    <div class="csl-left-margin" style="float: left; padding-right: 0.5em;text-align: right; width: 1em;">[${n + 1}]</div><div class="csl-right-inline" style="margin: 0 .4em 0 1.5em;">${style.entry(item, terms)}</div>\n  </div>\n${o.local ? coins(item) : ''}`,
    );
    return `<div class="csl-bib-body" style="line-height: 1.35; ">\n${entries.join('')}</div>`;
  }
  const entries = ordered.map(
    (item) => `  <div class="csl-entry">${style.entry(item, terms)}</div>\n${o.local ? coins(item) : ''}`,
  );
  return `<div class="csl-bib-body" style="line-height: 2; margin-left: 2em; text-indent:-2em;">\n${entries.join('')}</div>`;
}

/** One item's `citation`: a `<span>` from the Web API; the citation list of the desktop. */
export function citationHtml(item: ItemData, o: OutputCtx): string {
  const { style, terms } = styleOf(o);
  if (!REGULAR(item)) return o.local ? '' : '<span></span>';
  const cite = style.citation(item, terms);
  if (!o.local) return `<span>${cite}</span>`;
  return style.class === 'note' ? `<ol>\n\t<li>${cite}</li>\n</ol>` : cite;
}

// ---------------------------------------------------------------------------------------------
// Exports: the stand-in of Zotero's translators.

const BIBTEX_TYPES: Record<string, string> = {
  journalArticle: 'article',
  book: 'book',
  bookSection: 'incollection',
  thesis: 'phdthesis',
  conferencePaper: 'inproceedings',
  report: 'techreport',
};
const RIS_TYPES: Record<string, string> = {
  journalArticle: 'JOUR',
  book: 'BOOK',
  bookSection: 'CHAP',
  thesis: 'THES',
  conferencePaper: 'CONF',
  report: 'RPRT',
};

const latex = (s: string): string => s.replace(/([&%$#_])/g, '\\$1');

function bibtex(items: ItemData[], biblatex: boolean): string {
  // Keys unique within one export, as Zotero's BibTeX translator makes them.
  const used = new Set<string>();
  const out: string[] = [];
  for (const item of items.filter(REGULAR)) {
    const first = authors(item)[0]?.family.toLowerCase() || 'noauthor';
    const word = str(item.title).toLowerCase().split(/\s+/).find(Boolean) ?? 'notitle';
    const base = `${first}_${word.replace(/[^a-z0-9-]/g, '')}_${year(item) || 'nodate'}`;
    let key = base;
    for (let n = 1; used.has(key); n++) key = `${base}-${n}`;
    used.add(key);
    const fields: Array<[string, string]> = [['title', str(item.title)]];
    const venue = container(item);
    if (venue) fields.push([biblatex ? 'journaltitle' : 'journal', venue]);
    const names = authors(item).map((p) => (p.given ? `${p.family}, ${p.given}` : p.family));
    if (names.length) fields.push(['author', names.join(' and ')]);
    if (year(item)) fields.push([biblatex ? 'date' : 'year', biblatex ? str(item.date) : year(item)]);
    if (str(item.DOI)) fields.push(['doi', str(item.DOI)]);
    const type = BIBTEX_TYPES[item.itemType] ?? 'misc';
    out.push(
      `\n@${type}{${key},\n${fields.map(([k, v]) => `\t${k} = {${k === 'doi' ? v : latex(v)}},`).join('\n')}\n}`,
    );
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

function ris(items: ItemData[]): string {
  return items
    .filter(REGULAR)
    .map((item) => {
      const lines = [`TY  - ${RIS_TYPES[item.itemType] ?? 'GEN'}`, `TI  - ${str(item.title)}`];
      for (const p of authors(item)) lines.push(`AU  - ${p.given ? `${p.family}, ${p.given}` : p.family}`);
      if (container(item)) lines.push(`T2  - ${container(item)}`);
      if (year(item)) lines.push(`PY  - ${year(item)}`);
      if (str(item.DOI)) lines.push(`DO  - ${str(item.DOI)}`);
      lines.push('ER  - ');
      return `${lines.join('\r\n')}\r\n\r\n`;
    })
    .join('');
}

function cslItems(items: ItemData[], o: OutputCtx): Array<Record<string, unknown>> {
  return items.filter(REGULAR).map((item) => {
    const csl: Record<string, unknown> = {
      id: `http://zotero.org/${o.prefix}/items/${item.key}`,
      type:
        item.itemType === 'journalArticle'
          ? 'article-journal'
          : item.itemType === 'book'
            ? 'book'
            : 'document',
      title: str(item.title),
    };
    if (container(item)) csl['container-title'] = container(item);
    const names = authors(item).map((p) =>
      p.given ? { family: p.family, given: p.given } : { literal: p.family },
    );
    if (names.length) csl.author = names;
    if (year(item)) csl.issued = { 'date-parts': [[Number(year(item))]] };
    return csl;
  });
}

/** `format=<export format>`: the body Zotero answers and its content type. */
export function exportBody(format: string, items: ItemData[], o: OutputCtx): { body: string; type: string } {
  if (!WRITTEN.has(format)) {
    throw new HttpError(500, `Test server: the ${format} export is not implemented`);
  }
  // The desktop answers every export as text/plain (server_localAPI.js).
  const type = (web: string) => (o.local ? 'text/plain; charset=utf-8' : web);
  switch (format) {
    case 'bibtex':
    case 'biblatex':
      return { body: bibtex(items, format === 'biblatex'), type: type('application/x-bibtex') };
    case 'ris':
      return { body: ris(items), type: type('application/x-research-info-systems') };
    default: {
      const csl = cslItems(items, o);
      return o.local
        ? { body: JSON.stringify(csl, null, '\t'), type: type('') }
        : { body: JSON.stringify({ items: csl }), type: 'application/vnd.citationstyles.csl+json' };
    }
  }
}

export const isExportFormat = (format: string): boolean =>
  (EXPORT_FORMATS as readonly string[]).includes(format);

/**
 * `include` on `format=json`: the JSON of `item` with what was asked for (`data` only when
 * named; unknown names ignored, as the desktop does).
 */
export function withIncludes(json: Record<string, unknown>, item: ItemData, o: OutputCtx): unknown {
  const raw = o.params.get('include');
  if (raw === null) return json;
  const names = raw.split(',').map((n) => n.trim());
  const out: Record<string, unknown> = { ...json };
  if (!names.includes('data')) delete out.data;
  for (const name of names) {
    if (name === 'bib') out.bib = bibliographyHtml([item], o);
    else if (name === 'citation') out.citation = citationHtml(item, o);
    else if (isExportFormat(name) && WRITTEN.has(name)) out[name] = exportBody(name, [item], o).body;
  }
  return out;
}
