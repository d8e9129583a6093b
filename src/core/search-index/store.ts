/**
 * The local search index of one library: an SQLite file under the Zoteus data directory
 * (`$ZOTEUS_DATA_DIR/index/users-1.sqlite`, `groups-2.sqlite`), never inside Zotero's own
 * data directory. It holds one row per item (top-level items and their notes, attachments and
 * annotations) with what listing, filtering and sorting need, an FTS5 table of each row's text
 * (BM25 ranking and word search), a trigram table of the folded title, creators and year
 * (substring search of `titleCreatorYear`), the vocabulary of that text (substring search), and,
 * optionally, embedding vectors.
 *
 * The file is derived data: a file of another schema version, or built from another source,
 * is emptied and rebuilt, never migrated.
 */
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { loadDatabaseClass } from '../sqlite-driver.js';
import { TEXT_COLUMNS } from './columns.js';
import { ensureDir } from '../dirs.js';

/** Bumped whenever the tables or what goes into them change: older files are rebuilt. */
export const INDEX_SCHEMA_VERSION = 3;

export { TEXT_COLUMNS, type TextColumn } from './columns.js';

const DDL = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  rid INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  src_id INTEGER,
  parent TEXT,
  top TEXT,
  item_type TEXT NOT NULL,
  own_deleted INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  version INTEGER NOT NULL,
  sig TEXT NOT NULL,
  date_added TEXT NOT NULL,
  date_modified TEXT NOT NULL,
  title_sort TEXT NOT NULL,
  creator_sort TEXT NOT NULL,
  date_sql TEXT NOT NULL,
  -- Zotero's creatorSummary ("Smith", "Smith and Jones", "Smith et al."): what a ranked hit shows.
  creator_summary TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS tcy_fts USING fts5(tcy, tokenize = 'trigram', detail = 'full');
CREATE TABLE IF NOT EXISTS item_tags (rid INTEGER NOT NULL, tag TEXT NOT NULL, type INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS item_collections (rid INTEGER NOT NULL, ckey TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
  ${TEXT_COLUMNS.join(', ')},
  tokenize = 'unicode61 remove_diacritics 2',
  -- Term counts per column, no positions: BM25 needs no more, and the file is far smaller.
  -- (Snippets are cut in JS, snippet.ts; phrase queries are not used.)
  detail = 'column'
);
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs, 'row');
CREATE TABLE IF NOT EXISTS fulltext_state (rid INTEGER PRIMARY KEY, sig TEXT NOT NULL, source TEXT);
CREATE TABLE IF NOT EXISTS vectors (rid INTEGER PRIMARY KEY, model TEXT NOT NULL, sig TEXT NOT NULL, vec BLOB NOT NULL);
`;

/** The tables' indexes, in this order in every index file. */
const INDEXES = `
CREATE INDEX IF NOT EXISTS items_state ON items(deleted, parent);
CREATE INDEX IF NOT EXISTS items_parent ON items(parent);
CREATE INDEX IF NOT EXISTS items_top ON items(top);
-- One index per sort column, named items_<column> (query.ts walks them by that name).
CREATE INDEX IF NOT EXISTS items_date_modified ON items(date_modified);
CREATE INDEX IF NOT EXISTS items_date_added ON items(date_added);
CREATE INDEX IF NOT EXISTS items_title_sort ON items(title_sort);
CREATE INDEX IF NOT EXISTS items_creator_sort ON items(creator_sort);
CREATE INDEX IF NOT EXISTS items_date_sql ON items(date_sql);
CREATE INDEX IF NOT EXISTS items_item_type ON items(item_type);
CREATE INDEX IF NOT EXISTS item_tags_tag ON item_tags(tag);
CREATE INDEX IF NOT EXISTS item_tags_rid ON item_tags(rid);
CREATE INDEX IF NOT EXISTS item_collections_key ON item_collections(ckey);
CREATE INDEX IF NOT EXISTS item_collections_rid ON item_collections(rid);
`;

/**
 * What a build looks rows up by (the key, the parent when it relinks, the rid of tags and
 * collections when it rewrites a row): kept while a first build runs. The other indexes answer
 * queries only, and a first build makes them once at the end (`dropQueryIndexes`,
 * `createQueryIndexes`): kept up to date row by row, each batch inserted hundreds of entries at
 * random places of each of them, so a batch dirtied (and its commit wrote) more pages the
 * larger they already were, and the build grew faster than the library.
 */
const BUILD_INDEXES = new Set(['items_parent', 'item_tags_rid', 'item_collections_rid']);

const INDEX_NAMES = [...INDEXES.matchAll(/CREATE INDEX IF NOT EXISTS (\w+)/g)].map((m) => m[1]!);

export type IndexDb = BetterSqlite3.Database;

/**
 * Drops the query indexes before a first build (an index that is not complete is never
 * queried), with a note in `meta` that they are owed: whichever run completes the build makes
 * them (`createQueryIndexes`).
 */
export function dropQueryIndexes(db: IndexDb): void {
  db.transaction(() => {
    for (const name of INDEX_NAMES) if (!BUILD_INDEXES.has(name)) db.exec(`DROP INDEX IF EXISTS ${name}`);
    writeMeta(db, { indexes_pending: 1 });
  })();
}

/**
 * Makes the indexes a build dropped (nothing when none is owed): all of them again, in their
 * order, as a new file has them (one sort each).
 */
export function createQueryIndexes(db: IndexDb): void {
  if (readMeta(db, 'indexes_pending') !== '1') return;
  db.transaction(() => {
    for (const name of INDEX_NAMES) db.exec(`DROP INDEX IF EXISTS ${name}`);
    db.exec(INDEXES);
    writeMeta(db, { indexes_pending: undefined });
  })();
}

/** The index file of a library named as the router names it (`users/1`, `groups/2`). */
export function indexFile(dataDir: string, library: string): string {
  return join(dataDir, 'index', `${library.replace('/', '-')}.sqlite`);
}

/** Opens (creating when asked) an index file; undefined when it does not exist and `create` is false. */
export async function openIndexDb(path: string, options: { create: boolean }): Promise<IndexDb | undefined> {
  if (!options.create && !existsSync(path)) return undefined;
  ensureDir(dirname(path));
  const Database = loadDatabaseClass();
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const version = Number(readMeta(db, 'schema_version') ?? NaN);
  if (version !== INDEX_SCHEMA_VERSION) {
    if (!options.create) {
      db.close();
      return undefined;
    }
    resetIndexDb(db);
  }
  return db;
}

function hasMeta(db: IndexDb): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
}

export function readMeta(db: IndexDb, k: string): string | undefined {
  if (!hasMeta(db)) return undefined;
  const row = db.prepare('SELECT v FROM meta WHERE k = ?').get(k) as { v: string } | undefined;
  return row?.v;
}

export function writeMeta(db: IndexDb, values: Record<string, string | number | undefined>): void {
  const put = db.prepare('INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v');
  const del = db.prepare('DELETE FROM meta WHERE k = ?');
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) del.run(k);
    else put.run(k, String(v));
  }
}

/** Drops everything and creates empty tables of the current schema. */
export function resetIndexDb(db: IndexDb): void {
  db.transaction(() => {
    for (const t of [
      'meta',
      'items',
      'item_tags',
      'item_collections',
      'docs',
      // Fix (review): the trigram table outlived a reset, with the old rows (counted by a
      // title search's first estimate) and the old FTS5 settings.
      'tcy_fts',
      'terms',
      'fulltext_state',
      'vectors',
    ])
      db.exec(`DROP TABLE IF EXISTS ${t}`);
    db.exec(DDL);
    db.exec(INDEXES);
    writeMeta(db, { schema_version: INDEX_SCHEMA_VERSION });
  })();
}

/**
 * One builder per index file across processes: a lock file holding the builder's pid. A lock
 * whose process is gone (killed mid-build) is taken over: the build resumes where it stopped.
 * Returns a release function, or undefined when another live process holds the lock.
 */
export function acquireBuildLock(indexPath: string): (() => void) | undefined {
  const lock = `${indexPath}.lock`;
  ensureDir(dirname(lock));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readLock(lock));
      if (holder === process.pid) return undefined;
      if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) return undefined;
      rmSync(lock, { force: true });
    }
  }
  return undefined;
}

/** Whether another live process is building this index now. */
export function buildInProgress(indexPath: string): boolean {
  const holder = Number(readLock(`${indexPath}.lock`));
  return Number.isSafeInteger(holder) && holder > 0 && alive(holder);
}

function readLock(lock: string): string | undefined {
  try {
    return readFileSync(lock, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
