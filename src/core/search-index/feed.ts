/**
 * Where an index gets its items: a library's backend seen as "what changed since my last
 * update" plus "these items, please". Implemented by the zotero.sqlite reader (signatures of
 * every item, read in one query: local edits that Zotero has not synced yet change them too)
 * and by the Web API / local API readers (`format=versions` since a library version, plus
 * `deleted`).
 */
import type { WebApiItem } from '../local/sqlite/types.js';

export interface FeedChanges {
  /** Item key → the source's signature of its state (a version, or more for zotero.sqlite). */
  signatures: Map<string, string>;
  /** Keys deleted since (for a partial listing); with `complete`, every key not listed is gone. */
  deleted: readonly string[];
  /** Whether `signatures` lists every item of the library. */
  complete: boolean;
  /** Every key the library holds now, when the feed lists changes only: the others are gone. */
  present?: ReadonlySet<string> | undefined;
  /** The library version the listing reflects, when the source tells it. */
  libraryVersion: number | undefined;
  /** The source's own numeric ids (zotero.sqlite `itemID`), the tie-break of its sort orders. */
  ids?: Map<string, number>;
  /** Requests made to answer (0 for zotero.sqlite). */
  requests: number;
  /** The feed's own note of where it got to, handed back to the next `changes` call. */
  cursor?: string | undefined;
}

export interface IndexFeed {
  /** `sqlite:/path/zotero.sqlite`, `web:https://api.zotero.org`, `localApi:http://…`: an index built from one source is rebuilt for another. */
  readonly source: string;
  /** Items per `fetch` call. */
  readonly batchSize: number;
  /** How many `fetch` calls may run at once. */
  readonly concurrency: number;
  /** A cheap token of the source's state (zotero.sqlite's size and mtime); undefined when only asking tells. */
  fingerprint(): Promise<string | undefined>;
  /**
   * What changed since `since` (a library version; undefined: everything), `cursor` being
   * what the last complete update got back.
   */
  changes(since: number | undefined, cursor: string | undefined): Promise<FeedChanges>;
  /** How many items the library holds, when that is cheap to know (zotero.sqlite). */
  size?(): Promise<number>;
  /** Items by key, trashed ones too; missing keys are left out. */
  fetch(keys: readonly string[]): Promise<{ items: WebApiItem[]; requests: number }>;
}
