/**
 * Metadata resolvers for identifiers: DOIs at Crossref (`GET /works/{doi}`), then DataCite
 * (`GET /dois/{doi}`) when Crossref does not know them, and arXiv ids at the arXiv API
 * (`GET /query?id_list=…`, up to 50 ids per request). Each answer is read into CSL-JSON and
 * mapped onto Zotero's item types and fields by the schema's CSL mappings (csl.ts).
 *
 * Base URLs come from the configuration (config.ts) so tests (and mirrors) can point elsewhere:
 * ZOTEUS_CROSSREF_URL (default https://api.crossref.org), ZOTEUS_DATACITE_URL (default
 * https://api.datacite.org), ZOTEUS_ARXIV_URL (default https://export.arxiv.org/api);
 * ZOTEUS_CROSSREF_MAILTO optionally joins Crossref's polite pool. The Zotero API key is never
 * sent to a resolver: these requests carry no credentials. They go through the shared outbound
 * HTTP layer (core/http/send.ts) like every other client's: bounded retries, a timeout,
 * redirects followed by hand, redacted log lines and errors.
 */
import { ZoteusError } from '../errors.js';
import { createHttpLayer, newCall } from '../http/index.js';
import { createRedactor } from '../redact.js';
import type { Deps } from '../tool.js';
import { cslToZotero, type CslItem } from './csl.js';
import { decodeEntities, jatsToText, squash } from './html.js';
import { arxivBase, arxivDoi } from './identifiers.js';
import type { ItemSchema } from './schema.js';
import { own } from '../own.js';

export interface ResolverSettings {
  crossref: string;
  datacite: string;
  arxiv: string;
  mailto: string | undefined;
  /** Open Library and the Library of Congress's SRU catalogue (ISBNs, books.ts). */
  openlibrary: string;
  loc: string;
  timeoutMs: number;
  /** What one resolver request may spend waiting out rate limits (ZOTEUS_RETRY_BUDGET_MS). */
  retryBudgetMs: number;
  userAgent: string;
}

/** What the resolvers need from `Deps`; without `redact`, only key-shaped forms are redacted. */
export type ResolverDeps = Pick<Deps, 'clock' | 'log'> & Partial<Pick<Deps, 'redact' | 'sharedState'>>;

/** The resolver settings, read and validated with the rest of the configuration (config.ts). */
export function resolverSettings(deps: Pick<Deps, 'config' | 'version'>): ResolverSettings {
  const { crossref, datacite, arxiv, mailto, openlibrary, loc } = deps.config.resolvers;
  return {
    crossref,
    datacite,
    arxiv,
    mailto,
    openlibrary,
    loc,
    timeoutMs: deps.config.timeoutMs,
    retryBudgetMs: deps.config.retryBudgetMs,
    userAgent: `Zoteus/${deps.version}${mailto ? ` (mailto:${mailto})` : ''}`,
  };
}

/** Attempts of one resolver request (network errors, 429, 502-504) before giving up. */
const MAX_ATTEMPTS = 3;
/** A Retry-After longer than this is not waited out: the entry fails as `rate_limited`. */
const MAX_WAIT_MS = 30_000;
/** Answers a resolver gives while busy or restarting: waited out and asked again. */
const BUSY: ReadonlySet<number> = new Set([429, 502, 503, 504]);

interface Answer {
  status: number;
  text: string;
}

const URL_VARIABLE: Record<string, string> = {
  Crossref: 'ZOTEUS_CROSSREF_URL',
  DataCite: 'ZOTEUS_DATACITE_URL',
  arXiv: 'ZOTEUS_ARXIV_URL',
  'Open Library': 'ZOTEUS_OPENLIBRARY_URL',
  'Library of Congress': 'ZOTEUS_LOC_URL',
};

/** One GET to a resolver with bounded retries; non-2xx statuses other than retried ones are returned. */
function get(
  deps: ResolverDeps,
  settings: ResolverSettings,
  service: string,
  url: string,
  accept: string,
): Promise<Answer> {
  const layer = createHttpLayer({
    clock: deps.clock,
    redact: deps.redact ?? createRedactor(),
    log: (line) => deps.log.debug(line),
    timeoutMs: settings.timeoutMs,
    retry: { statuses: BUSY, maxRetries: MAX_ATTEMPTS - 1, maxWaitMs: MAX_WAIT_MS },
  });
  return layer.send(
    {
      method: 'GET',
      url,
      server: service,
      headers: { Accept: accept, 'User-Agent': settings.userAgent },
      resendable: true,
      call: newCall(settings.retryBudgetMs),
      failures: {
        rateLimited: (seconds, cause) =>
          cause.kind === 'status' && cause.status !== 429
            ? unexpected(service, cause.status)
            : new ZoteusError('rate_limited', `${service} is throttling requests (HTTP 429).`, {
                retryAfterSeconds: seconds,
                hint: `Wait ${seconds} seconds, then retry.`,
              }),
        unreachable: (reason) =>
          new ZoteusError(
            'network_error',
            `Could not reach ${service} (${new URL(url).origin}): ${reason}.`,
            {
              hint: `Check the network (and ${URL_VARIABLE[service] ?? 'the resolver URL'}), then retry.`,
            },
          ),
      },
    },
    ({ status, text }) => ({ status, text }),
  );
}

/** One GET to a resolver (the other resolvers' modules: books.ts). */
export const resolverGet = get;
/** A status a resolver should not answer with, as an `api_error` naming it. */
export const resolverUnexpected = (service: string, status: number): ZoteusError =>
  unexpected(service, status);
/** A resolver's JSON answer, or `api_error` naming it. */
export const resolverJson = (service: string, text: string): unknown => parseJson(service, text);

function unexpected(service: string, status: number): ZoteusError {
  if (status >= 500) {
    return new ZoteusError('api_error', `${service} failed on its side (HTTP ${status}).`, {
      retryable: true,
      status,
      hint: 'Retry in a moment.',
    });
  }
  return new ZoteusError('api_error', `${service} refused the request (HTTP ${status}).`, { status });
}

function parseJson(service: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ZoteusError('api_error', `${service} answered with something that is not JSON.`, {
      retryable: true,
      hint: 'Retry in a moment; if it persists, check the resolver URL.',
    });
  }
}

function obj(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function first(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** Keeps a path's slashes readable (`/works/10.1000/xyz`) while escaping everything else. */
function doiPath(doi: string): string {
  return doi.split('/').map(encodeURIComponent).join('/');
}

/** Crossref work types → CSL types. */
const CROSSREF_TYPES: Record<string, string> = {
  'journal-article': 'article-journal',
  'book-chapter': 'chapter',
  'book-section': 'chapter',
  'book-part': 'chapter',
  'book-track': 'chapter',
  'proceedings-article': 'paper-conference',
  book: 'book',
  monograph: 'book',
  'edited-book': 'book',
  'reference-book': 'book',
  'book-set': 'book',
  'book-series': 'book',
  dissertation: 'thesis',
  report: 'report',
  'report-series': 'report',
  'report-component': 'report',
  'posted-content': 'article',
  dataset: 'dataset',
  standard: 'standard',
  'reference-entry': 'entry-encyclopedia',
};

function crossrefNames(value: unknown): unknown[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((p) => {
    const o = obj(p);
    return { family: o.family, given: o.given, literal: o.name };
  });
}

/** A Crossref work (`message` of `/works/{doi}`) as CSL-JSON. */
export function crossrefToCsl(work: Record<string, unknown>): CslItem {
  const type = typeof work.type === 'string' ? work.type : '';
  const title = first(work.title);
  const subtitle = first(work.subtitle);
  const institution = Array.isArray(work.institution) ? first(obj(work.institution[0]).name) : undefined;
  const issued = [
    work.issued,
    work['published-print'],
    work['published-online'],
    work.published,
    work.created,
  ].find((d) => {
    const parts = obj(d)['date-parts'];
    return (
      Array.isArray(parts) && Array.isArray(parts[0]) && parts[0][0] !== null && parts[0][0] !== undefined
    );
  });
  const event = obj(work.event);
  const csl: CslItem = {
    type: own(CROSSREF_TYPES, type) ?? 'document',
    title:
      title && subtitle && !title.toLowerCase().includes(subtitle.toLowerCase())
        ? `${title}: ${subtitle}`
        : title,
    'container-title': first(work['container-title']),
    'container-title-short': first(work['short-container-title']),
    volume: first(work.volume),
    issue: first(work.issue),
    page: first(work.page) ?? first(work['article-number']),
    DOI: first(work.DOI),
    ISSN: Array.isArray(work.ISSN) ? work.ISSN.join(', ') : first(work.ISSN),
    ISBN: Array.isArray(work.ISBN) ? work.ISBN.join(' ') : first(work.ISBN),
    publisher:
      (type === 'dissertation' || type === 'posted-content' ? institution : undefined) ??
      first(work.publisher),
    'publisher-place': first(work['publisher-location']),
    language: first(work.language),
    abstract: typeof work.abstract === 'string' ? jatsToText(work.abstract) : undefined,
    edition: first(work['edition-number']),
    'event-title': first(event.name),
    'event-place': first(event.location),
    issued,
    author: crossrefNames(work.author),
    editor: crossrefNames(work.editor),
    translator: crossrefNames(work.translator),
  };
  if (type === 'book-chapter' || type === 'book-section' || type === 'book-part') {
    // Crossref puts the book's title in container-title and a series in it too at times.
    csl['container-title'] = first(work['container-title']);
  }
  return csl;
}

/** DataCite `resourceTypeGeneral` → CSL type, for the specific ones. */
const DATACITE_GENERAL: Record<string, string> = {
  Dataset: 'dataset',
  Software: 'software',
  Preprint: 'article',
  JournalArticle: 'article-journal',
  Book: 'book',
  BookChapter: 'chapter',
  ConferencePaper: 'paper-conference',
  Dissertation: 'thesis',
  Report: 'report',
  Image: 'graphic',
  Audiovisual: 'motion_picture',
  Sound: 'song',
  Standard: 'standard',
};

function dataciteNames(value: unknown): unknown[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((p) => {
    const o = obj(p);
    const personal = o.nameType !== 'Organizational' && typeof o.familyName === 'string';
    return personal ? { family: o.familyName, given: o.givenName } : { literal: o.name };
  });
}

/** DataCite `data.attributes` of `/dois/{doi}` as CSL-JSON. */
export function dataciteToCsl(attributes: Record<string, unknown>, schema: ItemSchema): CslItem {
  const types = obj(attributes.types);
  const general =
    typeof types.resourceTypeGeneral === 'string'
      ? own(DATACITE_GENERAL, types.resourceTypeGeneral)
      : undefined;
  const citeproc =
    typeof types.citeproc === 'string' && own(schema.csl.types, types.citeproc) ? types.citeproc : undefined;
  const titles = Array.isArray(attributes.titles) ? attributes.titles.map(obj) : [];
  const main = titles.find((t) => t.titleType === undefined || t.titleType === null) ?? titles[0];
  const subtitle = titles.find((t) => t.titleType === 'Subtitle');
  const title = first(main?.title);
  const sub = first(subtitle?.title);
  const dates = Array.isArray(attributes.dates) ? attributes.dates.map(obj) : [];
  const issuedDate = first(dates.find((d) => d.dateType === 'Issued')?.date);
  const year = attributes.publicationYear;
  const descriptions = Array.isArray(attributes.descriptions) ? attributes.descriptions.map(obj) : [];
  const abstract = first(descriptions.find((d) => d.descriptionType === 'Abstract')?.description);
  const contributors = Array.isArray(attributes.contributors) ? attributes.contributors.map(obj) : [];
  const container = obj(attributes.container);
  const publisher =
    typeof attributes.publisher === 'string' ? attributes.publisher : first(obj(attributes.publisher).name);
  const firstPage = first(container.firstPage);
  const lastPage = first(container.lastPage);
  return {
    type: general ?? citeproc ?? 'document',
    title: title && sub ? `${title}: ${sub}` : title,
    author: dataciteNames(attributes.creators),
    editor: dataciteNames(contributors.filter((c) => c.contributorType === 'Editor')),
    publisher,
    issued: issuedDate ?? (typeof year === 'number' || typeof year === 'string' ? String(year) : undefined),
    abstract: abstract ? squash(abstract) : undefined,
    version: first(attributes.version),
    language: first(attributes.language),
    URL: first(attributes.url),
    DOI: first(attributes.doi),
    'container-title': first(container.title),
    volume: first(container.volume),
    issue: first(container.issue),
    page: firstPage ? (lastPage ? `${firstPage}-${lastPage}` : firstPage) : undefined,
  };
}

export interface Resolved {
  item: Record<string, unknown>;
  source: 'crossref' | 'datacite' | 'arxiv' | 'openlibrary' | 'loc' | 'page';
}

/**
 * A DOI's metadata as a Zotero item: Crossref first, then DataCite. `not_found` when neither
 * knows it; when Crossref failed for another reason and DataCite does not know the DOI,
 * Crossref's error is the answer (it may well be a Crossref DOI).
 */
export async function resolveDoi(
  deps: ResolverDeps,
  settings: ResolverSettings,
  schema: ItemSchema,
  doi: string,
): Promise<Resolved> {
  let crossrefError: ZoteusError | undefined;
  try {
    const query = settings.mailto ? `?mailto=${encodeURIComponent(settings.mailto)}` : '';
    const answer = await get(
      deps,
      settings,
      'Crossref',
      `${settings.crossref}/works/${doiPath(doi)}${query}`,
      'application/json',
    );
    if (answer.status === 200) {
      const message = obj(obj(parseJson('Crossref', answer.text)).message);
      const csl = crossrefToCsl(message);
      if (!csl.DOI) csl.DOI = doi;
      return { item: cslToZotero(schema, csl, { libraryCatalog: 'DOI.org (Crossref)' }), source: 'crossref' };
    }
    if (answer.status !== 404) crossrefError = unexpected('Crossref', answer.status);
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    crossrefError = error;
  }
  const answer = await get(
    deps,
    settings,
    'DataCite',
    `${settings.datacite}/dois/${doiPath(doi)}`,
    'application/vnd.api+json, application/json',
  ).catch((error: unknown) => {
    throw crossrefError ?? error;
  });
  if (answer.status === 200) {
    const attributes = obj(obj(obj(parseJson('DataCite', answer.text)).data).attributes);
    const csl = dataciteToCsl(attributes, schema);
    if (!csl.DOI) csl.DOI = doi;
    return { item: cslToZotero(schema, csl, { libraryCatalog: 'DOI.org (Datacite)' }), source: 'datacite' };
  }
  if (crossrefError) throw crossrefError;
  if (answer.status === 404) {
    throw new ZoteusError('not_found', `DOI ${doi} is not registered at Crossref or DataCite.`, {
      hint: 'Check the DOI for typos (https://doi.org/<DOI> should open the paper).',
    });
  }
  throw unexpected('DataCite', answer.status);
}

export interface ArxivEntry {
  /** As in the feed's `<id>`, e.g. `2101.00001v2`. */
  id: string;
  title: string;
  summary: string;
  published: string;
  authors: string[];
  primaryCategory: string | undefined;
  journalRef: string | undefined;
}

function tagText(xml: string, tag: string): string | undefined {
  const found = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`).exec(xml);
  return found?.[1] === undefined
    ? undefined
    : decodeEntities(found[1].replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1'));
}

/** The entries of an arXiv API Atom feed. */
export function parseArxivFeed(xml: string): ArxivEntry[] {
  const entries: ArxivEntry[] = [];
  for (const match of xml.matchAll(/<entry(?:\s[^>]*)?>([\s\S]*?)<\/entry>/g)) {
    const body = match[1] ?? '';
    const idUrl = squash(tagText(body, 'id') ?? '');
    if (/\/api\/errors/.test(idUrl)) continue;
    const id = /\/abs\/(.+)$/.exec(idUrl)?.[1];
    const title = squash(tagText(body, 'title') ?? '');
    if (!id || !title) continue;
    const authors = [...body.matchAll(/<author(?:\s[^>]*)?>([\s\S]*?)<\/author>/g)]
      .map((a) => squash(tagText(a[1] ?? '', 'name') ?? ''))
      .filter(Boolean);
    entries.push({
      id,
      title,
      summary: squash(tagText(body, 'summary') ?? ''),
      published: squash(tagText(body, 'published') ?? ''),
      authors,
      primaryCategory: /<arxiv:primary_category[^>]*\bterm="([^"]+)"/.exec(body)?.[1],
      journalRef: tagText(body, 'arxiv:journal_ref')?.trim() || undefined,
    });
  }
  return entries;
}

const PARTICLES = new Set([
  'van',
  'von',
  'de',
  'der',
  'den',
  'da',
  'di',
  'del',
  'della',
  'du',
  'la',
  'le',
  'dos',
  'das',
  'ter',
  'ten',
]);
const SUFFIX = /^(jr\.?|sr\.?|ii|iii|iv)$/i;

/** "Ludwig van Beethoven" → {given: "Ludwig", family: "van Beethoven"}. */
export function splitName(full: string): { given: string; family: string } {
  const tokens = full.trim().split(/\s+/).filter(Boolean);
  if (tokens.length <= 1) return { given: '', family: tokens[0] ?? '' };
  let end = tokens.length;
  let suffix = '';
  if (end > 2 && SUFFIX.test(tokens[end - 1] as string)) {
    suffix = tokens[end - 1] as string;
    end -= 1;
  }
  let start = end - 1;
  while (start > 1 && PARTICLES.has((tokens[start - 1] as string).toLowerCase())) start -= 1;
  const given = tokens.slice(0, start).join(' ') + (suffix ? `, ${suffix}` : '');
  return { given, family: tokens.slice(start, end).join(' ') };
}

/** An arXiv entry as a Zotero preprint: repository arXiv, archive id `arXiv:<id>`, arXiv's own DOI. */
export function arxivToZotero(
  schema: ItemSchema,
  entry: ArxivEntry,
  requested: string,
): Record<string, unknown> {
  const id = /v\d+$/i.test(requested) ? requested : arxivBase(entry.id);
  const csl: CslItem = {
    type: 'article',
    title: entry.title,
    author: entry.authors.map((name) => {
      const { given, family } = splitName(name);
      return family ? { family, given } : { literal: name };
    }),
    abstract: entry.summary || undefined,
    issued: entry.published ? entry.published.slice(0, 10) : undefined,
    publisher: 'arXiv',
    number: `arXiv:${id}`,
    DOI: arxivDoi(id),
    URL: `https://arxiv.org/abs/${id}`,
  };
  const extra = [`arXiv:${id}${entry.primaryCategory ? ` [${entry.primaryCategory}]` : ''}`];
  if (entry.journalRef) extra.push(`Journal reference: ${squash(entry.journalRef)}`);
  return cslToZotero(schema, csl, { itemType: 'preprint', libraryCatalog: 'arXiv.org', extra });
}

/**
 * Several arXiv ids in one request (the API takes a list): each id maps to its item, or to
 * `not_found` when the feed has no entry for it. A failed request fails every id of it.
 */
export async function resolveArxiv(
  deps: ResolverDeps,
  settings: ResolverSettings,
  schema: ItemSchema,
  ids: readonly string[],
): Promise<Map<string, Resolved | ZoteusError>> {
  const out = new Map<string, Resolved | ZoteusError>();
  if (ids.length === 0) return out;
  const wanted = [...new Set(ids)];
  const url = `${settings.arxiv}/query?id_list=${wanted.map(encodeURIComponent).join(',')}&max_results=${wanted.length}`;
  let entries: ArxivEntry[];
  try {
    const answer = await get(deps, settings, 'arXiv', url, 'application/atom+xml');
    if (answer.status !== 200) throw unexpected('arXiv', answer.status);
    entries = parseArxivFeed(answer.text);
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    for (const id of wanted) out.set(id, error);
    return out;
  }
  for (const id of wanted) {
    const versioned = /v\d+$/i.test(id);
    const entry = entries.find((e) =>
      versioned
        ? e.id.toLowerCase() === id.toLowerCase()
        : arxivBase(e.id).toLowerCase() === id.toLowerCase(),
    );
    out.set(
      id,
      entry
        ? { item: arxivToZotero(schema, entry, id), source: 'arxiv' }
        : new ZoteusError('not_found', `arXiv has no paper ${id}.`, {
            hint: 'Check the id (e.g. 2101.00001 or hep-th/9901001).',
          }),
    );
  }
  return out;
}
