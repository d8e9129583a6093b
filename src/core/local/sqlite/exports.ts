/**
 * What a whole-library export reads of zotero.sqlite besides its pages of items (issue 17):
 *
 * - `citationKeyFacts`: of every regular item of the library (trashed ones too), only what its
 *   citation key is made of (core/exports/keys.ts): its key, type and date added, the fields
 *   asked for (Extra, `citationKey`, the title and date and the fields standing for them) and
 *   its first creator, in one query, shaped as the same item's hydrated data (`hydrate.ts`)
 *   holds them, so the keys come out the same;
 * - `exportListingKeys`: the keys of the items a listing of top-level items not in the trash,
 *   in the order of date added (then item id), holds: the whole library or one collection. The
 *   export then hydrates them a page at a time (`itemsByKeys`), instead of listing through
 *   the in-memory table (library-index.ts), whose every page filters the whole library again.
 */
import type { Connection } from './connection.js';
import { creatorJson, show } from './hydrate.js';
import { libraryOf, walkItems } from './libraries.js';
import { sqlToIso } from './text.js';
import type { WebApiCreator } from './types.js';

/** What an item's citation key is made of, as its hydrated item holds it (only these fields). */
export interface KeyFacts {
  key: string;
  data: { itemType: string; dateAdded: string; creators: WebApiCreator[]; [field: string]: unknown };
}

/** Types that have no citation key (and no entry of their own). */
const NO_KEY = new Set(['note', 'attachment', 'annotation']);

/** Calls `each` with every regular item's facts, in the order of date added; returns how many. */
export function citationKeyFacts(
  conn: Connection,
  libraryID: number,
  fields: readonly string[],
  each: (facts: KeyFacts) => void,
): number {
  libraryOf(conn, libraryID);
  const { ctx } = conn;
  const { schema } = ctx;
  const fieldIds = [
    ...new Set(fields.map((f) => schema.fieldId(f)).filter((id): id is number => id !== undefined)),
  ];
  // Notes, attachments and annotations are passed over in the query (and by name below).
  const skip = [...NO_KEY].map((t) => schema.itemTypeId(t)).filter((id): id is number => id !== undefined);
  // Walked as walkItems says (the answer's order is the ORDER BY's either way).
  const rows = ctx
    .stmt(
      `SELECT i.key, i.itemTypeID, i.dateAdded,
         (SELECT json_group_array(json_array(d.fieldID, v.value))
          FROM itemData d JOIN itemDataValues v ON v.valueID = d.valueID
          WHERE d.itemID = i.itemID AND d.fieldID IN (SELECT value FROM json_each(@fields))),
         (SELECT json_array(ic.creatorTypeID, c.firstName, c.lastName, c.fieldMode)
          FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID
          WHERE ic.itemID = i.itemID ORDER BY ic.orderIndex LIMIT 1)
       FROM items i ${walkItems(conn, libraryID)} WHERE i.libraryID = @lib AND i.itemTypeID NOT IN (SELECT value FROM json_each(@skip))
       ORDER BY i.dateAdded = '', i.dateAdded, i.itemID`,
    )
    .raw(true)
    .iterate({
      lib: libraryID,
      fields: JSON.stringify(fieldIds),
      skip: JSON.stringify(skip),
    }) as IterableIterator<[string, number, string, string, string | null]>;
  let count = 0;
  // Row by row: a library's facts are never held at once, each is the assigner's and gone.
  for (const [key, itemTypeID, dateAdded, values, creator] of rows) {
    const itemType = schema.itemTypeName(itemTypeID) ?? `unknown:${itemTypeID}`;
    if (NO_KEY.has(itemType)) continue;
    const kinds = ctx.typeInfo(itemType).kinds;
    let creators: WebApiCreator[] = [];
    if (creator !== null) {
      const [creatorTypeID, firstName, lastName, fieldMode] = JSON.parse(creator) as [
        number,
        string | null,
        string | null,
        number | null,
      ];
      creators = [creatorJson(schema, { creatorTypeID, firstName, lastName, fieldMode })];
    }
    const data: KeyFacts['data'] = { itemType, dateAdded: sqlToIso(dateAdded), creators };
    for (const [fieldID, value] of JSON.parse(values) as Array<[number, unknown]>) {
      const name = schema.fieldName(fieldID);
      if (name === undefined) continue;
      data[name] = show(kinds.get(name) ?? (name === 'accessDate' ? 'access' : 'plain'), value);
    }
    each({ key, data });
    count += 1;
  }
  return count;
}

/**
 * Keys of the top-level items not in the trash, in the order of date added (then item id):
 * of the library, or of the collection `collectionKey` names; undefined when the library has
 * no such collection.
 */
export function exportListingKeys(
  conn: Connection,
  libraryID: number,
  options: { collectionKey?: string | undefined } = {},
): string[] | undefined {
  libraryOf(conn, libraryID);
  const { ctx } = conn;
  let collectionID: number | undefined;
  if (options.collectionKey !== undefined) {
    collectionID = ctx
      .stmt('SELECT collectionID FROM collections WHERE libraryID = ? AND key = ?')
      .pluck()
      .get(libraryID, options.collectionKey) as number | undefined;
    if (collectionID === undefined) return undefined;
  }
  const annotations = ctx.tables.has('itemAnnotations')
    ? 'AND NOT EXISTS (SELECT 1 FROM itemAnnotations an WHERE an.itemID = i.itemID AND an.parentItemID IS NOT NULL)'
    : '';
  const member =
    collectionID === undefined
      ? ''
      : 'AND i.itemID IN (SELECT itemID FROM collectionItems WHERE collectionID = @collection)';
  // Walked as citationKeyFacts walks them.
  return ctx
    .stmt(
      `SELECT i.key FROM items i ${walkItems(conn, libraryID)}
       WHERE i.libraryID = @lib
         AND i.itemID NOT IN (SELECT itemID FROM deletedItems)
         AND NOT EXISTS (SELECT 1 FROM itemNotes n WHERE n.itemID = i.itemID AND n.parentItemID IS NOT NULL)
         AND NOT EXISTS (SELECT 1 FROM itemAttachments a WHERE a.itemID = i.itemID AND a.parentItemID IS NOT NULL)
         ${annotations} ${member}
       ORDER BY i.dateAdded = '', i.dateAdded, i.itemID`,
    )
    .pluck()
    .all({ lib: libraryID, ...(collectionID === undefined ? {} : { collection: collectionID }) }) as string[];
}
