/**
 * 100 changes made to a zotero.sqlite the way Zotero makes them (what a sync or the desktop app
 * leaves behind), as `bench/search-index.bench-run.ts` makes them: 60 titles edited through
 * itemDataValues/itemData, a new tag on 20 items, 10 items trashed through deletedItems, 10
 * erased with their children (each key logged in syncDeleteLog); each edited item gets a new
 * clientDateModified and synced = 0. One transaction, on a connection of its own, closed after.
 */
import { loadDatabaseClass } from '../../src/core/sqlite-driver.js';
import { createRng } from '../../src/demo/fixture/random.js';

type Db = InstanceType<ReturnType<typeof loadDatabaseClass>>;
type Row = { itemID: number; key: string };

/** A word no generated text holds: the 60 edited titles carry it afterwards. */
export const TITLE_MARK = 'zscalerevised';
/** The tag the 20 tagged items carry afterwards. */
export const ADDED_TAG = 'scale bench added tag';

export interface Changed {
  titles: Row[];
  tagged: Row[];
  trashed: Row[];
  erased: Row[];
  /** Keys of every row the erasures removed (the 10 items and their notes, attachments, annotations). */
  erasedRows: string[];
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, Zotero's timestamp format. */
const sqlNow = () => new Date().toISOString().slice(0, 19).replace('T', ' ');

/**
 * Distinct top-level regular items of the user library (not in the trash) with a title,
 * shuffled with a fixed seed so every run changes the same ones. One pass over the items
 * (anti-joins, no per-row subquery), as the database holds them.
 */
function pickItems(db: Db, libraryID: number, counts: number[], seed: number): Row[][] {
  const rows = db
    .prepare(
      `SELECT i.itemID, i.key FROM items i
       WHERE i.libraryID = ?
         AND i.itemID NOT IN (SELECT itemID FROM deletedItems)
         AND i.itemID NOT IN (SELECT itemID FROM itemNotes)
         AND i.itemID NOT IN (SELECT itemID FROM itemAttachments)
         AND i.itemID NOT IN (SELECT itemID FROM itemAnnotations)
         AND EXISTS (SELECT 1 FROM itemData d JOIN fields f ON f.fieldID = d.fieldID
                     WHERE d.itemID = i.itemID AND f.fieldName = 'title')
       ORDER BY i.itemID`,
    )
    .all(libraryID) as Row[];
  const shuffled = createRng(seed).shuffle(rows);
  const out: Row[][] = [];
  let at = 0;
  for (const n of counts) {
    out.push(shuffled.slice(at, at + n));
    at += n;
  }
  return out;
}

/** An item's title, edited as Zotero saves a field: a value row (reused when it exists), then itemData. */
function editTitles(db: Db, items: readonly Row[], now: string): void {
  const titleField = db
    .prepare("SELECT fieldID FROM fields WHERE fieldName = 'title'")
    .pluck()
    .get() as number;
  const current = db
    .prepare(
      'SELECT v.value FROM itemData d JOIN itemDataValues v ON v.valueID = d.valueID WHERE d.itemID = ? AND d.fieldID = ?',
    )
    .pluck();
  const valueOf = db.prepare('SELECT valueID FROM itemDataValues WHERE value = ?').pluck();
  const nextValue = db.prepare('SELECT ifnull(max(valueID), 0) + 1 FROM itemDataValues').pluck();
  const addValue = db.prepare('INSERT INTO itemDataValues (valueID, value) VALUES (?, ?)');
  const setData = db.prepare('UPDATE itemData SET valueID = ? WHERE itemID = ? AND fieldID = ?');
  const touch = db.prepare(
    'UPDATE items SET dateModified = ?, clientDateModified = ?, synced = 0 WHERE itemID = ?',
  );
  for (const { itemID } of items) {
    const title = `${current.get(itemID, titleField) as string} (${TITLE_MARK})`;
    let valueID = valueOf.get(title) as number | undefined;
    if (valueID === undefined) {
      valueID = nextValue.get() as number;
      addValue.run(valueID, title);
    }
    setData.run(valueID, itemID, titleField);
    touch.run(now, now, itemID);
  }
}

/** Makes the 100 changes in the user library of the zotero.sqlite at `path`. */
export function zoteroChanges(path: string, seed = 8): Changed {
  const Database = loadDatabaseClass();
  const db = new Database(path);
  try {
    const libraryID = db
      .prepare("SELECT libraryID FROM libraries WHERE type = 'user'")
      .pluck()
      .get() as number;
    const [titles, tagged, trashed, erased] = pickItems(db, libraryID, [60, 20, 10, 10], seed) as [
      Row[],
      Row[],
      Row[],
      Row[],
    ];
    const now = sqlNow();
    let erasedRows: string[] = [];
    db.transaction(() => {
      editTitles(db, titles, now);

      // A tag: its row in `tags` (new name, next id), the link, and the item saved.
      const nextTag = db.prepare('SELECT ifnull(max(tagID), 0) + 1 FROM tags').pluck().get() as number;
      db.prepare('INSERT INTO tags (tagID, name) VALUES (?, ?)').run(nextTag, ADDED_TAG);
      const link = db.prepare('INSERT INTO itemTags (itemID, tagID, type) VALUES (?, ?, 0)');
      const save = db.prepare(
        'UPDATE items SET dateModified = ?, clientDateModified = ?, synced = 0 WHERE itemID = ?',
      );
      for (const { itemID } of tagged) {
        link.run(itemID, nextTag);
        save.run(now, now, itemID);
      }

      // The trash: a row in deletedItems; Zotero marks the item unsynced without a new dateModified.
      const trash = db.prepare('INSERT INTO deletedItems (itemID, dateDeleted) VALUES (?, ?)');
      const unsynced = db.prepare('UPDATE items SET clientDateModified = ?, synced = 0 WHERE itemID = ?');
      for (const { itemID } of trashed) {
        trash.run(itemID, now);
        unsynced.run(now, itemID);
      }

      // Erasing: the item with its child notes and attachments and their annotations, from every
      // table keyed by itemID, each key logged for the next sync.
      const ids = new Set(erased.map((i) => i.itemID));
      for (let depth = 0; depth < 2; depth++) {
        const parents = JSON.stringify([...ids]);
        for (const table of ['itemNotes', 'itemAttachments', 'itemAnnotations']) {
          for (const id of db
            .prepare(`SELECT itemID FROM ${table} WHERE parentItemID IN (SELECT value FROM json_each(?))`)
            .pluck()
            .all(parents) as number[])
            ids.add(id);
        }
      }
      const list = JSON.stringify([...ids]);
      erasedRows = db
        .prepare('SELECT key FROM items WHERE itemID IN (SELECT value FROM json_each(?))')
        .pluck()
        .all(list) as string[];
      const itemType = db
        .prepare("SELECT syncObjectTypeID FROM syncObjectTypes WHERE name = 'item'")
        .pluck()
        .get();
      const log = db.prepare(
        'INSERT OR REPLACE INTO syncDeleteLog (syncObjectTypeID, libraryID, key, dateDeleted) VALUES (?, ?, ?, ?)',
      );
      for (const key of erasedRows) log.run(itemType, libraryID, key, now);
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .pluck()
        .all() as string[];
      for (const table of tables) {
        const columns = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[];
        if (columns.includes('itemID'))
          db.prepare(`DELETE FROM "${table}" WHERE itemID IN (SELECT value FROM json_each(?))`).run(list);
      }
    })();
    return { titles, tagged, trashed, erased, erasedRows };
  } finally {
    db.close();
  }
}
