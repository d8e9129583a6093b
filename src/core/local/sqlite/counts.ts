/**
 * What `zotero_stats` and the tag list count, read from zotero.sqlite in a few small queries
 * (each item's type and parent, the trash, the tags) instead of the in-memory table listings
 * use: that table reads every title, date, creator and collection of the library first. The
 * parents and the trash are walked as the table walks them (library-index.ts), so the numbers
 * are the ones its filters give.
 */
import type { Connection } from './connection.js';
import { jsonRows } from './hydrate.js';
import { libraryOf } from './libraries.js';

export interface ItemCounts {
  /** Items not in the trash, children included. */
  total: number;
  /** Per item type, items not in the trash, most frequent first (then by name). */
  byType: Record<string, number>;
  /** Top-level items not in the trash. */
  topLevel: number;
  /** Items in the trash, or under a trashed parent. */
  trash: number;
}

/**
 * What a connection keeps of a library once counted (a changed database is a new connection):
 * the counts and the trash, not the items and parents they were made from.
 */
export interface TrashState {
  counts: ItemCounts;
  /** Items in the trash themselves or under a trashed parent (up to eight levels up). */
  deleted: Set<number>;
}

function trashState(conn: Connection, libraryID: number): TrashState {
  libraryOf(conn, libraryID);
  const known = conn.trash.get(libraryID);
  if (known) return known;
  const { ctx } = conn;
  const types = new Map<number, number>();
  const parents = new Map<number, number>();
  // One JSON text per query (jsonRows): a row at a time through the driver costs more than the rest.
  for (const [itemID, itemTypeID] of jsonRows<[number, number]>(
    ctx,
    'SELECT json_group_array(json_array(itemID, itemTypeID)) FROM items WHERE libraryID = ?',
    libraryID,
  ))
    types.set(itemID, itemTypeID);
  // As the table reads them: a later table's parent wins (an attachment's note is in itemNotes too).
  for (const table of ['itemNotes', 'itemAttachments', 'itemAnnotations']) {
    if (!ctx.tables.has(table)) continue;
    for (const [itemID, parentID] of jsonRows<[number, number]>(
      ctx,
      `SELECT json_group_array(json_array(c.itemID, c.parentItemID)) FROM ${table} c
       JOIN items i ON i.itemID = c.itemID WHERE i.libraryID = ? AND c.parentItemID IS NOT NULL`,
      libraryID,
    ))
      parents.set(itemID, parentID);
  }
  const own = new Set(ctx.stmt('SELECT itemID FROM deletedItems').pluck().all() as number[]);
  const deleted = new Set<number>();
  for (const itemID of types.keys()) {
    let gone = own.has(itemID);
    let cur = itemID;
    for (let depth = 0; !gone && depth < 8; depth++) {
      const parent = parents.get(cur);
      if (parent === undefined || !types.has(parent)) break;
      if (own.has(parent)) gone = true;
      cur = parent;
    }
    if (gone) deleted.add(itemID);
  }
  const state = { counts: countsOf(conn, types, parents, deleted), deleted };
  conn.trash.set(libraryID, state);
  return state;
}

export function itemCounts(conn: Connection, libraryID: number): ItemCounts {
  const { counts } = trashState(conn, libraryID);
  // A copy: the kept counts are not the caller's to change.
  return { ...counts, byType: { ...counts.byType } };
}

function countsOf(
  conn: Connection,
  types: ReadonlyMap<number, number>,
  parents: ReadonlyMap<number, number>,
  deleted: ReadonlySet<number>,
): ItemCounts {
  const byTypeId = new Map<number, number>();
  let total = 0;
  let topLevel = 0;
  for (const [itemID, itemTypeID] of types) {
    if (deleted.has(itemID)) continue;
    total++;
    if (!parents.has(itemID)) topLevel++;
    byTypeId.set(itemTypeID, (byTypeId.get(itemTypeID) ?? 0) + 1);
  }
  const named = [...byTypeId].map(
    ([id, n]) => [conn.ctx.schema.itemTypeName(id) ?? `unknown:${id}`, n] as [string, number],
  );
  named.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return { total, byType: Object.fromEntries(named), topLevel, trash: deleted.size };
}

/**
 * Each tag (name and type) of the library with how many items carry it: of the items not in
 * the trash, or of all. Counted by the database, the trashed items left out by id.
 */
export function tagCounts(
  conn: Connection,
  libraryID: number,
  options: { includeTrashed?: boolean | undefined },
): Array<[tag: string, type: number, numItems: number]> {
  const skip = options.includeTrashed ? [] : [...trashState(conn, libraryID).deleted];
  return jsonRows<[string, number, number]>(
    conn.ctx,
    `SELECT json_group_array(json_array(t.name, g.type, g.n)) FROM (
       SELECT it.tagID, it.type, count(*) AS n FROM itemTags it JOIN items i ON i.itemID = it.itemID
       WHERE i.libraryID = ? AND it.itemID NOT IN (SELECT value FROM json_each(?))
       GROUP BY it.tagID, it.type) g JOIN tags t ON t.tagID = g.tagID`,
    libraryID,
    JSON.stringify(skip),
  );
}
