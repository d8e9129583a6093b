/**
 * A LibraryReader over `zotero.sqlite` (the reader of `core/local`): one library of the
 * database, answered in the Web API's JSON shapes with the Web API's filters, sorting and
 * paging. `q` goes to the reader's search (all words, accent- and case-insensitive), scoped
 * like the Web API's: `/items?q=` matches each item on its own, `/items/top?q=` returns the
 * parents whose children match too.
 */
import { toolRef } from '../../call/refs.js';
import type { LibraryType } from '../../config.js';
import { ZoteusError } from '../../errors.js';
import type { ItemListOptions, SortField, ZoteroSqliteReader } from '../../local/index.js';
import { ITEM_SORT_FIELDS } from '../port.js';
import type { CollectionListing, ItemQuery, LibraryReader } from '../port.js';
import { checkObjectKey } from '../address.js';
import { fingerprint } from '../../local/sqlite/snapshot.js';
import type { IndexFeed } from '../../search-index/feed.js';
import type { IndexDb } from '../../search-index/store.js';
import type { ProgressEvent } from '../../tool.js';

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
  /**
   * The local search index (`core/search-index`): searches, listings and tags are answered
   * from it when it is up to date (brought up to date first when zotero.sqlite changed), and a
   * library of `autoMinItems` items or more gets one built in the background on first use.
   */
  index?:
    | {
        dataDir: string;
        autoMinItems: number;
        /** deps.progress: a background build this read starts is announced through it. */
        progress?: (event: ProgressEvent) => void;
        /** deps.env: a background build runs with the caller's environment (its data dirs). */
        env?: Readonly<Record<string, string | undefined>>;
      }
    | undefined;
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

type ItemStats = Awaited<ReturnType<ZoteroSqliteReader['itemStats']>>;

function parseCursor(cursor: string | undefined): ItemStats | undefined {
  if (!cursor) return undefined;
  try {
    const c = JSON.parse(cursor) as Partial<ItemStats>;
    return typeof c.count === 'number' &&
      typeof c.idSum === 'number' &&
      typeof c.maxClientDateModified === 'string' &&
      typeof c.maxDateModified === 'string' &&
      typeof c.maxVersion === 'number' &&
      typeof c.trashed === 'number'
      ? (c as ItemStats)
      : undefined;
  } catch {
    return undefined;
  }
}

export function createSqliteReader(o: SqliteReaderOptions): LibraryReader {
  const { sqlite, libraryID } = o;
  const label = `${o.library.type === 'user' ? 'users' : 'groups'}/${o.library.id}`;

  const feed: IndexFeed = {
    source: `sqlite:${sqlite.source}`,
    batchSize: 500,
    concurrency: 1,
    fingerprint: async () => fingerprint(sqlite.source),
    /**
     * Every item's signature the first time; after that only the items modified (locally or by
     * a sync) since the newest modification seen (with the trashed ones and the list of keys
     * when the item set or the trash changed otherwise: a permanent deletion, say).
     */
    async changes(_since, cursor) {
      const stats = await sqlite.itemStats(libraryID);
      const libraryVersion = await sqlite.libraryVersion(libraryID);
      const last = parseCursor(cursor);
      // The item set changed (a permanent deletion, an item synced in) or the trash did: the
      // modified items, every trashed one, and the keys that exist, to find what is gone.
      const setChanged =
        last !== undefined &&
        (last.count !== stats.count || last.idSum !== stats.idSum || last.trashed !== stats.trashed);
      const { signatures, ids } = await sqlite.signatures(
        libraryID,
        last
          ? {
              changedSince: {
                clientDateModified: last.maxClientDateModified,
                dateModified: last.maxDateModified,
                version: last.maxVersion,
              },
              ...(setChanged ? { trashed: true } : {}),
            }
          : {},
      );
      return {
        signatures,
        ids,
        deleted: [],
        complete: last === undefined,
        ...(setChanged ? { present: new Set(await sqlite.itemKeys(libraryID)) } : {}),
        libraryVersion,
        requests: 0,
        cursor: JSON.stringify(stats),
      };
    },
    fetch: async (keys) => ({ items: await sqlite.itemsByKeys(libraryID, keys), requests: 0 }),
    size: () => sqlite.itemCount(libraryID),
  };

  /**
   * Runs `answer` on the library's index when it is up to date. Undefined when there is none
   * (then, for a large library, with a notice that one is being built in the background).
   */
  async function withIndex<T>(
    answer: (db: IndexDb) => Promise<T | undefined> | T | undefined,
  ): Promise<{ value?: T; notice?: string }> {
    const settings = o.index;
    if (!settings) return {};
    // Loaded here: reads that never search (an item, the collections) skip these modules.
    const { backgroundBuildStarted, freshIndex, startBackgroundBuild } =
      await import('../../search-index/fresh.js');
    const found = await freshIndex(settings.dataDir, label, feed);
    if (found.db) {
      try {
        const value = await answer(found.db);
        return value === undefined ? {} : { value };
      } finally {
        found.db.close();
      }
    }
    if (found.state === 'building') {
      return {
        notice:
          'The search index of this library is being built in the background; later searches will be faster.',
      };
    }
    if (settings.autoMinItems > 0 && (await sqlite.itemCount(libraryID)) >= settings.autoMinItems) {
      // The desktop's unsynced library (`users/0`) is the default one: no arguments name it.
      const args =
        o.library.type === 'group'
          ? { library_type: 'group' as const, library_id: o.library.id }
          : o.library.id > 0
            ? { library_type: 'user' as const, library_id: o.library.id }
            : {};
      const started = startBackgroundBuild(settings.dataDir, label, args, settings.env);
      if (started) {
        settings.progress?.(backgroundBuildStarted(label));
        return {
          notice: `Started building the search index of this library in the background (${found.path}); later searches will be faster (${toolRef('zotero_index', { action: 'status' })} shows it).`,
        };
      }
    }
    return {};
  }

  /** A query the index answers: the page's keys, then the items read from zotero.sqlite. */
  async function fromIndex(
    db: IndexDb,
    options: ItemListOptions & { q?: string; qmode?: 'titleCreatorYear' | 'everything' },
  ) {
    if (options.collectionKey !== undefined) {
      const known = await sqlite.collections(libraryID, {
        keys: [options.collectionKey],
        includeTrashed: true,
      });
      if (known.length === 0) {
        throw new ZoteusError('not_found', `No collection ${options.collectionKey} in this library.`, {
          field: 'collection',
        });
      }
    }
    const [{ queryIndex }, { ftsWords }] = await Promise.all([
      import('../../search-index/query.js'),
      import('../../search-index/terms.js'),
    ]);
    let fulltextKeys: ((word: string) => string[]) | undefined;
    if (options.qmode === 'everything' && options.q) {
      const byWord = new Map<string, string[]>();
      for (const word of ftsWords(options.q)) byWord.set(word, await sqlite.fulltextKeys(libraryID, word));
      fulltextKeys = (word) => byWord.get(word) ?? [];
    }
    const answer = queryIndex(db, { ...options, fulltextKeys });
    if (!answer) return undefined;
    return { items: await sqlite.itemsByKeys(libraryID, answer.keys), totalResults: answer.total };
  }

  async function items(q: ItemQuery) {
    try {
      return await listItems(q);
    } catch (error) {
      if (
        q.collectionKey !== undefined &&
        error instanceof ZoteusError &&
        error.code === 'not_found' &&
        error.field === 'collection'
      )
        throw await missingCollection(q.collectionKey);
      throw error;
    }
  }

  /**
   * `not_found` for a collection filter that names no collection of this library: which library,
   * the key it meant when only the case differs (keys are upper case), and how to find keys.
   */
  async function missingCollection(key: string): Promise<ZoteusError> {
    const all = await sqlite.collections(libraryID, { includeTrashed: true });
    const near = all.find((c) => c.key.toUpperCase() === key.toUpperCase());
    return new ZoteusError(
      'not_found',
      `No collection ${JSON.stringify(key)} in ${label}${near ? ` (did you mean ${near.key}?)` : ''}.`,
      {
        field: 'collection_key',
        hint: `${toolRef('zotero_list_collections', { q: 'NAME' })} finds collection keys (8 characters, upper case).`,
      },
    );
  }

  async function listItems(q: ItemQuery) {
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
    // Items named by key are read from zotero.sqlite directly: the index would answer the same
    // rows, after loading its modules and checking that it is fresh (a `zot cite KEY` pays that).
    if (words === '' && options.keys !== undefined) return sqlite.items(libraryID, options);
    const indexed = await withIndex((db) =>
      fromIndex(db, {
        ...options,
        ...(words ? { q: words, qmode: q.qmode ?? 'titleCreatorYear' } : {}),
      }),
    );
    if (indexed.value) return indexed.value;
    const result = await withoutIndex(options, words, q);
    return indexed.notice ? { ...result, notice: indexed.notice } : result;
  }

  /** The same answer from the in-memory table of the database reader (built once per process). */
  async function withoutIndex(options: ItemListOptions, words: string, q: ItemQuery) {
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
      const all = await sqlite.collections(libraryID, {
        includeTrashed: options.includeTrashed === true,
        ...(options.keys ? { keys: [...options.keys] } : {}),
        ...(options.counts === false ? { counts: false } : {}),
      });
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
        ...(options.counts === false ? { uncounted: true as const } : {}),
      };
    },

    collectionItemCounts: (keys) => sqlite.collectionItemCounts(libraryID, keys),

    items,

    item: async (key) => sqlite.item(libraryID, checkObjectKey(key, 'key')),

    itemsByKey: (keys) => sqlite.itemsByKeys(libraryID, keys),

    children: async (key) => sqlite.children(libraryID, checkObjectKey(key, 'key')),

    async tags(options = {}) {
      const includeTrashed = options.includeTrashed === true;
      const { indexTags } = await import('../../search-index/query.js');
      const indexed = await withIndex((db) => indexTags(db, { includeTrashed }));
      return indexed.value ?? sqlite.tags(libraryID, { includeTrashed });
    },

    feed,

    itemCounts: () => sqlite.itemCounts(libraryID),

    libraryVersion: () => sqlite.libraryVersion(libraryID),

    async searches() {
      const { sqliteSearches } = await import('../../searches/sqlite.js');
      return sqliteSearches(sqlite, libraryID);
    },
  };
}
