/** Tag queries of the zotero.sqlite reader: every tag of a library with how many items carry it. */
import type { Connection } from './connection.js';
import { tableOf } from './libraries.js';
import type { TagEntry } from './types.js';

export function tags(conn: Connection, libraryID: number, options: { includeTrashed?: boolean }): TagEntry[] {
  const index = tableOf(conn, libraryID);
  const counts = new Map<string, { tag: string; type: number; numItems: number }>();
  for (const row of index.rows) {
    if (row.deleted && !options.includeTrashed) continue;
    for (const t of row.tags) {
      const k = `${t.type}\u0000${t.tag}`;
      const entry = counts.get(k);
      if (entry) entry.numItems++;
      else counts.set(k, { tag: t.tag, type: t.type, numItems: 1 });
    }
  }
  return [...counts.values()]
    .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.type - b.type))
    .map((e) => ({ tag: e.tag, meta: { type: e.type, numItems: e.numItems } }));
}
