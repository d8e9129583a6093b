/**
 * Public types of the Zotero Web API v3 client. Kept apart from the code so callers
 * (the library port, the write engine, tools) can import them without pulling in fetch.
 */
import type { SharedLimits } from '../http/types.js';
import type { CallContext, FetchLike } from '../http/types.js';
import type { Redactor } from '../redact.js';
import type { Clock } from '../tool.js';

/** The handlers' clock; tests pass a fake whose `sleep` does not really wait. */
export type { Clock };

/** The shared HTTP layer's (core/http): one retry budget and one transport type for every client. */
export type { CallContext, FetchLike };

export interface ZoteroClientOptions {
  /** Default https://api.zotero.org; a trailing slash is ignored. */
  apiUrl?: string | undefined;
  /** Sent only in the `Zotero-API-Key` header; never in a URL, a message or a log line. */
  apiKey?: string | undefined;
  /** Total time one call may spend waiting out rate limits (default 60 000). */
  retryBudgetMs?: number | undefined;
  /** Timeout of one HTTP request (default 30 000). */
  timeoutMs?: number | undefined;
  fetch?: FetchLike | undefined;
  clock?: Clock | undefined;
  /** One line per request: method, path, status, ms (already redacted). */
  log?: ((line: string) => void) | undefined;
  /** Extra secrets to redact besides the key (the key is always redacted). */
  redact?: Redactor | undefined;
  /** Jitter source for exponential backoff, in [0, 1). */
  random?: (() => number) | undefined;
  /** Requests in flight at once to this server (default 4, the documented limit). */
  maxInFlight?: number | undefined;
  /** On a deployment of replicas: the in-flight bound and pauses shared with the others. */
  shared?: SharedLimits | undefined;
}

/** `users/123` or `groups/456`. */
export type LibraryPrefix = string;
export type ObjectKind = 'collections' | 'items' | 'searches';

export type QueryValue = string | number | boolean | undefined | ReadonlyArray<string | number>;
export type Query = Readonly<Record<string, QueryValue>>;

/** A Zotero object as the API serves it in JSON format. */
export interface ZoteroObject<D extends Record<string, unknown> = Record<string, unknown>> {
  key: string;
  version: number;
  library?: unknown;
  links?: unknown;
  meta?: Record<string, unknown>;
  data: D & { key?: string; version?: number };
}

export interface ZoteroResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else undefined. */
  data: T;
  text: string;
  /** `Last-Modified-Version`: the library version (multi-object) or the object version. */
  lastModifiedVersion: number | undefined;
  totalResults: number | undefined;
  /** `Link` header by rel (`next`, `last`, …). */
  links: Record<string, string>;
}

export interface RequestOptions {
  query?: Query | undefined;
  /** JSON-serialised as the body. */
  body?: unknown;
  /** Sent as an `application/x-www-form-urlencoded` body instead (file upload authorization). */
  form?: Readonly<Record<string, string>> | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  ifModifiedSinceVersion?: number | undefined;
  ifUnmodifiedSinceVersion?: number | undefined;
  /** Sends `Zotero-Write-Token`, which makes a create safe to resend after a reset. */
  writeToken?: string | undefined;
  call?: CallContext | undefined;
  /** The input field the request concerns, named by a 413 when the server does not say. */
  field?: string | undefined;
  /**
   * Runs once, when the request has its in-flight slot and is about to go out for the first
   * time; what it throws, the request rejects with, and nothing was sent.
   */
  beforeSend?: (() => void) | undefined;
}

export type IncompleteReason = 'cap' | 'ignored_start' | 'library_changed' | 'short_read';

export interface ListOptions {
  query?: Query | undefined;
  /** Cap on objects read (default 100 000); above it the result is `complete: false`. */
  max?: number | undefined;
  /** Revalidate a cached listing with If-Modified-Since-Version (default true). */
  cache?: boolean | undefined;
  /** Identity of an object for de-duplication (default: `key`, else `tag`, else the JSON). */
  keyOf?: ((object: unknown) => string) | undefined;
  call?: CallContext | undefined;
}

export interface ListResult<T = ZoteroObject> {
  /** The objects are shared with the client's cache: read them, do not mutate them. */
  objects: T[];
  /** `Total-Results` of the listing (what the server holds, not what was read). */
  totalResults: number;
  /** How many objects were read (= objects.length). */
  read: number;
  complete: boolean;
  /** Why the listing is incomplete; absent when complete. */
  reason?: IncompleteReason;
  message?: string;
  /** Library version the listing reflects (the oldest page's). */
  libraryVersion: number | undefined;
  /** True when a `304` answered from the client's cache. */
  fromCache: boolean;
}

export interface GetByKeysResult<T = ZoteroObject> {
  /** Found objects in the caller's input order (first occurrence of a repeated key). */
  objects: T[];
  byKey: Map<string, T>;
  /** Requested keys the server did not return, in input order. */
  missing: string[];
  libraryVersion: number | undefined;
}

/** A per-object failure (agent-interface.md, "Partial success"). */
export interface FailedEntry {
  /** Index in the caller's input. */
  index: number;
  key?: string;
  /** HTTP-style status: 404 missing, 403 no access, 400 invalid, 409/412 conflict, 413 too long. */
  code: number;
  message: string;
  /** The error code string of agent-interface.md (`conflict`, `not_found`, …). */
  reason: string;
  /** Whether the same call may land it later as it is (a conflict, a server error), not a refusal. */
  retryable: boolean;
}

export interface WriteBatchResult<T = ZoteroObject> {
  successful: Array<{ index: number; key: string; object?: T }>;
  unchanged: Array<{ index: number; key: string }>;
  failed: FailedEntry[];
  libraryVersion: number | undefined;
}

export interface WriteBatchOptions {
  /** Library version precondition for the first chunk (later chunks use the version it returns). */
  ifUnmodifiedSinceVersion?: number | undefined;
  call?: CallContext | undefined;
  /**
   * The `Zotero-Write-Token` of a create (at most 50 objects, one request). Chosen by the
   * caller once per logical request, so that every attempt of it sends the same one.
   */
  writeToken?: string | undefined;
  /**
   * Runs before each request of the batch goes out (with its in-flight slot); what it throws,
   * that request rejects with, unsent (createObjects stopping its other chunks after a failure).
   */
  beforeSend?: (() => void) | undefined;
}

export interface DeleteBatchResult {
  deleted: string[];
  failed: FailedEntry[];
  libraryVersion: number | undefined;
}

export interface KeyAccess {
  user?: { library?: boolean; files?: boolean; notes?: boolean; write?: boolean };
  groups?: Record<string, { library?: boolean; write?: boolean }>;
}

/** `/keys/current` without the key itself. */
export interface KeyInfo {
  userID: number;
  username: string;
  displayName: string;
  access: KeyAccess;
}
