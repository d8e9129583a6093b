/**
 * `zotero_stats`: counts of a library (items by type, top-level items, notes, attachments,
 * annotations, the trash, collections, tags) and its version, from counting queries on
 * whichever backend the router picks.
 *
 * Items by type without knowing the types: ask for one item with every type found so far
 * excluded (`itemType=-book&itemType=-note…`); its type is the next one, and the drop in
 * `totalResults` from one query to the next is that type's count. One query per type present
 * (plus one), so a library of ten types costs eleven, and types this Zoteus does not know
 * (a newer Zotero's) are counted too. A reader that can count at once (zotero.sqlite:
 * `itemCounts`, a few aggregate queries) is asked that instead.
 */
import type { LibraryArgs } from '../../library/address.js';
import type { ItemQuery, LibraryReader } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { answered, openReader, type Answered } from './common.js';

/** More item types than Zotero has ever had: a guard against a server that ignores the filter. */
const MAX_TYPES = 100;

export interface StatsOutput extends Answered {
  libraryVersion: number | null;
  items: {
    total: number;
    topLevel: number;
    regular: number;
    notes: number;
    attachments: number;
    annotations: number;
    byType: Record<string, number>;
  };
  trash: number;
  collections: number;
  tags: number;
}

/** `limit: 0` asks only for the total (the Web API reader turns it into one `limit=1` request). */
const count = async (reader: LibraryReader, query: ItemQuery): Promise<number> =>
  (await reader.items({ ...query, start: 0, limit: 0 })).totalResults;

async function countByType(
  reader: LibraryReader,
): Promise<{ total: number; byType: Record<string, number> }> {
  const found: Array<[string, number]> = [];
  const excluded: string[] = [];
  let total: number | undefined;
  let remaining: number | undefined;
  let type: string | undefined;
  while (excluded.length <= MAX_TYPES) {
    const probe = await reader.items({
      ...(excluded.length > 0 ? { itemType: excluded.map((t) => `-${t}`) } : {}),
      start: 0,
      limit: 1,
    });
    total ??= probe.totalResults;
    if (type !== undefined && remaining !== undefined)
      found.push([type, Math.max(0, remaining - probe.totalResults)]);
    const next = probe.items[0]?.data.itemType;
    if (probe.totalResults === 0 || next === undefined || excluded.includes(next)) break;
    type = next;
    remaining = probe.totalResults;
    excluded.push(next);
  }
  found.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const byType: Record<string, number> = {};
  for (const [t, n] of found) if (n > 0) byType[t] = n;
  return { total: total ?? 0, byType };
}

export async function libraryStats(deps: Deps, input: LibraryArgs): Promise<StatsOutput> {
  const { reader, route } = await openReader(deps, input);
  const counted = reader.itemCounts ? reader.itemCounts() : undefined;
  const [{ total, byType }, topLevel, trash, collections, tags, version] = await Promise.all([
    counted ?? countByType(reader),
    counted ? counted.then((c) => c.topLevel) : count(reader, { top: true }),
    counted ? counted.then((c) => c.trash) : count(reader, { onlyTrashed: true }),
    // Only how many: the members of each collection are not counted (zotero.sqlite's dearest part).
    reader.collections({ counts: false }),
    reader.tags(),
    reader.libraryVersion(),
  ]);
  const notes = byType.note ?? 0;
  const attachments = byType.attachment ?? 0;
  const annotations = byType.annotation ?? 0;
  return {
    ...answered(route),
    libraryVersion: version ?? null,
    items: {
      total,
      topLevel,
      regular: Math.max(0, total - notes - attachments - annotations),
      notes,
      attachments,
      annotations,
      byType,
    },
    trash,
    collections: collections.totalResults,
    tags: tags.length,
  };
}
