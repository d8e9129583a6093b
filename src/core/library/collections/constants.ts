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
