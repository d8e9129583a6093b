/**
 * The Library port (architecture.md): what read tools use, whatever backend answers.
 * Every backend (the Web API, the desktop's local API, zotero.sqlite) returns objects in
 * the Web API's JSON shape, so an agent sees one format. The router (router.ts) picks the
 * backend per library and says why.
 */
import type { LibraryType } from '../config.js';
import type { TagEntry, WebApiCollection, WebApiItem } from '../local/sqlite/types.js';

export { ITEM_SORT_FIELDS, type SortField } from '../local/sqlite/types.js';
import type { IncompleteReason } from '../zotero/types.js';
import type { IndexFeed } from '../search-index/feed.js';

export type { TagEntry, WebApiCollection, WebApiItem };

export type BackendName = 'web' | 'localApi' | 'sqlite';

/** Filters and paging of an item listing or search (the Web API's parameters). */
export interface ItemQuery {
  /** Words, all of which must match (see zotero_search_items). */
  q?: string | undefined;
  qmode?: 'titleCreatorYear' | 'everything' | undefined;
  /** `a || b` for or, a leading `-` for not; several entries are and-ed. */
  itemType?: string | readonly string[] | undefined;
  tag?: string | readonly string[] | undefined;
  collectionKey?: string | undefined;
  /** Top-level items only (no child notes, attachments, annotations). */
  top?: boolean | undefined;
  /** Only objects changed after this library version. */
  since?: number | undefined;
  includeTrashed?: boolean | undefined;
  /** Only items in the trash (the Web API's `items/trash`). */
  onlyTrashed?: boolean | undefined;
  sort?: string | undefined;
  direction?: 'asc' | 'desc' | undefined;
  start?: number | undefined;
  limit?: number | undefined;
  keys?: readonly string[] | undefined;
}

export interface CollectionListing {
  collections: WebApiCollection[];
  /** Collections in the library (may exceed `collections.length` when the read was capped). */
  totalResults: number;
  complete: boolean;
  /** Why the listing is incomplete, in words for the agent. */
  message?: string | undefined;
  /** Why the listing is incomplete, as a code: the cap (ZOTEUS_MAX_COLLECTIONS) or a deviating server. */
  reason?: IncompleteReason | undefined;
  libraryVersion: number | undefined;
  /** `meta.numItems` was left out, as `counts: false` allows. */
  uncounted?: true;
}

/** A saved search as the Web API serves it (`GET /users/{id}/searches/{key}`), whatever the backend. */
export interface WebApiSearch {
  key: string;
  version: number;
  data: {
    key: string;
    version: number;
    name: string;
    conditions: Array<{ condition: string; operator: string; value: string }>;
    /** In the trash (trashed searches are still listed, as on the Web API). */
    deleted?: boolean;
  };
}

/** One library, read through one backend. */
export interface LibraryReader {
  readonly backend: BackendName;
  /** The library as the Web API names it (`users/123`, `groups/456`; the desktop's own user library is `users/0` until a key says its id). */
  readonly library: { type: LibraryType; id: number };
  /** Every collection (capped at ZOTEUS_MAX_COLLECTIONS). */
  /**
   * `keys`: only these collections, when the caller needs just a few (their names, say); a
   * backend may then leave the others out (zotero.sqlite and, up to 50 keys, the Web API do).
   * `counts: false`: the caller needs `meta.numItems` only for the collections it will show; a
   * backend that must count them may leave it out (zotero.sqlite does: counting every
   * membership of a large library is most of its listing's cost), says so (`uncounted`), and
   * then answers `collectionItemCounts` for those shown.
   */
  collections(options?: {
    includeTrashed?: boolean;
    keys?: readonly string[];
    counts?: boolean;
  }): Promise<CollectionListing>;
  /** Items not in the trash in the collections these keys name, by key: see `counts: false`. */
  collectionItemCounts?(keys: readonly string[]): Promise<Map<string, number>>;
  /** `notice`: something the caller should tell (the search index is being built, say). */
  items(query: ItemQuery): Promise<{ items: WebApiItem[]; totalResults: number; notice?: string }>;
  /**
   * Items by key (trashed ones too), in any order, unknown keys left out: where a backend reads
   * them by key at once, without a listing's work (zotero.sqlite: without the in-memory table).
   */
  itemsByKey?(keys: readonly string[]): Promise<WebApiItem[]>;
  /** One item by key (trashed ones too, with `data.deleted: 1`), or undefined. */
  item(key: string): Promise<WebApiItem | undefined>;
  children(key: string): Promise<WebApiItem[]>;
  tags(options?: { includeTrashed?: boolean }): Promise<TagEntry[]>;
  /**
   * Items by type, top-level and in the trash, counted at once where a backend can (the
   * filters' own answers otherwise: one query per type present, `zotero_stats`).
   */
  itemCounts?(): Promise<{
    total: number;
    byType: Record<string, number>;
    topLevel: number;
    trash: number;
  }>;
  libraryVersion(): Promise<number | undefined>;
  /** The library's saved searches (definitions), trashed ones too, in no particular order. */
  searches?(): Promise<{ searches: WebApiSearch[]; libraryVersion: number | undefined }>;
  /**
   * Runs a saved search (only the desktop's local API can: `searches/KEY/items`): a page of
   * its items and how many match; undefined when the library has no such search.
   */
  savedSearchItems?(
    key: string,
    page: { start: number; limit: number },
  ): Promise<{ items: WebApiItem[]; totalResults: number } | undefined>;
  /** What the local search index reads this library through (`core/search-index`). */
  readonly feed?: IndexFeed;
}

/** Which backend serves a library's reads, and why (reported by zotero_whoami). */
export interface Route {
  backend: BackendName;
  reason: string;
}
