/**
 * BibTeX and BibLaTeX entries from Zotero items (the Web API JSON every backend answers in), one
 * entry per call so that an export of any size streams item by item. The entry types and fields
 * are those of Zotero's own BibTeX and BibLaTeX export translators (`zotero/citations.md`,
 * "BibTeX / BibLaTeX"), field values are written by latex.ts, and the citation key comes from
 * keys.ts.
 *
 * BibTeX: types book, article (journal, magazine and newspaper articles), incollection,
 * inproceedings, phdthesis (mastersthesis when the thesis type says master/MA/MS/MSc),
 * techreport, unpublished (manuscripts), misc for the rest. Fields as the translator writes
 * them: place → address, publication → journal or booktitle, university → school, institution,
 * publisher, numbers (report, issue, series, patent) → number, `month = jan` (a macro) and
 * `year`, pages with `--`, `urldate`, keywords from tags, `doi`, `url` and `file` raw.
 *
 * BibLaTeX adds its own types (online, report, thesis, software, audio, video, movie, letter,
 * inreference, legislation, jurisdiction, patent, artwork; inbook with a book author, collection
 * for an edited book, mvbook with a number of volumes; preprints, datasets and standards are
 * misc), and writes `date` and `urldate` in ISO 8601 (with ranges and circa as EDTF),
 * journaltitle/shortjournal, location, institution, pagetotal, eventtitle, titleaddon, langid,
 * the arXiv (JSTOR, PubMed, HDL, Google Books) identifier as `eprint` + `eprinttype`.
 *
 * Both: names `Last, First` joined by ` and ` (a suffix such as "Jr." after the last name), a
 * single-field name braced whole, the word "and" inside a name braced; roles by creator type
 * (the item type's primary creator → author; editors, translators; others → collaborator /
 * editora). Extra: the `Citation Key:` line that gave the key is dropped, `DOI:`, `PMID:`,
 * `PMCID:`, `LCCN:`, `MR:`, `Zbl:` lines become fields (BibLaTeX: also `arXiv:` → eprint) unless
 * the item already has that field, and the remaining lines become `note`. Child notes (when
 * given) become `annote` (BibTeX) or `annotation` (BibLaTeX); attachments with a local file
 * (when given) become `file = {title:path:mime;…}`, `\ : ; $` escaped with a backslash.
 *
 * Where this departs from the translators, on purpose: case protection follows one rule in both
 * formats and in every script (latex.ts); a character LaTeX cannot spell in ASCII is kept, not
 * replaced by `?`; an Extra identifier the item already has is kept in `note` rather than
 * written twice; the primary creator of every item type is the BibLaTeX author (the translator
 * makes some of them, such as a recording's performer, an `editora`).
 */
import { dateToCsl, strToDate, type DateOptions } from '../citations/dates.js';
import { parseExtraFields, type ExtraField } from '../citations/extra.js';
import { htmlToText } from '../items/html.js';
import { fieldFor, type ItemSchema } from '../items/schema.js';
import type { WebApiCreator, WebApiItem } from '../local/sqlite/types.js';
import { latexValue, type Charset } from './latex.js';

export type { Charset } from './latex.js';

/** A file attached to the item, for the `file` field: its title, its path on this computer, its MIME type. */
export interface ExportAttachment {
  title: string;
  path: string;
  contentType: string;
}

/** What an entry may carry besides the item itself (the caller reads the item's children). */
export interface ExportChildren {
  /** Attachments with a local file (`file` field; RIS `L1` for PDFs). */
  attachments?: readonly ExportAttachment[];
  /** Child notes, as Zotero stores them (HTML). */
  notes?: readonly string[];
}

export interface BibtexOptions {
  /** BibLaTeX (Biber) rather than BibTeX. */
  biblatex: boolean;
  /** `ascii`: non-ASCII as LaTeX commands; `utf8`: kept (see {@link defaultCharset}). */
  charset: Charset;
  /** The item schema: base fields (`publicationTitle` is a book section's `bookTitle`) and primary creator types. */
  schema: ItemSchema;
  /** How two-digit years are read (dates.ts). */
  dates?: DateOptions;
}

/** Written between two entries of one file (each entry ends with a line break). */
export const BIBTEX_ENTRY_SEPARATOR = '\n';

/** The usual charset of each format: LaTeX commands for BibTeX, UTF-8 for BibLaTeX (Biber reads it). */
export function defaultCharset(biblatex: boolean): Charset {
  return biblatex ? 'utf8' : 'ascii';
}

const NOT_EXPORTED = new Set(['note', 'attachment', 'annotation']);

/** Whether an item becomes an entry (notes, attachments and annotations do not, as in Zotero). */
export function isExportable(item: Pick<WebApiItem, 'data'>): boolean {
  return !NOT_EXPORTED.has(item.data.itemType);
}

const BIBTEX_TYPES: Readonly<Record<string, string>> = {
  book: 'book',
  bookSection: 'incollection',
  journalArticle: 'article',
  magazineArticle: 'article',
  newspaperArticle: 'article',
  thesis: 'phdthesis',
  manuscript: 'unpublished',
  conferencePaper: 'inproceedings',
  report: 'techreport',
};

const BIBLATEX_TYPES: Readonly<Record<string, string>> = {
  book: 'book',
  bookSection: 'incollection',
  journalArticle: 'article',
  magazineArticle: 'article',
  newspaperArticle: 'article',
  thesis: 'thesis',
  letter: 'letter',
  manuscript: 'unpublished',
  interview: 'misc',
  film: 'movie',
  artwork: 'artwork',
  webpage: 'online',
  conferencePaper: 'inproceedings',
  report: 'report',
  bill: 'legislation',
  case: 'jurisdiction',
  hearing: 'jurisdiction',
  patent: 'patent',
  statute: 'legislation',
  email: 'letter',
  map: 'misc',
  blogPost: 'online',
  instantMessage: 'misc',
  forumPost: 'online',
  audioRecording: 'audio',
  presentation: 'unpublished',
  videoRecording: 'video',
  tvBroadcast: 'misc',
  radioBroadcast: 'misc',
  podcast: 'audio',
  computerProgram: 'software',
  document: 'misc',
  encyclopediaArticle: 'inreference',
  dictionaryEntry: 'inreference',
};

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Extra labels that become fields: BibTeX and BibLaTeX. */
const EXTRA_IDS: Readonly<Record<string, string>> = {
  DOI: 'doi',
  PMID: 'pmid',
  PMCID: 'pmcid',
  LCCN: 'lccn',
  MR: 'mrnumber',
  Zbl: 'zmnumber',
};

/** Extra labels (and `archive` names) that become `eprint` + `eprinttype` in BibLaTeX. */
const EPRINT_IDS: Readonly<Record<string, string>> = {
  arxiv: 'arxiv',
  jstor: 'jstor',
  pubmed: 'pubmed',
  hdl: 'hdl',
  googlebooks: 'googlebooks',
  'google books': 'googlebooks',
  googlebooksid: 'googlebooks',
};

/** Fields whose words are case-protected (BibTeX styles may lower-case them). */
const TITLE_FIELDS = new Set([
  'title',
  'shorttitle',
  'booktitle',
  'series',
  'type',
  'eventtitle',
  'titleaddon',
  'maintitle',
]);

/** Fields written as they are: BibTeX and Biber read them verbatim. */
const VERBATIM_FIELDS = new Set(['url', 'doi', 'file']);

/** ISO 639 language → the babel name BibLaTeX's `langid` takes (with region variants). */
const BABEL: Readonly<Record<string, string | Readonly<Record<string, string>>>> = {
  af: 'afrikaans',
  ar: 'arabic',
  eu: 'basque',
  br: 'breton',
  bg: 'bulgarian',
  ca: 'catalan',
  hr: 'croatian',
  cs: 'czech',
  cz: 'czech',
  da: 'danish',
  nl: 'dutch',
  en: { '': 'english', US: 'american', GB: 'british', CA: 'canadian', AU: 'australian', NZ: 'newzealand' },
  eo: 'esperanto',
  et: 'estonian',
  fa: 'farsi',
  fi: 'finnish',
  fr: { '': 'french', CA: 'canadien' },
  gl: 'galician',
  de: { '': 'german', AT: 'austrian', CH: 'swissgerman' },
  el: 'greek',
  he: 'hebrew',
  hi: 'hindi',
  is: 'icelandic',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  ja: 'japanese',
  la: 'latin',
  lv: 'latvian',
  lt: 'lithuanian',
  hu: 'magyar',
  mn: 'mongolian',
  nn: 'nynorsk',
  nb: 'norsk',
  no: 'norwegian',
  pl: 'polish',
  pt: { '': 'portuguese', PT: 'portuguese', BR: 'brazil' },
  ro: 'romanian',
  ru: 'russian',
  gd: 'scottish',
  sr: 'serbian',
  sk: 'slovak',
  sl: 'slovene',
  es: 'spanish',
  sv: 'swedish',
  th: 'thai',
  tr: 'turkish',
  uk: 'ukrainian',
  vi: 'vietnamese',
  cy: 'welsh',
};

/** An item's fields by Zotero name: a type's own field, or the type's field mapped onto a base field. */
type FieldReader = (name: string) => string;

function fieldReader(item: WebApiItem, schema: ItemSchema): FieldReader {
  const data = item.data;
  return (name) => {
    const value = data[fieldFor(schema, data.itemType, name) ?? name];
    if (typeof value === 'string') return value.trim();
    return typeof value === 'number' ? String(value) : '';
  };
}

/** The entry type of an item (see the module comment). */
export function bibtexEntryType(item: WebApiItem, schema: ItemSchema, biblatex: boolean): string {
  const type = item.data.itemType;
  const get = fieldReader(item, schema);
  if (!biblatex) {
    const mapped = BIBTEX_TYPES[type] ?? 'misc';
    return mapped === 'phdthesis' && isMastersThesis(get('type')) ? 'mastersthesis' : mapped;
  }
  const roles = new Set((item.data.creators ?? []).map((c) => c.creatorType));
  if (type === 'bookSection' && roles.has('bookAuthor')) return 'inbook';
  if (type === 'book' && !roles.has('author') && roles.has('editor')) return 'collection';
  const mapped = BIBLATEX_TYPES[type] ?? 'misc';
  return mapped === 'book' && get('numberOfVolumes') ? 'mvbook' : mapped;
}

/** The translators' test: "Master's thesis", "MA", "M.S.", "MSc" (dots, spaces and "thesis" ignored). */
function isMastersThesis(thesisType: string): boolean {
  const t = thesisType.toLowerCase().replace(/[\s.]+|thesis|unpublished/g, '');
  return ['master', 'masters', "master's", 'ms', 'msc', 'ma'].includes(t);
}

/** One creator as BibTeX writes it: `Last, First` (a suffix after the last name), a single-field name braced. */
function creatorName(creator: WebApiCreator & { fieldMode?: number }, charset: Charset): string | undefined {
  if ('name' in creator) {
    const name = creator.name.trim();
    return name ? `{${latexValue(name, { charset })}}` : undefined;
  }
  const last = (creator.lastName ?? '').trim();
  const first = (creator.firstName ?? '').trim();
  if (!last && !first) return undefined;
  if (creator.fieldMode === 1) return `{${latexValue(last || first, { charset })}}`;
  let name = last;
  if (first) {
    // "John, Jr." → "Last, Jr., John": the suffix goes between the last and the first name.
    const parts = first.split(/\s*,!?\s*/);
    parts.push(parts.shift() as string);
    name = last ? `${last}, ${parts.join(', ')}` : parts.join(', ');
  }
  return latexValue(name, { charset }).replace(/ (and) /gi, ' {$1} ');
}

/** Which BibTeX / BibLaTeX name field a creator goes to. */
function roleField(creatorType: string, primary: string | undefined, biblatex: boolean): string {
  if (!biblatex) {
    if (creatorType === 'editor' || creatorType === 'seriesEditor') return 'editor';
    if (creatorType === 'translator') return 'translator';
    return creatorType === primary ? 'author' : 'collaborator';
  }
  switch (creatorType) {
    case 'author':
    case 'interviewer':
    case 'inventor':
    case 'director':
    case 'programmer':
    case 'artist':
    case 'podcaster':
    case 'presenter':
      return 'author';
    case 'bookAuthor':
      return 'bookauthor';
    case 'commenter':
      return 'commentator';
    case 'editor':
      return 'editor';
    case 'translator':
      return 'translator';
    case 'seriesEditor':
      return 'editorb';
    default:
      return creatorType === primary ? 'author' : 'editora';
  }
}

/** A date as ISO 8601 (BibLaTeX `date`): `2019`, `2019-05`, `2019-05-04`, a range with `/`, circa with `~`. */
function isoDate(raw: string, options: DateOptions | undefined): string | undefined {
  const csl = dateToCsl(raw, options);
  const parts = csl?.['date-parts'];
  if (!csl || !parts || parts.length === 0) return undefined;
  const one = (p: readonly (number | undefined)[]): string | undefined => {
    const [y, m, d] = p;
    if (typeof y !== 'number' || !Number.isFinite(y)) return undefined;
    const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
    if (typeof m !== 'number') return year;
    const month = `${year}-${String(m).padStart(2, '0')}`;
    return typeof d === 'number' ? `${month}-${String(d).padStart(2, '0')}` : month;
  };
  const start = one(parts[0] as number[]);
  if (!start) return undefined;
  let out = start;
  if (parts.length > 1) {
    const end = one(parts[1] as number[]);
    if (end && end !== start) out = `${start}/${end}`;
  } else if (typeof csl.season === 'number' && !out.includes('-') && csl.season >= 1 && csl.season <= 4) {
    out = `${out}-${20 + csl.season}`;
  }
  return csl.circa ? `${out}~` : out;
}

/** An access date's day: `2020-01-02T03:04:05Z` / `2020-01-02 03:04:05` → `2020-01-02` (UTC, as the translators). */
function accessDay(raw: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?$/.exec(raw.trim());
  return m ? (m[1] as string) : raw.replace(/\s*\d+:\d+:\d+/, '').trim();
}

/** `langid` from a language field (`en-GB` → british, `de` → german), or undefined. */
function langid(language: string): string | undefined {
  const m = /^([a-z]{2,3})(?:[^a-z](.+))?$/i.exec(language.trim());
  if (!m) return undefined;
  const lang = BABEL[(m[1] as string).toLowerCase()];
  if (typeof lang === 'string') return lang;
  if (!lang) return undefined;
  return lang[(m[2] ?? '').toUpperCase()] ?? lang[''];
}

/** A `file` field component: braces dropped, `\ : ; $` escaped (BibLaTeX: braces too, as its translator). */
function filePart(value: string): string {
  return value
    .replace(/(?:\s*[{}]+)+\s*/g, ' ')
    .trim()
    .replace(/[\\:;$]/g, '\\$&');
}

/** Entry fields in order; a field written once (the first value wins), `note` parts joined. */
class Fields {
  private readonly lines: string[] = [];
  private readonly names = new Set<string>();
  private readonly notes: string[] = [];

  constructor(
    private readonly charset: Charset,
    private readonly biblatex: boolean,
  ) {}

  has(name: string): boolean {
    return this.names.has(name);
  }

  /** A text field, escaped (title fields case-protected), or a verbatim one as it is. */
  text(name: string, value: string | undefined): void {
    const v = value?.trim();
    if (!v) return;
    if (VERBATIM_FIELDS.has(name)) return this.raw(name, name === 'url' ? verbatimUrl(v, this.charset) : v);
    this.raw(name, latexValue(v, { charset: this.charset, protectCase: TITLE_FIELDS.has(name) }));
  }

  /** A value already in LaTeX (names, identifiers), braced. */
  raw(name: string, value: string): void {
    if (!value || this.names.has(name)) return;
    this.names.add(name);
    this.lines.push(`${name} = {${value}}`);
  }

  /** A macro (`month = jan`), unbraced. */
  macro(name: string, value: string): void {
    if (this.names.has(name)) return;
    this.names.add(name);
    this.lines.push(`${name} = ${value}`);
  }

  note(value: string): void {
    const v = value.trim();
    if (v) this.notes.push(v);
  }

  /** Writes the `note` field from every part given so far. */
  flushNote(): void {
    if (this.notes.length > 0) this.text('note', this.notes.join('\n'));
    this.notes.length = 0;
  }

  entry(type: string, key: string): string {
    this.flushNote();
    const body = this.lines.map((l) => `,\n\t${l}`).join('');
    return `@${type}{${key}${body}${this.biblatex ? ',' : ''}\n}\n`;
  }
}

/** A URL in a `url` field: balanced as BibTeX needs (braces percent-encoded); ASCII mode percent-encodes the rest. */
function verbatimUrl(url: string, charset: Charset): string {
  let out = url.replace(/\{/g, '%7B').replace(/\}/g, '%7D');
  // eslint-disable-next-line no-control-regex
  if (charset === 'ascii') out = out.replace(/[^\u0000-\u007f]+/g, (s) => encodeURIComponent(s));
  return out;
}

/**
 * One BibTeX (or BibLaTeX) entry for a Zotero item, with the given citation key, ending with a
 * line break; entries of one file are separated by {@link BIBTEX_ENTRY_SEPARATOR}. Throws for
 * notes, attachments and annotations (see {@link isExportable}).
 */
export function bibtexEntry(
  item: WebApiItem,
  key: string,
  options: BibtexOptions,
  children: ExportChildren = {},
): string {
  if (!isExportable(item)) throw new Error(`A ${item.data.itemType} item (${item.key}) has no BibTeX entry.`);
  const { biblatex, charset, schema } = options;
  const get = fieldReader(item, schema);
  const entryType = bibtexEntryType(item, schema, biblatex);
  const f = new Fields(charset, biblatex);
  const extra = extraFields(get('extra'));

  if (biblatex) writeBiblatexFields(f, item, get, options);
  else writeBibtexFields(f, item, get, entryType, options);

  // Extra: identifier lines → fields (unless the item has them), the rest → note.
  const rest: string[] = [];
  for (const rec of extra) {
    const label = rec.field;
    const value = rec.value?.trim();
    const id = label ? EXTRA_IDS[label] : undefined;
    const eprint = biblatex && label ? EPRINT_IDS[label.toLowerCase()] : undefined;
    if (value && id && !f.has(id)) {
      f.raw(id, id === 'doi' ? value : latexValue(value, { charset }));
    } else if (value && eprint && !f.has('eprint')) {
      f.text('eprinttype', eprint);
      f.text('eprint', value);
    } else {
      rest.push(rec.raw);
    }
  }
  f.note(rest.join('\n'));
  f.flushNote();

  const tags = (item.data.tags ?? []).map((t) => t.tag.trim()).filter(Boolean);
  if (tags.length > 0) f.text('keywords', tags.join(', '));
  if (!biblatex) f.text('pages', pageRange(get('pages')));
  // Every child note in one field (a field written twice is an error to Biber, a warning to BibTeX).
  const notes = (children.notes ?? []).map(htmlToText).filter(Boolean);
  if (notes.length > 0) f.text(biblatex ? 'annotation' : 'annote', notes.join('\n\n'));
  const files = (children.attachments ?? [])
    .filter((a) => a.path)
    .map((a) => `${filePart(a.title)}:${filePart(a.path)}:${filePart(a.contentType)}`);
  if (files.length > 0) f.raw('file', files.join(';'));
  return f.entry(entryType, key);
}

/**
 * Extra's lines, without the `Citation Key:` line (it gave the key, or was outranked by it) and
 * without blank lines at the ends.
 */
function extraFields(extra: string): ExtraField[] {
  if (!extra) return [];
  const fields = parseExtraFields(extra);
  const keyLine = fields.findIndex((f) => f.field?.toLowerCase() === 'citation key' && f.value);
  if (keyLine >= 0) fields.splice(keyLine, 1);
  return fields.filter((f, i, all) => f.raw.trim() !== '' || (i > 0 && i < all.length - 1));
}

/** Page ranges with `--` (any run of dashes). */
function pageRange(pages: string): string {
  return pages.replace(/[-\u2012-\u2015\u2053]+/g, '--');
}

/** Name fields, in the order of the creators' roles. */
function writeNames(
  f: Fields,
  item: WebApiItem,
  schema: ItemSchema,
  biblatex: boolean,
  charset: Charset,
): void {
  const primary = schema.types.get(item.data.itemType)?.primaryCreatorType;
  const byRole = new Map<string, string[]>();
  for (const creator of item.data.creators ?? []) {
    const name = creatorName(creator, charset);
    if (!name) continue;
    const role = roleField(creator.creatorType, primary, biblatex);
    const list = byRole.get(role) ?? [];
    list.push(name);
    byRole.set(role, list);
  }
  const order = biblatex
    ? ['author', 'bookauthor', 'commentator', 'editor', 'editora', 'editorb', 'translator']
    : ['author', 'editor', 'translator', 'collaborator'];
  for (const role of order) {
    const names = byRole.get(role);
    if (!names) continue;
    f.raw(role, names.join(' and '));
    if (role === 'editora') f.text('editoratype', 'collaborator');
    if (role === 'editorb') f.text('editorbtype', 'redactor');
  }
}

function writeBibtexFields(
  f: Fields,
  item: WebApiItem,
  get: FieldReader,
  entryType: string,
  options: BibtexOptions,
): void {
  const type = item.data.itemType;
  f.text('address', get('place'));
  f.text('edition', get('edition'));
  if (entryType !== 'mastersthesis') f.text('type', get('type'));
  f.text('series', get('series'));
  f.text('title', get('title'));
  f.text('volume', get('volume'));
  f.text('copyright', get('rights'));
  f.text('isbn', get('ISBN'));
  f.text('issn', get('ISSN'));
  f.text('shorttitle', get('shortTitle'));
  f.text('url', get('url'));
  f.text('doi', get('DOI'));
  f.text('abstract', get('abstractNote'));
  f.text('nationality', get('country'));
  f.text('language', get('language'));
  f.text('assignee', get('assignee'));
  f.text('number', get('reportNumber') || get('issue') || get('seriesNumber') || get('patentNumber'));
  const accessed = get('accessDate');
  if (accessed) f.text('urldate', accessDay(accessed));
  const publication = get('publicationTitle');
  if (publication) {
    f.text(type === 'bookSection' || type === 'conferencePaper' ? 'booktitle' : 'journal', publication);
  }
  const publisher = get('publisher');
  if (publisher) {
    f.text(type === 'thesis' ? 'school' : type === 'report' ? 'institution' : 'publisher', publisher);
  }
  writeNames(f, item, options.schema, false, options.charset);
  const date = get('date');
  if (date) {
    const parsed = strToDate(date, options.dates);
    if (parsed.month !== undefined) {
      const month = MONTHS[parsed.month - 1];
      if (month) f.macro('month', month);
    }
    if (parsed.year !== undefined) f.text('year', String(parsed.year));
  }
}

function writeBiblatexFields(f: Fields, item: WebApiItem, get: FieldReader, options: BibtexOptions): void {
  const type = item.data.itemType;
  f.text('location', get('place'));
  f.text('edition', get('edition'));
  f.text('title', get('title'));
  f.text('volume', get('volume'));
  f.text('rights', get('rights'));
  f.text('isbn', get('ISBN'));
  f.text('issn', get('ISSN'));
  f.text('url', get('url'));
  f.text('doi', get('DOI'));
  f.text('series', get('series'));
  f.text('shorttitle', get('shortTitle'));
  f.text('holder', get('assignee'));
  f.text('abstract', get('abstractNote'));
  f.text('volumes', get('numberOfVolumes'));
  f.text('version', get('versionNumber'));
  f.text('eventtitle', get('conferenceName'));
  f.text('pages', pageRange(get('pages')));
  f.text('pagetotal', get('numPages'));

  const eprint = eprintOf(item, get);
  const number =
    get('reportNumber') ||
    get('seriesNumber') ||
    get('billNumber') ||
    get('episodeNumber') ||
    (type === 'patent' || (eprint && get('number') === eprint.raw) ? '' : get('number'));
  f.text('number', number);
  const issue = get('issue');
  if (issue)
    f.text(/^\d+/.test(issue) ? 'number' : 'issue', /^\d+/.test(issue) ? String(parseInt(issue, 10)) : issue);

  const publication = get('publicationTitle');
  if (publication) {
    if (['bookSection', 'conferencePaper', 'dictionaryEntry', 'encyclopediaArticle'].includes(type)) {
      f.text('booktitle', publication);
    } else if (type === 'magazineArticle' || type === 'newspaperArticle') {
      f.text('journaltitle', publication);
    } else if (type === 'journalArticle') {
      f.text('journaltitle', publication);
      f.text('shortjournal', get('journalAbbreviation'));
    }
  }
  f.text('titleaddon', get('websiteTitle') || get('forumTitle') || get('blogTitle') || get('programTitle'));
  const publisher = get('publisher');
  if (publisher) f.text(type === 'thesis' || type === 'report' ? 'institution' : 'publisher', publisher);

  if (type === 'letter') f.text('type', get('letterType') || 'Letter');
  else if (type === 'email') f.text('type', 'E-mail');
  else if (type === 'thesis') {
    const thesisType = get('thesisType');
    f.text('type', !thesisType || /ph\.?d/i.test(thesisType) ? 'phdthesis' : thesisType);
  } else if (type === 'patent') {
    const patent = get('patentNumber');
    const m = /^(US|EP|GB|DE|FR)(.*)$/.exec(patent);
    f.text(
      'type',
      m ? `patent${(m[1] as string).toLowerCase().replace('gb', 'uk').replace('ep', 'eu')}` : 'patent',
    );
    f.text('number', m ? (m[2] as string) : patent);
  } else {
    f.text(
      'type',
      get('manuscriptType') ||
        get('thesisType') ||
        get('websiteType') ||
        get('presentationType') ||
        get('reportType') ||
        get('mapType'),
    );
  }
  f.text('howpublished', get('presentationType') || get('manuscriptType'));
  if (eprint) {
    f.text('eprinttype', eprint.type);
    f.text('eprint', eprint.id);
    if (eprint.type === 'arxiv') f.text('eprintclass', get('callNumber'));
  }
  f.note(get('meetingName'));
  writeNames(f, item, options.schema, true, options.charset);
  const accessed = get('accessDate');
  if (accessed) f.text('urldate', accessDay(accessed));
  const date = get('date');
  if (date) f.text('date', isoDate(date, options.dates));
  const lang = langid(get('language'));
  if (lang) f.text('langid', lang);
}

/** An e-print identifier from `archive` + `archiveLocation`, or a preprint's `arXiv:…` archive ID. */
function eprintOf(item: WebApiItem, get: FieldReader): { type: string; id: string; raw: string } | undefined {
  const archive = get('archive').toLowerCase();
  const location = get('archiveLocation');
  const type = EPRINT_IDS[archive];
  if (type && location) return { type, id: location, raw: location };
  const archiveID = item.data.itemType === 'preprint' ? get('archiveID') : '';
  const m = /^arxiv:\s*(.+)$/i.exec(archiveID);
  if (m) return { type: 'arxiv', id: (m[1] as string).trim(), raw: archiveID };
  return undefined;
}
