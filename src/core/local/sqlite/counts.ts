/**
 * What `zotero_stats` and the tag list count, read from zotero.sqlite in a few aggregate
 * queries (items by type, items with a parent, the trash, the tags) instead of the in-memory
 * table listings use: that table reads every title, date, creator and collection of the
 * library first. Parents and the trash follow the table's rules (library-index.ts), so the
 * numbers are the ones its filters give.
 */
import type { Connection } from './connection.js';
import { jsonRows } from './hydrate.js';
import { libraryOf, walkItems } from './libraries.js';

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

/** The tables whose rows give a child item its parent, in the order the table reads them. */
const CHILD_TABLES = ['itemNotes', 'itemAttachments', 'itemAnnotations'] as const;

/** A later table's parent wins (an attachment's note is in itemNotes too): SQL for the one that counts. */
function parentOf(tables: readonly string[], item: string): { joins: string; parent: string } {
  const joins = tables.map((t, i) => `LEFT JOIN ${t} c${i} ON c${i}.itemID = ${item}`).join(' ');
  const parents = tables.map((_, i) => `c${i}.parentItemID`).reverse();
  // COALESCE needs two arguments at least.
  return {
    joins,
    parent: `COALESCE(${[...parents, 'NULL', 'NULL'].slice(0, Math.max(2, parents.length)).join(', ')})`,
  };
}

/** `[itemTypeID, count]` of the library's items, or of those of `ids` only. */
function typeCounts(conn: Connection, libraryID: number, ids?: readonly number[]): Map<number, number> {
  const rows = (
    ids
      ? conn.ctx
          .stmt(
            'SELECT itemTypeID, count(*) FROM items WHERE itemID IN (SELECT value FROM json_each(?)) GROUP BY itemTypeID',
          )
          .raw()
          .all(JSON.stringify(ids))
      : conn.ctx
          .stmt(
            `SELECT itemTypeID, count(*) FROM items ${walkItems(conn, libraryID)} WHERE libraryID = ? GROUP BY itemTypeID`,
          )
          .raw()
          .all(libraryID)
  ) as Array<[number, number]>;
  return new Map(rows);
}

/**
 * The trash and the counts in a few aggregate queries: the database counts the items by type
 * and those with a parent; only the trash (items in `deletedItems` and, up to eight levels
 * down, what is under them) is walked, from the trashed items down, a level per query.
 */
function trashState(conn: Connection, libraryID: number): TrashState {
  libraryOf(conn, libraryID);
  const known = conn.trash.get(libraryID);
  if (known) return known;
  const { ctx } = conn;
  const tables = CHILD_TABLES.filter((t) => ctx.tables.has(t));
  const { joins, parent } = parentOf(tables, 'i.itemID');
  // CROSS JOIN (here and below): from the trash to the items, never every item of the library
  // looked up in the trash, which SQLite otherwise picks (5-10 ms at 20,000 items, 0.3 ms so).
  const deleted = new Set(
    ctx
      .stmt(
        'SELECT d.itemID FROM deletedItems d CROSS JOIN items i ON i.itemID = d.itemID WHERE i.libraryID = ?',
      )
      .pluck()
      .all(libraryID) as number[],
  );
  if (tables.length > 0) {
    const candidates = tables
      .map((t) => `SELECT itemID FROM ${t} WHERE parentItemID IN (SELECT value FROM json_each(@frontier))`)
      .join(' UNION ');
    const level = ctx.stmt(
      `SELECT i.itemID FROM (${candidates}) k CROSS JOIN items i ON i.itemID = k.itemID ${joins}
       WHERE i.libraryID = @libraryID AND ${parent} IN (SELECT value FROM json_each(@frontier))`,
    );
    let frontier = [...deleted];
    for (let depth = 0; depth < 8 && frontier.length > 0; depth++) {
      const next: number[] = [];
      for (const id of level.pluck().all({ frontier: JSON.stringify(frontier), libraryID }) as number[]) {
        if (!deleted.has(id)) {
          deleted.add(id);
          next.push(id);
        }
      }
      frontier = next;
    }
  }
  const state = { counts: countsOf(conn, libraryID, tables, deleted), deleted };
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
  libraryID: number,
  tables: readonly string[],
  deleted: ReadonlySet<number>,
): ItemCounts {
  const { ctx } = conn;
  const ids = [...deleted];
  const all = typeCounts(conn, libraryID);
  const gone = typeCounts(conn, libraryID, ids);
  // Items with a parent: each table's rows with one, less those a later table gives one too.
  // CROSS JOIN keeps SQLite from walking every item of the library to look each up in the table.
  const withParent = tables.map(
    (t, k) =>
      `(SELECT count(*) FROM ${t} c CROSS JOIN items i ON i.itemID = c.itemID WHERE c.parentItemID IS NOT NULL AND i.libraryID = ?${tables
        .slice(k + 1)
        .map(
          (later) =>
            ` AND NOT EXISTS (SELECT 1 FROM ${later} l WHERE l.itemID = c.itemID AND l.parentItemID IS NOT NULL)`,
        )
        .join('')})`,
  );
  const children = withParent.length
    ? (ctx
        .stmt(`SELECT ${withParent.join(' + ')}`)
        .pluck()
        .get(...withParent.map(() => libraryID)) as number)
    : 0;
  const { joins, parent } = parentOf(tables, 'i.itemID');
  const trashedTop = ctx
    .stmt(
      `SELECT count(*) FROM items i ${joins} WHERE i.itemID IN (SELECT value FROM json_each(?)) AND ${parent} IS NULL`,
    )
    .pluck()
    .get(JSON.stringify(ids)) as number;
  let everything = 0;
  const named: Array<[string, number]> = [];
  for (const [id, n] of all) {
    everything += n;
    const live = n - (gone.get(id) ?? 0);
    if (live > 0) named.push([ctx.schema.itemTypeName(id) ?? `unknown:${id}`, live]);
  }
  named.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return {
    total: everything - deleted.size,
    byType: Object.fromEntries(named),
    topLevel: everything - children - trashedTop,
    trash: deleted.size,
  };
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
