/**
 * The collection tools' limits and actions, apart from the code that talks to the API so
 * that the tool declarations can import them without loading the client (`zot --help`).
 */

/** Rows per page when the caller gives no `limit`, and the most it may ask for. */
export const DEFAULT_LIMIT = 200;
export const MAX_LIMIT = 1000;

/** Zotero's limit on a collection name, counted after trimming. */
export const NAME_MAX = 255;

export const COLLECTION_ACTIONS = [
  'list',
  'create',
  'rename',
  'reparent',
  'delete',
  'add_items',
  'remove_items',
] as const;

export type CollectionAction = (typeof COLLECTION_ACTIONS)[number];

/** Removing many items from a collection is bulk-destructive: the bulk-write threshold applies. */
export function membershipBulk(input: { collection_key: string; item_keys: readonly string[] }): {
  count: number;
  what: string;
  verb: string;
} {
  const count = new Set(input.item_keys).size;
  return {
    count,
    what: `Removing ${count} item${count === 1 ? '' : 's'} from collection ${input.collection_key}`,
    verb: 'remove',
  };
}
