/**
 * Public types of the Zotero Web API v3 test server: the stored objects, the request log,
 * the fault injector and the server handle. Kept apart from the code so the handler modules
 * and the tests can share them without import cycles.
 */
import type { DownloadStore } from './downloads.js';
import type { FileStore } from './uploads.js';
import type { LocalWritesConfig } from './local-writes.js';

/** Mirrors `access` of `/keys/current`: a missing flag means no access. */
export interface KeyAccess {
  user?: { library?: boolean; files?: boolean; notes?: boolean; write?: boolean };
  /** `all` covers the groups the key's user is a member of; `<groupID>` one group. */
  groups?: Record<string, { library?: boolean; write?: boolean }>;
}

export type Relations = Record<string, string | string[]>;

export interface Tag {
  tag: string;
  /** 0 = manual (omitted in JSON), 1 = automatic. */
  type?: number;
}

export interface CollectionData {
  key: string;
  version: number;
  name: string;
  parentCollection: string | false;
  relations: Relations;
  /** In the trash (Zotero 7 collection trash). */
  deleted?: boolean;
}

export interface ItemData {
  key: string;
  version: number;
  itemType: string;
  title?: string;
  /** Item membership in collections lives only here, as in Zotero. */
  collections: string[];
  tags: Tag[];
  relations: Relations;
  dateAdded: string;
  dateModified: string;
  parentItem?: string;
  /** In the trash. */
  deleted?: boolean;
  /** Any other item field (creators, date, DOI, note, …) is stored and served as given. */
  [field: string]: unknown;
}

export interface SearchData {
  key: string;
  version: number;
  name: string;
  conditions: Array<{ condition: string; operator: string; value: string }>;
  /** In the trash. */
  deleted?: boolean;
  [field: string]: unknown;
}

export type ObjectKind = 'collections' | 'items' | 'searches';
export type DeletedKind = ObjectKind | 'tags' | 'settings';

/** One permanent deletion, for `GET deleted?since=V`. */
export interface DeletedEntry {
  kind: DeletedKind;
  /** Object key, or tag name for `tags`. */
  key: string;
  /** Library version of the write that deleted it. */
  version: number;
}

/**
 * An attachment's full text as `items/{key}/fulltext` serves it: `indexedPages`/`totalPages`
 * for PDFs, `indexedChars`/`totalChars` for other documents.
 */
export interface FulltextData {
  content: string;
  indexedChars?: number;
  totalChars?: number;
  indexedPages?: number;
  totalPages?: number;
  /** The full-text version: the library version of the write that stored it. */
  version: number;
}

export type FulltextInput = Omit<FulltextData, 'version'>;

export type CollectionSeed = { key?: string; name: string; parentCollection?: string | false };
export type ItemSeed = Partial<ItemData> & {
  itemType?: string;
  title?: string;
  collections?: string[];
  tags?: Tag[];
};

export interface TestLibrary {
  readonly type: 'user' | 'group';
  readonly id: number;
  /** Current library version. */
  version: number;
  collections: Map<string, CollectionData>;
  items: Map<string, ItemData>;
  searches: Map<string, SearchData>;
  /** Permanent deletions in order; `deleted?since=` reads this. */
  deletedLog: DeletedEntry[];
  /** Full text by attachment key; `items/{key}/fulltext` and `fulltext?since=` read this. */
  fulltext: Map<string, FulltextData>;
  /** Seeds directly (one version bump for the whole list); returns the keys in order. */
  addCollections(list: CollectionSeed[]): string[];
  addItems(list: ItemSeed[]): string[];
  addSearches(list: Array<{ key?: string; name: string; conditions?: SearchData['conditions'] }>): string[];
  /** As if another client wrote: PATCH semantics, always bumps the library version. */
  editItem(key: string, patch: Record<string, unknown>): void;
  editCollection(key: string, patch: Record<string, unknown>): void;
  /** As if another client deleted it: subtree cascade, membership stripped, deletions logged. */
  deleteCollection(key: string): void;
  deleteItem(key: string): void;
  /**
   * As if a client PUT `items/{key}/fulltext`: the item must be a file attachment (not a
   * linked URL); bumps the library version, which becomes the full-text version (returned).
   */
  setFulltext(key: string, data: FulltextInput): number;
}

export interface RequestLogEntry {
  method: string;
  /** Path without the query string, e.g. `/users/1/items`. */
  path: string;
  /** Repeated parameters become arrays. */
  query: Record<string, string | string[]>;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** 0 until answered; stays 0 for an injected socket reset. */
  status: number;
  startedAt: number;
  /** 0 until answered (or reset). */
  endedAt: number;
  /** Parsed JSON body, or the raw text when it is not JSON; absent when empty. */
  body?: unknown;
  /** The fault kind that shaped this answer, if any. */
  fault?: FaultKind;
  /** Requests in flight when this one arrived (itself included); only with `maxConcurrentLog`. */
  inFlight?: number;
}

export type Match = { method?: string; path?: string | RegExp };
export type FaultKind = 'rateLimit' | 'backoff' | 'reset' | 'slow' | 'status' | 'concurrentEdit' | 'lock';

export interface FaultInjector {
  /** The next `times` (default 1) matching requests answer 429 (or 503), with `Retry-After` if given. */
  rateLimit(o: { retryAfter?: number; times?: number; status?: 429 | 503; match?: Match }): void;
  /** Normal answer plus `Backoff: seconds`. */
  backoff(o: { seconds: number; times?: number; match?: Match }): void;
  /** Destroy the socket without answering (the client sees a connection reset). */
  reset(o?: { times?: number; match?: Match }): void;
  /** Delay the answer by `ms`. */
  slow(o: { ms: number; times?: number; match?: Match }): void;
  /** Arbitrary error answer (with `Retry-After` if given). */
  status(o: { status: number; body?: string; retryAfter?: number; times?: number; match?: Match }): void;
  /** Run `apply` just before handling the matching request: another client wrote in between. */
  concurrentEdit(o: { match?: Match; times?: number; apply: (server: ZoteroTestServer) => void }): void;
  /**
   * Zotero's library lock: the next `times` matching writes (POST, PATCH, PUT, DELETE) that
   * arrive while another write to the same library is in progress (arrived, not yet answered)
   * answer `409` with `LIBRARY_LOCKED` (faults.ts) after the latency, applying nothing (a write token is not
   * used). Without it such a write is applied after the one in progress, as always.
   */
  lock(o?: { times?: number; match?: Match }): void;
  /** Deviate like a broken compatible server: ignore `start`, always serve the first page. */
  ignoreStart(on: boolean): void;
  clear(): void;
}

export interface StartOptions {
  /** Added to every answer. */
  latencyMs?: number;
  /** Record in each log entry how many requests were in flight when it arrived. */
  maxConcurrentLog?: boolean;
}

export interface ZoteroTestServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  close(): Promise<void>;
  /** Every request in arrival order. */
  log: RequestLogEntry[];
  clearLog(): void;
  /** Highest number of requests in flight at once since start or the last `clearLog()`. */
  maxInFlight(): number;
  addUser(u: { userID: number; username: string; displayName?: string }): void;
  addKey(k: { key: string; userID: number; access: KeyAccess }): void;
  addGroup(g: {
    id: number;
    name: string;
    owner: number;
    members: number[];
    admins?: number[];
    type?: string;
    description?: string;
    libraryEditing?: 'members' | 'admins';
    libraryReading?: 'members' | 'all';
    /** Who may upload files (default `members`). */
    fileEditing?: 'members' | 'admins' | 'none';
    omitNumItems?: boolean;
  }): void;
  /** `users/123` or `groups/456`; created on first use. */
  library(prefix: string): TestLibrary;
  faults: FaultInjector;
  /** The file upload protocol's storage, quotas and faults (`uploads.ts`). */
  files: FileStore;
  /** File downloads: the storage host the API redirects to, and files put there (`downloads.ts`). */
  downloads: DownloadStore;
  /** Serve this as `GET /schema` (Zotero's schema.json), with an ETag; `undefined`: 404 again. */
  setSchema(json: unknown): void;
  setLatency(ms: number): void;
  /**
   * Also serve the libraries as the desktop app's local API under `/api` (returns that base
   * URL): `users/0` is `userID`'s library, `groups` the group ids the desktop holds (default:
   * the user's groups); no key, read-only, unpaginated unless `limit` is given.
   */
  serveLocalApi(o: { userID: number; groups?: number[]; enabled?: boolean }): string;
  /**
   * Zotero 10's writable local API over `serveLocalApi`'s libraries (local-writes.ts): the
   * authorisation endpoint and its dialog (`answer`), keys, `Zotero-Server-ID`, HTTP/1.0.
   * Returns its live state, for tests to steer (answer, serverId) and look at (keys, used).
   */
  serveLocalWrites(): LocalWritesConfig;
  /** Zotero's "Allow other applications…" setting: while false, every `/api` request answers 403. */
  setLocalApiEnabled(enabled: boolean): void;
}
