/**
 * Zotero desktop's own retraction flags: the `retractedItems` table of zotero.sqlite
 * (`itemID`, `data` JSON `{date, reasons, urls, retractionDOI…}` from Zotero's Retraction Watch
 * feed, `flag` 0 normal, 1 hidden by the user, 2 no citation warning). Read beside the desktop
 * reader, on the file it reads (the database, or its private snapshot while Zotero holds it),
 * read-only. Only when the library's reads go to the desktop; otherwise there is nothing to read.
 */
import { loadDatabaseClass } from '../sqlite-driver.js';
import type { Deps } from '../tool.js';

export interface ZoteroRetraction {
  key: string;
  date: string | undefined;
  noticeDoi: string | undefined;
  urls: string[];
  reasons: string[];
  /** Zotero's flag: 0 shown, 1 hidden by the user, 2 no citation warning. */
  flag: number;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function parseData(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string') return {};
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * The flags Zotero keeps for `keys` of the desktop library `libraryID` (by item key), or
 * undefined with the reason when the desktop's database cannot be read for it.
 */
export async function zoteroRetractions(
  deps: Deps,
  libraryID: number,
  keys: readonly string[],
): Promise<{ flags: Map<string, ZoteroRetraction> } | { flags?: undefined; reason: string }> {
  const { desktop } = await import('../library/readers/desktop.js');
  const state = await (await desktop(deps)).state();
  const reader = state.sqlite.reader;
  if (!state.sqlite.available || !reader) return { reason: 'the desktop’s zotero.sqlite is not available' };
  const status = await reader.status();
  const file = status.mode === 'snapshot' ? status.snapshotPath : status.source;
  if (!file) return { reason: 'the desktop’s zotero.sqlite is not available' };
  const Database = loadDatabaseClass();
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 100 });
  const flags = new Map<string, ZoteroRetraction>();
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'retractedItems'")
      .get();
    if (!table) return { reason: 'this zotero.sqlite has no retractedItems table' };
    const wanted = new Set(keys);
    const rows = db
      .prepare(
        `SELECT i.key AS key, r.data AS data, r.flag AS flag
           FROM retractedItems r JOIN items i ON i.itemID = r.itemID
          WHERE i.libraryID = ?
            AND i.itemID NOT IN (SELECT itemID FROM deletedItems)`,
      )
      .all(libraryID) as Array<{ key: string; data: unknown; flag: unknown }>;
    for (const row of rows) {
      if (!wanted.has(row.key)) continue;
      const data = parseData(row.data);
      const noticeDoi = [data.retractionDOI, data.doi].find((d): d is string => typeof d === 'string');
      flags.set(row.key, {
        key: row.key,
        date: typeof data.date === 'string' ? data.date : undefined,
        noticeDoi: noticeDoi?.toLowerCase(),
        urls: strings(data.urls),
        reasons: strings(data.reasons),
        flag: typeof row.flag === 'number' ? row.flag : 0,
      });
    }
  } finally {
    db.close();
  }
  return { flags };
}
