/**
 * Public types of the zotero.sqlite reader. Objects come out in the Zotero Web API v3 JSON
 * shape (`zotero/web-api.md`), so agents see one format whatever the backend.
 */

export type Relations = Record<string, string | string[]>;

export interface WebApiTag {
  tag: string;
  /** 1 = automatic; left out for manual tags (type 0), as the Web API does. */
  type?: number;
}

export type WebApiCreator =
  { creatorType: string; firstName: string; lastName: string } | { creatorType: string; name: string };

/** `library` of an object: the user library is `{type:'user', id: <userID or 0>}`. */
export interface WebApiLibrary {
  type: 'user' | 'group';
  id: number;
  name: string;
}

export interface WebApiCollection {
  key: string;
  version: number;
  library: WebApiLibrary;
  /** `numItems` is left out of a listing asked for without counts. */
  meta: { numCollections: number; numItems?: number };
  data: {
    key: string;
    version: number;
    name: string;
    parentCollection: string | false;
    relations: Relations;
    /** In the trash. */
    deleted?: true;
  };
}

/**
 * An item's `data`: `key, version, itemType`, then the item type's fields by name (every
 * field of the type, '' when empty, as the Web API serves them), `creators`, `tags`,
 * `collections` (top-level items only), `relations`, `dateAdded`, `dateModified`;
 * `parentItem` for children, `note` for notes, `linkMode`/`contentType`/`charset`/
 * `filename`/`path`/`md5`/`mtime` for attachments, `annotation*` for annotations,
 * `deleted: 1` in the trash, `inPublications: true` in My Publications.
 */
export interface WebApiItemData {
  key: string;
  version: number;
  itemType: string;
  parentItem?: string;
  title?: string;
  creators?: WebApiCreator[];
  tags: WebApiTag[];
  collections?: string[];
  relations: Relations;
  dateAdded: string;
  dateModified: string;
  note?: string;
  deleted?: 1;
  [field: string]: unknown;
}

export interface WebApiItem {
  key: string;
  version: number;
  library: WebApiLibrary;
  meta: {
    creatorSummary?: string;
    parsedDate?: string;
    /** Regular items (not notes, attachments, annotations): children not in the trash. */
    numChildren?: number;
  };
  data: WebApiItemData;
}

export interface LocalLibrary {
  /** The database's own id: what every other call takes. */
  libraryID: number;
  type: 'user' | 'group';
  /** Groups only: the Web API group id (`/groups/{groupID}`). */
  groupID?: number;
  name: string;
  /** Last synced library version (local edits do not change it). */
  version: number;
  editable: boolean;
  filesEditable: boolean;
}

export interface TagEntry {
  tag: string;
  meta: { type: number; numItems: number };
}

export interface FulltextInfo {
  /** The attachment's key. */
  key: string;
  /** The key of the item the attachment belongs to (undefined for a standalone attachment). */
  parentItem: string | undefined;
  contentType: string | null;
  indexedPages: number | null;
  totalPages: number | null;
  indexedChars: number | null;
  totalChars: number | null;
  version: number;
  /** `<dataDir>/storage/<key>/.zotero-ft-cache` when that file exists (the extracted text). */
  cacheFile: string | null;
  /** The text of the cache file, when asked for with `{ content: true }`. */
  content?: string;
}

/** The item sorts of the Web API, which every backend supports: one list for the whole product. */
export const ITEM_SORT_FIELDS = [
  'dateModified',
  'dateAdded',
  'title',
  'creator',
  'itemType',
  'date',
  'accessDate',
  'publicationTitle',
  'publisher',
  'language',
  'libraryCatalog',
  'callNumber',
  'rights',
  'extra',
] as const;

export type SortField = (typeof ITEM_SORT_FIELDS)[number];

export interface ItemFilters {
  /** Only items not in the trash (default), or the trash too. */
  includeTrashed?: boolean;
  /** Only items in the trash (the Web API's `items/trash`). */
  onlyTrashed?: boolean;
  /** Top-level items only (no child notes, attachments, annotations). */
  top?: boolean;
  /** Items directly in this collection (`collections/{key}/items`). */
  collectionKey?: string;
  /**
   * The Web API's `tag`: each entry must hold (and); within an entry `a || b` is or, and a
   * leading `-` is not. Case-sensitive, as Zotero's tags are.
   */
  tag?: string | string[];
  /** The Web API's `itemType`: `book || journalArticle`, `-attachment`; entries and-ed. */
  itemType?: string | string[];
  /** Only objects whose version is greater. */
  since?: number;
}

export interface ItemListOptions extends ItemFilters {
  keys?: string[];
  /** Default `dateModified`. */
  sort?: SortField;
  /** Default `desc` for dateAdded/dateModified/accessDate, else `asc`. */
  direction?: 'asc' | 'desc';
  start?: number;
  /** No limit by default (the local API is unpaginated too). */
  limit?: number;
}

export interface ItemListResult {
  items: WebApiItem[];
  /** How many items matched, before start/limit. */
  totalResults: number;
}

export type QMode = 'titleCreatorYear' | 'everything';

export interface SearchOptions extends Omit<ItemListOptions, 'keys'> {
  q: string;
  /** `titleCreatorYear` (default): title, creators, year. `everything`: every field, tags, notes, full text. */
  qmode?: QMode;
}

export interface CollectionListOptions {
  includeTrashed?: boolean;
  /** Only these collections. */
  keys?: string[];
  /** Only top-level collections (`collections/top`). */
  top?: boolean;
  /** Only the subcollections of this one (`collections/{key}/collections`). */
  parentKey?: string;
  /** false: leave `meta.numItems` out (the caller counts only the collections it shows). */
  counts?: boolean;
}
