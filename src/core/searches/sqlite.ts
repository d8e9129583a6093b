/**
 * Saved searches from zotero.sqlite (`savedSearches`, `savedSearchConditions`, with
 * `deletedSearches` for the trash), in the Web API's JSON shape. Read from the file the
 * library's reader reads (the database in place, or its private snapshot while Zotero holds
 * it), read-only, as the desktop's account setting is read (`library/readers/desktop.ts`).
 */
import type { WebApiSearch } from '../library/port.js';
import type { ZoteroSqliteReader } from '../local/index.js';
import { loadDatabaseClass } from '../sqlite-driver.js';

interface SearchRow {
  savedSearchID: number;
  key: string;
  version: number;
  name: string;
  deleted: number;
}

interface ConditionRow {
  savedSearchID: number;
  condition: string;
  operator: string | null;
  value: string | null;
}

/** Conditions whose value names an object: old databases store it as `libraryID_KEY`. */
const KEYED = new Set(['collection', 'savedSearch']);

export async function sqliteSearches(
  sqlite: ZoteroSqliteReader,
  libraryID: number,
): Promise<{ searches: WebApiSearch[]; libraryVersion: number | undefined }> {
  const status = await sqlite.status();
  const file = status.mode === 'snapshot' ? (status.snapshotPath ?? status.source) : status.source;
  const libraryVersion = await sqlite.libraryVersion(libraryID);
  const Database = loadDatabaseClass();
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 100 });
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'savedSearches'")
      .get();
    if (!table) return { searches: [], libraryVersion };
    const trash = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'deletedSearches'")
      .get();
    const rows = db
      .prepare(
        `SELECT s.savedSearchID AS savedSearchID, s.key AS key, s.version AS version,
                s.savedSearchName AS name, ${trash ? '(d.savedSearchID IS NOT NULL)' : '0'} AS deleted
           FROM savedSearches s
           ${trash ? 'LEFT JOIN deletedSearches d ON d.savedSearchID = s.savedSearchID' : ''}
          WHERE s.libraryID = ?`,
      )
      .all(libraryID) as SearchRow[];
    const conditions = db
      .prepare(
        `SELECT c.savedSearchID AS savedSearchID, c.condition AS condition, c.operator AS operator,
                c.value AS value
           FROM savedSearchConditions c JOIN savedSearches s ON s.savedSearchID = c.savedSearchID
          WHERE s.libraryID = ?
          ORDER BY c.savedSearchID, c.searchConditionID`,
      )
      .all(libraryID) as ConditionRow[];
    const byId = new Map<number, WebApiSearch['data']['conditions']>();
    for (const c of conditions) {
      const list = byId.get(c.savedSearchID) ?? [];
      let value = c.value === null ? '' : String(c.value);
      if (KEYED.has(c.condition.split('/')[0] as string)) value = value.replace(/^\d+_/, '');
      list.push({ condition: c.condition, operator: c.operator ?? '', value });
      byId.set(c.savedSearchID, list);
    }
    const searches = rows.map((r): WebApiSearch => {
      const data: WebApiSearch['data'] = {
        key: r.key,
        version: r.version,
        name: r.name,
        conditions: byId.get(r.savedSearchID) ?? [],
      };
      if (r.deleted) data.deleted = true;
      return { key: r.key, version: r.version, data };
    });
    return { searches, libraryVersion };
  } finally {
    db.close();
  }
}
