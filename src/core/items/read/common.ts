/**
 * What the read actions share: opening a library through the router (which picks the backend),
 * the not-found error of an item key, collection names, and a small concurrency helper.
 */
import { ZoteusError } from '../../errors.js';
import type { LibraryArgs } from '../../library/address.js';
import type { BackendName, LibraryReader, Route } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { ZOTERO_KEY_RE } from '../common.js';
import { paramRef, toolRef } from '../../call/refs.js';

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

/** What a Zotero key is made of, said wherever a string is not one. */
export const KEY_FORM = '8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';

function searchHint(): string {
  return `${toolRef('zotero_search_items', { q: 'TEXT' })} finds valid item keys (${KEY_FORM}).`;
}

const quoted = (keys: readonly string[]): string => keys.map((k) => `"${k}"`).join(', ');

/**
 * `not_found` for keys that name no item (items in the trash still count as found): which
 * keys, in which library, and which of them are not of Zotero's key form at all. The keys and
 * the library stay on the error, so `lookUpKeys` can say where else on this computer they are.
 */
export class ItemsNotFound extends ZoteusError {
  constructor(
    readonly keys: readonly string[],
    readonly library: string | undefined,
    field: string,
    hint = searchHint(),
    message = missingMessage(keys, library),
  ) {
    super('not_found', message, { field, hint });
  }
}

export function missingMessage(keys: readonly string[], library: string | undefined): string {
  const where = library ? ` in ${library}` : '';
  const bad = keys.filter((k) => !ZOTERO_KEY_RE.test(k));
  const form =
    bad.length === 0
      ? ''
      : bad.length === 1
        ? `: ${quoted(bad)} is not a Zotero key (${KEY_FORM})`
        : `: ${quoted(bad)} are not Zotero keys (${KEY_FORM})`;
  return `No item${keys.length === 1 ? '' : 's'} ${quoted(keys)}${where}${form}.`;
}

/** `not_found` for keys that name no item in `library` (see ItemsNotFound). */
export function itemNotFound(
  deps: Pick<Deps, 'surface'>,
  keys: readonly string[],
  library: string | undefined,
  field = 'item_key',
): ItemsNotFound {
  return new ItemsNotFound(keys, library, field);
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

/**
 * A read that looks items up by key (agent-interface.md, "Error codes"): a string that is not of
 * Zotero's key form is `not_found` at once, naming the library the call addresses (from its
 * route, without a request to the Web API); keys the library lacks that another library on this
 * computer holds (the desktop's zotero.sqlite, read without a request) are `not_found` saying
 * which library has them and how to address it.
 */
export async function lookUpKeys<T>(
  deps: Deps,
  args: LibraryArgs,
  lookup: { keys: readonly string[]; field: string },
  work: () => Promise<T>,
): Promise<T> {
  const bad = lookup.keys.filter((k) => !ZOTERO_KEY_RE.test(k));
  if (bad.length > 0) {
    const { addressedLibrary } = await import('../../library/router.js');
    throw itemNotFound(deps, bad, await addressedLibrary(deps, args), lookup.field);
  }
  try {
    return await work();
  } catch (error) {
    if (error instanceof ItemsNotFound) throw await withKeysElsewhere(deps, error);
    throw error;
  }
}

/** The not_found of `error`, saying which other libraries on this computer hold its keys. */
export async function withKeysElsewhere(deps: Deps, error: ItemsNotFound): Promise<ZoteusError> {
  const { keysElsewhere } = await import('../../library/elsewhere.js');
  const keys = error.keys.filter((k) => ZOTERO_KEY_RE.test(k));
  let held: Awaited<ReturnType<typeof keysElsewhere>>;
  try {
    held = await keysElsewhere(deps, keys, error.library);
  } catch (caught) {
    deps.log.debug(`Could not look for ${quoted(keys)} in the desktop's other libraries: ${String(caught)}`);
    return error;
  }
  if (held.length === 0) return error;
  const byLibrary = new Map<string, typeof held>();
  for (const h of held) byLibrary.set(h.library, [...(byLibrary.get(h.library) ?? []), h]);
  const single = error.keys.length === 1;
  const places = [...byLibrary.values()].map((hs) =>
    single ? hs[0]!.label : `${quoted(hs.map((h) => h.key))} in ${hs[0]!.label}`,
  );
  const found = single
    ? `This computer's Zotero has it in ${places.join(' and in ')}.`
    : `This computer's Zotero has ${places.join('; ')}.`;
  const hints = [...byLibrary.values()].map((hs) => {
    const { address } = hs[0]!;
    const there = single ? 'to read it there' : `for ${quoted(hs.map((h) => h.key))}`;
    if (address.default) return `leave out ${paramRef('library_id')} ${there} (the default library)`;
    const id = paramRef('library_id', String(address.library_id));
    return `add ${address.library_type === 'user' ? `${paramRef('library_type', 'user')} and ${id}` : id} ${there}`;
  });
  const hint = hints.join('; ');
  return new ItemsNotFound(
    error.keys,
    error.library,
    error.field ?? 'item_key',
    `${hint.charAt(0).toUpperCase()}${hint.slice(1)}.`,
    `${error.message} ${found}`,
  );
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
