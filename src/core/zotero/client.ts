/**
 * The Zotero Web API v3 client: one instance per server and key, owning its state (in-flight
 * semaphore, Backoff pause, listing cache), so nothing is shared through module variables.
 */
import { deleteBatch, getByKeys, patchObject, writeBatch } from './batch.js';
import { createListingCache, type ListingCache } from './cache.js';
import { createHttp, splitPath, type ZoteroDownload } from './http.js';
import { getKeyInfo } from './keys.js';
import { listAll } from './paging.js';
import type {
  CallContext,
  DeleteBatchResult,
  GetByKeysResult,
  KeyInfo,
  ListOptions,
  ListResult,
  ObjectKind,
  RequestOptions,
  WriteBatchOptions,
  WriteBatchResult,
  ZoteroClientOptions,
  ZoteroObject,
  ZoteroResponse,
} from './types.js';

export interface ZoteroClient {
  /** One request with every safety layer; non-2xx (other than 304) throws a ZoteusError. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ZoteroResponse<T>>;
  /**
   * A file's bytes, streamed (`/users/1/items/KEY/file`): the redirect to the storage host is
   * followed without the key or Zotero's headers; non-2xx throws as `request` does.
   */
  download(
    path: string,
    options?: { call?: CallContext | undefined; field?: string | undefined },
  ): Promise<ZoteroDownload>;
  /** Every object of a multi-object path (`/users/1/collections`), paged, capped, cached. */
  listAll<T = ZoteroObject>(path: string, options?: ListOptions): Promise<ListResult<T>>;
  /** Objects by key, 50 per request, in input order; missing keys reported. */
  getByKeys<T = ZoteroObject>(
    library: string,
    kind: ObjectKind,
    keys: readonly string[],
    options?: { call?: CallContext | undefined },
  ): Promise<GetByKeysResult<T>>;
  /** Batch POST, 50 per request; per-object results at the caller's input indexes. */
  writeBatch<T = ZoteroObject>(
    library: string,
    kind: ObjectKind,
    objects: ReadonlyArray<Record<string, unknown>>,
    options?: WriteBatchOptions,
  ): Promise<WriteBatchResult<T>>;
  /** PATCH of one object with its version as precondition. */
  patch(
    library: string,
    kind: ObjectKind,
    key: string,
    data: Record<string, unknown>,
    version: number,
    options?: { call?: CallContext | undefined },
  ): Promise<{ version: number | undefined }>;
  /** Batch DELETE by key, 50 per request, with the library version as precondition. */
  deleteBatch(
    library: string,
    kind: ObjectKind,
    keys: readonly string[],
    options?: { libraryVersion?: number | undefined; call?: CallContext | undefined },
  ): Promise<DeleteBatchResult>;
  /** `GET /keys/current` without the key. */
  getKeyInfo(options?: { call?: CallContext | undefined }): Promise<KeyInfo>;
  /** A call context: pass it to several methods to give them one shared retry budget. */
  newCall(): CallContext;
  /** This client's listing cache (per library, revalidated with If-Modified-Since-Version). */
  readonly cache: ListingCache;
  /** Redacts the key (and configured secrets) from a text. */
  redact(text: string): string;
}

export function createZoteroClient(options: ZoteroClientOptions = {}): ZoteroClient {
  const http = createHttp(options);
  const cache = createListingCache();
  return {
    request: (method, path, opts) => http.request(method, path, opts),
    download: (path, opts) => http.download(path, opts),
    listAll: (path, opts) => {
      const split = splitPath(path, opts?.query);
      return listAll(http, cache, split.path, { ...opts, query: split.query });
    },
    getByKeys: (library, kind, keys, opts) => getByKeys(http, library, kind, keys, opts),
    writeBatch: (library, kind, objects, opts) => writeBatch(http, library, kind, objects, opts),
    patch: (library, kind, key, data, version, opts) =>
      patchObject(http, library, kind, key, data, version, opts),
    deleteBatch: (library, kind, keys, opts) => deleteBatch(http, library, kind, keys, opts),
    getKeyInfo: (opts) => getKeyInfo(http, opts),
    newCall: () => http.newCall(),
    cache,
    redact: (text) => http.redact(text),
  };
}
