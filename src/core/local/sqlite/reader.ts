/**
 * The zotero.sqlite reader: a read-only view of a Zotero desktop database that answers in
 * the Web API's JSON shapes. Open with `openZoteroSqlite(path)`.
 *
 * - The connection (connection.ts) follows the source: every call first checks its fingerprint
 *   and re-opens or re-copies the database when it changed; a locked database is read from a
 *   private snapshot.
 * - The queries, by noun: libraries.ts, collections.ts, items.ts, tags.ts, fulltext.ts, and
 *   signatures.ts (what a search index compares). Every query is filtered by libraryID; trashed
 *   items and collections are left out unless asked for; child notes, attachments and
 *   annotations are children, never top-level items.
 * - Item types, fields and creator types are resolved by name (`schema-map.ts`).
 */
import { dirname } from 'node:path';
import { loadDatabaseClass } from '../../sqlite-driver.js';
import { collectionItemCounts, collections } from './collections.js';
import { Connections, type OpenZoteroSqliteOptions } from './connection.js';
import { itemCounts, type ItemCounts } from './counts.js';
import { citationKeyFacts, exportListingKeys, type KeyFacts } from './exports.js';
import { fulltextInfo, fulltextKeys } from './fulltext.js';
import { children, item, itemCount, itemKeys, items, itemsByKeys, searchItems } from './items.js';
import { libraryIdFor, libraryOf, librariesOfKeys } from './libraries.js';
import type { ZoteroSchemaMap } from './schema-map.js';
import { itemStats, signatures, type ChangedSince, type ItemStats } from './signatures.js';
import type { OpenMode } from './snapshot.js';
import { tags } from './tags.js';
import type {
  CollectionListOptions,
  FulltextInfo,
  ItemListOptions,
  ItemListResult,
  LocalLibrary,
  SearchOptions,
  TagEntry,
  WebApiCollection,
  WebApiItem,
} from './types.js';

export { SUPPORTED_SCHEMA, type OpenZoteroSqliteOptions } from './connection.js';

export interface ReaderStatus {
  /** The user's database. */
  source: string;
  mode: OpenMode;
  /** The copy being read, in snapshot mode. */
  snapshotPath: string | undefined;
  schemaVersion: number;
  /** The source fingerprint the open connection reflects. */
  fingerprint: string;
  /** How many times the database was (re-)opened or (re-)copied. */
  opens: number;
  /** The libraries whose in-memory table (library-index.ts) the open connection has built. */
  tables: number[];
}

export interface ZoteroSqliteReader {
  /** The user's `zotero.sqlite`. */
  readonly source: string;
  /** The data directory (where `storage/` is). */
  readonly dataDir: string;
  status(): Promise<ReaderStatus>;
  /** The item-type/field/creator-type names of this database. */
  schema(): Promise<ZoteroSchemaMap>;
  libraries(): Promise<LocalLibrary[]>;
  /**
   * The user id the desktop is signed in to (`settings`: `account`/`userID`), 0 when it is
   * signed in to none or the database has no settings table.
   */
  account(): Promise<number>;
  /** The libraryID of the user library, or of the group with this Web API group id. */
  libraryIdFor(ref: { type: 'user' } | { type: 'group'; groupID: number }): Promise<number>;
  libraryVersion(libraryID: number): Promise<number>;
  /** Which libraries hold an item of each key (trashed ones too): key → libraryIDs. */
  librariesOfKeys(keys: readonly string[]): Promise<Map<string, number[]>>;
  collections(libraryID: number, options?: CollectionListOptions): Promise<WebApiCollection[]>;
  /** Items not in the trash in each collection these keys name, by key (no entry: no such collection). */
  collectionItemCounts(libraryID: number, keys: readonly string[]): Promise<Map<string, number>>;
  items(libraryID: number, options?: ItemListOptions): Promise<ItemListResult>;
  /** One item by key, trashed or not; undefined when the library has no such item. */
  item(libraryID: number, key: string): Promise<WebApiItem | undefined>;
  /** Direct children (notes and attachments; annotations of an attachment), not trashed unless asked. */
  children(libraryID: number, key: string, options?: { includeTrashed?: boolean }): Promise<WebApiItem[]>;
  tags(libraryID: number, options?: { includeTrashed?: boolean }): Promise<TagEntry[]>;
  /** Full-text index state of an attachment, or of each attachment of a regular item. */
  fulltextInfo(libraryID: number, key: string, options?: { content?: boolean }): Promise<FulltextInfo[]>;
  /**
   * Items whose every query word matches (case- and accent-insensitive substrings; the query is
   * split on spaces and punctuation): in title, creators and year (`titleCreatorYear`), or in
   * any field, tag, note, annotation and the indexed full text (`everything`). `top` defaults
   * to true here: children's text counts for their parent, and parents are returned.
   */
  searchItems(libraryID: number, options: SearchOptions): Promise<ItemListResult>;
  /**
   * Every item of a library (trashed ones too) with a signature of its state: the synced
   * version, whether and when it changed locally since, its tags, collections and trash state
   * and its full-text index state. What a search index compares to know what to re-read.
   */
  signatures(
    libraryID: number,
    options?: {
      changedSince?: ChangedSince;
      /** With changedSince: the items in the trash too, modified or not. */
      trashed?: boolean;
    },
  ): Promise<{ signatures: Map<string, string>; ids: Map<string, number> }>;
  /**
   * Aggregates that change whenever the library's items do (a count and sum of item ids, the
   * newest local modification and synced version, the trash): cheap to read, so an index can
   * tell "nothing changed" or "only items modified since X changed" without a full comparison.
   */
  itemStats(libraryID: number): Promise<ItemStats>;
  /** How many items (children and trashed ones included) the library holds. */
  itemCount(libraryID: number): Promise<number>;
  /** The counts of `zotero_stats` (by type, top-level, trash), without the in-memory table. */
  itemCounts(libraryID: number): Promise<ItemCounts>;
  /** Every item key of the library (children and trashed ones included). */
  itemKeys(libraryID: number): Promise<string[]>;
  /** Items by key in the Web API shape (trashed ones too), in the order given; unknown keys left out. */
  itemsByKeys(libraryID: number, keys: readonly string[]): Promise<WebApiItem[]>;
  /** Keys of the library's items whose words in Zotero's full-text index contain `word` (folded). */
  fulltextKeys(libraryID: number, word: string): Promise<string[]>;
  /**
   * Of every regular item of the library (trashed ones too), in the order of date added: its
   * key, type, date added, first creator and these fields, as its item shows them; what a
   * citation key is made of, in one query (exports.ts), each passed to `each` as it is read.
   * Returns how many there were.
   */
  citationKeyFacts(
    libraryID: number,
    fields: readonly string[],
    each: (facts: KeyFacts) => void,
  ): Promise<number>;
  /**
   * Keys of the top-level items not in the trash, of the library or of one collection, in the
   * order of date added (then item id); undefined when there is no such collection.
   */
  exportListingKeys(libraryID: number, options?: { collectionKey?: string }): Promise<string[] | undefined>;
  /** Closes the database and removes any snapshot. The reader cannot be used after. */
  close(): void;
}

export async function openZoteroSqlite(
  path: string,
  options: OpenZoteroSqliteOptions = {},
): Promise<ZoteroSqliteReader> {
  const reader = new Reader(path, options);
  await reader.connections.connection();
  return reader;
}

/** Each call: the current connection (re-opened when the source changed), then one query. */
class Reader implements ZoteroSqliteReader {
  readonly dataDir: string;
  readonly connections: Connections;

  constructor(
    readonly source: string,
    options: OpenZoteroSqliteOptions,
  ) {
    this.dataDir = dirname(source);
    this.connections = new Connections(source, this.dataDir, options, loadDatabaseClass());
  }

  async status(): Promise<ReaderStatus> {
    const conn = await this.connections.connection();
    return {
      source: this.source,
      mode: conn.mode,
      snapshotPath: conn.snapshotPath,
      schemaVersion: conn.schemaVersion,
      fingerprint: conn.fingerprint,
      opens: this.connections.opens,
      tables: [...conn.indexes.keys()],
    };
  }

  async schema(): Promise<ZoteroSchemaMap> {
    return (await this.connections.connection()).ctx.schema;
  }

  async libraries(): Promise<LocalLibrary[]> {
    const conn = await this.connections.connection();
    return [...conn.libraries.values()].map((l) => ({ ...l }));
  }

  account(): Promise<number> {
    return this.connections.run((conn) => {
      if (!conn.ctx.tables.has('settings')) return 0;
      const row = conn.ctx
        .stmt("SELECT value FROM settings WHERE setting = 'account' AND key = 'userID'")
        .get() as { value: unknown } | undefined;
      const id = Number(row?.value ?? 0);
      return Number.isSafeInteger(id) && id > 0 ? id : 0;
    });
  }

  async libraryIdFor(ref: { type: 'user' } | { type: 'group'; groupID: number }): Promise<number> {
    return libraryIdFor(await this.connections.connection(), ref);
  }

  async libraryVersion(libraryID: number): Promise<number> {
    return libraryOf(await this.connections.connection(), libraryID).version;
  }

  librariesOfKeys(keys: readonly string[]): Promise<Map<string, number[]>> {
    return this.connections.run((conn) => librariesOfKeys(conn, keys));
  }

  collections(libraryID: number, options: CollectionListOptions = {}): Promise<WebApiCollection[]> {
    return this.connections.run((conn) => collections(conn, libraryID, options));
  }

  collectionItemCounts(libraryID: number, keys: readonly string[]): Promise<Map<string, number>> {
    return this.connections.run((conn) => collectionItemCounts(conn, libraryID, keys));
  }

  items(libraryID: number, options: ItemListOptions = {}): Promise<ItemListResult> {
    return this.connections.run((conn) => items(conn, libraryID, options));
  }

  item(libraryID: number, key: string): Promise<WebApiItem | undefined> {
    return this.connections.run((conn) => item(conn, libraryID, key));
  }

  children(
    libraryID: number,
    key: string,
    options: { includeTrashed?: boolean } = {},
  ): Promise<WebApiItem[]> {
    return this.connections.run((conn) => children(conn, libraryID, key, options));
  }

  tags(libraryID: number, options: { includeTrashed?: boolean } = {}): Promise<TagEntry[]> {
    return this.connections.run((conn) => tags(conn, libraryID, options));
  }

  fulltextInfo(libraryID: number, key: string, options: { content?: boolean } = {}): Promise<FulltextInfo[]> {
    return this.connections.run((conn) => fulltextInfo(conn, libraryID, key, options));
  }

  searchItems(libraryID: number, options: SearchOptions): Promise<ItemListResult> {
    return this.connections.run((conn) => searchItems(conn, libraryID, options));
  }

  itemStats(libraryID: number): Promise<ItemStats> {
    return this.connections.run((conn) => itemStats(conn, libraryID));
  }

  signatures(
    libraryID: number,
    options: { changedSince?: ChangedSince; trashed?: boolean } = {},
  ): Promise<{ signatures: Map<string, string>; ids: Map<string, number> }> {
    return this.connections.run((conn) => signatures(conn, libraryID, options));
  }

  itemCount(libraryID: number): Promise<number> {
    return this.connections.run((conn) => itemCount(conn, libraryID));
  }

  itemCounts(libraryID: number): Promise<ItemCounts> {
    return this.connections.run((conn) => itemCounts(conn, libraryID));
  }

  itemKeys(libraryID: number): Promise<string[]> {
    return this.connections.run((conn) => itemKeys(conn, libraryID));
  }

  itemsByKeys(libraryID: number, keys: readonly string[]): Promise<WebApiItem[]> {
    return this.connections.run((conn) => itemsByKeys(conn, libraryID, keys));
  }

  fulltextKeys(libraryID: number, word: string): Promise<string[]> {
    return this.connections.run((conn) => fulltextKeys(conn, libraryID, word));
  }

  citationKeyFacts(
    libraryID: number,
    fields: readonly string[],
    each: (facts: KeyFacts) => void,
  ): Promise<number> {
    return this.connections.run((conn) => citationKeyFacts(conn, libraryID, fields, each));
  }

  exportListingKeys(
    libraryID: number,
    options: { collectionKey?: string } = {},
  ): Promise<string[] | undefined> {
    return this.connections.run((conn) => exportListingKeys(conn, libraryID, options));
  }

  close(): void {
    this.connections.close();
  }
}
