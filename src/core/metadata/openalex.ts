/**
 * OpenAlex works by DOI, one singleton lookup each (`/works/doi:<DOI>`, free under its 2026
 * pricing where list filters cost), with the API key OpenAlex requires
 * (ZOTEUS_OPENALEX_API_KEY). Without a key OpenAlex is not asked at all and the answer says so
 * (`skipped`). The key travels in the query (`api_key=`), so log lines and messages show the URL
 * without it, and the service's redactor knows it. Answers are cached a day (cache.ts).
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { metadataCache } from './cache.js';
import {
  eachBatch,
  obj,
  paceOf,
  parseObject,
  serviceCall,
  serviceClient,
  serviceFailed,
  str,
} from './service.js';

export interface OpenAlexLocation {
  landingPageUrl: string | undefined;
  pdfUrl: string | undefined;
  /** submittedVersion, acceptedVersion, publishedVersion. */
  version: string | undefined;
  isPublished: boolean;
  sourceName: string | undefined;
  sourceType: string | undefined;
}

export interface OpenAlexWork {
  id: string;
  doi: string | undefined;
  title: string | undefined;
  type: string | undefined;
  isRetracted: boolean;
  publicationDate: string | undefined;
  biblio: { volume?: string; issue?: string; firstPage?: string; lastPage?: string };
  locations: OpenAlexLocation[];
}

export type OpenAlexResults =
  | { skipped: string; works?: undefined }
  | { skipped?: undefined; works: Map<string, OpenAlexWork | null | ZoteusError> };

const FIELDS = 'id,doi,title,type,is_retracted,publication_date,biblio,locations';

function location(value: unknown): OpenAlexLocation {
  const o = obj(value);
  const source = obj(o.source);
  return {
    landingPageUrl: str(o.landing_page_url),
    pdfUrl: str(o.pdf_url),
    version: str(o.version),
    isPublished: o.is_published === true,
    sourceName: str(source.display_name),
    sourceType: str(source.type),
  };
}

export function toOpenAlexWork(value: Record<string, unknown>): OpenAlexWork | undefined {
  const id = str(value.id);
  if (!id) return undefined;
  const biblio = obj(value.biblio);
  const b: OpenAlexWork['biblio'] = {};
  for (const [from, to] of [
    ['volume', 'volume'],
    ['issue', 'issue'],
    ['first_page', 'firstPage'],
    ['last_page', 'lastPage'],
  ] as const) {
    const v = str(biblio[from]);
    if (v) b[to] = v;
  }
  return {
    id,
    doi: str(value.doi)
      ?.replace(/^https?:\/\/(dx\.)?doi\.org\//i, '')
      .toLowerCase(),
    title: str(value.title) ?? str(value.display_name),
    type: str(value.type),
    isRetracted: value.is_retracted === true,
    publicationDate: str(value.publication_date),
    biblio: b,
    locations: Array.isArray(value.locations) ? value.locations.map(location) : [],
  };
}

function isWork(value: unknown): value is OpenAlexWork {
  const v = obj(value);
  return typeof v.id === 'string' && typeof v.isRetracted === 'boolean' && Array.isArray(v.locations);
}

/** Why OpenAlex was not asked, when it was not. */
export function openAlexSkipped(deps: Pick<Deps, 'config'>): string | undefined {
  return deps.config.metadata.openalexKey === undefined
    ? 'OpenAlex was not asked: it needs an API key (set ZOTEUS_OPENALEX_API_KEY).'
    : undefined;
}

/** What one kind of OpenAlex lookup asks for and keeps (the works of a check, an enrichment's fills). */
export interface OpenAlexLookup<T> {
  /** The `select=` fields. */
  select: string;
  /** The record a work's JSON gives, or null when it gives none. */
  read(work: Record<string, unknown>): T | null;
  /** Whether a cached value still has the shape `read` returns. */
  valid(value: unknown): value is T;
  /** The cache id of a DOI's record (lookups with other fields keep their own). */
  cacheId(doi: string): string;
}

/**
 * One OpenAlex singleton lookup per DOI not in the cache (lower-cased; 404 → null), with the
 * API key, at OpenAlex's pace; a failed lookup fails only its DOI. Or why none was asked.
 */
export async function openAlexLookup<T>(
  deps: Deps,
  dois: readonly string[],
  lookup: OpenAlexLookup<T>,
  options: { onProgress?: (done: number) => void } = {},
): Promise<
  | { skipped: string; values?: undefined }
  | { skipped?: undefined; values: Map<string, T | null | ZoteusError> }
> {
  const skipped = openAlexSkipped(deps);
  if (skipped) return { skipped };
  const key = deps.config.metadata.openalexKey as string;
  const values = new Map<string, T | null | ZoteusError>();
  const cache = metadataCache(deps, 'openalex', lookup.valid);
  const wanted = [...new Set(dois.map((d) => d.toLowerCase()))];
  const missing = wanted.filter((doi) => {
    const cached = cache.get(lookup.cacheId(doi));
    if (cached !== undefined) values.set(doi, cached);
    return cached === undefined;
  });
  if (missing.length === 0) return { values };
  const client = await serviceClient(deps, 'openalex', [key]);
  const call = serviceCall(deps);
  const base = deps.config.metadata.openalex;
  let done = wanted.length - missing.length;
  await eachBatch(missing, paceOf('openalex', deps).inFlight, async (doi) => {
    const path = `${base}/works/doi:${doi.split('/').map(encodeURIComponent).join('/')}`;
    try {
      const answer = await client.request(call, {
        url: `${path}?select=${lookup.select}&api_key=${encodeURIComponent(key)}`,
        label: path,
        headers: { Accept: 'application/json' },
      });
      let value: T | null;
      if (answer.status === 404) value = null;
      else if (answer.status === 200) value = lookup.read(parseObject(client, answer.text));
      else if (answer.status === 401 || answer.status === 403)
        throw new ZoteusError(
          'api_error',
          `OpenAlex refused the request (HTTP ${answer.status}): the API key was not accepted, or requests came too fast.`,
          { status: answer.status, hint: 'Check ZOTEUS_OPENALEX_API_KEY, then retry.' },
        );
      else throw serviceFailed(client.name, answer.status);
      values.set(doi, value);
      await cache.put(lookup.cacheId(doi), value);
    } catch (error) {
      if (!(error instanceof ZoteusError)) throw error;
      values.set(doi, error);
    }
    done += 1;
    options.onProgress?.(done);
  });
  return { values };
}

/** The OpenAlex works of `dois`, one lookup per DOI not in the cache; or why none was asked. */
export async function openAlexWorks(
  deps: Deps,
  dois: readonly string[],
  options: { onProgress?: (done: number) => void } = {},
): Promise<OpenAlexResults> {
  const found = await openAlexLookup(
    deps,
    dois,
    { select: FIELDS, read: (w) => toOpenAlexWork(w) ?? null, valid: isWork, cacheId: (doi) => doi },
    options,
  );
  return found.skipped !== undefined ? { skipped: found.skipped } : { works: found.values };
}
