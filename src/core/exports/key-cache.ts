/**
 * The citation keys of a whole library on the desktop, kept between processes. A key depends on
 * every item of the library (keys.ts: clashes are suffixed in the order of date added), so an
 * export of one item would otherwise read what the keys of all items are made of, every time.
 *
 * One SQLite file per database and library in the cache folder, valid for one state of
 * zotero.sqlite (its fingerprint: size and time of the file and its WAL), one item schema and one
 * version of Zoteus; anything else and the keys are made again and the file replaced (written
 * aside, then renamed, so a reader never sees half of one). Only assignments made without Better
 * BibTeX's keys are kept: those are looked up per export and can change the others' suffixes.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ZoteusError } from '../errors.js';
import { loadDatabaseClass } from '../sqlite-driver.js';
import { CLI_VERSION } from '../version.js';
import type { AssignedKey, KeyAssignment, KeySource } from './keys.js';

/** What the kept keys were made from: any difference and they are made again. */
export interface KeyCacheId {
  /** The user's zotero.sqlite. */
  source: string;
  libraryID: number;
  /** The database's state the keys were made from (snapshot.ts's fingerprint). */
  fingerprint: string;
  /** The item schema's version and source (which fields stand for title and date). */
  schema: string;
}

/** Changed when what goes into the file changes. */
const FORMAT = '1';

function fileOf(dir: string, id: KeyCacheId): string {
  const name = createHash('sha256').update(`${id.source}\u0000${id.libraryID}`).digest('hex').slice(0, 24);
  return join(dir, 'citation-keys', `${name}.sqlite`);
}

function stamp(id: KeyCacheId): string {
  return JSON.stringify([FORMAT, CLI_VERSION, id.fingerprint, id.schema]);
}

type Db = InstanceType<ReturnType<typeof loadDatabaseClass>>;

function openIfCurrent(path: string, id: KeyCacheId): Db | undefined {
  const Database = loadDatabaseClass();
  let db: Db;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    const kept = db.prepare("SELECT v FROM meta WHERE k = 'stamp'").pluck().get();
    if (kept === stamp(id)) return db;
  } catch {
    // Not a file of ours, or an older shape: made again.
  }
  db.close();
  return undefined;
}

/**
 * The kept keys of the library, when the file is current and holds every one of `itemKeys`
 * (read at once); undefined otherwise. Any other key, or `entries()`, reads the whole file.
 */
export function cachedKeys(
  dir: string,
  id: KeyCacheId,
  itemKeys: readonly string[],
): KeyAssignment | undefined {
  const path = fileOf(dir, id);
  const db = openIfCurrent(path, id);
  if (!db) return undefined;
  try {
    const found = new Map<string, AssignedKey>();
    const rows = db
      .prepare(
        'SELECT item_key, citation_key, source FROM keys WHERE item_key IN (SELECT value FROM json_each(?))',
      )
      .raw(true)
      .all(JSON.stringify(itemKeys)) as Array<[string, string, KeySource]>;
    for (const [itemKey, citationKey, source] of rows) found.set(itemKey, { citationKey, source });
    if (itemKeys.some((k) => !found.has(k))) return undefined;
    const meta = new Map(
      (db.prepare('SELECT k, v FROM meta').raw(true).all() as Array<[string, string]>).map(([k, v]) => [
        k,
        v,
      ]),
    );
    const duplicates = JSON.parse(meta.get('duplicates') ?? '[]') as KeyAssignment['duplicates'];
    // Any other item (an export streaming its pages asks as it goes): the whole file, read once;
    // at once when the caller named none or many (it will ask for them all), so that no later
    // read can find the file replaced by a newer state's.
    let all: Map<string, AssignedKey> | undefined =
      itemKeys.length === 0 || itemKeys.length > EAGER_FROM ? rowsOf(db) : undefined;
    const everything = () => (all ??= allEntries(path, id));
    return {
      unique: 'library',
      size: Number(meta.get('size')),
      get: (itemKey) => found.get(itemKey) ?? everything().get(itemKey),
      entries: () => everything().entries(),
      duplicates,
    };
  } finally {
    db.close();
  }
}

/** Past this many keys asked for, the whole file is read at once. */
const EAGER_FROM = 1000;

/** Every kept key in the order the assigner had them. */
function rowsOf(db: Db): Map<string, AssignedKey> {
  const rows = db
    .prepare('SELECT item_key, citation_key, source FROM keys ORDER BY pos')
    .raw(true)
    .all() as Array<[string, string, KeySource]>;
  return new Map(rows.map(([k, c, s]) => [k, { citationKey: c, source: s }] as const));
}

function allEntries(path: string, id: KeyCacheId): Map<string, AssignedKey> {
  const db = openIfCurrent(path, id);
  if (!db) {
    throw new ZoteusError('conflict', 'The library changed while its citation keys were read.', {
      retryable: true,
      hint: 'Run the same command again.',
    });
  }
  try {
    return rowsOf(db);
  } finally {
    db.close();
  }
}

/** Keeps a whole library's assignment for `id`; a failure to write only means no cache. */
export function keepKeys(dir: string, id: KeyCacheId, assignment: KeyAssignment): void {
  const path = fileOf(dir, id);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(join(dir, 'citation-keys'), { recursive: true });
    rmSync(tmp, { force: true });
    const Database = loadDatabaseClass();
    const db = new Database(tmp);
    try {
      db.exec(`CREATE TABLE keys (item_key TEXT PRIMARY KEY, pos INTEGER NOT NULL, citation_key TEXT NOT NULL, source TEXT NOT NULL);
               CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);`);
      const put = db.prepare('INSERT INTO keys (item_key, pos, citation_key, source) VALUES (?, ?, ?, ?)');
      const meta = db.prepare('INSERT INTO meta (k, v) VALUES (?, ?)');
      db.transaction(() => {
        let pos = 0;
        for (const [itemKey, k] of assignment.entries()) put.run(itemKey, pos++, k.citationKey, k.source);
        meta.run('size', String(assignment.size));
        meta.run('duplicates', JSON.stringify(assignment.duplicates));
        meta.run('stamp', stamp(id));
      })();
    } finally {
      db.close();
    }
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true });
  }
}
