/**
 * What changed in a library since a version, as the Web API's sync endpoints tell it
 * (`?since=V&format=versions` for items, collections and saved searches; `deleted?since=V` for
 * what was deleted), as one list of entries, paged:
 *
 *   modified objects, oldest change first (by version, then kind and key), each with what an
 *   agent needs to recognise it (an item's type, title and parent; a collection's or search's
 *   name), then deletions (items, collections, searches, tags).
 *
 * `libraryVersion` is the library's version when the listing was read: pass it as `since` next
 * time to get only what changed after. Trashed items are modified items (`trashed: true`): the
 * trash is a field in Zotero's sync. Every page reads the change lists again (a few hundred
 * bytes per thousand changes) and the details of its own entries only, so paging costs one
 * read of details per page; a library that changed between two pages says so with another
 * `libraryVersion`.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from './address.js';
import { toolRef } from '../call/refs.js';
import { authMissing, webClient } from './keys.js';
import { openWebLibrary } from './web.js';
import type { Deps } from '../tool.js';
import type { ZoteroResponse } from '../zotero/index.js';

export type ChangeKind = 'item' | 'collection' | 'search' | 'tag';

export interface ChangeEntry {
  kind: ChangeKind;
  change: 'modified' | 'deleted';
  /** Object key (items, collections, searches). */
  key?: string;
  /** The tag, for a deleted tag. */
  tag?: string;
  /** The object's version after the change (modified entries). */
  version?: number;
  itemType?: string;
  title?: string;
  parentItem?: string;
  /** A collection's or saved search's name. */
  name?: string;
  parentCollection?: string;
  /** An item or collection in the trash. */
  trashed?: boolean;
}

export interface ChangesArgs extends LibraryArgs {
  since: number;
  start: number;
  limit: number;
}

export interface ChangeCounts {
  items: { modified: number; deleted: number };
  collections: { modified: number; deleted: number };
  searches: { modified: number; deleted: number };
  tags: { deleted: number };
}

export interface ChangesResult {
  library: string;
  since: number;
  libraryVersion: number;
  counts: ChangeCounts;
  changes: ChangeEntry[];
  totalResults: number;
  start: number;
}

/** Objects a detail read asks for at once (the Web API's most per request). */
const DETAIL_BATCH = 50;

const OBJECTS: ReadonlyArray<{ kind: Exclude<ChangeKind, 'tag'>; path: string; keyParam: string }> = [
  { kind: 'item', path: 'items', keyParam: 'itemKey' },
  { kind: 'collection', path: 'collections', keyParam: 'collectionKey' },
  { kind: 'search', path: 'searches', keyParam: 'searchKey' },
];

function versionsOf(response: ZoteroResponse, path: string): Map<string, number> {
  const data = response.data as Record<string, unknown> | null;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ZoteusError('api_error', `GET ${path}?format=versions did not answer with an object.`, {
      status: response.status,
    });
  }
  const out = new Map<string, number>();
  for (const [key, version] of Object.entries(data)) if (typeof version === 'number') out.set(key, version);
  return out;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

interface ObjectJson {
  key?: unknown;
  data?: Record<string, unknown>;
}

/** The details that name a modified object, from its JSON. */
function detailsOf(kind: ChangeEntry['kind'], object: ObjectJson | undefined): Partial<ChangeEntry> {
  const data = object?.data ?? {};
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const trashed = data.deleted === true || data.deleted === 1;
  if (kind === 'item') {
    const title = str(data.title) ?? (typeof data.note === 'string' ? noteTitle(data.note) : undefined);
    return {
      ...(str(data.itemType) ? { itemType: str(data.itemType) } : {}),
      ...(title ? { title } : {}),
      ...(str(data.parentItem) ? { parentItem: str(data.parentItem) } : {}),
      ...(trashed ? { trashed } : {}),
    };
  }
  return {
    ...(str(data.name) ? { name: str(data.name) } : {}),
    ...(str(data.parentCollection) ? { parentCollection: str(data.parentCollection) } : {}),
    ...(trashed ? { trashed } : {}),
  };
}

/** A note's first line, without markup, as Zotero titles notes (at most 120 characters). */
function noteTitle(html: string): string | undefined {
  const text = html
    .replace(/<(br|\/p|\/div|\/h\d|\/li)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
  const first = text
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '');
  if (!first) return undefined;
  return first.length <= 120 ? first : `${first.slice(0, 119)}…`;
}

/**
 * `auth_missing` with its reason: the desktop holds the library, but a sync needs what only the
 * cloud keeps, the log of what was deleted (zotero.sqlite forgets a deleted object).
 */
function syncNeedsKey(): ZoteusError {
  const missing = authMissing();
  const list = toolRef('zotero_search_items', { include_children: 'false', since: 'VERSION' });
  return new ZoteusError(
    'auth_missing',
    'Listing changes needs a Zotero API key: only the Zotero cloud keeps the log of deletions a sync reads (the desktop’s database does not).',
    {
      hint: `${missing.hint ?? ''} A key that can read the library is enough. Without a key, ${list} lists the items changed after a version, but not what was deleted.`,
    },
  );
}

export async function changesSince(deps: Deps, args: ChangesArgs): Promise<ChangesResult> {
  if (!Number.isInteger(args.since) || args.since < 0) {
    throw new ZoteusError(
      'validation_error',
      `since must be a library version (an integer from 0); got ${args.since}.`,
      {
        field: 'since',
      },
    );
  }
  if (deps.config.apiKey === undefined) throw syncNeedsKey();
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, args, { access: 'read', call });
  const get = (path: string, query: Record<string, string | number>) =>
    lib.client.request('GET', `/${lib.prefix}/${path}`, { query, call });

  // The change lists, all of them: small (a key and a version each) and needed to page.
  const lists = await Promise.all(
    OBJECTS.map(async (o) => {
      const response = await get(o.path, { since: args.since, format: 'versions', includeTrashed: 1 });
      return {
        ...o,
        versions: versionsOf(response, `/${lib.prefix}/${o.path}`),
        version: response.lastModifiedVersion,
      };
    }),
  );
  const deletedResponse = await get('deleted', { since: args.since });
  const deleted = (deletedResponse.data ?? {}) as Record<string, unknown>;
  // The version the lists were read at: the first read's (a change after it shows up next time).
  const libraryVersion = lists[0]!.version ?? deletedResponse.lastModifiedVersion ?? args.since;

  const modified: ChangeEntry[] = [];
  for (const list of lists) {
    for (const [key, version] of list.versions)
      modified.push({ kind: list.kind, change: 'modified', key, version });
  }
  const order: Record<ChangeKind, number> = { item: 0, collection: 1, search: 2, tag: 3 };
  modified.sort(
    (a, b) =>
      a.version! - b.version! ||
      order[a.kind] - order[b.kind] ||
      (a.key! < b.key! ? -1 : a.key! > b.key! ? 1 : 0),
  );
  const gone = {
    items: stringsOf(deleted.items),
    collections: stringsOf(deleted.collections),
    searches: stringsOf(deleted.searches),
    tags: stringsOf(deleted.tags),
  };
  const removals: ChangeEntry[] = [
    ...gone.items.map((key): ChangeEntry => ({ kind: 'item', change: 'deleted', key })),
    ...gone.collections.map((key): ChangeEntry => ({ kind: 'collection', change: 'deleted', key })),
    ...gone.searches.map((key): ChangeEntry => ({ kind: 'search', change: 'deleted', key })),
    ...gone.tags.map((tag): ChangeEntry => ({ kind: 'tag', change: 'deleted', tag })),
  ];
  const all = [...modified, ...removals];
  const page = all.slice(args.start, args.start + args.limit);

  // Details of this page's modified objects only, 50 keys a request.
  for (const o of OBJECTS) {
    const keys = page.filter((e) => e.kind === o.kind && e.change === 'modified').map((e) => e.key!);
    const found = new Map<string, ObjectJson>();
    for (let i = 0; i < keys.length; i += DETAIL_BATCH) {
      const part = keys.slice(i, i + DETAIL_BATCH);
      const response = await get(o.path, {
        [o.keyParam]: part.join(','),
        includeTrashed: 1,
        limit: DETAIL_BATCH,
      });
      for (const object of Array.isArray(response.data) ? (response.data as ObjectJson[]) : []) {
        if (typeof object.key === 'string') found.set(object.key, object);
      }
    }
    for (const entry of page) {
      if (entry.kind === o.kind && entry.change === 'modified')
        Object.assign(entry, detailsOf(o.kind, found.get(entry.key!)));
    }
  }

  const count = (kind: ChangeKind) => lists.find((l) => l.kind === kind)!.versions.size;
  return {
    library: lib.prefix,
    since: args.since,
    libraryVersion,
    counts: {
      items: { modified: count('item'), deleted: gone.items.length },
      collections: { modified: count('collection'), deleted: gone.collections.length },
      searches: { modified: count('search'), deleted: gone.searches.length },
      tags: { deleted: gone.tags.length },
    },
    changes: page,
    totalResults: all.length,
    start: args.start,
  };
}
