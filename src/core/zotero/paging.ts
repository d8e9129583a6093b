/**
 * Reads a whole multi-object listing: `start`/`limit` always sent (some compatible servers
 * have no default limit or ignore `start` without one), the first page gives the total, the
 * rest are fetched in parallel (the client's semaphore keeps it to 4 in flight). A server
 * that ignores `start` is detected by repeated keys, so a listing never loops or duplicates.
 */
import { ZoteusError } from '../errors.js';
import type { ListingCache } from './cache.js';
import type { Http } from './http.js';
import type { IncompleteReason, ListOptions, ListResult, ZoteroResponse } from './types.js';

export const PAGE_LIMIT = 100;
export const DEFAULT_MAX_OBJECTS = 100_000;
/** Re-reads of a listing whose library changed between its pages. */
const MAX_RESTARTS = 2;
/** Parallel page readers; the semaphore is the real limit, this avoids queueing needless work. */
const PAGE_WORKERS = 4;

export function defaultKeyOf(object: unknown): string {
  const o = object as { key?: unknown; tag?: unknown; meta?: { type?: unknown } } | null;
  if (o && typeof o.key === 'string') return o.key;
  if (o && typeof o.tag === 'string') return `${o.tag}\u0000${String(o.meta?.type ?? 0)}`;
  return JSON.stringify(object);
}

interface Page {
  start: number;
  objects: unknown[];
  version: number | undefined;
}

interface Reading {
  pages: Page[];
  total: number | undefined;
  /** The start of the first page that repeated the first page: the server ignores `start`. */
  ignoredStartAt?: number;
}

function pageObjects(response: ZoteroResponse, path: string, redact: (s: string) => string): unknown[] {
  if (!Array.isArray(response.data)) {
    throw new ZoteusError(
      'api_error',
      redact(`The Zotero API answered GET ${path} with something other than a JSON list.`),
      {
        status: response.status,
        hint: 'Check ZOTERO_API_URL: it should point at a Zotero Web API v3 server.',
      },
    );
  }
  return response.data as unknown[];
}

/** A page that starts with the first page's first object, or holds nothing new, repeats it. */
function repeatsFirst(page: unknown[], first: unknown[], keyOf: (o: unknown) => string): boolean {
  if (page.length === 0 || first.length === 0) return false;
  if (keyOf(page[0]) === keyOf(first[0])) return true;
  const seen = new Set(first.map(keyOf));
  return page.every((o) => seen.has(keyOf(o)));
}

export async function listAll<T>(
  http: Http,
  cache: ListingCache,
  path: string,
  options: ListOptions = {},
): Promise<ListResult<T>> {
  const call = options.call ?? http.newCall();
  const max = options.max ?? DEFAULT_MAX_OBJECTS;
  const keyOf = options.keyOf ?? defaultKeyOf;
  const useCache = options.cache !== false;
  let cached = useCache ? cache.get(path, options.query, max) : undefined;

  for (let attempt = 0; ; attempt++) {
    const get = (start: number, ifModifiedSinceVersion?: number): Promise<ZoteroResponse> =>
      http.request('GET', path, {
        query: { ...options.query, start, limit: PAGE_LIMIT },
        ifModifiedSinceVersion,
        call,
      });

    const first = await get(0, cached?.version);
    if (first.status === 304 && cached) {
      return {
        // A copy of the array: a caller sorting or filtering it must not reorder the cache.
        objects: [...cached.objects] as T[],
        totalResults: cached.totalResults,
        read: cached.objects.length,
        complete: cached.complete,
        ...(cached.reason ? { reason: cached.reason, message: cached.message } : {}),
        libraryVersion: cached.version,
        fromCache: true,
      };
    }
    const firstObjects = pageObjects(first, path, http.redact);
    const reading = await readRest(get, first, firstObjects, { max, keyOf, path, redact: http.redact });
    const versions = reading.pages.map((p) => p.version).filter((v): v is number => v !== undefined);
    const changed = versions.some((v) => v !== versions[0]);
    if (changed && attempt < MAX_RESTARTS) {
      // Pages from different library versions can miss or repeat objects: read it all again.
      cached = undefined;
      continue;
    }
    const result = assemble<T>(reading, { max, keyOf, changed, versions, path, attempts: attempt + 1 });
    if (useCache && result.libraryVersion !== undefined && result.reason !== 'library_changed') {
      cache.set(path, options.query, {
        version: result.libraryVersion,
        objects: [...result.objects],
        totalResults: result.totalResults,
        complete: result.complete,
        ...(result.reason ? { reason: result.reason, message: result.message } : {}),
        max,
      });
    }
    return result;
  }
}

interface ReadOptions {
  max: number;
  keyOf: (o: unknown) => string;
  path: string;
  redact: (text: string) => string;
}

async function readRest(
  get: (start: number) => Promise<ZoteroResponse>,
  first: ZoteroResponse,
  firstObjects: unknown[],
  { max, keyOf, path, redact }: ReadOptions,
): Promise<Reading> {
  const pages: Page[] = [{ start: 0, objects: firstObjects, version: first.lastModifiedVersion }];
  const total = first.totalResults;
  // The first page's size is the real page size: a server may clamp `limit` lower or ignore it.
  const step = firstObjects.length;
  const reading: Reading = { pages, total };
  if (step === 0) return reading;

  if (total === undefined) {
    // No total: read page after page until an empty or short page, a repeat, or the cap.
    let read = step;
    let links = first.links;
    let lastSize = step;
    while (
      read < max &&
      lastSize > 0 &&
      (links.next !== undefined || (Object.keys(links).length === 0 && lastSize >= PAGE_LIMIT))
    ) {
      const response = await get(read);
      const objects = pageObjects(response, path, redact);
      if (repeatsFirst(objects, firstObjects, keyOf)) {
        reading.ignoredStartAt = read;
        break;
      }
      pages.push({ start: read, objects, version: response.lastModifiedVersion });
      read += objects.length;
      lastSize = objects.length;
      links = response.links;
    }
    return reading;
  }

  const want = Math.min(total, max);
  const starts: number[] = [];
  for (let start = step; start < want; start += step) starts.push(start);
  let next = 0;
  let stop = false;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (!stop && next < starts.length) {
      const start = starts[next++] as number;
      try {
        const response = await get(start);
        const objects = pageObjects(response, path, redact);
        if (repeatsFirst(objects, firstObjects, keyOf)) {
          // Every later page would repeat too: stop asking instead of reading the first page N times.
          reading.ignoredStartAt = Math.min(reading.ignoredStartAt ?? start, start);
          stop = true;
          continue;
        }
        pages.push({ start, objects, version: response.lastModifiedVersion });
        if (response.lastModifiedVersion !== first.lastModifiedVersion) stop = true;
      } catch (error) {
        if (failure === undefined) failure = error;
        stop = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PAGE_WORKERS, starts.length) }, worker));
  if (failure !== undefined) throw failure;
  pages.sort((a, b) => a.start - b.start);
  return reading;
}

interface AssembleOptions {
  max: number;
  keyOf: (o: unknown) => string;
  changed: boolean;
  versions: number[];
  path: string;
  attempts: number;
}

function assemble<T>(reading: Reading, o: AssembleOptions): ListResult<T> {
  const seen = new Set<string>();
  const merged: unknown[] = [];
  let duplicates = 0;
  for (const page of reading.pages) {
    for (const object of page.objects) {
      const key = o.keyOf(object);
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      merged.push(object);
    }
  }
  const objects = merged.slice(0, o.max) as T[];
  const total = reading.total ?? merged.length;
  const libraryVersion = o.versions.length ? Math.min(...o.versions) : undefined;
  let reason: IncompleteReason | undefined;
  let message: string | undefined;
  if (o.changed) {
    reason = 'library_changed';
    message = `The library changed while ${o.path} was being read (${o.attempts} attempts); objects may be missing or repeated.`;
  } else if (reading.ignoredStartAt !== undefined || duplicates > 0) {
    reason = 'ignored_start';
    const at =
      reading.ignoredStartAt !== undefined
        ? ` (the page at start=${reading.ignoredStartAt} repeated the first page)`
        : '';
    message = `The server ignored the start parameter of ${o.path}${at}; the listing stopped at ${objects.length} distinct objects of ${total} instead of looping or repeating them.`;
  } else if (total > o.max) {
    reason = 'cap';
    message = `Read ${objects.length} of ${total} objects of ${o.path}: the cap of one listing is ${o.max}.`;
  } else if (objects.length < total) {
    reason = 'short_read';
    message = `The server announced ${total} objects at ${o.path} but served ${objects.length}.`;
  }
  return {
    objects,
    totalResults: total,
    read: objects.length,
    complete: reason === undefined,
    ...(reason ? { reason, message } : {}),
    libraryVersion,
    fromCache: false,
  };
}
