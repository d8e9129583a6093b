/**
 * A web page's embedded scholarly metadata, for `zotero_import` by URL: Highwire Press
 * `citation_*` meta tags (what Google Scholar reads), Dublin Core (`DC.*`, `dc.*`, `dcterms.*`),
 * PRISM, and JSON-LD (`ScholarlyArticle` and its kin: Article, NewsArticle, BlogPosting, Report,
 * Thesis, Book, Chapter, Dataset). A DOI found on the page (citation_doi, dc.identifier,
 * prism.doi, a JSON-LD identifier or `sameAs`, a `doi.org` link in a `<link>` or `<meta>`, or the
 * only `doi.org` DOI the page's anchors point at) is returned for the caller to resolve through
 * the DOI path; the page's own metadata then stays as the fallback.
 *
 * The page is fetched through the shared HTTP layer (redirects by hand, no credentials, the
 * timeout per attempt covering the body too) with a fetch that reads at most MAX_PAGE_BYTES of
 * the body (the metadata sits in the head; the rest is never read) and refuses what is not
 * HTML before reading it. The HTML is read by a small linear scanner, not a parser: comments,
 * `<script>` (JSON-LD aside), `<style>`, `<textarea>` and `<title>` bodies are skipped whole, so
 * markup inside a script or a comment is never taken for a tag, and an unterminated tag or
 * quote ends the scan instead of making it quadratic. Values are plain text: entities decoded,
 * tags and control characters removed, whitespace squashed, lengths capped.
 */
import { toolRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import { createHttpLayer, newCall, type FetchLike } from '../http/index.js';
import { textNestsTooDeep } from '../input-bounds.js';
import { createRedactor } from '../redact.js';
import type { CslItem } from './csl.js';
import { decodeEntities, squash } from './html.js';
import { parseArxiv, parseDoi } from './identifiers.js';
import { splitName, type ResolverDeps, type ResolverSettings } from './resolvers.js';

/** Bytes of a page's body read at most; what follows is not read. */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;
/** JSON-LD blocks read per page, and characters of one. */
const MAX_JSONLD_BLOCKS = 20;
const MAX_JSONLD_CHARS = 1024 * 1024;
/** Objects walked in one JSON-LD block. */
const MAX_JSONLD_NODES = 5000;
/** Meta tags kept per page, and values of one name. */
const MAX_META = 5000;
const MAX_VALUES = 500;
/** Redirects and retries are the layer's; attempts of a page request before it gives up. */
const MAX_ATTEMPTS = 2;

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface PageMetadata {
  /** A DOI the page names for itself. */
  doi?: string;
  /** An arXiv id the page names for itself (an arXiv abstract page), when it names no DOI. */
  arxiv?: string;
  /** The page's own metadata as CSL-JSON, when it has a title. */
  csl?: CslItem;
  /** Where it was found: highwire, jsonld, dublincore. */
  sources: string[];
}

// ---------------------------------------------------------------------------------------------
// Text

/** Plain text of a value from the page: entities decoded, tags and controls out, capped. */
export function cleanText(value: string, max = 1000): string {
  const decoded = decodeEntities(value)
    .replace(/<[^>]*>/g, ' ')
    .replace(/[<>]/g, ' ')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]/g, ' ');
  const squashed = squash(decoded);
  return squashed.length > max ? `${squashed.slice(0, max - 1).trimEnd()}…` : squashed;
}

// ---------------------------------------------------------------------------------------------
// The scanner

export interface ScannedPage {
  /** Lower-cased meta name (or property, itemprop) → its content values, in page order. */
  meta: Map<string, string[]>;
  /** `<link rel=… href=…>`: rel (lower-cased) → hrefs. */
  links: Map<string, string[]>;
  /** Hrefs of `<a>` elements pointing at doi.org. */
  doiAnchors: string[];
  /** Text of the JSON-LD script blocks. */
  jsonld: string[];
  /** `<title>` text. */
  title?: string;
}

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes']);

function isNameChar(c: number): boolean {
  // letters, digits, '-', ':', '_', '.'
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 45 ||
    c === 58 ||
    c === 95 ||
    c === 46
  );
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
}

/**
 * Reads one tag's attributes from `i` (just after its name) to its `>`: the attributes and the
 * position after the `>`, or undefined when the text ends first.
 */
function readAttributes(
  html: string,
  start: number,
): { attrs: Map<string, string>; end: number } | undefined {
  const attrs = new Map<string, string>();
  let i = start;
  const n = html.length;
  for (;;) {
    while (i < n && (isSpace(html.charCodeAt(i)) || html[i] === '/')) i++;
    if (i >= n) return undefined;
    if (html[i] === '>') return { attrs, end: i + 1 };
    const nameStart = i;
    while (i < n && !isSpace(html.charCodeAt(i)) && html[i] !== '=' && html[i] !== '>' && html[i] !== '/')
      i++;
    const name = html.slice(nameStart, i).toLowerCase();
    while (i < n && isSpace(html.charCodeAt(i))) i++;
    let value = '';
    if (html[i] === '=') {
      i++;
      while (i < n && isSpace(html.charCodeAt(i))) i++;
      const q = html[i];
      if (q === '"' || q === "'") {
        const close = html.indexOf(q, i + 1);
        if (close < 0) return undefined;
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < n && !isSpace(html.charCodeAt(i)) && html[i] !== '>') i++;
        value = html.slice(valueStart, i);
      }
    }
    if (name && !attrs.has(name) && attrs.size < 64) attrs.set(name, value);
    if (i === nameStart) i++; // a stray character: move on
  }
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) {
    if (list.length < MAX_VALUES) list.push(value);
  } else map.set(key, [value]);
}

/** The meta tags, links, doi.org anchors, JSON-LD blocks and title of an HTML text. */
export function scanHtml(html: string): ScannedPage {
  const page: ScannedPage = { meta: new Map(), links: new Map(), doiAnchors: [], jsonld: [] };
  const lower = html.toLowerCase();
  const n = html.length;
  let metaCount = 0;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0 || lt + 1 >= n) break;
    const next = html.charCodeAt(lt + 1);
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      if (close < 0) break;
      i = close + 3;
      continue;
    }
    if (next === 33 /* ! */ || next === 63 /* ? */) {
      const close = html.indexOf('>', lt + 2);
      if (close < 0) break;
      i = close + 1;
      continue;
    }
    const closing = next === 47; /* / */
    let j = closing ? lt + 2 : lt + 1;
    const c0 = html.charCodeAt(j);
    if (!((c0 >= 97 && c0 <= 122) || (c0 >= 65 && c0 <= 90))) {
      i = lt + 1;
      continue;
    }
    const nameStart = j;
    while (j < n && isNameChar(html.charCodeAt(j))) j++;
    const tag = lower.slice(nameStart, j);
    const read = readAttributes(html, j);
    if (!read) break; // an unterminated tag: nothing after it is markup
    i = read.end;
    if (closing) continue;
    const { attrs } = read;
    if (RAW_TEXT.has(tag)) {
      const close = lower.indexOf(`</${tag}`, i);
      const body = html.slice(i, close < 0 ? n : close);
      if (tag === 'script' && /^\s*application\/ld\+json\s*$/i.test(attrs.get('type') ?? '')) {
        if (page.jsonld.length < MAX_JSONLD_BLOCKS && body.length <= MAX_JSONLD_CHARS) page.jsonld.push(body);
      } else if (tag === 'title' && page.title === undefined) {
        page.title = cleanText(body);
      }
      if (close < 0) break;
      i = close;
      continue;
    }
    if (tag === 'meta' && metaCount < MAX_META) {
      const content = attrs.get('content');
      if (content === undefined) continue;
      for (const key of ['name', 'property', 'itemprop']) {
        const name = attrs.get(key)?.trim().toLowerCase();
        if (name) {
          push(page.meta, name, content);
          metaCount++;
        }
      }
    } else if (tag === 'link') {
      const href = attrs.get('href');
      const rel = attrs.get('rel')?.toLowerCase();
      if (href && rel) for (const r of rel.split(/\s+/).filter(Boolean)) push(page.links, r, href);
    } else if (tag === 'a') {
      const href = attrs.get('href');
      if (href && /doi\.org\/10\./i.test(href) && page.doiAnchors.length < MAX_VALUES)
        page.doiAnchors.push(href);
    }
  }
  return page;
}

// ---------------------------------------------------------------------------------------------
// From the scanned page to CSL

type Name = { family: string; given: string } | { literal: string };

function person(text: string): Name | undefined {
  const t = cleanText(text, 300);
  if (!t) return undefined;
  if (t.includes(',')) {
    const [family = '', ...rest] = t.split(',');
    const given = rest.join(',').trim();
    if (family.trim() && given) return { family: family.trim(), given };
  }
  const { given, family } = splitName(t);
  return family ? { family, given } : { literal: t };
}

/** `2020/05/03`, `2020-05-03T10:00:00Z`, `May 2020` → a date text Zotero reads. */
function dateText(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = cleanText(text, 100);
  const iso = /^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?(?:[T\s].*)?$/.exec(t);
  if (iso) {
    const [, y, m, d] = iso;
    return [y, m?.padStart(2, '0'), d?.padStart(2, '0')].filter(Boolean).join('-');
  }
  return t || undefined;
}

function doiIn(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const t = cleanText(text, 500);
  return parseDoi(t) ?? parseDoi(/(?:doi\.org\/|doi:\s*)(10\.\S+)/i.exec(t)?.[1] ?? '');
}

interface Found {
  csl: CslItem;
  doi?: string;
  arxiv?: string;
}

function metaReader(page: ScannedPage) {
  const all = (...names: string[]): string[] =>
    names
      .flatMap((n) => page.meta.get(n) ?? [])
      .map((v) => cleanText(v, 10_000))
      .filter(Boolean);
  const one = (max: number, ...names: string[]): string | undefined => {
    const v = all(...names)[0];
    return v === undefined ? undefined : v.length > max ? cleanText(v, max) : v;
  };
  return { all, one };
}

function highwire(page: ScannedPage): Found | undefined {
  const { all, one } = metaReader(page);
  const title = one(1000, 'citation_title');
  const doi = all('citation_doi').map(doiIn).find(Boolean);
  const arxiv = all('citation_arxiv_id')
    .map((a) => parseArxiv(a))
    .find(Boolean);
  if (!title && !doi && !arxiv) return undefined;
  const journal = one(1000, 'citation_journal_title');
  const conference = one(1000, 'citation_conference_title');
  const book = one(1000, 'citation_book_title', 'citation_inbook_title');
  const thesis = one(500, 'citation_dissertation_institution');
  const report = one(500, 'citation_technical_report_institution');
  const type = journal
    ? 'article-journal'
    : conference
      ? 'paper-conference'
      : book
        ? 'chapter'
        : thesis
          ? 'thesis'
          : report
            ? 'report'
            : 'webpage';
  const authors = [...all('citation_author'), ...all('citation_authors').flatMap((a) => a.split(';'))]
    .map(person)
    .filter((p): p is Name => p !== undefined);
  const first = one(50, 'citation_firstpage');
  const last = one(50, 'citation_lastpage');
  const csl: CslItem = {
    type,
    title,
    author: authors.slice(0, MAX_VALUES),
    'container-title': journal ?? conference ?? book ?? one(1000, 'og:site_name'),
    'container-title-short': one(300, 'citation_journal_abbrev'),
    volume: one(50, 'citation_volume'),
    issue: one(50, 'citation_issue'),
    page: first ? (last && last !== first ? `${first}-${last}` : first) : undefined,
    issued: dateText(
      one(
        100,
        'citation_publication_date',
        'citation_date',
        'citation_cover_date',
        'citation_online_date',
        'citation_year',
      ),
    ),
    publisher: thesis ?? report ?? one(500, 'citation_publisher'),
    number: one(100, 'citation_technical_report_number'),
    ISSN: one(100, 'citation_issn'),
    ISBN: one(100, 'citation_isbn'),
    abstract: one(10_000, 'citation_abstract'),
    language: one(50, 'citation_language'),
    keyword: all('citation_keywords').slice(0, 50).join(', ') || undefined,
  };
  return { csl, ...(doi ? { doi } : {}), ...(arxiv ? { arxiv } : {}) };
}

function dublinCore(page: ScannedPage): Found | undefined {
  const dc = new Map<string, string[]>();
  for (const [name, values] of page.meta) {
    const m = /^(?:dc|dcterms|dct)[.:](.+)$/.exec(name);
    if (m?.[1]) for (const v of values) push(dc, m[1], v);
  }
  if (dc.size === 0) return undefined;
  const all = (...names: string[]) =>
    names
      .flatMap((n) => dc.get(n) ?? [])
      .map((v) => cleanText(v, 10_000))
      .filter(Boolean);
  const one = (max: number, ...names: string[]) => {
    const v = all(...names)[0];
    return v === undefined ? undefined : cleanText(v, max);
  };
  const title = one(1000, 'title');
  const doi = [...all('identifier'), ...all('identifier.doi'), ...(page.meta.get('prism.doi') ?? [])]
    .map(doiIn)
    .find(Boolean);
  if (!title && !doi) return undefined;
  const kind = (one(100, 'type') ?? '').toLowerCase();
  const container = one(1000, 'ispartof', 'relation.ispartof', 'source', 'citation.jtitle');
  const type = /thesis|dissertation/.test(kind)
    ? 'thesis'
    : /book/.test(kind)
      ? 'book'
      : /report/.test(kind)
        ? 'report'
        : /article/.test(kind) && container
          ? 'article-journal'
          : 'webpage';
  const csl: CslItem = {
    type,
    title,
    author: all('creator')
      .slice(0, MAX_VALUES)
      .map(person)
      .filter((p): p is Name => p !== undefined),
    issued: dateText(one(100, 'date', 'issued', 'created', 'date.issued')),
    publisher: one(500, 'publisher'),
    'container-title': container ?? one(1000, 'og:site_name'),
    abstract: one(10_000, 'description', 'abstract'),
    language: one(50, 'language'),
    keyword: all('subject').slice(0, 50).join(', ') || undefined,
  };
  return { csl, ...(doi ? { doi } : {}) };
}

const JSONLD_TYPES: Record<string, string> = {
  scholarlyarticle: 'article-journal',
  medicalscholarlyarticle: 'article-journal',
  techarticle: 'article-journal',
  article: 'webpage',
  newsarticle: 'article-newspaper',
  reportagenewsarticle: 'article-newspaper',
  blogposting: 'post-weblog',
  socialmediaposting: 'post-weblog',
  report: 'report',
  thesis: 'thesis',
  book: 'book',
  chapter: 'chapter',
  dataset: 'dataset',
};
/** Preference among the JSON-LD objects of a page: the scholarly ones first. */
const JSONLD_RANK = [
  'scholarlyarticle',
  'medicalscholarlyarticle',
  'techarticle',
  'thesis',
  'report',
  'chapter',
  'book',
  'dataset',
  'newsarticle',
  'reportagenewsarticle',
  'blogposting',
  'socialmediaposting',
  'article',
];

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

function typesOf(node: Node): string[] {
  return asList(node['@type'])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/^(?:https?:\/\/)?schema\.org\//i, '').toLowerCase());
}

/** Every object of a JSON-LD value, breadth first, bounded. */
function nodesOf(root: unknown): Node[] {
  const out: Node[] = [];
  const queue: unknown[] = [root];
  for (let k = 0; k < queue.length && out.length < MAX_JSONLD_NODES; k++) {
    const v = queue[k];
    if (Array.isArray(v)) {
      for (const x of v) if (queue.length < MAX_JSONLD_NODES * 4) queue.push(x);
    } else if (isNode(v)) {
      out.push(v);
      for (const x of Object.values(v))
        if (typeof x === 'object' && x !== null && queue.length < MAX_JSONLD_NODES * 4) queue.push(x);
    }
  }
  return out;
}

function str(v: unknown, max = 1000): string | undefined {
  if (typeof v === 'string') return cleanText(v, max) || undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (isNode(v)) return str(v['@value'], max) ?? str(v.name, max);
  if (Array.isArray(v)) return str(v[0], max);
  return undefined;
}

function jsonldNames(v: unknown): Name[] {
  return asList(v)
    .slice(0, MAX_VALUES)
    .map((p): Name | undefined => {
      if (typeof p === 'string') return person(p);
      if (!isNode(p)) return undefined;
      const family = str(p.familyName, 300);
      const given = str(p.givenName, 300);
      if (family) return { family, given: given ?? '' };
      const name = str(p.name, 300);
      if (!name) return undefined;
      return typesOf(p).includes('organization') ? { literal: name } : person(name);
    })
    .filter((p): p is Name => p !== undefined);
}

function jsonldDoi(node: Node): string | undefined {
  const candidates: unknown[] = [...asList(node.identifier), ...asList(node.sameAs), node['@id'], node.url];
  for (const c of candidates) {
    if (typeof c === 'string') {
      const d = doiIn(c);
      if (d) return d;
    } else if (isNode(c)) {
      const id = str(c.propertyID, 50)?.toLowerCase();
      const value = str(c.value, 500) ?? str(c['@value'], 500);
      if (value && (id === 'doi' || /doi/.test(value))) {
        const d = doiIn(value);
        if (d) return d;
      }
    }
  }
  return undefined;
}

function jsonld(page: ScannedPage): Found | undefined {
  const nodes: Node[] = [];
  for (const block of page.jsonld) {
    const text = block.trim().replace(/^<!\[CDATA\[|\]\]>$/g, '');
    if (!text || textNestsTooDeep(text, 'json')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      continue;
    }
    nodes.push(...nodesOf(parsed));
  }
  let best: Node | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const node of nodes) {
    for (const t of typesOf(node)) {
      const rank = JSONLD_RANK.indexOf(t);
      if (rank >= 0 && rank < bestRank && (str(node.headline) || str(node.name))) {
        best = node;
        bestRank = rank;
      }
    }
  }
  if (!best) return undefined;
  const kind = JSONLD_RANK[bestRank] as string;
  // The container: isPartOf (PublicationIssue → PublicationVolume → Periodical), or a Periodical.
  let volume: string | undefined;
  let issue: string | undefined;
  let container: string | undefined;
  let issn: string | undefined;
  let part: unknown = best.isPartOf;
  for (let depth = 0; depth < 5 && isNode(part); depth++) {
    const types = typesOf(part);
    if (types.includes('publicationissue')) issue ??= str(part.issueNumber, 50);
    else if (types.includes('publicationvolume')) volume ??= str(part.volumeNumber, 50);
    else {
      container ??= str(part.name);
      issn ??= str(part.issn, 100);
    }
    part = part.isPartOf;
  }
  const start = str(best.pageStart, 50);
  const end = str(best.pageEnd, 50);
  const publisher = isNode(best.publisher) ? str(best.publisher.name, 500) : str(best.publisher, 500);
  const keywords = asList(best.keywords)
    .map((k) => str(k, 200))
    .filter(Boolean)
    .slice(0, 50)
    .join(', ');
  const csl: CslItem = {
    type: kind === 'article' && container ? 'article-journal' : (JSONLD_TYPES[kind] ?? 'webpage'),
    title: str(best.headline) ?? str(best.name),
    author: jsonldNames(best.author ?? best.creator),
    editor: jsonldNames(best.editor),
    issued: dateText(str(best.datePublished, 100) ?? str(best.dateCreated, 100)),
    'container-title':
      container ??
      (kind === 'newsarticle' || kind === 'blogposting' || kind === 'article' ? publisher : undefined) ??
      metaReader(page).one(1000, 'og:site_name'),
    volume: volume ?? str(best.volumeNumber, 50),
    issue: issue ?? str(best.issueNumber, 50),
    page:
      str(best.pagination, 50) ?? (start ? (end && end !== start ? `${start}-${end}` : start) : undefined),
    publisher,
    ISSN: issn,
    ISBN: str(best.isbn, 100),
    abstract: str(best.abstract, 10_000) ?? str(best.description, 10_000),
    language: str(best.inLanguage, 50),
    keyword: keywords || undefined,
  };
  const doi = jsonldDoi(best);
  return { csl, ...(doi ? { doi } : {}) };
}

/** A DOI in `<link>`/`<meta>` doi.org URLs, else the one DOI the page's anchors point at. */
function linkedDoi(page: ScannedPage): string | undefined {
  for (const rel of ['cite-as', 'canonical', 'alternate', 'describedby']) {
    for (const href of page.links.get(rel) ?? []) {
      if (/doi\.org\/10\./i.test(href)) {
        const d = doiIn(href);
        if (d) return d;
      }
    }
  }
  for (const name of ['og:url', 'prism.url', 'citation_public_url']) {
    for (const v of page.meta.get(name) ?? []) {
      if (/doi\.org\/10\./i.test(v)) {
        const d = doiIn(v);
        if (d) return d;
      }
    }
  }
  const anchors = new Set(
    page.doiAnchors.map((a) => doiIn(a)?.toLowerCase()).filter((d): d is string => d !== undefined),
  );
  return anchors.size === 1 ? [...anchors][0] : undefined;
}

/**
 * The metadata of an HTML page: Highwire first, then JSON-LD, then Dublin Core for the title and
 * type; fields a preferred source lacks filled in from the others; the first DOI any names.
 */
export function readPageMetadata(html: string, pageUrl: string, accessed?: string): PageMetadata {
  const page = scanHtml(html);
  const found = [
    ['highwire', highwire(page)],
    ['jsonld', jsonld(page)],
    ['dublincore', dublinCore(page)],
  ].filter((f): f is [string, Found] => f[1] !== undefined);
  const out: PageMetadata = { sources: found.map(([name]) => name) };
  const doi = found.map(([, f]) => f.doi).find(Boolean) ?? linkedDoi(page);
  const arxiv = found.map(([, f]) => f.arxiv).find(Boolean);
  if (doi) {
    const asArxiv = /^10\.48550\/arxiv\./i.test(doi) ? parseArxiv(doi) : undefined;
    if (asArxiv) out.arxiv = asArxiv;
    else out.doi = doi;
  } else if (arxiv) out.arxiv = arxiv;
  const titled = found.filter(([, f]) => typeof f.csl.title === 'string' && f.csl.title !== '');
  const main = titled[0]?.[1].csl;
  if (main) {
    const csl: CslItem = { ...main };
    for (const [, f] of titled.slice(1)) {
      for (const [k, v] of Object.entries(f.csl)) {
        const empty = csl[k] === undefined || (Array.isArray(csl[k]) && (csl[k] as unknown[]).length === 0);
        if (k !== 'type' && empty && v !== undefined) csl[k] = v;
      }
    }
    for (const [k, v] of Object.entries(csl)) {
      if (v === undefined || (Array.isArray(v) && v.length === 0)) delete csl[k];
    }
    csl.URL = pageUrl;
    if (out.doi) csl.DOI = out.doi;
    if (accessed) csl.accessed = accessed;
    out.csl = csl;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fetching

/** Labels WHATWG reads as windows-1252, which Node's decoder reads as ISO-8859-1. */
const LATIN1: ReadonlySet<string> = new Set([
  'windows-1252',
  'cp1252',
  'iso-8859-1',
  'latin1',
  'l1',
  'ascii',
  'us-ascii',
]);
/** Windows-1252's characters at 0x80-0x9F (undefined ones stay C1 controls and are dropped later). */
const CP1252 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function fromC1(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80] ?? c);
}

/** A charset label TextDecoder knows, else undefined. */
function knownCharset(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    new TextDecoder(label.toLowerCase());
    return label.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The page's encoding: the Content-Type's charset, else a `<meta charset>` (or http-equiv) in
 * its first 1024 bytes, as browsers look for it, else UTF-8.
 */
export function charsetOf(type: string, head: Uint8Array): string {
  const declared = knownCharset(/charset\s*=\s*"?([\w.:-]+)/i.exec(type)?.[1]);
  if (declared) return declared;
  const ascii = new TextDecoder('latin1').decode(head.subarray(0, 1024));
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(ascii)?.[1];
  return knownCharset(meta) ?? 'utf-8';
}

async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  type: string,
): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.byteLength > maxBytes - size ? value.subarray(0, maxBytes - size) : value;
      chunks.push(take);
      size += take.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  const charset = charsetOf(type, all);
  const text = new TextDecoder(charset).decode(all);
  return LATIN1.has(charset) ? fromC1(text) : text;
}

/**
 * `fetch` for pages: redirects pass through to the layer unread; an answer that is not HTML is
 * refused before its body is read; at most `maxBytes` of a body are read.
 */
function pageFetch(maxBytes: number, shown: string): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (REDIRECTS.has(response.status) && response.headers.get('location') !== null) return response;
    const type = response.headers.get('content-type') ?? '';
    if (response.status >= 200 && response.status < 300) {
      if (type && !/^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i.test(type)) {
        await response.body?.cancel().catch(() => undefined);
        throw new ZoteusError(
          'validation_error',
          `${shown} is ${cleanText(type.split(';')[0] ?? type, 100)}, not a web page; Zoteus reads citation metadata from HTML pages only.`,
          { hint: 'Give the URL of the article’s landing page (or its DOI) instead of a file.' },
        );
      }
    }
    if (response.status === 204 || response.status === 205 || response.status === 304) return response;
    const text = await readCapped(response.body, response.ok ? maxBytes : 64 * 1024, type);
    return new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Fetches a page: its HTML (at most MAX_PAGE_BYTES of it) and where it came from after redirects. */
export async function fetchPage(
  deps: ResolverDeps,
  settings: ResolverSettings,
  url: URL,
  maxBytes = MAX_PAGE_BYTES,
): Promise<{ html: string; url: string }> {
  const shown = cleanText(url.href, 200);
  const host = url.host;
  const layer = createHttpLayer({
    clock: deps.clock,
    redact: deps.redact ?? createRedactor(),
    log: (line) => deps.log.debug(line),
    timeoutMs: settings.timeoutMs,
    fetch: pageFetch(maxBytes, shown),
    retry: { statuses: new Set([429, 502, 503, 504]), maxRetries: MAX_ATTEMPTS - 1, maxWaitMs: 30_000 },
    // A shared server fetches a caller's URL only from the public internet (SSRF).
    publicOnly: deps.sharedState !== undefined,
  });
  return layer.send(
    {
      method: 'GET',
      url: url.href,
      server: host,
      headers: {
        Accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
        'User-Agent': settings.userAgent,
      },
      resendable: true,
      call: newCall(settings.retryBudgetMs),
      failures: {
        rateLimited: (seconds) =>
          new ZoteusError('rate_limited', `${host} is throttling requests for ${shown}.`, {
            retryAfterSeconds: seconds,
            hint: `Wait ${seconds} seconds, then retry.`,
          }),
        unreachable: (reason) =>
          new ZoteusError('network_error', `Could not fetch ${shown}: ${reason}.`, {
            hint: 'Check the URL and the network, then retry.',
          }),
      },
    },
    (answer) => {
      if (answer.status === 200 || (answer.status > 200 && answer.status < 300))
        return { html: answer.text, url: answer.url };
      if (answer.status === 404 || answer.status === 410) {
        throw new ZoteusError(
          'not_found',
          `${shown} answered HTTP ${answer.status}: there is no page there.`,
          {
            status: answer.status,
            hint: 'Check the URL (open it in a browser).',
          },
        );
      }
      throw new ZoteusError(
        'api_error',
        `${shown} answered HTTP ${answer.status}${answer.status >= 500 ? ' (a failure on its side)' : ''}.`,
        {
          status: answer.status,
          retryable: answer.status >= 500,
          hint:
            answer.status === 401 || answer.status === 403
              ? 'The page needs a login or refuses robots; give the item’s DOI instead.'
              : 'Retry in a moment, or give the item’s DOI instead.',
        },
      );
    },
  );
}

/** The failure of a page without anything Zoteus can import. */
export function nothingOnPage(shown: string): ZoteusError {
  return new ZoteusError(
    'not_found',
    `${cleanText(shown, 200)} has no citation metadata Zoteus can read (no Highwire citation_* tags, Dublin Core or JSON-LD article with a title) and names no DOI.`,
    {
      hint: `Add it by its DOI or ISBN if it has one, or describe it yourself with ${toolRef('zotero_create_items', { items: 'JSON' })}.`,
    },
  );
}
