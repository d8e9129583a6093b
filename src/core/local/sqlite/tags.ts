/** Tag queries of the zotero.sqlite reader: every tag of a library with how many items carry it. */
import type { Connection } from './connection.js';
import { tagCounts } from './counts.js';
import { libraryOf } from './libraries.js';
import type { TagEntry } from './types.js';

export function tags(conn: Connection, libraryID: number, options: { includeTrashed?: boolean }): TagEntry[] {
  const counts = new Map<string, { tag: string; type: number; numItems: number }>();
  const count = (tag: string, type: number) => {
    const k = `${type}\u0000${tag}`;
    const entry = counts.get(k);
    if (entry) entry.numItems++;
    else counts.set(k, { tag, type, numItems: 1 });
  };
  libraryOf(conn, libraryID);
  const table = conn.indexes.get(libraryID);
  if (table) {
    for (const row of table.rows) {
      if (row.deleted && !options.includeTrashed) continue;
      for (const t of row.tags) count(t.tag, t.type);
    }
  } else {
    // No listing built the in-memory table yet: the tags and the trash alone are read.
    for (const [tag, type, numItems] of tagCounts(conn, libraryID, options))
      counts.set(`${type}\u0000${tag}`, { tag, type, numItems });
  }
  return [...counts.values()]
    .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.type - b.type))
    .map((e) => ({ tag: e.tag, meta: { type: e.type, numItems: e.numItems } }));
}
