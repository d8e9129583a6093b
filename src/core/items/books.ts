/**
 * Books by ISBN (isbn.ts reads and checks them): Open Library's books API first
 * (`GET /api/books?bibkeys=ISBN:a,ISBN:b&format=json&jscmd=data`, every ISBN of a batch in one
 * request), then, for the ISBNs Open Library does not know, the Library of Congress catalogue
 * over SRU (`GET /lcdb?operation=searchRetrieve&version=1.1&recordSchema=mods&query=bath.isbn=a
 * or bath.isbn=b`, again one request for the batch), whose MODS records are read here. Both
 * answers become Zotero `book` items (title, creators, publisher, place, date, numPages, ISBN,
 * url) through the schema's CSL mappings.
 *
 * Base URLs: ZOTEUS_OPENLIBRARY_URL (default https://openlibrary.org), ZOTEUS_LOC_URL (default
 * http://lx2.loc.gov:210/lcdb). The requests go through the shared HTTP layer with the other
 * resolvers' retries and timeouts, and carry no credentials.
 */
import { ZoteusError } from '../errors.js';
import type { CslItem } from './csl.js';
import { cslToZotero } from './csl.js';
import { decodeEntities, squash } from './html.js';
import { isbnsIn, type Isbn } from './isbn.js';
import {
  resolverGet,
  resolverJson,
  resolverUnexpected,
  splitName,
  type Resolved,
  type ResolverDeps,
  type ResolverSettings,
} from './resolvers.js';
import type { ItemSchema } from './schema.js';

/** A book found in a catalogue, before it is mapped onto Zotero's fields. */
interface Book {
  title: string;
  authors: Array<{ name: string; role?: 'editor' }>;
  publisher?: string;
  place?: string;
  date?: string;
  numPages?: string;
  edition?: string;
  isbns: string[];
  url?: string;
}

function bookToZotero(schema: ItemSchema, book: Book, isbn: Isbn, catalog: string): Record<string, unknown> {
  const isbns = [isbn.isbn13, ...book.isbns.filter((i) => i !== isbn.isbn13)];
  const people = (role: 'editor' | undefined) =>
    book.authors
      .filter((a) => a.role === role)
      .map((a) => (/,/.test(a.name) ? commaName(a.name) : personName(a.name)));
  const csl: CslItem = {
    type: 'book',
    title: book.title,
    author: people(undefined),
    editor: people('editor'),
    publisher: book.publisher,
    'publisher-place': book.place,
    issued: book.date,
    'number-of-pages': book.numPages,
    edition: book.edition,
    ISBN: isbns.join(' '),
    URL: book.url,
  };
  return cslToZotero(schema, csl, { itemType: 'book', libraryCatalog: catalog });
}

function personName(name: string): { family: string; given: string } | { literal: string } {
  const { given, family } = splitName(name);
  return family ? { family, given } : { literal: name };
}

/** "Twain, Mark, 1835-1910." → {family: "Twain", given: "Mark"}. */
function commaName(name: string): { family: string; given: string } {
  const [family = '', ...rest] = name.split(',');
  const given = rest
    .map((r) => r.trim())
    .filter((r) => r !== '' && !/^\d{3,4}-?(\d{3,4})?\.?$/.test(r))
    .join(', ');
  return { family: trimPunct(family), given: trimPunct(given) };
}

/** Catalogue punctuation at the end of a field (ISBD's " :", " ;", ",", "."). */
function trimPunct(text: string): string {
  return squash(text)
    .replace(/^[\s[]+/, '')
    .replace(/[\s:;,/.\]]+$/, '')
    .trim();
}

const text = (value: unknown, max = 2000): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? squash(value).slice(0, max) : undefined;

const obj = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function isbnList(values: unknown): string[] {
  return list(values).flatMap((v) => (typeof v === 'string' ? isbnsIn(v) : []));
}

/** One record of Open Library's books API (`jscmd=data`). */
export function openLibraryBook(record: Record<string, unknown>): Book | undefined {
  const title = text(record.title);
  if (!title) return undefined;
  const subtitle = text(record.subtitle);
  const identifiers = obj(record.identifiers);
  const pages = record.number_of_pages;
  const pagination = text(record.pagination);
  const numPages =
    typeof pages === 'number' && Number.isInteger(pages) && pages > 0
      ? String(pages)
      : pagination
        ? /(\d+)\s*p\b/.exec(pagination)?.[1]
        : undefined;
  const book: Book = {
    title: subtitle ? `${title}: ${subtitle}` : title,
    authors: list(record.authors)
      .map((a) => text(obj(a).name, 300))
      .filter((n): n is string => n !== undefined)
      .map((name) => ({ name })),
    isbns: [...new Set([...isbnList(identifiers.isbn_13), ...isbnList(identifiers.isbn_10)])],
  };
  const publisher = text(obj(list(record.publishers)[0]).name, 500);
  const place = text(obj(list(record.publish_places)[0]).name, 500);
  const date = text(record.publish_date, 100);
  const url = text(record.url, 2000);
  if (publisher) book.publisher = publisher;
  if (place) book.place = place;
  if (date) book.date = date;
  if (numPages) book.numPages = numPages;
  if (url && /^https?:\/\//i.test(url)) book.url = url;
  return book;
}

/** Elements named `tag` (any namespace prefix) in `xml`: attributes and inner text. */
function elements(xml: string, tag: string): Array<{ attrs: string; body: string }> {
  const re = new RegExp(`<(?:[\\w-]+:)?${tag}(\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w-]+:)?${tag}>`, 'g');
  return [...xml.matchAll(re)].map((m) => ({ attrs: m[1] ?? '', body: m[2] ?? '' }));
}

function attr(attrs: string, name: string): string | undefined {
  return new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`).exec(attrs)?.[1];
}

function xmlText(body: string): string {
  return squash(decodeEntities(body.replace(/<[^>]*>/g, ' ')));
}

/** One MODS record of the Library of Congress catalogue. */
export function modsBook(mods: string): Book | undefined {
  const titleInfo =
    elements(mods, 'titleInfo').find((t) => attr(t.attrs, 'type') === undefined) ??
    elements(mods, 'titleInfo')[0];
  if (!titleInfo) return undefined;
  const part = (tag: string) => {
    const found = elements(titleInfo.body, tag)[0];
    return found ? trimPunct(xmlText(found.body)) : '';
  };
  const nonSort = elements(titleInfo.body, 'nonSort')[0];
  const main = `${nonSort ? xmlText(nonSort.body).replace(/\s*$/, ' ') : ''}${part('title')}`.trim();
  if (!main) return undefined;
  const sub = part('subTitle');
  const authors: Book['authors'] = [];
  for (const name of elements(mods, 'name')) {
    const parts = elements(name.body, 'namePart').filter((p) => attr(p.attrs, 'type') === undefined);
    const full = parts.map((p) => xmlText(p.body)).join(' ');
    if (!full) continue;
    const roles = elements(name.body, 'roleTerm').map((r) => xmlText(r.body).toLowerCase());
    const corporate = attr(name.attrs, 'type') === 'corporate';
    const cleaned = corporate ? trimPunct(full) : full;
    authors.push({ name: cleaned, ...(roles.some((r) => r.startsWith('ed')) ? { role: 'editor' } : {}) });
  }
  const origin = elements(mods, 'originInfo')[0]?.body ?? '';
  const place = elements(origin, 'placeTerm')
    .filter((p) => attr(p.attrs, 'type') === 'text')
    .map((p) => trimPunct(xmlText(p.body)))[0];
  const publisher = elements(origin, 'publisher').map((p) => trimPunct(xmlText(p.body)))[0];
  const dates = elements(origin, 'dateIssued');
  const date = (dates.find((d) => attr(d.attrs, 'encoding') === undefined) ?? dates[0])?.body;
  const edition = elements(origin, 'edition').map((p) => trimPunct(xmlText(p.body)))[0];
  const extent = elements(mods, 'extent').map((e) => xmlText(e.body))[0];
  const pages = extent ? [...extent.matchAll(/(\d+)\s*p\b/g)].map((m) => Number(m[1])) : [];
  const identifiers = elements(mods, 'identifier');
  const isbns = identifiers
    .filter((i) => attr(i.attrs, 'type') === 'isbn' && attr(i.attrs, 'invalid') === undefined)
    .flatMap((i) => isbnsIn(xmlText(i.body)));
  const lccn = identifiers
    .filter((i) => attr(i.attrs, 'type') === 'lccn')
    .map((i) => xmlText(i.body).replace(/\s+/g, ''))
    .find((l) => /^[a-z]{0,3}\d{6,12}$/i.test(l));
  const book: Book = { title: sub ? `${main}: ${sub}` : main, authors, isbns: [...new Set(isbns)] };
  if (publisher) book.publisher = publisher;
  if (place) book.place = place;
  if (date) book.date = trimPunct(xmlText(date)).replace(/^c(?=\d{4})/, '');
  if (edition) book.edition = edition;
  if (pages.length) book.numPages = String(Math.max(...pages));
  if (lccn) book.url = `https://lccn.loc.gov/${lccn}`;
  return book;
}

/** The MODS records of an SRU `searchRetrieve` answer. */
export function modsRecords(xml: string): string[] {
  return elements(xml, 'mods').map((m) => m.body);
}

/** ISBNs asked of a catalogue in one request. */
export const ISBN_BATCH = 50;

function notFound(isbn: Isbn): ZoteusError {
  return new ZoteusError(
    'not_found',
    `ISBN ${isbn.isbn13} is not in Open Library or the Library of Congress catalogue.`,
    { hint: 'Check the ISBN against the book (its back cover or copyright page).' },
  );
}

/**
 * Several ISBNs, looked up a batch at a time: each maps to its `book` item, to `not_found` when
 * neither catalogue has it, or to the error of the catalogue that failed (network_error,
 * api_error naming it) when the other did not find it either.
 */
export async function resolveIsbns(
  deps: ResolverDeps,
  settings: ResolverSettings,
  schema: ItemSchema,
  isbns: readonly Isbn[],
): Promise<Map<string, Resolved | ZoteusError>> {
  const out = new Map<string, Resolved | ZoteusError>();
  const wanted = [...new Map(isbns.map((i) => [i.isbn13, i])).values()];
  for (let start = 0; start < wanted.length; start += ISBN_BATCH) {
    const batch = wanted.slice(start, start + ISBN_BATCH);
    const openLibraryError = await askOpenLibrary(deps, settings, schema, batch, out);
    const missing = batch.filter((i) => !out.has(i.isbn13));
    if (missing.length === 0) continue;
    const locError = await askLoc(deps, settings, schema, missing, out);
    for (const isbn of missing) {
      if (out.has(isbn.isbn13)) continue;
      out.set(isbn.isbn13, openLibraryError ?? locError ?? notFound(isbn));
    }
  }
  return out;
}

async function askOpenLibrary(
  deps: ResolverDeps,
  settings: ResolverSettings,
  schema: ItemSchema,
  batch: readonly Isbn[],
  out: Map<string, Resolved | ZoteusError>,
): Promise<ZoteusError | undefined> {
  const bibkeys = batch.map((i) => `ISBN:${i.compact}`).join(',');
  const url = `${settings.openlibrary}/api/books?bibkeys=${encodeURIComponent(bibkeys)}&format=json&jscmd=data`;
  try {
    const answer = await resolverGet(deps, settings, 'Open Library', url, 'application/json');
    if (answer.status !== 200) throw resolverUnexpected('Open Library', answer.status);
    const records = obj(resolverJson('Open Library', answer.text));
    for (const isbn of batch) {
      const record =
        records[`ISBN:${isbn.compact}`] ??
        records[`ISBN:${isbn.isbn13}`] ??
        (isbn.isbn10 ? records[`ISBN:${isbn.isbn10}`] : undefined);
      const book = openLibraryBook(obj(record));
      if (book)
        out.set(isbn.isbn13, {
          item: bookToZotero(schema, book, isbn, 'Open Library'),
          source: 'openlibrary',
        });
    }
    return undefined;
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    return error;
  }
}

async function askLoc(
  deps: ResolverDeps,
  settings: ResolverSettings,
  schema: ItemSchema,
  batch: readonly Isbn[],
  out: Map<string, Resolved | ZoteusError>,
): Promise<ZoteusError | undefined> {
  const query = batch.map((i) => `bath.isbn=${i.compact}`).join(' or ');
  const url = `${settings.loc}?version=1.1&operation=searchRetrieve&recordSchema=mods&maximumRecords=${Math.min(100, batch.length * 2)}&query=${encodeURIComponent(query)}`;
  try {
    const answer = await resolverGet(deps, settings, 'Library of Congress', url, 'application/xml, text/xml');
    if (answer.status !== 200) throw resolverUnexpected('Library of Congress', answer.status);
    if (!/<(?:[\w-]+:)?searchRetrieveResponse[\s>]/.test(answer.text)) {
      throw new ZoteusError(
        'api_error',
        'The Library of Congress answered with something that is not an SRU response.',
        { retryable: true, hint: 'Retry in a moment; if it persists, check ZOTEUS_LOC_URL.' },
      );
    }
    const books = modsRecords(answer.text)
      .map(modsBook)
      .filter((b): b is Book => b !== undefined);
    for (const isbn of batch) {
      const book = books.find((b) => b.isbns.includes(isbn.isbn13));
      if (book) {
        out.set(isbn.isbn13, {
          item: bookToZotero(schema, book, isbn, 'Library of Congress Catalog'),
          source: 'loc',
        });
      }
    }
    return undefined;
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    return error;
  }
}
