/**
 * What the read actions share: opening a library through the router (which picks the backend),
 * the not-found error of an item key, collection names, and a small concurrency helper.
 */
import { ZoteusError } from '../../errors.js';
import type { LibraryArgs } from '../../library/address.js';
import type { BackendName, LibraryReader, Route } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { ZOTERO_KEY_RE } from '../common.js';
import { toolRef } from '../../call/refs.js';

export interface OpenedLibrary {
  reader: LibraryReader;
  route: Route & { library: string };
}

/** Which backend answered and which library: every read result says so. */
export interface Answered {
  backend: BackendName;
  /** `users/123` or `groups/456`. */
  library: string;
}

/** The library a call addresses, read through the backend the router picks (loaded lazily). */
export async function openReader(deps: Deps, args: LibraryArgs): Promise<OpenedLibrary> {
  const { openLibraryReader } = await import('../../library/router.js');
  return openLibraryReader(deps, { library_id: args.library_id, library_type: args.library_type });
}

export function answered(route: OpenedLibrary['route']): Answered {
  return { backend: route.backend, library: route.library };
}

function searchHint(): string {
  return `${toolRef('zotero_search_items', { q: 'TEXT' })} finds valid item keys (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ).`;
}

/** `not_found` for a key that names no item (items in the trash still count as found). */
export function itemNotFound(
  deps: Pick<Deps, 'surface'>,
  keys: readonly string[],
  library: string | undefined,
  field = 'item_key',
): ZoteusError {
  const where = library ? ` in library ${library}` : '';
  const message =
    keys.length === 1
      ? `Item '${keys[0]}' not found${where}.`
      : `Items ${keys.map((k) => `'${k}'`).join(', ')} not found${where}.`;
  return new ZoteusError('not_found', message, { field, hint: searchHint() });
}

/**
 * A key that cannot be a Zotero key names no item: `not_found` (exit 4), as the agent interface's
 * `zot read NOPE` example has it, before any backend is opened.
 */
export function assertKeysWellFormed(
  deps: Pick<Deps, 'surface'>,
  keys: readonly string[],
  field = 'item_key',
): void {
  const bad = keys.filter((k) => !ZOTERO_KEY_RE.test(k));
  if (bad.length > 0) throw itemNotFound(deps, bad, undefined, field);
}

/** Collection key → name: of `keys`, or of every collection (trashed ones too, so names resolve). */
export async function collectionNames(
  reader: LibraryReader,
  keys?: readonly string[],
): Promise<Map<string, string>> {
  // Only the collections asked about when that is few (an item's own): not every count of a
  // library of thousands of collections.
  const listing = await reader.collections({ includeTrashed: true, ...(keys ? { keys } : {}) });
  return new Map(listing.collections.map((c) => [c.key, c.data.name]));
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** How many requests (or queries) the read actions keep in flight at once. */
export const IN_FLIGHT = 4;
