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

/** The OpenAlex works of `dois`, one lookup per DOI not in the cache; or why none was asked. */
export async function openAlexWorks(
  deps: Deps,
  dois: readonly string[],
  options: { onProgress?: (done: number) => void } = {},
): Promise<OpenAlexResults> {
  const skipped = openAlexSkipped(deps);
  if (skipped) return { skipped };
  const key = deps.config.metadata.openalexKey as string;
  const works = new Map<string, OpenAlexWork | null | ZoteusError>();
  const cache = metadataCache(deps, 'openalex', isWork);
  const wanted = [...new Set(dois.map((d) => d.toLowerCase()))];
  const missing = wanted.filter((doi) => {
    const cached = cache.get(doi);
    if (cached !== undefined) works.set(doi, cached);
    return cached === undefined;
  });
  if (missing.length === 0) return { works };
  const client = await serviceClient(deps, 'openalex', [key]);
  const call = serviceCall(deps);
  const base = deps.config.metadata.openalex;
  let done = wanted.length - missing.length;
  await eachBatch(missing, paceOf('openalex', deps).inFlight, async (doi) => {
    const path = `${base}/works/doi:${doi.split('/').map(encodeURIComponent).join('/')}`;
    try {
      const answer = await client.request(call, {
        url: `${path}?select=${FIELDS}&api_key=${encodeURIComponent(key)}`,
        label: path,
        headers: { Accept: 'application/json' },
      });
      let work: OpenAlexWork | null;
      if (answer.status === 404) work = null;
      else if (answer.status === 200) work = toOpenAlexWork(parseObject(client, answer.text)) ?? null;
      else if (answer.status === 401 || answer.status === 403)
        throw new ZoteusError(
          'api_error',
          `OpenAlex refused the request (HTTP ${answer.status}): the API key was not accepted, or requests came too fast.`,
          { status: answer.status, hint: 'Check ZOTEUS_OPENALEX_API_KEY, then retry.' },
        );
      else throw serviceFailed(client.name, answer.status);
      works.set(doi, work);
      await cache.put(doi, work);
    } catch (error) {
      if (!(error instanceof ZoteusError)) throw error;
      works.set(doi, error);
    }
    done += 1;
    options.onProgress?.(done);
  });
  return { works };
}
