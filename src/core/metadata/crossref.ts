/**
 * Crossref works by DOI, batched as Crossref's terms favour: one list request
 * (`/works?filter=doi:A,doi:B,…`) per 50 DOIs (a repeated filter is OR), only the fields the
 * checks use (`select=`), the polite pool when ZOTEUS_CROSSREF_MAILTO is set, at the pace of
 * service.ts. Answers are cached a day (cache.ts), so a re-run asks nothing. What callers get
 * is typed: the update notices (`updated-by`/`update-to`, Crossmark's and Retraction Watch's),
 * the relations (`is-preprint-of`, `has-preprint`…) and the bibliographic fields.
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { metadataCache } from './cache.js';
import {
  chunk,
  eachBatch,
  obj,
  paceOf,
  parseObject,
  serviceCall,
  serviceClient,
  serviceFailed,
  str,
  type ServiceClient,
} from './service.js';

/** DOIs per list request. */
export const CROSSREF_BATCH = 50;

/** The fields asked for: enough for retraction checks, published versions and enrichment. */
export const CROSSREF_FIELDS = [
  'DOI',
  'title',
  'type',
  'subtype',
  'container-title',
  'volume',
  'issue',
  'page',
  'issued',
  'publisher',
  'ISSN',
  'abstract',
  'relation',
  'updated-by',
  'update-to',
] as const;

/** One update notice: on the updated work (`updated-by`) or on the notice (`update-to`). */
export interface CrossrefUpdate {
  /** The other side's DOI (the notice's, on `updated-by`). */
  doi: string | undefined;
  /** Crossref's type as given: retraction, correction, expression_of_concern… */
  type: string;
  label: string | undefined;
  /** YYYY, YYYY-MM or YYYY-MM-DD. */
  date: string | undefined;
  /** `publisher` (Crossmark) or `retraction-watch`. */
  source: string | undefined;
  /** Retraction Watch's record id. */
  recordId: string | undefined;
}

export interface CrossrefRelation {
  idType: string;
  id: string;
  assertedBy: string | undefined;
}

export interface CrossrefWork {
  doi: string;
  title: string | undefined;
  type: string | undefined;
  subtype: string | undefined;
  containerTitle: string | undefined;
  volume: string | undefined;
  issue: string | undefined;
  page: string | undefined;
  issued: string | undefined;
  publisher: string | undefined;
  issn: string[];
  abstract: string | undefined;
  /** Relation name (`is-preprint-of`, `has-preprint`, …) → its targets. */
  relations: Record<string, CrossrefRelation[]>;
  updatedBy: CrossrefUpdate[];
  updateTo: CrossrefUpdate[];
}

/** Per DOI (lower-cased): the work, null when Crossref has none, or the error of its request. */
export type CrossrefResults = Map<string, CrossrefWork | null | ZoteusError>;

export function crossrefDate(value: unknown): string | undefined {
  const parts = obj(value)['date-parts'];
  const first = Array.isArray(parts) && Array.isArray(parts[0]) ? (parts[0] as unknown[]) : [];
  const numbers = first.filter((p): p is number => typeof p === 'number' && Number.isFinite(p));
  if (numbers.length === 0) return undefined;
  return numbers
    .slice(0, 3)
    .map((n, i) => (i === 0 ? String(n).padStart(4, '0') : String(n).padStart(2, '0')))
    .join('-');
}

function updates(value: unknown): CrossrefUpdate[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((u) => {
    const o = obj(u);
    const type = str(o.type);
    if (!type) return [];
    const recordId = o['record-id'];
    return [
      {
        doi: str(o.DOI)?.toLowerCase(),
        type,
        label: str(o.label),
        date: crossrefDate(o.updated),
        source: str(o.source),
        recordId: typeof recordId === 'number' || typeof recordId === 'string' ? String(recordId) : undefined,
      },
    ];
  });
}

function relations(value: unknown): Record<string, CrossrefRelation[]> {
  const out: Record<string, CrossrefRelation[]> = {};
  for (const [name, list] of Object.entries(obj(value))) {
    const targets = (Array.isArray(list) ? list : [list]).flatMap((r) => {
      const o = obj(r);
      const id = str(o.id);
      return id ? [{ idType: str(o['id-type']) ?? 'doi', id, assertedBy: str(o['asserted-by']) }] : [];
    });
    if (targets.length) out[name] = targets;
  }
  return out;
}

/** A Crossref `message` (one work, or an item of a list) in the checks' terms. */
export function toCrossrefWork(message: Record<string, unknown>): CrossrefWork | undefined {
  const doi = str(message.DOI)?.toLowerCase();
  if (!doi) return undefined;
  return {
    doi,
    title: str(message.title),
    type: str(message.type),
    subtype: str(message.subtype),
    containerTitle: str(message['container-title']),
    volume: str(message.volume),
    issue: str(message.issue),
    page: str(message.page),
    issued: crossrefDate(message.issued),
    publisher: str(message.publisher),
    issn: Array.isArray(message.ISSN) ? message.ISSN.filter((s): s is string => typeof s === 'string') : [],
    abstract: typeof message.abstract === 'string' ? message.abstract : undefined,
    relations: relations(message.relation),
    updatedBy: updates(message['updated-by']),
    updateTo: updates(message['update-to']),
  };
}

function isWork(value: unknown): value is CrossrefWork {
  const v = obj(value);
  return typeof v.doi === 'string' && Array.isArray(v.updatedBy) && Array.isArray(v.updateTo);
}

/** `doi:` filters cannot carry a DOI with a comma (the filter separator): those are asked one by one. */
const listable = (doi: string): boolean => !doi.includes(',');

export interface CrossrefOptions {
  /** Called after each request with how many DOIs are answered so far. */
  onProgress?: (done: number) => void;
}

/**
 * The Crossref works of `dois`: from the cache, else ⌈n/50⌉ list requests (DOIs with a comma:
 * one request each). Every DOI given gets an entry; a failed request fails only its DOIs.
 */
export async function crossrefWorks(
  deps: Deps,
  dois: readonly string[],
  options: CrossrefOptions = {},
): Promise<CrossrefResults> {
  const out: CrossrefResults = new Map();
  const cache = metadataCache(deps, 'crossref', isWork);
  const wanted = [...new Set(dois.map((d) => d.toLowerCase()))];
  const missing: string[] = [];
  for (const doi of wanted) {
    const cached = cache.get(doi);
    if (cached === undefined) missing.push(doi);
    else out.set(doi, cached);
  }
  if (missing.length === 0) return out;
  const client = await serviceClient(deps, 'crossref');
  const call = serviceCall(deps);
  const base = deps.config.resolvers.crossref;
  const mailto = deps.config.resolvers.mailto;
  const polite = mailto ? `&mailto=${encodeURIComponent(mailto)}` : '';
  const select = `select=${CROSSREF_FIELDS.join(',')}`;
  const batches = [
    ...chunk(missing.filter(listable), CROSSREF_BATCH),
    ...missing.filter((d) => !listable(d)).map((d) => [d]),
  ];
  let done = wanted.length - missing.length;
  await eachBatch(batches, paceOf('crossref', deps).inFlight, async (batch) => {
    try {
      const found =
        batch.length === 1 && !listable(batch[0] as string)
          ? await single(client, call, base, batch[0] as string, polite)
          : await list(client, call, base, batch, select, polite);
      for (const doi of batch) {
        const work = found.get(doi) ?? null;
        out.set(doi, work);
        await cache.put(doi, work);
      }
    } catch (error) {
      if (!(error instanceof ZoteusError)) throw error;
      for (const doi of batch) out.set(doi, error);
    }
    done += batch.length;
    options.onProgress?.(done);
  });
  return out;
}

async function list(
  client: ServiceClient,
  call: ReturnType<typeof serviceCall>,
  base: string,
  batch: readonly string[],
  select: string,
  polite: string,
): Promise<Map<string, CrossrefWork>> {
  const filter = batch.map((d) => `doi:${encodeURIComponent(d)}`).join(',');
  const rows = Math.max(100, batch.length * 2);
  const url = `${base}/works?filter=${filter}&rows=${rows}&${select}${polite}`;
  const answer = await client.request(call, {
    url,
    label: `${base}/works?filter=doi:… (${batch.length} DOIs)`,
    headers: { Accept: 'application/json' },
  });
  if (answer.status !== 200) throw serviceFailed(client.name, answer.status);
  const message = obj(parseObject(client, answer.text).message);
  if (!Array.isArray(message.items)) throw notAList(client.name);
  const found = new Map<string, CrossrefWork>();
  for (const item of message.items) {
    const work = toCrossrefWork(obj(item));
    if (work) found.set(work.doi, work);
  }
  return found;
}

async function single(
  client: ServiceClient,
  call: ReturnType<typeof serviceCall>,
  base: string,
  doi: string,
  polite: string,
): Promise<Map<string, CrossrefWork>> {
  const path = doi.split('/').map(encodeURIComponent).join('/');
  const answer = await client.request(call, {
    url: `${base}/works/${path}${polite ? `?${polite.slice(1)}` : ''}`,
    headers: { Accept: 'application/json' },
  });
  if (answer.status === 404) return new Map();
  if (answer.status !== 200) throw serviceFailed(client.name, answer.status);
  const work = toCrossrefWork(obj(parseObject(client, answer.text).message));
  return work ? new Map([[work.doi, work]]) : new Map();
}

function notAList(name: string): ZoteusError {
  return new ZoteusError('api_error', `${name} answered without the list of works it was asked for.`, {
    retryable: true,
    hint: 'Retry in a moment; if it persists, check ZOTEUS_CROSSREF_URL.',
  });
}
