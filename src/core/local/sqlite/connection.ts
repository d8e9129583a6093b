/**
 * The zotero.sqlite reader's connection: opened in place when the database can be read there,
 * else on a private snapshot; checked against the source's fingerprint (size and mtime of the
 * database and its WAL) before every call, and re-opened (in place) or re-copied (snapshot)
 * when it changed, dropping the in-memory tables, so a call never sees data older than the last
 * commit that reached the files before it started. In place, the user's database is held only
 * during a call; a lock that appears later (Zotero started) moves the reader to a snapshot.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { ZoteusError } from '../../errors.js';
import type { FulltextWords } from './fulltext.js';
import { typeInfoCache, type DbContext } from './hydrate.js';
import { readLibraries } from './libraries.js';
import type { TrashState } from './counts.js';
import type { LibraryIndex } from './library-index.js';
import { loadSchemaMap } from './schema-map.js';
import {
  fingerprint,
  isBusy,
  isLockedOrUnopenable,
  missingDatabase,
  removeSnapshot,
  takeSnapshot,
  type OpenMode,
} from './snapshot.js';
import type { LocalLibrary } from './types.js';

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

/** One opening of the database (in place or a snapshot) and what was read from it once. */
export interface Connection {
  handle: DbHandle;
  mode: OpenMode;
  snapshotDir: string | undefined;
  snapshotPath: string | undefined;
  fingerprint: string;
  schemaVersion: number;
  ctx: DbContext;
  libraries: Map<number, LocalLibrary>;
  /** The in-memory table of each library read so far (library-index.ts). */
  indexes: Map<number, LibraryIndex>;
  /** Each library's items, parents and trash state, when counted without that table (counts.ts). */
  trash: Map<number, TrashState>;
  /** How each library's items are walked when all are read (libraries.ts, walkItems). */
  walks: Map<number, 'NOT INDEXED' | ''>;
  /** Zotero's full-text word list, loaded on first use (fulltext.ts). */
  fulltext: FulltextWords | undefined;
  /** The data directory (where `storage/` is). */
  dataDir: string;
}

/** The current connection of one reader, and every call through it. */
export class Connections {
  private conn: Connection | undefined;
  private pending: Promise<Connection> | undefined;
  /** How many times the database was (re-)opened or (re-)copied. */
  opens = 0;
  private closed = false;
  private readonly onExit = () => this.dropSnapshot(this.conn);

  constructor(
    readonly source: string,
    private readonly dataDir: string,
    private readonly options: OpenZoteroSqliteOptions,
    private readonly Database: typeof BetterSqlite3,
  ) {
    process.on('exit', this.onExit);
  }

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

  /** Runs a read; a lock that appears after opening in place (Zotero started) moves to a snapshot. */
  async run<T>(fn: (conn: Connection) => T): Promise<T> {
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

  close(): void {
    if (this.closed) return;
    this.closed = true;
    process.off('exit', this.onExit);
    const conn = this.conn;
    this.conn = undefined;
    if (conn) this.closeConnection(conn);
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
    const { libraries, libraryJson } = readLibraries(db, tables);
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
      trash: new Map(),
      walks: new Map(),
      fulltext: undefined,
      dataDir: this.dataDir,
    };
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
}
