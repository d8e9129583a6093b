/**
 * A LibraryReader over `zotero.sqlite` (the reader of `core/local`): one library of the
 * database, answered in the Web API's JSON shapes with the Web API's filters, sorting and
 * paging. `q` goes to the reader's search (all words, accent- and case-insensitive), scoped
 * like the Web API's: `/items?q=` matches each item on its own, `/items/top?q=` returns the
 * parents whose children match too.
 */
import type { LibraryType } from '../../config.js';
import { ZoteusError } from '../../errors.js';
import type { ItemListOptions, SortField, ZoteroSqliteReader } from '../../local/index.js';
import { ITEM_SORT_FIELDS } from '../port.js';
import type { CollectionListing, ItemQuery, LibraryReader } from '../port.js';
import { checkObjectKey } from './web.js';

/** The sort fields the database reader knows (the Web API's item sorts). */
export const SQLITE_SORTS: readonly SortField[] = ITEM_SORT_FIELDS;

export interface SqliteReaderOptions {
  sqlite: ZoteroSqliteReader;
  /** The database's own id of the library. */
  libraryID: number;
  /** The library as the router names it (`users/<synced id or 0>`, `groups/<id>`). */
  library: { type: LibraryType; id: number };
  /** ZOTEUS_MAX_COLLECTIONS. */
  maxCollections: number;
}

function sortField(sort: string | undefined): SortField | undefined {
  if (sort === undefined) return undefined;
  if ((SQLITE_SORTS as readonly string[]).includes(sort)) return sort as SortField;
  throw new ZoteusError('validation_error', `sort '${sort}' is not one of ${SQLITE_SORTS.join(', ')}.`, {
    field: 'sort',
  });
}

function whole(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ZoteusError('validation_error', `${field} must be a whole number >= 0; got ${value}.`, {
      field,
    });
  }
  return value;
}

const list = (value: string | readonly string[] | undefined): string | string[] | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? value : [...value];

export function createSqliteReader(o: SqliteReaderOptions): LibraryReader {
  const { sqlite, libraryID } = o;

  async function items(q: ItemQuery) {
    const options: ItemListOptions = {
      includeTrashed: q.includeTrashed,
      onlyTrashed: q.onlyTrashed,
      top: q.top,
      collectionKey:
        q.collectionKey === undefined ? undefined : checkObjectKey(q.collectionKey, 'collectionKey'),
      tag: list(q.tag),
      itemType: list(q.itemType),
      since: whole(q.since, 'since'),
      sort: sortField(q.sort),
      direction: q.direction,
      start: whole(q.start, 'start'),
      limit: whole(q.limit, 'limit'),
      keys: q.keys?.map((k) => checkObjectKey(k, 'keys')),
    };
    for (const name of Object.keys(options) as Array<keyof ItemListOptions>) {
      if (options[name] === undefined) delete options[name];
    }
    const words = q.q?.trim() ?? '';
    if (words === '') return sqlite.items(libraryID, options);
    const { keys, start, limit, ...rest } = options;
    const search = { ...rest, q: words, qmode: q.qmode ?? 'titleCreatorYear', top: q.top ?? false };
    if (keys === undefined) {
      return sqlite.searchItems(libraryID, {
        ...search,
        ...(start !== undefined ? { start } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
    }
    const wanted = new Set(keys);
    const matched = (await sqlite.searchItems(libraryID, search)).items.filter((i) => wanted.has(i.key));
    const from = start ?? 0;
    return {
      items: matched.slice(from, limit === undefined ? undefined : from + limit),
      totalResults: matched.length,
    };
  }

  return {
    backend: 'sqlite',
    library: o.library,

    async collections(options = {}): Promise<CollectionListing> {
      const all = await sqlite.collections(libraryID, { includeTrashed: options.includeTrashed === true });
      const max = o.maxCollections;
      const capped = all.length > max;
      return {
        collections: capped ? all.slice(0, max) : all,
        totalResults: all.length,
        complete: !capped,
        ...(capped
          ? {
              reason: 'cap' as const,
              message: `Read ${max} of ${all.length} collections of the Zotero database: the cap of one listing is ${max}.`,
            }
          : {}),
        libraryVersion: await sqlite.libraryVersion(libraryID),
      };
    },

    items,

    item: async (key) => sqlite.item(libraryID, checkObjectKey(key, 'key')),

    children: async (key) => sqlite.children(libraryID, checkObjectKey(key, 'key')),

    tags: (options = {}) => sqlite.tags(libraryID, { includeTrashed: options.includeTrashed === true }),

    libraryVersion: () => sqlite.libraryVersion(libraryID),
  };
}
