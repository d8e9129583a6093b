/**
 * Collection queries of the zotero.sqlite reader: the collections of a library (trashed ones
 * only when asked), in the order the collection tools show, and item counts for some of them.
 */
import { ZoteusError } from '../../errors.js';
import { byNameThenKey } from '../../text-order.js';
import type { Connection } from './connection.js';
import { collectionJson, collectionRows, countMembers } from './hydrate.js';
import { libraryOf } from './libraries.js';
import type { CollectionListOptions, WebApiCollection } from './types.js';

export function collections(
  conn: Connection,
  libraryID: number,
  options: CollectionListOptions,
): WebApiCollection[] {
  libraryOf(conn, libraryID);
  // Named keys read only what they need, unless a parent must be found among them all.
  const all = collectionRows(conn.ctx, libraryID, options.parentKey === undefined ? options.keys : undefined);
  let rows = options.includeTrashed ? all : all.filter((r) => !r.deleted);
  if (options.keys) {
    const keys = new Set(options.keys);
    rows = rows.filter((r) => keys.has(r.key));
  }
  if (options.top) rows = rows.filter((r) => r.parentID === null);
  if (options.parentKey !== undefined) {
    const parent = all.find((r) => r.key === options.parentKey);
    if (!parent) throw new ZoteusError('not_found', `No collection ${options.parentKey} in this library.`);
    rows = rows.filter((r) => r.parentID === parent.collectionID);
  }
  // The order the collection tools show: the rows come from SQLite already close to it, so
  // this sort and theirs walk a nearly sorted list.
  rows.sort(byNameThenKey);
  return collectionJson(conn.ctx, libraryID, rows, all, { counts: options.counts !== false });
}

/** Items not in the trash in each collection these keys name, by key (no entry: no such collection). */
export function collectionItemCounts(
  conn: Connection,
  libraryID: number,
  keys: readonly string[],
): Map<string, number> {
  libraryOf(conn, libraryID);
  return countMembers(conn.ctx, libraryID, keys);
}
