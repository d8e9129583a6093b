/** Shared set-up of the zotero.sqlite reader tests: temp dirs and sample databases. */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

export function tempDir(prefix = 'zotero-sqlite-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Hash and mtime of a file (and whether it exists): "the reader never wrote here". */
export function fileState(path: string): string {
  try {
    const s = statSync(path);
    return `${createHash('sha256').update(readFileSync(path)).digest('hex')}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'absent';
  }
}

/** Changes an item's title the way Zotero stores it (`itemData` → `itemDataValues`), by field name. */
export function retitle(db: BetterSqlite3.Database, libraryID: number, key: string, title: string): void {
  const fieldID = db.prepare("SELECT fieldID FROM fields WHERE fieldName = 'title'").pluck().get() as number;
  const itemID = db
    .prepare('SELECT itemID FROM items WHERE libraryID = ? AND key = ?')
    .pluck()
    .get(libraryID, key) as number;
  db.transaction(() => {
    db.prepare('INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)').run(title);
    const valueID = db
      .prepare('SELECT valueID FROM itemDataValues WHERE value = ?')
      .pluck()
      .get(title) as number;
    db.prepare('INSERT OR REPLACE INTO itemData (itemID, fieldID, valueID) VALUES (?, ?, ?)').run(
      itemID,
      fieldID,
      valueID,
    );
    db.prepare(
      "UPDATE items SET dateModified = '2030-01-01 00:00:00', version = version + 1 WHERE itemID = ?",
    ).run(itemID);
  })();
}

export async function sqlite(): Promise<typeof BetterSqlite3> {
  return (await import('better-sqlite3')).default;
}
