/**
 * DOIs and arXiv ids: recognising them in the forms people paste (URLs, `doi:` and `arXiv:`
 * prefixes), normalising them, and finding them in existing items for the duplicate check.
 * ISBNs (isbn.ts) and page URLs (page-metadata.ts) are identifiers of imports too.
 */
import { isbnsIn, parseIsbn } from './isbn.js';

export type IdentifierKind = 'doi' | 'arxiv' | 'isbn' | 'url';

export interface Identifier {
  kind: IdentifierKind;
  /**
   * As it will be resolved: a DOI without prefix; an arXiv id with its version if one was given;
   * an ISBN-13 (digits); a page's http(s) URL without its fragment.
   */
  value: string;
}

const DOI_RE = /^10\.\d+(?:\.\d+)*\/\S+$/;
/** New-style arXiv ids (2007 on): 0704.0001, 2101.00001v2. */
const ARXIV_NEW_RE = /^(\d{4}\.\d{4,5})(v\d+)?$/i;
/** Old-style arXiv ids: hep-th/9901001, math.GT/0309136v1. */
const ARXIV_OLD_RE = /^([a-z][a-z-]*(?:\.[A-Z]{2})?\/\d{7})(v\d+)?$/i;

/** `https://doi.org/10.1/x`, `doi:10.1/x`, `10.1/x` → `10.1/x`; anything else undefined. */
export function parseDoi(text: string): string | undefined {
  let s = text.trim();
  const url = /^(?:https?:\/\/)?(?:dx\.)?doi\.org\/(.+)$/i.exec(s);
  if (url?.[1]) {
    try {
      s = decodeURIComponent(url[1]);
    } catch {
      s = url[1];
    }
  } else {
    const prefixed = /^doi:\s*(.+)$/i.exec(s);
    if (prefixed?.[1]) s = prefixed[1];
  }
  s = s.trim().replace(/[.,;]+$/, '');
  return DOI_RE.test(s) ? s : undefined;
}

/** `arXiv:2101.00001v2`, `https://arxiv.org/abs/2101.00001`, `hep-th/9901001` → the id; else undefined. */
export function parseArxiv(text: string): string | undefined {
  let s = text.trim();
  const url = /^(?:https?:\/\/)?(?:www\.|export\.)?arxiv\.org\/(?:abs|pdf)\/(.+?)(?:\.pdf)?\/?$/i.exec(s);
  if (url?.[1]) s = url[1];
  else {
    const prefixed = /^arxiv:\s*(.+)$/i.exec(s);
    if (prefixed?.[1]) s = prefixed[1];
  }
  const doi = /^10\.48550\/arxiv\.(.+)$/i.exec(s);
  if (doi?.[1]) s = doi[1];
  if (ARXIV_NEW_RE.test(s)) return s.replace(/V(\d+)$/, 'v$1');
  if (ARXIV_OLD_RE.test(s)) return s;
  return undefined;
}

/**
 * A DOI, an arXiv id, a valid ISBN or a page's http(s) URL, detected from one line of input;
 * undefined when it is none of them (an ISBN with a wrong check digit included: parseIsbn says why).
 */
export function detectIdentifier(text: string): Identifier | undefined {
  const s = text.trim();
  // An arXiv URL or prefix is unambiguous; a bare new-style id cannot be a DOI either.
  const arxiv = /^10\./.test(s) ? undefined : parseArxiv(s);
  if (arxiv) return { kind: 'arxiv', value: arxiv };
  const doi = parseDoi(s);
  if (doi) return { kind: 'doi', value: doi };
  const isbn = parseIsbn(s);
  if (isbn && 'isbn' in isbn) return { kind: 'isbn', value: isbn.isbn.isbn13 };
  const url = pageUrl(s);
  if (url) return { kind: 'url', value: url };
  return undefined;
}

/** An http(s) URL without credentials, as fetched: its fragment dropped; else undefined. */
export function pageUrl(text: string): string | undefined {
  const s = text.trim();
  if (!/^https?:\/\/\S+$/i.test(s) || s.length > 8192) return undefined;
  try {
    const url = new URL(s);
    if (url.username || url.password || !url.hostname) return undefined;
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}

/** A page's identity: host, path and query, whatever the scheme, without a trailing slash. */
function urlIdentity(href: string): string | undefined {
  const url = pageUrl(href);
  if (!url) return undefined;
  const u = new URL(url);
  return `url:${u.host}${u.pathname.replace(/\/+$/, '')}${u.search}`;
}

/** The arXiv id without its version: what identifies the paper. */
export function arxivBase(id: string): string {
  return id.replace(/v\d+$/i, '');
}

/** The DOI arXiv registers for a paper (with DataCite): `10.48550/arXiv.<id>`. */
export function arxivDoi(id: string): string {
  return `10.48550/arXiv.${arxivBase(id)}`;
}

/**
 * Identity strings for the duplicate check: `doi:<lower-case DOI>` and `arxiv:<id without
 * version>`. An arXiv id also stands for its arXiv DOI and the other way round.
 */
export function identitiesOf(id: Identifier): string[] {
  if (id.kind === 'isbn') return [`isbn:${id.value}`];
  if (id.kind === 'url') {
    const identity = urlIdentity(id.value);
    return identity ? [identity] : [];
  }
  if (id.kind === 'arxiv') {
    const base = arxivBase(id.value).toLowerCase();
    return [`arxiv:${base}`, `doi:${arxivDoi(base).toLowerCase()}`];
  }
  const doi = id.value.toLowerCase();
  const arxiv = /^10\.48550\/arxiv\.(.+)$/i.exec(doi)?.[1];
  return arxiv ? [`doi:${doi}`, `arxiv:${arxivBase(arxiv)}`] : [`doi:${doi}`];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Identities an existing item carries: its DOI field, `DOI:` in Extra, arXiv ids in its fields. */
export function identitiesOfItem(data: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const addDoi = (text: string): void => {
    const doi = parseDoi(text);
    if (doi) for (const i of identitiesOf({ kind: 'doi', value: doi })) out.add(i);
  };
  const addArxiv = (text: string): void => {
    const id = parseArxiv(text);
    if (id) for (const i of identitiesOf({ kind: 'arxiv', value: id })) out.add(i);
  };
  if (str(data.DOI)) addDoi(str(data.DOI));
  const extra = str(data.extra);
  for (const line of extra.split(/\r?\n/)) {
    const doi = /^\s*DOI:\s*(\S+)/i.exec(line)?.[1];
    if (doi) addDoi(doi);
    const arxiv = /^\s*arXiv:\s*(\S+)/i.exec(line)?.[1];
    if (arxiv) addArxiv(arxiv);
  }
  const archiveID = str(data.archiveID);
  if (/^arxiv:/i.test(archiveID)) addArxiv(archiveID);
  const url = str(data.url);
  if (/arxiv\.org\/(abs|pdf)\//i.test(url)) addArxiv(url);
  else if (/doi\.org\/10\./i.test(url)) addDoi(url);
  // ISBN-10 and -13 of a book are one identity; the field may hold several, hyphenated or not.
  for (const isbn of isbnsIn(str(data.ISBN))) out.add(`isbn:${isbn}`);
  const page = url ? urlIdentity(url) : undefined;
  if (page) out.add(page);
  return [...out];
}
