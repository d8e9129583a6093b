/**
 * The libraries of a zotero.sqlite: read once per connection (the user library and the synced
 * groups), looked up by libraryID or by Web API id; each library's in-memory table; an item's
 * id by key.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { toolRef } from '../../call/refs.js';
import { ZoteusError } from '../../errors.js';
import type { Connection } from './connection.js';
import { LibraryIndex } from './library-index.js';
import type { LocalLibrary, WebApiLibrary } from './types.js';

/** The libraries and their Web API `library` objects, by libraryID. */
export function readLibraries(
  db: BetterSqlite3.Database,
  tables: ReadonlySet<string>,
): { libraries: Map<number, LocalLibrary>; libraryJson: Map<number, WebApiLibrary> } {
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
  return { libraries, libraryJson };
}

/** The library with this libraryID; not_found when the database has none. */
export function libraryOf(conn: Connection, libraryID: number): LocalLibrary {
  const lib = conn.libraries.get(libraryID);
  if (!lib) {
    throw new ZoteusError('not_found', `No library ${libraryID} in the Zotero database.`, {
      field: 'library',
      hint: `${toolRef('zotero_groups')} lists the groups this Zotero has synced; the user library is the default.`,
    });
  }
  return lib;
}

/** The libraryID of the user library, or of the group with this Web API group id. */
export function libraryIdFor(
  conn: Connection,
  ref: { type: 'user' } | { type: 'group'; groupID: number },
): number {
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

/** The itemID of the item with this key in the library, if any. */
export function itemId(conn: Connection, libraryID: number, key: string): number | undefined {
  const row = conn.ctx
    .stmt('SELECT itemID FROM items WHERE libraryID = ? AND key = ?')
    .get(libraryID, key) as { itemID: number } | undefined;
  return row?.itemID;
}

/**
 * The libraries (libraryIDs) that hold an item of each of these keys, trashed items included,
 * to say where a key that one library lacks is. One indexed query per library and 500 keys.
 */
export function librariesOfKeys(conn: Connection, keys: readonly string[]): Map<string, number[]> {
  const found = new Map<string, number[]>();
  const unique = [...new Set(keys)];
  for (const libraryID of [...conn.libraries.keys()].sort((a, b) => a - b)) {
    for (let i = 0; i < unique.length; i += 500) {
      const part = unique.slice(i, i + 500);
      const held = conn.ctx
        .stmt(`SELECT key FROM items WHERE libraryID = ? AND key IN (${part.map(() => '?').join(', ')})`)
        .pluck()
        .all(libraryID, ...part) as string[];
      for (const key of held) found.set(key, [...(found.get(key) ?? []), libraryID]);
    }
  }
  return found;
}

/** The item of this key; not_found when the library has none. */
export function existingItemId(conn: Connection, libraryID: number, key: string): number {
  const id = itemId(conn, libraryID, key);
  if (id === undefined)
    throw new ZoteusError('not_found', `No item ${key} in this library.`, { field: 'key' });
  return id;
}

/** The in-memory table of a library's items (built on first use, per connection). */
export function tableOf(conn: Connection, libraryID: number): LibraryIndex {
  libraryOf(conn, libraryID);
  let index = conn.indexes.get(libraryID);
  if (!index) conn.indexes.set(libraryID, (index = new LibraryIndex(conn.ctx, libraryID)));
  return index;
}

/**
 * How to walk a library's items when every one of them is read (its signatures, its counts by
 * type, its citation keys, its export listing): in table order (`NOT INDEXED`) when the
 * library holds most of the database's items, else by the (libraryID, key) index. Without
 * statistics SQLite takes the index for `libraryID = ?`, and then fetches each row by its
 * itemID in key order: a random page for each item, past the page cache once the table is
 * larger than it, and each item's fields and creators (stored by item id) at random too, so
 * those reads grew faster than the library (signatures 2.7 s instead of 1.0 s at 139,000
 * items; the citation keys 6.8 s instead of 2.5 s at 250,000). A database of one library (no
 * group, no feed) is walked in table order without counting; else the counts, read from the
 * indexes, decide, once per connection.
 */
export function walkItems(conn: Connection, libraryID: number): 'NOT INDEXED' | '' {
  const known = conn.walks.get(libraryID);
  if (known !== undefined) return known;
  const ctx = conn.ctx;
  let walk: 'NOT INDEXED' | '' = 'NOT INDEXED';
  if ((ctx.stmt('SELECT count(*) FROM libraries').pluck().get() as number) > 1) {
    const own = ctx.stmt('SELECT count(*) FROM items WHERE libraryID = ?').pluck().get(libraryID) as number;
    const all = ctx.stmt('SELECT count(*) FROM items').pluck().get() as number;
    walk = own * 2 >= all ? 'NOT INDEXED' : '';
  }
  conn.walks.set(libraryID, walk);
  return walk;
}
