/**
 * Item queries of the zotero.sqlite reader: listings and searches over a library's in-memory
 * table (library-index.ts), one item, its children, items by key, and the cheap counts. Every
 * query is filtered by libraryID; trashed items are left out unless asked for; child notes,
 * attachments and annotations are children, never top-level items.
 */
import type { Connection } from './connection.js';
import { FulltextWords } from './fulltext.js';
import { hydrateItems } from './hydrate.js';
import { existingItemId, itemId, libraryOf, tableOf } from './libraries.js';
import type { IndexRow } from './library-index.js';
import { queryWords } from './text.js';
import type { ItemListOptions, ItemListResult, SearchOptions, WebApiItem } from './types.js';

function page(conn: Connection, rows: IndexRow[], options: ItemListOptions): ItemListResult {
  const start = Math.max(0, options.start ?? 0);
  const end = options.limit === undefined ? rows.length : start + Math.max(0, options.limit);
  const ids = rows.slice(start, end).map((r) => r.itemID);
  return { items: hydrateItems(conn.ctx, ids), totalResults: rows.length };
}

export function items(conn: Connection, libraryID: number, options: ItemListOptions): ItemListResult {
  const index = tableOf(conn, libraryID);
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
  return page(conn, rows, options);
}

export function item(conn: Connection, libraryID: number, key: string): WebApiItem | undefined {
  libraryOf(conn, libraryID);
  const id = itemId(conn, libraryID, key);
  return id === undefined ? undefined : hydrateItems(conn.ctx, [id])[0];
}

export function children(
  conn: Connection,
  libraryID: number,
  key: string,
  options: { includeTrashed?: boolean },
): WebApiItem[] {
  libraryOf(conn, libraryID);
  const parent = existingItemId(conn, libraryID, key);
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
      .all({ parent, lib: libraryID }) as Array<{ itemID: number }>
  ).map((r) => r.itemID);
  return hydrateItems(conn.ctx, ids);
}

export function searchItems(conn: Connection, libraryID: number, options: SearchOptions): ItemListResult {
  const index = tableOf(conn, libraryID);
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
  return page(conn, rows, options);
}

// ---- index-facing reads: cheap, never through the in-memory table ----

export function itemCount(conn: Connection, libraryID: number): number {
  libraryOf(conn, libraryID);
  return conn.ctx.stmt('SELECT count(*) FROM items WHERE libraryID = ?').pluck().get(libraryID) as number;
}

export function itemKeys(conn: Connection, libraryID: number): string[] {
  libraryOf(conn, libraryID);
  return conn.ctx.stmt('SELECT key FROM items WHERE libraryID = ?').pluck().all(libraryID) as string[];
}

export function itemsByKeys(conn: Connection, libraryID: number, keys: readonly string[]): WebApiItem[] {
  libraryOf(conn, libraryID);
  const rows = conn.ctx
    .stmt('SELECT key, itemID FROM items WHERE libraryID = ? AND key IN (SELECT value FROM json_each(?))')
    .raw()
    .all(libraryID, JSON.stringify(keys)) as Array<[string, number]>;
  const byKey = new Map(rows);
  const ids = keys.map((k) => byKey.get(k)).filter((id): id is number => id !== undefined);
  return hydrateItems(conn.ctx, ids);
}
