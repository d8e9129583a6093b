/** Zotero Web API v3 client: the one entry point for code outside `core/zotero`. */
export { createZoteroClient, type ZoteroClient } from './client.js';
export { BATCH_SIZE, chunk, chunkDependencies, NotStarted, runChunkWaves } from './batch.js';
export { cacheKey, libraryOf, type CachedListing, type ListingCache } from './cache.js';
export { failedByError, failedEntry, reasonForCode, retryableStatus } from './errors.js';
export {
  DEFAULT_API_URL,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_RETRY_BUDGET_MS,
  DEFAULT_TIMEOUT_MS,
  newWriteToken,
  type ZoteroDownload,
} from './http.js';
export { DEFAULT_MAX_OBJECTS, PAGE_LIMIT } from './paging.js';
export type {
  CallContext,
  Clock,
  DeleteBatchResult,
  FailedEntry,
  FetchLike,
  GetByKeysResult,
  IncompleteReason,
  KeyAccess,
  KeyInfo,
  LibraryPrefix,
  ListOptions,
  ListResult,
  ObjectKind,
  Query,
  QueryValue,
  RequestOptions,
  WriteBatchOptions,
  WriteBatchResult,
  ZoteroClientOptions,
  ZoteroObject,
  ZoteroResponse,
} from './types.js';
