/**
 * What a search index compares to know what to re-read (search-index/): a signature of every
 * item's state, and aggregates that change whenever the library's items do. Cheap reads, never
 * through the in-memory table.
 */
import type { Connection } from './connection.js';
import { libraryOf, walkItems } from './libraries.js';

/** Where an index last looked: items modified (locally or in sync) or versioned after it. */
export interface ChangedSince {
  clientDateModified: string;
  dateModified: string;
  version: number;
}

export interface ItemStats {
  count: number;
  idSum: number;
  maxClientDateModified: string;
  maxDateModified: string;
  maxVersion: number;
  trashed: number;
}

export function itemStats(conn: Connection, libraryID: number): ItemStats {
  libraryOf(conn, libraryID);
  // CROSS JOIN: the trash is the outer loop, not every item of the library.
  const row = conn.ctx
    .stmt(
      `SELECT count(*), total(itemID), ifnull(max(clientDateModified), ''), ifnull(max(dateModified), ''),
         ifnull(max(version), 0),
         (SELECT count(*) FROM deletedItems d CROSS JOIN items t ON t.itemID = d.itemID WHERE t.libraryID = @lib)
       FROM items ${walkItems(conn, libraryID)} WHERE libraryID = @lib`,
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
}

export function signatures(
  conn: Connection,
  libraryID: number,
  options: { changedSince?: ChangedSince; trashed?: boolean },
): { signatures: Map<string, string>; ids: Map<string, number> } {
  libraryOf(conn, libraryID);
  const since = options.changedSince;
  const ctx = conn.ctx;
  const fulltext = ctx.tables.has('fulltextItems') ? `LEFT JOIN fulltextItems f ON f.itemID = i.itemID` : '';
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
       FROM items i ${walkItems(conn, libraryID)}
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
}
