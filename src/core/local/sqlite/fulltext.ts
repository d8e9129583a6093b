/**
 * Full-text queries of the zotero.sqlite reader: the index state of attachments (with the
 * `.zotero-ft-cache` text Zotero extracted), and the items whose indexed words contain a word.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from './connection.js';
import type { DbContext } from './hydrate.js';
import { existingItemId, libraryOf } from './libraries.js';
import { fold } from './text.js';
import type { FulltextInfo } from './types.js';

/**
 * Zotero's full-text index (`fulltextWords`, `fulltextItemWords`): the words are loaded
 * folded once per snapshot, and a query word finds the items of every word containing it.
 * The word table is shared by all libraries; callers keep only their library's items.
 */
export class FulltextWords {
  private readonly ids: number[] = [];
  private readonly words: string[] = [];
  private readonly cache = new Map<string, Set<number>>();

  constructor(private readonly ctx: DbContext) {
    const rows = ctx.stmt('SELECT wordID, word FROM fulltextWords').iterate() as Iterable<{
      wordID: number;
      word: string | null;
    }>;
    for (const r of rows) {
      if (!r.word) continue;
      this.ids.push(r.wordID);
      this.words.push(fold(r.word));
    }
  }

  itemsWith(word: string): Set<number> {
    let items = this.cache.get(word);
    if (items) return items;
    const matching: number[] = [];
    for (let i = 0; i < this.words.length; i++)
      if (this.words[i]!.includes(word)) matching.push(this.ids[i]!);
    items = new Set(
      matching.length === 0
        ? []
        : (
            this.ctx
              .stmt(
                'SELECT DISTINCT itemID FROM fulltextItemWords WHERE wordID IN (SELECT value FROM json_each(?))',
              )
              .all(JSON.stringify(matching)) as Array<{ itemID: number }>
          ).map((r) => r.itemID),
    );
    this.cache.set(word, items);
    return items;
  }
}

/** Full-text index state of an attachment, or of each attachment of a regular item. */
export function fulltextInfo(
  conn: Connection,
  libraryID: number,
  key: string,
  options: { content?: boolean },
): FulltextInfo[] {
  libraryOf(conn, libraryID);
  const item = existingItemId(conn, libraryID, key);
  const rows = conn.ctx
    .stmt(
      `SELECT i.key, p.key AS parentKey, a.contentType, f.indexedPages, f.totalPages, f.indexedChars,
         f.totalChars, f.version
       FROM itemAttachments a JOIN items i ON i.itemID = a.itemID
       LEFT JOIN items p ON p.itemID = a.parentItemID
       LEFT JOIN fulltextItems f ON f.itemID = a.itemID
       WHERE i.libraryID = @lib AND (a.itemID = @item OR a.parentItemID = @item)
         AND a.itemID NOT IN (SELECT itemID FROM deletedItems)
       ORDER BY i.dateAdded, i.itemID`,
    )
    .all({ lib: libraryID, item }) as Array<{
    key: string;
    parentKey: string | null;
    contentType: string | null;
    indexedPages: number | null;
    totalPages: number | null;
    indexedChars: number | null;
    totalChars: number | null;
    version: number | null;
  }>;
  return rows.map((r) => {
    const cacheFile = join(conn.dataDir, 'storage', r.key, '.zotero-ft-cache');
    const exists = existsSync(cacheFile);
    const info: FulltextInfo = {
      key: r.key,
      parentItem: r.parentKey ?? undefined,
      contentType: r.contentType,
      indexedPages: r.indexedPages,
      totalPages: r.totalPages,
      indexedChars: r.indexedChars,
      totalChars: r.totalChars,
      version: r.version ?? 0,
      cacheFile: exists ? cacheFile : null,
    };
    if (options.content && exists) info.content = readFileSync(cacheFile, 'utf8');
    return info;
  });
}

/** Keys of the library's items whose words in Zotero's full-text index contain `word` (folded). */
export function fulltextKeys(conn: Connection, libraryID: number, word: string): string[] {
  libraryOf(conn, libraryID);
  const ctx = conn.ctx;
  if (!ctx.tables.has('fulltextWords')) return [];
  conn.fulltext ??= new FulltextWords(ctx);
  const ids = [...conn.fulltext.itemsWith(word)];
  if (ids.length === 0) return [];
  return ctx
    .stmt('SELECT key FROM items WHERE libraryID = ? AND itemID IN (SELECT value FROM json_each(?))')
    .pluck()
    .all(libraryID, JSON.stringify(ids)) as string[];
}
