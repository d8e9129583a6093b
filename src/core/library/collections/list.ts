/**
 * Collection listings (seeds 000 "list" and 001): every collection of the library is read
 * through the backend the router picks (`router.ts`: the desktop app's local API or
 * zotero.sqlite for the libraries it holds, else the Web API, whose client caches and
 * revalidates the listing, so a warm listing of an unchanged library is one `304`), then `q`
 * filters by name over the whole library, `top` keeps the top-level ones, the rows are sorted by
 * name as Zotero sorts them (case-insensitive, numbers by value, then key, so pages are stable;
 * with `tree`, in hierarchy order) and only then paged. A listing that
 * could not read the whole library says so (`complete: false`).
 *
 * Writers read the collections of the library they write to on the Web API (`readCollections`).
 */
import type { Deps } from '../../tool.js';
import { byCodeUnit, compareNames } from '../../text-order.js';
import type { CallContext, IncompleteReason, ListResult } from '../../zotero/index.js';
import type { LibraryArgs } from '../address.js';
import type { LibraryRoute } from '../router.js';
import { DEFAULT_LIMIT } from './constants.js';
// Types only: the Web API's library loads when a listing goes there (never for the desktop's).
import type { Access, WebLibrary } from '../web.js';

export interface CollectionRow {
  key: string;
  name: string;
  /** The parent's key, or false for a top-level collection. */
  parentCollection: string | false;
  /** Items directly in the collection (`meta.numItems`); absent when the server does not say. */
  numItems?: number;
  /** With `tree`: how many ancestors the collection has (0 at the top level). */
  depth?: number;
}

export interface ListInput extends LibraryArgs {
  q?: string | undefined;
  top?: boolean | undefined;
  limit?: number | undefined;
  start?: number | undefined;
  /** Hierarchy order: each collection after its parent, siblings by name; rows carry `depth`. */
  tree?: boolean | undefined;
}

export interface CollectionPage {
  collections: CollectionRow[];
  /** Matches in total among the collections read (every one read when there is no filter). */
  totalResults: number;
  start: number;
  /** False when the listing could not read the whole library; `read` and `message` then say why. */
  complete: boolean;
  /** Collections read, when the listing is incomplete. */
  read?: number;
  /** Why the listing is incomplete; absent when complete. */
  message?: string;
}

/** Every collection of a library, sorted, with how the listing went. */
export interface CollectionListing {
  lib: WebLibrary;
  rows: CollectionRow[];
  listing: ListResult<unknown>;
  /** Absent when complete. */
  message?: string;
}

interface CollectionObject {
  key?: unknown;
  meta?: { numItems?: unknown };
  data?: { key?: unknown; name?: unknown; parentCollection?: unknown };
}

/** One row of the listing from a collection as the API serves it; undefined when it has no key. */
export function toRow(object: unknown): CollectionRow | undefined {
  const o = (object ?? {}) as CollectionObject;
  const data = o.data ?? {};
  const key = typeof o.key === 'string' ? o.key : typeof data.key === 'string' ? data.key : undefined;
  if (key === undefined || key === '') return undefined;
  const parent = data.parentCollection;
  const numItems = o.meta?.numItems;
  return {
    key,
    name: typeof data.name === 'string' ? data.name : '',
    parentCollection: typeof parent === 'string' && parent !== '' ? parent : false,
    ...(typeof numItems === 'number' && Number.isFinite(numItems) ? { numItems } : {}),
  };
}

/**
 * Names as Zotero sorts them: case-insensitively, with runs of digits compared by value
 * ("Topic 2" before "Topic 10"), then by key so pages are stable.
 */
export function compareCollectionNames(a: string, b: string): number {
  const pa = a.match(/\d+|\D+/g) ?? [];
  const pb = b.match(/\d+|\D+/g) ?? [];
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i += 1) {
    const x = pa[i] as string;
    const y = pb[i] as string;
    const dx = x.charCodeAt(0) >= 48 && x.charCodeAt(0) <= 57;
    const dy = y.charCodeAt(0) >= 48 && y.charCodeAt(0) <= 57;
    if (dx && dy) {
      const vx = x.replace(/^0+(?=\d)/, '');
      const vy = y.replace(/^0+(?=\d)/, '');
      if (vx.length !== vy.length) return vx.length - vy.length;
      if (vx !== vy) return vx < vy ? -1 : 1;
      continue;
    }
    if (dx !== dy) return dx ? -1 : 1;
    const c = compareNames(x, y);
    if (c !== 0) return c;
  }
  if (pa.length !== pb.length) return pa.length - pb.length;
  return compareNames(a, b);
}

export function byCollectionName(a: CollectionRow, b: CollectionRow): number {
  return compareCollectionNames(a.name, b.name) || byCodeUnit(a.key, b.key);
}

/**
 * The rows (sorted) in hierarchy order: each collection followed by its children, siblings
 * sorted, each with its depth. A collection whose parent is not among the rows counts as top
 * level; a cycle is broken where it is found.
 */
export function treeOrder(rows: readonly CollectionRow[]): CollectionRow[] {
  const keys = new Set(rows.map((r) => r.key));
  const children = new Map<string, CollectionRow[]>();
  const roots: CollectionRow[] = [];
  for (const row of rows) {
    const parent = row.parentCollection;
    if (parent === false || !keys.has(parent)) roots.push(row);
    else {
      const list = children.get(parent);
      if (list) list.push(row);
      else children.set(parent, [row]);
    }
  }
  const out: CollectionRow[] = [];
  const seen = new Set<string>();
  const visit = (row: CollectionRow, depth: number) => {
    if (seen.has(row.key)) return;
    seen.add(row.key);
    out.push({ ...row, depth });
    for (const child of children.get(row.key) ?? []) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  // Rows only in a cycle: listed at the top level after the rest.
  for (const row of rows) visit(row, 0);
  return out;
}

function fold(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

const count = (n: number): string => n.toLocaleString('en-US');

/** The page of `rows` (already sorted) that `q`, `top`, `start` and `limit` ask for. */
export function pageRows(
  rows: readonly CollectionRow[],
  input: Pick<ListInput, 'q' | 'top' | 'start' | 'limit' | 'tree'>,
): { collections: CollectionRow[]; totalResults: number; start: number } {
  let matches: readonly CollectionRow[] = input.tree ? treeOrder(rows) : rows;
  if (input.top) matches = matches.filter((row) => row.parentCollection === false);
  if (input.q !== undefined && input.q !== '') {
    const needle = fold(input.q);
    matches = matches.filter((row) => fold(row.name).includes(needle));
  }
  const start = input.start ?? 0;
  const limit = input.limit ?? DEFAULT_LIMIT;
  return { collections: matches.slice(start, start + limit), totalResults: matches.length, start };
}

/** Why a listing is incomplete, in words that name the cap and what the page comes from. */
function incompleteMessage(
  listing: {
    read: number;
    totalResults: number;
    reason?: IncompleteReason | undefined;
    message?: string | undefined;
  },
  max: number,
): string {
  const read = `Read ${count(listing.read)} of ${count(listing.totalResults)} collections`;
  const rest = 'totalResults and the page come from the collections read.';
  if (listing.reason === 'cap') {
    return `${read}: one listing reads at most ${count(max)} (ZOTEUS_MAX_COLLECTIONS); ${rest}`;
  }
  if (listing.reason === 'ignored_start') {
    return `${read}: the server ignores the start parameter, so the rest cannot be paged to; ${rest}`;
  }
  return `${read}${listing.message ? ` (${listing.message})` : ''}; ${rest}`;
}

/**
 * Opens the library and reads every collection (up to ZOTEUS_MAX_COLLECTIONS), sorted.
 * Read access is enough; writers pass `access: 'write'` to check their permission first.
 */
export async function readCollections(
  deps: Deps,
  args: LibraryArgs,
  options: { access?: Access; call?: CallContext | undefined; lib?: WebLibrary } = {},
): Promise<CollectionListing> {
  let lib = options.lib;
  if (!lib) {
    const { openWebLibrary } = await import('../web.js');
    lib = await openWebLibrary(deps, args, { access: options.access ?? 'read', call: options.call });
  }
  const max = deps.config.maxCollections;
  const listing = await lib.client.listAll<unknown>(`/${lib.prefix}/collections`, {
    max,
    call: options.call,
  });
  const rows: CollectionRow[] = [];
  for (const object of listing.objects) {
    const row = toRow(object);
    if (row) rows.push(row);
  }
  rows.sort(byCollectionName);
  return listing.complete
    ? { lib, rows, listing }
    : { lib, rows, listing, message: incompleteMessage(listing, max) };
}

/** Every collection of a library, sorted, read through the backend the router picks. */
export interface RoutedCollections {
  /** Which backend answered, for which library, and why. */
  route: LibraryRoute;
  rows: CollectionRow[];
  /** Collections in the library (more than `rows` when the listing is incomplete). */
  totalResults: number;
  complete: boolean;
  /** Absent when complete. */
  message?: string;
  /**
   * `rows` with their `numItems`: those read without them (`counts: 'shown'`) are counted
   * now, for just these collections.
   */
  counted(rows: CollectionRow[]): Promise<CollectionRow[]>;
}

/**
 * Every collection of a library (up to ZOTEUS_MAX_COLLECTIONS), sorted, through the router:
 * offline from the desktop app when it holds the library, on the Web API otherwise.
 * `counts: 'shown'`: the caller shows only some (a page) and asks `counted()` for their item
 * counts, which spares zotero.sqlite counting the members of every collection.
 */
export async function readCollectionRows(
  deps: Deps,
  args: LibraryArgs,
  options: { counts?: 'all' | 'shown' } = {},
): Promise<RoutedCollections> {
  const { openLibraryReader } = await import('../router.js');
  const { reader, route } = await openLibraryReader(deps, args);
  const listing = await reader.collections(options.counts === 'shown' ? { counts: false } : {});
  const rows: CollectionRow[] = [];
  for (const object of listing.collections) {
    const row = toRow(object);
    if (row) rows.push(row);
  }
  rows.sort(byCollectionName);
  const out: RoutedCollections = {
    route,
    rows,
    totalResults: listing.totalResults,
    complete: listing.complete,
    counted: async (shown) => {
      if (listing.uncounted !== true || shown.length === 0 || !reader.collectionItemCounts) return shown;
      const numItems = await reader.collectionItemCounts(shown.map((r) => r.key));
      return shown.map((r) => {
        const n = numItems.get(r.key);
        return n === undefined ? r : { ...r, numItems: n };
      });
    },
  };
  if (!listing.complete) {
    out.message = incompleteMessage(
      {
        read: rows.length,
        totalResults: listing.totalResults,
        reason: listing.reason,
        message: listing.message,
      },
      deps.config.maxCollections,
    );
  }
  return out;
}

/** The `list` action of both tools: one page of the whole, sorted, filtered listing. */
export async function listCollections(deps: Deps, input: ListInput): Promise<CollectionPage> {
  const { rows, complete, message, counted } = await readCollectionRows(deps, input, { counts: 'shown' });
  const page = pageRows(rows, input);
  return {
    ...page,
    collections: await counted(page.collections),
    complete,
    ...(message !== undefined ? { read: rows.length, message } : {}),
  };
}
