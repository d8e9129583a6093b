/**
 * Batches that answer per key (a bibliography, an export): each key that names no item, or an
 * item that cannot take part (a note in a bibliography), is one entry of `failed` in the words
 * of every read's not_found; a batch where every key failed is the not_found of a read, saying
 * which other library of this computer holds the keys when one does.
 */
import type { LibraryReader, WebApiItem } from '../../library/port.js';
import { ZOTERO_KEY_RE } from '../common.js';
import type { Deps } from '../../tool.js';
import { failedEntry } from '../../zotero/errors.js';
import type { FailedEntry } from '../../zotero/types.js';
import {
  answered,
  ItemsNotFound,
  missingMessage,
  openReader,
  withKeysElsewhere,
  type Answered,
} from './common.js';
import type { LibraryArgs } from '../../library/address.js';
import { ZoteusError } from '../../errors.js';

/**
 * The items of `keys` among `found`, in the order given (a repeated key once), and a failed
 * entry per key that named nothing in `library` or whose item `unusable` refuses (its reason).
 */
export function keyedEntries<T extends WebApiItem>(
  keys: readonly string[],
  found: readonly T[],
  library: string,
  unusable: (item: T) => string | undefined,
): { items: T[]; failed: FailedEntry[] } {
  const byKey = new Map(found.map((i) => [i.key, i]));
  const items: T[] = [];
  const failed: FailedEntry[] = [];
  const seen = new Set<string>();
  keys.forEach((key, index) => {
    const item = byKey.get(key);
    const refused = item ? unusable(item) : undefined;
    if (!item) failed.push(failedEntry(index, key, 404, missingMessage([key], library), 'not_found'));
    else if (refused !== undefined) failed.push(failedEntry(index, key, 400, refused, 'validation_error'));
    else if (!seen.has(key)) {
      seen.add(key);
      items.push(item);
    }
  });
  return { items, failed };
}

/** The keys that can name an item (Zotero's key form), once each: what a batch asks the library for. */
export function askableKeys(keys: readonly string[]): string[] {
  return [...new Set(keys.filter((k) => ZOTERO_KEY_RE.test(k)))];
}

/**
 * `keyedEntries` over the items a reader holds for `keys` (trashed ones too: an item in the
 * trash still exists), read in one listing (the reader batches it).
 */
export async function readKeyedEntries(
  reader: LibraryReader,
  keys: readonly string[],
  library: string,
  unusable: (item: WebApiItem) => string | undefined,
): Promise<{ items: WebApiItem[]; failed: FailedEntry[] }> {
  const asked = askableKeys(keys);
  // By key where the backend can (one query), not through a listing of the whole library.
  const found =
    asked.length === 0
      ? []
      : reader.itemsByKey
        ? await reader.itemsByKey(asked)
        : (await reader.items({ keys: asked, limit: asked.length, includeTrashed: true })).items;
  return keyedEntries(keys, found, library, unusable);
}

/**
 * The error of a batch where no key could be used: not_found as a read's (other libraries of
 * this computer named) when every key named nothing, else a validation_error with the entries.
 */
export async function nothingUsable(
  deps: Deps,
  failed: readonly FailedEntry[],
  library: string,
  field = 'item_keys',
): Promise<ZoteusError> {
  const missing = failed.filter((f) => f.code === 404).map((f) => f.key as string);
  if (missing.length === failed.length)
    return withKeysElsewhere(deps, new ItemsNotFound(missing, library, field));
  return new ZoteusError(
    'validation_error',
    `No item could be used: ${failed.map((f) => f.message).join(' ')}`,
    {
      field,
      failed: [...failed],
    },
  );
}

/** Item types that are parts of an item, not works: batches over works leave them out. */
const PARTS = new Set(['note', 'attachment', 'annotation']);

/**
 * The works of a batch's scope: the keys given (a key naming nothing, or a note, attachment or
 * annotation, is one entry of `failed`, worded by `partWhy`), or else the top-level items of a
 * collection or of the whole library, oldest first, read a page at a time with progress.
 */
export async function worksInScope(
  deps: Deps,
  input: LibraryArgs & { item_keys?: readonly string[] | undefined; collection_key?: string | undefined },
  partWhy: (itemType: string) => string,
): Promise<{ items: WebApiItem[]; failed: FailedEntry[]; route: Answered }> {
  const { reader, route } = await openReader(deps, input);
  const typeOf = (item: WebApiItem) => (typeof item.data.itemType === 'string' ? item.data.itemType : '');
  if (input.item_keys?.length) {
    const { items, failed } = await readKeyedEntries(reader, input.item_keys, route.library, (item) =>
      PARTS.has(typeOf(item)) ? `${item.key} is a ${typeOf(item)}, ${partWhy(typeOf(item))}` : undefined,
    );
    if (items.length === 0 && failed.length > 0) throw await nothingUsable(deps, failed, route.library);
    return { items, failed, route: answered(route) };
  }
  const items: WebApiItem[] = [];
  for (let start = 0; ; start += SCOPE_PAGE) {
    const page = await reader.items({
      top: true,
      sort: 'dateAdded',
      direction: 'asc',
      start,
      limit: SCOPE_PAGE,
      ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
    });
    items.push(...page.items.filter((i) => !PARTS.has(typeOf(i))));
    deps.progress({
      event: 'progress',
      phase: 'read',
      done: start + page.items.length,
      total: page.totalResults,
    });
    if (page.items.length < SCOPE_PAGE || start + page.items.length >= page.totalResults) break;
  }
  return { items, failed: [], route: answered(route) };
}

/** Items per page when a batch reads a collection or the whole library. */
const SCOPE_PAGE = 100;
