/**
 * A LibraryReader over the Zotero Web API v3, and over the desktop's local API, which serves
 * the same paths and JSON (`readers/local-api.ts` reuses this with prefix `users/0` or
 * `groups/ID` and a client without a key). Items come from `/items`, `/items/top`,
 * `/collections/K/items[/top]` or `/items/trash` with the Web API's own filters, so each
 * backend answers a query the way the Web API does.
 *
 * - Web API: whole listings go through the client's cached, revalidated `listAll` (a warm,
 *   unchanged listing is one `304`); a page of `limit` is read in pages of 100 from `start`.
 * - Local API: unpaginated unless `limit` is given, so a whole listing is one request.
 */
import type { LibraryType } from '../../config.js';
import { isZoteusError, ZoteusError } from '../../errors.js';
import type { Deps } from '../../tool.js';
import {
  BATCH_SIZE,
  chunk,
  PAGE_LIMIT,
  type CallContext,
  type Query,
  type ZoteroClient,
  type ZoteroResponse,
} from '../../zotero/index.js';
import { checkObjectKey, type LibraryArgs } from '../address.js';
import type {
  BackendName,
  CollectionListing,
  ItemQuery,
  LibraryReader,
  TagEntry,
  WebApiCollection,
  WebApiItem,
  WebApiSearch,
} from '../port.js';
import { webClient } from '../keys.js';
import { openWebLibrary, type WebLibrary } from '../web.js';

export interface ApiReaderOptions {
  backend: Extract<BackendName, 'web' | 'localApi'>;
  client: ZoteroClient;
  /** `users/1`, `users/0` (the local API's own user library) or `groups/2`. */
  prefix: string;
  library: { type: LibraryType; id: number };
  /** ZOTEUS_MAX_COLLECTIONS. */
  maxCollections: number;
  /** The server's base URL: an index built from one server is rebuilt for another. */
  server?: string | undefined;
  /** One retry budget for every request of this reader (one tool call). */
  call?: CallContext | undefined;
  /** The local API: a request without `limit` answers every object at once. */
  unpaged: boolean;
  /** Turns the client's errors into this backend's words. */
  mapError?: ((error: unknown) => unknown) | undefined;
}

interface Range {
  objects: unknown[];
  totalResults: number;
}

const asArray = (value: string | readonly string[] | undefined): string[] | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? [value] : [...value];

/** The Web API's item filters (everything but the path, the keys and the page). */
function itemFilters(q: ItemQuery): Record<string, string | number | string[] | undefined> {
  return {
    q: q.q !== undefined && q.q.trim() !== '' ? q.q : undefined,
    qmode: q.q !== undefined && q.q.trim() !== '' ? q.qmode : undefined,
    itemType: asArray(q.itemType),
    tag: asArray(q.tag),
    since: q.since,
    includeTrashed: q.includeTrashed && !q.onlyTrashed ? 1 : undefined,
    sort: q.sort,
    direction: q.direction,
  };
}

function nonNegative(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ZoteusError('validation_error', `${field} must be a whole number >= 0; got ${value}.`, {
      field,
    });
  }
  return value;
}

/**
 * Zotero's own renderer on the server a reader reads (the Web API or the desktop's local API):
 * an item listing with Zotero's output parameters (`include=data,bib&style=…&locale=…`,
 * `format=bibtex|biblatex|ris|csljson|keys`), answered as Zotero wrote it. zotero.sqlite has none.
 */
export interface ZoteroApi {
  readonly backend: Extract<BackendName, 'web' | 'localApi'>;
  /**
   * One GET of the item listing `query` addresses (`items`, `items/top`,
   * `collections/K/items[/top]`, with its filters; `keys`, at most 50, as `itemKey`), with
   * `start`/`limit` as given (none: the server's default page) and `output` added.
   */
  listItems(query: ItemQuery, output: Query): Promise<ZoteroResponse>;
}

/** A reader that can ask Zotero itself to format or export (the Web API and local API readers). */
export type ApiLibraryReader = LibraryReader & { readonly zotero: ZoteroApi };

/** Zotero's renderer behind `reader`, when its backend has one. */
export function zoteroApiOf(reader: LibraryReader): ZoteroApi | undefined {
  const api = (reader as Partial<ApiLibraryReader>).zotero;
  return api && (api.backend === 'web' || api.backend === 'localApi') ? api : undefined;
}

export function createApiReader(o: ApiReaderOptions): ApiLibraryReader {
  const { client, prefix, call, unpaged } = o;
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw o.mapError ? o.mapError(error) : error;
    }
  };
  const get = (path: string, query: Query): Promise<ZoteroResponse> =>
    client.request('GET', path, { query, call });
  const list = (response: ZoteroResponse, path: string): unknown[] => {
    if (!Array.isArray(response.data)) {
      throw new ZoteusError('api_error', `GET ${path} did not answer with a JSON list.`, {
        status: response.status,
      });
    }
    return response.data as unknown[];
  };

  /** Every object of a listing (capped at `max` on the Web API), and the total. */
  async function readAll(
    path: string,
    query: Query,
    max?: number,
  ): Promise<
    Range & {
      complete: boolean;
      reason?: CollectionListing['reason'];
      message?: string;
      libraryVersion: number | undefined;
    }
  > {
    if (unpaged) {
      const response = await get(path, query);
      const objects = list(response, path);
      const total = response.totalResults ?? objects.length;
      const capped = max !== undefined && objects.length > max;
      return {
        objects: capped ? objects.slice(0, max) : objects,
        totalResults: total,
        complete: !capped,
        ...(capped
          ? {
              reason: 'cap' as const,
              message: `Read ${max} of ${total} objects of ${path}: the cap of one listing is ${max}.`,
            }
          : {}),
        libraryVersion: response.lastModifiedVersion,
      };
    }
    const listing = await client.listAll<unknown>(path, {
      ...(Object.values(query).some((v) => v !== undefined) ? { query } : {}),
      ...(max !== undefined ? { max } : {}),
      call,
    });
    return {
      objects: listing.objects,
      totalResults: listing.totalResults,
      complete: listing.complete,
      ...(listing.reason ? { reason: listing.reason, message: listing.message } : {}),
      libraryVersion: listing.libraryVersion,
    };
  }

  /** `limit` objects from `start` (every one from `start` without a limit). */
  async function readRange(
    path: string,
    query: Query,
    start: number,
    limit: number | undefined,
  ): Promise<Range> {
    if (limit === undefined) {
      const all = await readAll(path, query);
      return { objects: all.objects.slice(start), totalResults: all.totalResults };
    }
    if (limit === 0) {
      // Ask for one to learn the total; `limit=0` means "no limit" to some servers.
      const response = await get(path, { ...query, start, limit: 1 });
      return { objects: [], totalResults: response.totalResults ?? list(response, path).length + start };
    }
    if (unpaged) {
      const response = await get(path, { ...query, start, limit });
      const objects = list(response, path);
      return { objects, totalResults: response.totalResults ?? start + objects.length };
    }
    const first = await get(path, { ...query, start, limit: Math.min(limit, PAGE_LIMIT) });
    const firstObjects = list(first, path);
    const total = first.totalResults;
    const end = Math.min(start + limit, total ?? start + limit);
    const starts: number[] = [];
    // The first page's size is the server's real page size (it may clamp lower).
    const step = firstObjects.length;
    if (step > 0) for (let s = start + step; s < end; s += step) starts.push(s);
    const rest = await Promise.all(
      starts.map(async (s) =>
        list(await get(path, { ...query, start: s, limit: Math.min(step, end - s) }), path),
      ),
    );
    const seen = new Set<string>();
    const objects: unknown[] = [];
    for (const object of [firstObjects, ...rest].flat()) {
      const key = (object as { key?: unknown }).key;
      if (typeof key === 'string') {
        if (seen.has(key)) continue; // a server that ignores `start`
        seen.add(key);
      }
      objects.push(object);
    }
    return { objects: objects.slice(0, limit), totalResults: total ?? start + objects.length };
  }

  async function items(q: ItemQuery): Promise<{ items: WebApiItem[]; totalResults: number }> {
    const start = nonNegative(q.start, 'start') ?? 0;
    const limit = nonNegative(q.limit, 'limit');
    const collectionKey =
      q.collectionKey === undefined ? undefined : checkObjectKey(q.collectionKey, 'collectionKey');
    const filters = itemFilters(q);
    // `items/trash` has no `top` or collection form: those filters apply here.
    const local: Array<(item: WebApiItem) => boolean> = [];
    let path: string;
    if (q.onlyTrashed) {
      path = `/${prefix}/items/trash`;
      if (collectionKey !== undefined) local.push((i) => (i.data.collections ?? []).includes(collectionKey));
      if (q.top) local.push((i) => i.data.parentItem === undefined);
    } else {
      path =
        collectionKey === undefined ? `/${prefix}/items` : `/${prefix}/collections/${collectionKey}/items`;
      if (q.top) path += '/top';
    }
    if (q.keys !== undefined) {
      const keys = [...new Set(q.keys.map((k) => checkObjectKey(k, 'keys')))];
      if (keys.length === 0) return { items: [], totalResults: 0 };
      const responses = await Promise.all(
        chunk(keys).map((part) => get(path, { ...filters, itemKey: part.join(','), limit: BATCH_SIZE })),
      );
      const found = responses.flatMap((r) => list(r, path)) as WebApiItem[];
      const matched = found.filter((i) => local.every((test) => test(i)));
      return {
        items: matched.slice(start, limit === undefined ? undefined : start + limit),
        totalResults: matched.length,
      };
    }
    if (local.length > 0) {
      const all = (await readAll(path, filters)).objects as WebApiItem[];
      const matched = all.filter((i) => local.every((test) => test(i)));
      return {
        items: matched.slice(start, limit === undefined ? undefined : start + limit),
        totalResults: matched.length,
      };
    }
    const range = await readRange(path, filters, start, limit);
    return { items: range.objects as WebApiItem[], totalResults: range.totalResults };
  }

  async function listItems(q: ItemQuery, output: Query): Promise<ZoteroResponse> {
    const collectionKey =
      q.collectionKey === undefined ? undefined : checkObjectKey(q.collectionKey, 'collectionKey');
    let path =
      collectionKey === undefined ? `/${prefix}/items` : `/${prefix}/collections/${collectionKey}/items`;
    if (q.top) path += '/top';
    const keys =
      q.keys === undefined ? undefined : [...new Set(q.keys.map((k) => checkObjectKey(k, 'keys')))];
    if (keys !== undefined && (keys.length === 0 || keys.length > BATCH_SIZE)) {
      throw new ZoteusError(
        'internal_error',
        `Internal error in Zoteus (${keys.length} item keys in one request; 1 to ${BATCH_SIZE}).`,
      );
    }
    return get(path, {
      ...itemFilters(q),
      ...(keys ? { itemKey: keys.join(',') } : {}),
      start: nonNegative(q.start, 'start'),
      limit: nonNegative(q.limit, 'limit'),
      ...output,
    });
  }

  const notFound = (key: string): ZoteusError =>
    new ZoteusError('not_found', `No item ${key} in library ${prefix}.`, { field: 'key' });

  return {
    backend: o.backend,
    library: o.library,
    zotero: { backend: o.backend, listItems: (query, output) => guard(() => listItems(query, output)) },

    collections: (options = {}) =>
      guard(async () => {
        const path = `/${prefix}/collections`;
        const few = options.keys && options.keys.length > 0 && options.keys.length <= BATCH_SIZE;
        const listing = await readAll(
          path,
          {
            ...(options.includeTrashed ? { includeTrashed: 1 } : {}),
            ...(few ? { collectionKey: options.keys!.join(',') } : {}),
          },
          o.maxCollections,
        );
        return {
          collections: listing.objects as WebApiCollection[],
          totalResults: listing.totalResults,
          complete: listing.complete,
          ...(listing.reason ? { reason: listing.reason, message: listing.message } : {}),
          libraryVersion: listing.libraryVersion,
        };
      }),

    items: (query) => guard(() => items(query)),

    item: (key) =>
      guard(async () => {
        checkObjectKey(key, 'key');
        try {
          const response = await get(`/${prefix}/items/${key}`, {});
          const data = response.data as WebApiItem | undefined;
          return data && typeof data === 'object' && !Array.isArray(data) ? data : undefined;
        } catch (error) {
          if (isZoteusError(error) && error.code === 'not_found') return undefined;
          throw error;
        }
      }),

    children: (key) =>
      guard(async () => {
        checkObjectKey(key, 'key');
        try {
          return (await readAll(`/${prefix}/items/${key}/children`, {})).objects as WebApiItem[];
        } catch (error) {
          if (isZoteusError(error) && error.code === 'not_found') throw notFound(key);
          throw error;
        }
      }),

    tags: (options = {}) =>
      guard(async () => {
        const all = await readAll(`/${prefix}/tags`, options.includeTrashed ? { includeTrashed: 1 } : {});
        const tags: TagEntry[] = [];
        for (const object of all.objects) {
          const t = object as { tag?: unknown; meta?: { type?: unknown; numItems?: unknown } };
          if (typeof t.tag !== 'string') continue;
          tags.push({
            tag: t.tag,
            meta: {
              type: typeof t.meta?.type === 'number' ? t.meta.type : 0,
              numItems: typeof t.meta?.numItems === 'number' ? t.meta.numItems : 0,
            },
          });
        }
        return tags;
      }),

    libraryVersion: () =>
      guard(async () => (await get(`/${prefix}/collections`, { limit: 1 })).lastModifiedVersion),

    searches: () =>
      guard(async () => {
        // Trashed ones too, as zotero.sqlite and the local API list them.
        const all = await readAll(`/${prefix}/searches`, { includeTrashed: 1 });
        return { searches: all.objects as WebApiSearch[], libraryVersion: all.libraryVersion };
      }),

    // Only the desktop's local API runs a saved search; the Web API stores definitions only.
    ...(o.backend === 'localApi'
      ? {
          savedSearchItems: (key: string, page: { start: number; limit: number }) =>
            guard(async () => {
              checkObjectKey(key, 'search_key');
              const path = `/${prefix}/searches/${key}/items`;
              try {
                const response = await get(path, { start: page.start, limit: page.limit });
                const items = list(response, path) as WebApiItem[];
                return { items, totalResults: response.totalResults ?? page.start + items.length };
              } catch (error) {
                if (isZoteusError(error) && error.code === 'not_found') return undefined;
                throw error;
              }
            }),
        }
      : {}),

    feed: {
      source: `${o.backend}:${o.server ? `${o.server}/` : ''}${prefix}`,
      batchSize: BATCH_SIZE,
      concurrency: 4,
      fingerprint: async () => undefined,
      changes: (since) =>
        guard(async () => {
          const path = `/${prefix}/items`;
          const response = await get(path, { since: since ?? 0, format: 'versions', includeTrashed: 1 });
          const versions = response.data as Record<string, unknown> | null;
          if (!versions || typeof versions !== 'object' || Array.isArray(versions)) {
            throw new ZoteusError('api_error', `GET ${path}?format=versions did not answer with an object.`);
          }
          const signatures = new Map<string, string>();
          for (const [key, version] of Object.entries(versions)) signatures.set(key, String(version));
          if (since === undefined) {
            return {
              signatures,
              deleted: [],
              complete: true,
              libraryVersion: response.lastModifiedVersion,
              requests: 1,
            };
          }
          let deleted: string[];
          try {
            const answer = (await get(`/${prefix}/deleted`, { since })).data as { items?: unknown } | null;
            deleted = Array.isArray(answer?.items)
              ? answer.items.filter((k): k is string => typeof k === 'string')
              : [];
          } catch (error) {
            // A server without `deleted` (the desktop's local API): list every version instead.
            if (!(isZoteusError(error) && (error.code === 'not_found' || error.code === 'validation_error')))
              throw error;
            const all = await get(path, { since: 0, format: 'versions', includeTrashed: 1 });
            const full = new Map<string, string>();
            for (const [key, version] of Object.entries((all.data as Record<string, unknown>) ?? {}))
              full.set(key, String(version));
            return {
              signatures: full,
              deleted: [],
              complete: true,
              libraryVersion: all.lastModifiedVersion,
              requests: 3,
            };
          }
          return {
            signatures,
            deleted,
            complete: false,
            libraryVersion: response.lastModifiedVersion,
            requests: 2,
          };
        }),
      fetch: (keys) =>
        guard(async () => {
          const path = `/${prefix}/items`;
          const response = await get(path, { itemKey: keys.join(','), includeTrashed: 1, limit: BATCH_SIZE });
          return { items: list(response, path) as WebApiItem[], requests: 1 };
        }),
    },
  };
}

/**
 * The Web API reader of a library: the address, the key and read access are checked first
 * (`openWebLibrary`: auth_missing, auth_invalid, permission_denied), with one retry budget
 * for the key check and every read of the call.
 */
export async function openWebReader(
  deps: Deps,
  args: LibraryArgs,
): Promise<{ reader: LibraryReader; lib: WebLibrary }> {
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, args, { access: 'read', call });
  const reader = createApiReader({
    backend: 'web',
    server: deps.config.apiUrl,
    client: lib.client,
    prefix: lib.prefix,
    library: { type: lib.ref.type, id: lib.ref.id },
    maxCollections: deps.config.maxCollections,
    call,
    unpaged: false,
  });
  return { reader, lib };
}
