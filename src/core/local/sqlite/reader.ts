/**
 * The zotero.sqlite reader: a read-only view of a Zotero desktop database that answers in
 * the Web API's JSON shapes. Open with `openZoteroSqlite(path)`.
 *
 * - Every call first checks the source's fingerprint (size and mtime of the database and its
 *   WAL): when it changed, the database is re-opened (in place) or re-copied (snapshot) and
 *   the in-memory tables are dropped, so a call never sees data older than the last commit
 *   that reached the files before it started.
 * - Every query is filtered by libraryID; trashed items and collections are left out unless
 *   asked for; child notes, attachments and annotations are children, never top-level items.
 * - Item types, fields and creator types are resolved by name (`schema-map.ts`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ZoteusError } from '../../errors.js';
import { loadDatabaseClass } from '../../sqlite-driver.js';
import { byNameThenKey } from '../../text-order.js';
import {
  collectionJson,
  collectionRows,
  countMembers,
  hydrateItems,
  typeInfoCache,
  type DbContext,
} from './hydrate.js';
import { LibraryIndex, type IndexRow } from './library-index.js';
import { loadSchemaMap, type ZoteroSchemaMap } from './schema-map.js';
import {
  fingerprint,
  isBusy,
  isLockedOrUnopenable,
  missingDatabase,
  removeSnapshot,
  takeSnapshot,
  type OpenMode,
} from './snapshot.js';
import { fold, queryWords } from './text.js';
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
  WebApiLibrary,
} from './types.js';

/** `version.userdata` values this reader knows: Zotero 7 (123) to Zotero 10 (129). */
export const SUPPORTED_SCHEMA = { min: 123, max: 129 } as const;

export interface OpenZoteroSqliteOptions {
  /** How long to wait for a lock before taking a snapshot instead (default 100 ms). */
  busyTimeoutMs?: number;
  /** Where private snapshot directories are made (default the OS temp dir). */
  tmpDir?: string;
  /** `auto` (default): in place when possible, else a snapshot. `snapshot`: always copy. */
  mode?: 'auto' | 'snapshot';
  /** Diagnostics (which mode, why). */
  log?: (line: string) => void;
}

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
  /** The libraryID of the user library, or of the group with this Web API group id. */
  libraryIdFor(ref: { type: 'user' } | { type: 'group'; groupID: number }): Promise<number>;
  libraryVersion(libraryID: number): Promise<number>;
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
      changedSince?: { clientDateModified: string; dateModified: string; version: number };
      /** With changedSince: the items in the trash too, modified or not. */
      trashed?: boolean;
    },
  ): Promise<{ signatures: Map<string, string>; ids: Map<string, number> }>;
  /**
   * Aggregates that change whenever the library's items do (a count and sum of item ids, the
   * newest local modification and synced version, the trash): cheap to read, so an index can
   * tell "nothing changed" or "only items modified since X changed" without a full comparison.
   */
  itemStats(libraryID: number): Promise<{
    count: number;
    idSum: number;
    maxClientDateModified: string;
    maxDateModified: string;
    maxVersion: number;
    trashed: number;
  }>;
  /** How many items (children and trashed ones included) the library holds. */
  itemCount(libraryID: number): Promise<number>;
  /** Every item key of the library (children and trashed ones included). */
  itemKeys(libraryID: number): Promise<string[]>;
  /** Items by key in the Web API shape (trashed ones too), in the order given; unknown keys left out. */
  itemsByKeys(libraryID: number, keys: readonly string[]): Promise<WebApiItem[]>;
  /** Keys of the library's items whose words in Zotero's full-text index contain `word` (folded). */
  fulltextKeys(libraryID: number, word: string): Promise<string[]>;
  /** Closes the database and removes any snapshot. The reader cannot be used after. */
  close(): void;
}

/**
 * A connection that can be let go between calls and is reopened on demand. In place, the
 * reader holds the user's database only during a call: an open connection, even a read-only
 * one, keeps Zotero from taking its exclusive lock (it could not start, or could not write).
 */
class DbHandle {
  private db: BetterSqlite3.Database | undefined;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly openDb: () => BetterSqlite3.Database,
    db?: BetterSqlite3.Database,
  ) {
    this.db = db;
  }

  get(): BetterSqlite3.Database {
    return (this.db ??= this.openDb());
  }

  stmt(sql: string): BetterSqlite3.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.get().prepare(sql)));
    return s;
  }

  release(): void {
    const db = this.db;
    this.db = undefined;
    this.statements.clear();
    db?.close();
  }
}

interface Connection {
  handle: DbHandle;
  mode: OpenMode;
  snapshotDir: string | undefined;
  snapshotPath: string | undefined;
  fingerprint: string;
  schemaVersion: number;
  ctx: DbContext;
  libraries: Map<number, LocalLibrary>;
  indexes: Map<number, LibraryIndex>;
  fulltext: FulltextWords | undefined;
}

export async function openZoteroSqlite(
  path: string,
  options: OpenZoteroSqliteOptions = {},
): Promise<ZoteroSqliteReader> {
  const reader = new Reader(path, options, loadDatabaseClass());
  await reader.connection();
  return reader;
}

class Reader implements ZoteroSqliteReader {
  readonly dataDir: string;
  private conn: Connection | undefined;
  private pending: Promise<Connection> | undefined;
  private opens = 0;
  private closed = false;
  private readonly onExit = () => this.dropSnapshot(this.conn);

  constructor(
    readonly source: string,
    private readonly options: OpenZoteroSqliteOptions,
    private readonly Database: typeof BetterSqlite3,
  ) {
    this.dataDir = dirname(source);
    process.on('exit', this.onExit);
  }

  // ---- connection management ----

  /** The open connection, re-opened or re-copied first when the source changed. */
  async connection(): Promise<Connection> {
    if (this.closed) throw new ZoteusError('internal_error', 'The Zotero database reader is closed.');
    if (this.pending) return this.pending;
    const fp = fingerprint(this.source);
    if (fp === undefined) throw missingDatabase(this.source);
    if (this.conn && this.conn.fingerprint === fp) return this.conn;
    this.pending = this.reopen().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** In place when it can be read there (again), else a fresh snapshot. */
  private async reopen(): Promise<Connection> {
    const old = this.conn;
    this.conn = undefined;
    if (old) this.closeConnection(old);
    let conn: Connection | undefined;
    if (this.options.mode !== 'snapshot') {
      try {
        conn = this.openDirect();
      } catch (error) {
        if (!isLockedOrUnopenable(error)) throw this.translate(error);
        this.options.log?.(
          `zotero.sqlite cannot be read in place (${(error as Error).message}); reading a private copy.`,
        );
      }
    }
    conn ??= await this.openSnapshot();
    return this.adopt(conn);
  }

  /** Makes `conn` the current connection, unless the reader was closed while it was opening. */
  private adopt(conn: Connection): Connection {
    if (this.closed) {
      this.closeConnection(conn);
      throw new ZoteusError('internal_error', 'The Zotero database reader is closed.');
    }
    this.opens++;
    this.conn = conn;
    return conn;
  }

  private openDirect(): Connection {
    const fpBefore = fingerprint(this.source);
    if (fpBefore === undefined) throw missingDatabase(this.source);
    const handle = new DbHandle(
      () =>
        new this.Database(this.source, {
          readonly: true,
          fileMustExist: true,
          timeout: this.options.busyTimeoutMs ?? 100,
        }),
    );
    try {
      const conn = this.setUp(handle, 'direct', undefined, undefined);
      // Opening a WAL database read-only may create the -wal/-shm files: fingerprint after.
      conn.fingerprint = fingerprint(this.source) ?? fpBefore;
      return conn;
    } finally {
      handle.release();
    }
  }

  private async openSnapshot(): Promise<Connection> {
    const snap = await takeSnapshot(this.source, this.Database, this.options.tmpDir);
    const handle = new DbHandle(
      () => new this.Database(snap.path, { readonly: true, fileMustExist: true, timeout: 1000 }),
    );
    try {
      const conn = this.setUp(handle, 'snapshot', snap.dir, snap.path);
      conn.fingerprint = snap.fingerprint;
      return conn;
    } catch (error) {
      handle.release();
      removeSnapshot(snap.dir);
      throw this.translate(error);
    }
  }

  /** Schema check and the name maps; runs the first query, which is where a lock shows. */
  private setUp(
    handle: DbHandle,
    mode: OpenMode,
    snapshotDir: string | undefined,
    snapshotPath: string | undefined,
  ): Connection {
    const db = handle.get();
    const tables = new Set(
      (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
      ).map((r) => r.name),
    );
    if (!tables.has('version') || !tables.has('items') || !tables.has('libraries')) {
      throw new ZoteusError(
        'api_error',
        `${this.source} is not a Zotero database (no version/items/libraries tables).`,
        {
          hint: 'Point ZOTERO_DATA_DIR at the Zotero data directory, the folder that holds zotero.sqlite and storage/.',
        },
      );
    }
    const row = db.prepare("SELECT version FROM version WHERE schema = 'userdata'").get() as
      { version: number } | undefined;
    const schemaVersion = Number(row?.version);
    if (
      !Number.isFinite(schemaVersion) ||
      schemaVersion < SUPPORTED_SCHEMA.min ||
      schemaVersion > SUPPORTED_SCHEMA.max
    ) {
      const what =
        row === undefined ? 'no userdata schema version' : `userdata schema version ${schemaVersion}`;
      const older = Number.isFinite(schemaVersion) && schemaVersion < SUPPORTED_SCHEMA.min;
      throw new ZoteusError(
        'api_error',
        `The Zotero database ${this.source} has ${what}; Zoteus reads versions ${SUPPORTED_SCHEMA.min}–${SUPPORTED_SCHEMA.max} (Zotero 7 to 10).`,
        {
          hint: older
            ? 'Update Zotero to version 7 or later (it upgrades the database), or set ZOTEUS_LOCAL=off to use the Web API only.'
            : 'This Zotero is newer than this Zoteus: update Zoteus, or set ZOTEUS_LOCAL=off to use the Web API only.',
        },
      );
    }
    const schema = loadSchemaMap(db);
    const settings = tables.has('settings')
      ? new Map(
          (
            db.prepare("SELECT key, value FROM settings WHERE setting = 'account'").all() as Array<{
              key: string;
              value: unknown;
            }>
          ).map((r) => [r.key, r.value]),
        )
      : new Map<string, unknown>();
    const userID = Number(settings.get('userID') ?? 0) || 0;
    const username = settings.get('username');
    const libRows = db
      .prepare(
        `SELECT l.libraryID, l.type, l.editable, l.filesEditable, l.version, g.groupID, g.name
         FROM libraries l LEFT JOIN groups g ON g.libraryID = l.libraryID
         WHERE l.type IN ('user', 'group') ORDER BY l.libraryID`,
      )
      .all() as Array<{
      libraryID: number;
      type: 'user' | 'group';
      editable: number;
      filesEditable: number;
      version: number;
      groupID: number | null;
      name: string | null;
    }>;
    const libraries = new Map<number, LocalLibrary>();
    const libraryJson = new Map<number, WebApiLibrary>();
    for (const l of libRows) {
      const lib: LocalLibrary = {
        libraryID: l.libraryID,
        type: l.type,
        name: l.type === 'user' ? 'My Library' : (l.name ?? `Group ${l.groupID}`),
        version: l.version,
        editable: l.editable === 1,
        filesEditable: l.filesEditable === 1,
      };
      if (l.type === 'group' && l.groupID !== null) lib.groupID = l.groupID;
      libraries.set(l.libraryID, lib);
      libraryJson.set(
        l.libraryID,
        l.type === 'user'
          ? {
              type: 'user',
              id: userID,
              name: typeof username === 'string' && username ? username : 'My Library',
            }
          : { type: 'group', id: l.groupID ?? 0, name: lib.name },
      );
    }
    const ctx: DbContext = {
      schema,
      tables,
      stmt: (sql) => handle.stmt(sql),
      typeInfo: typeInfoCache(schema),
      library: (id) => libraryJson.get(id) ?? { type: 'user', id: 0, name: 'My Library' },
    };
    return {
      handle,
      mode,
      snapshotDir,
      snapshotPath,
      fingerprint: '',
      schemaVersion,
      ctx,
      libraries,
      indexes: new Map(),
      fulltext: undefined,
    };
  }

  /** Runs a read; a lock that appears after opening in place (Zotero started) moves to a snapshot. */
  private async run<T>(fn: (conn: Connection) => T): Promise<T> {
    const conn = await this.connection();
    try {
      return fn(conn);
    } catch (error) {
      if (!(conn.mode === 'direct' && isBusy(error))) throw this.translate(error);
      conn.handle.release();
      this.options.log?.('zotero.sqlite is locked by Zotero; reading a private copy.');
      this.pending = this.reopenAsSnapshot().finally(() => {
        this.pending = undefined;
      });
      const next = await this.pending;
      try {
        return fn(next);
      } catch (again) {
        throw this.translate(again);
      }
    } finally {
      // In place, never hold the user's database between calls.
      if (conn.mode === 'direct') conn.handle.release();
    }
  }

  private async reopenAsSnapshot(): Promise<Connection> {
    const old = this.conn;
    this.conn = undefined;
    if (old) this.closeConnection(old);
    return this.adopt(await this.openSnapshot());
  }

  private translate(error: unknown): unknown {
    if (error instanceof ZoteusError) return error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      const busy = isBusy(error);
      return new ZoteusError(
        'api_error',
        `Reading the Zotero database failed (${code}: ${(error as Error).message}).`,
        {
          retryable: busy,
          hint: busy ? 'Zotero is busy: retry in a moment.' : undefined,
          cause: error,
        },
      );
    }
    return error;
  }

  private closeConnection(conn: Connection): void {
    try {
      conn.handle.release();
    } finally {
      this.dropSnapshot(conn);
    }
  }

  private dropSnapshot(conn: Connection | undefined): void {
    if (conn?.snapshotDir) removeSnapshot(conn.snapshotDir);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    process.off('exit', this.onExit);
    const conn = this.conn;
    this.conn = undefined;
    if (conn) this.closeConnection(conn);
  }

  // ---- helpers ----

  private library(conn: Connection, libraryID: number): LocalLibrary {
    const lib = conn.libraries.get(libraryID);
    if (!lib) {
      throw new ZoteusError('not_found', `No library ${libraryID} in the Zotero database.`, {
        field: 'library',
        hint: 'zotero libraries lists the user library and the groups this Zotero has synced.',
      });
    }
    return lib;
  }

  private index(conn: Connection, libraryID: number): LibraryIndex {
    this.library(conn, libraryID);
    let index = conn.indexes.get(libraryID);
    if (!index) conn.indexes.set(libraryID, (index = new LibraryIndex(conn.ctx, libraryID)));
    return index;
  }

  private page(conn: Connection, rows: IndexRow[], options: ItemListOptions): ItemListResult {
    const start = Math.max(0, options.start ?? 0);
    const end = options.limit === undefined ? rows.length : start + Math.max(0, options.limit);
    const ids = rows.slice(start, end).map((r) => r.itemID);
    return { items: hydrateItems(conn.ctx, ids), totalResults: rows.length };
  }

  /** A read of one library's rows (checked to exist), for the index-facing methods below. */
  read<T>(libraryID: number, fn: (ctx: DbContext, conn: Connection) => T): Promise<T> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      return fn(conn.ctx, conn);
    });
  }

  // ---- the API ----

  async status(): Promise<ReaderStatus> {
    const conn = await this.connection();
    return {
      source: this.source,
      mode: conn.mode,
      snapshotPath: conn.snapshotPath,
      schemaVersion: conn.schemaVersion,
      fingerprint: conn.fingerprint,
      opens: this.opens,
    };
  }

  async schema(): Promise<ZoteroSchemaMap> {
    return (await this.connection()).ctx.schema;
  }

  async libraries(): Promise<LocalLibrary[]> {
    const conn = await this.connection();
    return [...conn.libraries.values()].map((l) => ({ ...l }));
  }

  async libraryIdFor(ref: { type: 'user' } | { type: 'group'; groupID: number }): Promise<number> {
    const conn = await this.connection();
    for (const lib of conn.libraries.values()) {
      if (ref.type === 'user' && lib.type === 'user') return lib.libraryID;
      if (ref.type === 'group' && lib.type === 'group' && lib.groupID === ref.groupID) return lib.libraryID;
    }
    throw new ZoteusError(
      'not_found',
      ref.type === 'user'
        ? 'The Zotero database has no user library.'
        : `Group ${ref.groupID} is not in the Zotero database (not joined, or not synced to this computer).`,
      { field: 'library_id' },
    );
  }

  async libraryVersion(libraryID: number): Promise<number> {
    const conn = await this.connection();
    return this.library(conn, libraryID).version;
  }

  async collections(libraryID: number, options: CollectionListOptions = {}): Promise<WebApiCollection[]> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      // Named keys read only what they need, unless a parent must be found among them all.
      const all = collectionRows(
        conn.ctx,
        libraryID,
        options.parentKey === undefined ? options.keys : undefined,
      );
      let rows = options.includeTrashed ? all : all.filter((r) => !r.deleted);
      if (options.keys) {
        const keys = new Set(options.keys);
        rows = rows.filter((r) => keys.has(r.key));
      }
      if (options.top) rows = rows.filter((r) => r.parentID === null);
      if (options.parentKey !== undefined) {
        const parent = all.find((r) => r.key === options.parentKey);
        if (!parent)
          throw new ZoteusError('not_found', `No collection ${options.parentKey} in this library.`);
        rows = rows.filter((r) => r.parentID === parent.collectionID);
      }
      // The order the collection tools show: the rows come from SQLite already close to it, so
      // this sort and theirs walk a nearly sorted list.
      rows.sort(byNameThenKey);
      return collectionJson(conn.ctx, libraryID, rows, all, { counts: options.counts !== false });
    });
  }

  async collectionItemCounts(libraryID: number, keys: readonly string[]): Promise<Map<string, number>> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      return countMembers(conn.ctx, libraryID, keys);
    });
  }

  async items(libraryID: number, options: ItemListOptions = {}): Promise<ItemListResult> {
    return this.run((conn) => {
      const index = this.index(conn, libraryID);
      const keep = index.filter(options);
      let rows: IndexRow[];
      if (options.keys) {
        const wanted = new Set<IndexRow>();
        for (const key of options.keys) {
          const row = index.byKey.get(key);
          if (row && keep(row)) wanted.add(row);
        }
        rows = [...wanted].sort(index.comparator(options.sort, options.direction));
      } else rows = index.sorted(options.sort, options.direction).filter(keep);
      return this.page(conn, rows, options);
    });
  }

  async item(libraryID: number, key: string): Promise<WebApiItem | undefined> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      const row = conn.ctx
        .stmt('SELECT itemID FROM items WHERE libraryID = ? AND key = ?')
        .get(libraryID, key) as { itemID: number } | undefined;
      return row ? hydrateItems(conn.ctx, [row.itemID])[0] : undefined;
    });
  }

  async children(
    libraryID: number,
    key: string,
    options: { includeTrashed?: boolean } = {},
  ): Promise<WebApiItem[]> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      const parent = conn.ctx
        .stmt('SELECT itemID FROM items WHERE libraryID = ? AND key = ?')
        .get(libraryID, key) as { itemID: number } | undefined;
      if (!parent) throw new ZoteusError('not_found', `No item ${key} in this library.`, { field: 'key' });
      // CROSS JOIN keeps the children as the outer loop: otherwise SQLite may walk every item of
      // the library (by libraryID) and probe the children for each, 50k steps for a few rows.
      const annotations = conn.ctx.tables.has('itemAnnotations')
        ? 'UNION SELECT itemID FROM itemAnnotations WHERE parentItemID = @parent'
        : '';
      const ids = (
        conn.ctx
          .stmt(
            `SELECT c.itemID FROM (
               SELECT itemID FROM itemNotes WHERE parentItemID = @parent
               UNION SELECT itemID FROM itemAttachments WHERE parentItemID = @parent
               ${annotations}
             ) c CROSS JOIN items i ON i.itemID = c.itemID
             WHERE i.libraryID = @lib ${options.includeTrashed ? '' : 'AND c.itemID NOT IN (SELECT itemID FROM deletedItems)'}
             ORDER BY i.dateAdded, i.itemID`,
          )
          .all({ parent: parent.itemID, lib: libraryID }) as Array<{ itemID: number }>
      ).map((r) => r.itemID);
      return hydrateItems(conn.ctx, ids);
    });
  }

  async tags(libraryID: number, options: { includeTrashed?: boolean } = {}): Promise<TagEntry[]> {
    return this.run((conn) => {
      const index = this.index(conn, libraryID);
      const counts = new Map<string, { tag: string; type: number; numItems: number }>();
      for (const row of index.rows) {
        if (row.deleted && !options.includeTrashed) continue;
        for (const t of row.tags) {
          const k = `${t.type}\u0000${t.tag}`;
          const entry = counts.get(k);
          if (entry) entry.numItems++;
          else counts.set(k, { tag: t.tag, type: t.type, numItems: 1 });
        }
      }
      return [...counts.values()]
        .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.type - b.type))
        .map((e) => ({ tag: e.tag, meta: { type: e.type, numItems: e.numItems } }));
    });
  }

  async fulltextInfo(
    libraryID: number,
    key: string,
    options: { content?: boolean } = {},
  ): Promise<FulltextInfo[]> {
    return this.run((conn) => {
      this.library(conn, libraryID);
      const item = conn.ctx
        .stmt('SELECT itemID FROM items WHERE libraryID = ? AND key = ?')
        .get(libraryID, key) as { itemID: number } | undefined;
      if (!item) throw new ZoteusError('not_found', `No item ${key} in this library.`, { field: 'key' });
      const rows = conn.ctx
        .stmt(
          `SELECT i.key, p.key AS parentKey, a.contentType, f.indexedPages, f.totalPages, f.indexedChars,
             f.totalChars, f.version
           FROM itemAttachments a JOIN items i ON i.itemID = a.itemID
           LEFT JOIN items p ON p.itemID = a.parentItemID
           LEFT JOIN fulltextItems f ON f.itemID = a.itemID
           WHERE i.libraryID = @lib AND (a.itemID = @item OR a.parentItemID = @item)
             AND a.itemID NOT IN (SELECT itemID FROM deletedItems)
           ORDER BY i.dateAdded, i.itemID`,
        )
        .all({ lib: libraryID, item: item.itemID }) as Array<{
        key: string;
        parentKey: string | null;
        contentType: string | null;
        indexedPages: number | null;
        totalPages: number | null;
        indexedChars: number | null;
        totalChars: number | null;
        version: number | null;
      }>;
      return rows.map((r) => {
        const cacheFile = join(this.dataDir, 'storage', r.key, '.zotero-ft-cache');
        const exists = existsSync(cacheFile);
        const info: FulltextInfo = {
          key: r.key,
          parentItem: r.parentKey ?? undefined,
          contentType: r.contentType,
          indexedPages: r.indexedPages,
          totalPages: r.totalPages,
          indexedChars: r.indexedChars,
          totalChars: r.totalChars,
          version: r.version ?? 0,
          cacheFile: exists ? cacheFile : null,
        };
        if (options.content && exists) info.content = readFileSync(cacheFile, 'utf8');
        return info;
      });
    });
  }

  async searchItems(libraryID: number, options: SearchOptions): Promise<ItemListResult> {
    return this.run((conn) => {
      const index = this.index(conn, libraryID);
      const top = options.top ?? true;
      const mode = options.qmode ?? 'titleCreatorYear';
      const words = queryWords(options.q);
      const keep = index.filter({ ...options, top });
      let fulltext: ((word: string) => ReadonlySet<number>) | undefined;
      if (mode === 'everything' && words.length > 0 && conn.ctx.tables.has('fulltextWords')) {
        conn.fulltext ??= new FulltextWords(conn.ctx);
        const ft = conn.fulltext;
        fulltext = (w) => ft.itemsWith(w);
      }
      const match = index.matcher(words, mode, top, fulltext);
      const rows = index.sorted(options.sort, options.direction).filter((r) => keep(r) && match(r));
      return this.page(conn, rows, options);
    });
  }

  // ---- index-facing reads: cheap, never through the in-memory table ----

  async itemStats(libraryID: number) {
    return this.read(libraryID, (ctx) => {
      const row = ctx
        .stmt(
          `SELECT count(*), total(itemID), ifnull(max(clientDateModified), ''), ifnull(max(dateModified), ''),
             ifnull(max(version), 0),
             (SELECT count(*) FROM deletedItems d JOIN items t ON t.itemID = d.itemID WHERE t.libraryID = @lib)
           FROM items WHERE libraryID = @lib`,
        )
        .raw()
        .get({ lib: libraryID }) as [number, number, string, string, number, number];
      return {
        count: row[0],
        idSum: row[1],
        maxClientDateModified: row[2],
        maxDateModified: row[3],
        maxVersion: row[4],
        trashed: row[5],
      };
    });
  }

  async signatures(
    libraryID: number,
    options: {
      changedSince?: { clientDateModified: string; dateModified: string; version: number };
      trashed?: boolean;
    } = {},
  ): Promise<{ signatures: Map<string, string>; ids: Map<string, number> }> {
    const since = options.changedSince;
    return this.read(libraryID, (ctx) => {
      const fulltext = ctx.tables.has('fulltextItems')
        ? `LEFT JOIN fulltextItems f ON f.itemID = i.itemID`
        : '';
      const ftSig = ctx.tables.has('fulltextItems')
        ? `ifnull(f.version, '') || ':' || ifnull(f.indexedChars, '') || ':' || ifnull(f.indexedPages, '')`
        : "''";
      const rows = ctx
        .stmt(
          `SELECT i.key, i.itemID,
             i.version || '|' || ifnull(i.synced, '') || '|' || ifnull(i.clientDateModified, '') || '|' ||
             ifnull(i.dateModified, '') || '|' ||
             EXISTS (SELECT 1 FROM deletedItems d WHERE d.itemID = i.itemID) || '|' ||
             ifnull((SELECT group_concat(t.tagID || '.' || t.type) FROM itemTags t WHERE t.itemID = i.itemID), '') || '|' ||
             ifnull((SELECT group_concat(c.collectionID) FROM collectionItems c WHERE c.itemID = i.itemID), '') || '|' ||
             ${ftSig}
           FROM items i
           ${fulltext}
           WHERE i.libraryID = @lib
             ${since ? `AND (i.clientDateModified >= @client OR i.dateModified >= @modified OR i.version > @version ${options.trashed ? 'OR i.itemID IN (SELECT itemID FROM deletedItems)' : ''})` : ''}`,
        )
        .raw()
        .iterate({
          lib: libraryID,
          ...(since
            ? { client: since.clientDateModified, modified: since.dateModified, version: since.version }
            : {}),
        }) as Iterable<[string, number, string]>;
      const signatures = new Map<string, string>();
      const ids = new Map<string, number>();
      for (const [key, id, sig] of rows) {
        signatures.set(key, sig);
        ids.set(key, id);
      }
      return { signatures, ids };
    });
  }

  async itemCount(libraryID: number): Promise<number> {
    return this.read(
      libraryID,
      (ctx) => ctx.stmt('SELECT count(*) FROM items WHERE libraryID = ?').pluck().get(libraryID) as number,
    );
  }

  async itemKeys(libraryID: number): Promise<string[]> {
    return this.read(
      libraryID,
      (ctx) => ctx.stmt('SELECT key FROM items WHERE libraryID = ?').pluck().all(libraryID) as string[],
    );
  }

  async itemsByKeys(libraryID: number, keys: readonly string[]): Promise<WebApiItem[]> {
    return this.read(libraryID, (ctx) => {
      const rows = ctx
        .stmt('SELECT key, itemID FROM items WHERE libraryID = ? AND key IN (SELECT value FROM json_each(?))')
        .raw()
        .all(libraryID, JSON.stringify(keys)) as Array<[string, number]>;
      const byKey = new Map(rows);
      const ids = keys.map((k) => byKey.get(k)).filter((id): id is number => id !== undefined);
      return hydrateItems(ctx, ids);
    });
  }

  async fulltextKeys(libraryID: number, word: string): Promise<string[]> {
    return this.read(libraryID, (ctx, conn) => {
      if (!ctx.tables.has('fulltextWords')) return [];
      conn.fulltext ??= new FulltextWords(ctx);
      const ids = [...conn.fulltext.itemsWith(word)];
      if (ids.length === 0) return [];
      return ctx
        .stmt('SELECT key FROM items WHERE libraryID = ? AND itemID IN (SELECT value FROM json_each(?))')
        .pluck()
        .all(libraryID, JSON.stringify(ids)) as string[];
    });
  }
}

/**
 * Zotero's full-text index (`fulltextWords`, `fulltextItemWords`): the words are loaded
 * folded once per snapshot, and a query word finds the items of every word containing it.
 * The word table is shared by all libraries; callers keep only their library's items.
 */
class FulltextWords {
  private readonly ids: number[] = [];
  private readonly words: string[] = [];
  private readonly cache = new Map<string, Set<number>>();

  constructor(private readonly ctx: DbContext) {
    const rows = ctx.stmt('SELECT wordID, word FROM fulltextWords').iterate() as Iterable<{
      wordID: number;
      word: string | null;
    }>;
    for (const r of rows) {
      if (!r.word) continue;
      this.ids.push(r.wordID);
      this.words.push(fold(r.word));
    }
  }

  itemsWith(word: string): Set<number> {
    let items = this.cache.get(word);
    if (items) return items;
    const matching: number[] = [];
    for (let i = 0; i < this.words.length; i++)
      if (this.words[i]!.includes(word)) matching.push(this.ids[i]!);
    items = new Set(
      matching.length === 0
        ? []
        : (
            this.ctx
              .stmt(
                'SELECT DISTINCT itemID FROM fulltextItemWords WHERE wordID IN (SELECT value FROM json_each(?))',
              )
              .all(JSON.stringify(matching)) as Array<{ itemID: number }>
          ).map((r) => r.itemID),
    );
    this.cache.set(word, items);
    return items;
  }
}
