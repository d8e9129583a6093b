/**
 * GET handlers under a library prefix: listings, single objects, tags, `deleted` and full text.
 */
import { HttpError, intParam, send, versionHeader, type Ctx } from './http.js';
import { alternateUrl, collectionJson, itemJson, searchJson, tagJson, type RenderCtx } from './render.js';
import { notModified, sendList, type ListSpec } from './listing.js';
import { bibliographyHtml, exportBody, isExportFormat, withIncludes, type OutputCtx } from './citations.js';
import { fulltextSince, getItemFulltext } from './routes-fulltext.js';
import { runSavedSearch } from './routes-searches.js';
import type { Library, ServerState } from './state.js';
import type { CollectionData, DeletedKind, ItemData, SearchData } from './types.js';

export interface LibraryRoute {
  ctx: Ctx;
  state: ServerState;
  lib: Library;
  /** Path segments after the library prefix. */
  segments: string[];
  ignoreStart: boolean;
  /** Served as the desktop local API: unpaginated unless `limit` is given. */
  unpaged?: boolean | undefined;
}

/** Answers a GET; returns false when no route matches. */
export function handleRead(r: LibraryRoute): boolean {
  const [head, key, sub, subsub] = r.segments;
  const n = r.segments.length;
  if (head === 'collections') {
    if (n === 1) return listCollections(r, all(r, r.lib.collections), 'collections');
    if (n === 2 && key === 'top') {
      return listCollections(
        r,
        all(r, r.lib.collections).filter((c) => c.parentCollection === false),
        'collections',
      );
    }
    if (n === 2 && key === 'trash') {
      return listCollections(
        r,
        [...r.lib.collections.values()].filter((c) => c.deleted),
        'collections/trash',
      );
    }
    const collection = key ? r.lib.collections.get(key) : undefined;
    if (!collection) throw new HttpError(404, 'Collection not found');
    if (n === 2) return single(r, collection, collectionJson(rc(r), collection));
    const inCollection = (i: ItemData): boolean => i.collections.includes(collection.key);
    if (n === 3 && sub === 'collections') {
      const children = all(r, r.lib.collections).filter((c) => c.parentCollection === collection.key);
      return listCollections(r, children, `collections/${collection.key}/collections`);
    }
    if (n === 3 && sub === 'items')
      return listItems(r, liveItems(r).filter(inCollection), `collections/${key}/items`);
    if (n === 4 && sub === 'items' && subsub === 'top') {
      return listItems(
        r,
        liveItems(r).filter((i) => inCollection(i) && !i.parentItem),
        `collections/${key}/items/top`,
        liveItems(r),
      );
    }
    if (n === 3 && sub === 'tags') return listTags(r, liveItems(r).filter(inCollection));
    return false;
  }
  if (head === 'items') {
    if (n === 1) return listItems(r, liveItems(r), 'items');
    if (n === 2 && key === 'top')
      return listItems(
        r,
        liveItems(r).filter((i) => !i.parentItem),
        'items/top',
        liveItems(r),
      );
    if (n === 2 && key === 'trash') {
      return listItems(
        r,
        [...r.lib.items.values()].filter((i) => i.deleted),
        'items/trash',
      );
    }
    const item = key ? r.lib.items.get(key) : undefined;
    if (!item) throw new HttpError(404, 'Item not found');
    if (n === 2) return singleItem(r, item);
    if (n === 3 && sub === 'children') {
      return listItems(
        r,
        liveItems(r).filter((i) => i.parentItem === item.key),
        `items/${key}/children`,
      );
    }
    if (n === 3 && sub === 'tags') return listTags(r, [item]);
    if (n === 3 && sub === 'fulltext') return getItemFulltext(r, item);
    return false;
  }
  if (head === 'searches') {
    if (n === 1) return listSearches(r);
    const search = key ? r.lib.searches.get(key) : undefined;
    if (!search) throw new HttpError(404, 'Search not found');
    if (n === 2) return single(r, search, searchJson(rc(r), search));
    // Only the desktop's local API runs a saved search (routes-searches.ts).
    if (n === 3 && sub === 'items' && r.unpaged)
      return listItems(r, runSavedSearch(r.lib, search), `searches/${search.key}/items`);
    return false;
  }
  if (head === 'tags' && n === 1) return listTags(r, liveItems(r));
  if (head === 'deleted' && n === 1) return deleted(r);
  if (head === 'fulltext' && n === 1) return fulltextSince(r);
  return false;
}

function rc(r: LibraryRoute): RenderCtx {
  return { base: r.ctx.base, state: r.state, lib: r.lib };
}

function includeTrashed(r: LibraryRoute): boolean {
  const v = r.ctx.params.get('includeTrashed');
  return v === '1' || v === 'true';
}

/** Objects outside the trash, unless `includeTrashed`. */
function all<T extends { deleted?: boolean }>(r: LibraryRoute, map: Map<string, T>): T[] {
  const list = [...map.values()];
  return includeTrashed(r) ? list : list.filter((o) => !o.deleted);
}

function liveItems(r: LibraryRoute): ItemData[] {
  return all(r, r.lib.items);
}

function single(r: LibraryRoute, obj: { version: number }, json: unknown): true {
  const since = versionHeader(r.ctx, 'If-Modified-Since-Version');
  if (since !== undefined && obj.version <= since) {
    send(r.ctx, 304, undefined, { 'Last-Modified-Version': String(obj.version) });
  } else {
    send(r.ctx, 200, json, { 'Last-Modified-Version': String(obj.version) });
  }
  return true;
}

function listCollections(r: LibraryRoute, objects: CollectionData[], rest: string): true {
  const spec: ListSpec<CollectionData> = {
    objects,
    keyOf: (c) => c.key,
    versionOf: (c) => c.version,
    render: (c) => collectionJson(rc(r), c),
    sorts: { title: (c) => c.name, name: (c) => c.name, version: (c) => c.version },
    defaultSort: 'title',
    keyParam: 'collectionKey',
    alternate: alternateUrl(r.state, r.lib, rest),
    ignoreStart: r.ignoreStart,
    unpaged: r.unpaged,
  };
  sendList(r.ctx, r.lib.version, spec);
  return true;
}

function listSearches(r: LibraryRoute): true {
  const spec: ListSpec<SearchData> = {
    objects: all(r, r.lib.searches),
    keyOf: (s) => s.key,
    versionOf: (s) => s.version,
    render: (s) => searchJson(rc(r), s),
    sorts: { title: (s) => s.name, name: (s) => s.name },
    defaultSort: 'title',
    keyParam: 'searchKey',
    alternate: alternateUrl(r.state, r.lib, 'searches'),
    ignoreStart: r.ignoreStart,
    unpaged: r.unpaged,
  };
  sendList(r.ctx, r.lib.version, spec);
  return true;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function firstCreator(i: ItemData): string {
  const c = Array.isArray(i.creators) ? (i.creators[0] as Record<string, unknown> | undefined) : undefined;
  return str(c?.lastName ?? c?.name);
}

const ITEM_FIELD_SORTS = [
  'publisher',
  'publicationTitle',
  'journalAbbreviation',
  'language',
  'accessDate',
  'libraryCatalog',
  'callNumber',
  'rights',
];

/** `children`: for the top-level listings, the items whose `q` match counts for their parent. */
function listItems(r: LibraryRoute, objects: ItemData[], rest: string, children?: ItemData[]): true {
  const sorts: ListSpec<ItemData>['sorts'] = {
    title: (i) => str(i.title ?? i.note),
    creator: firstCreator,
    itemType: (i) => i.itemType,
    date: (i) => str(i.date),
    dateAdded: (i) => i.dateAdded,
    dateModified: (i) => i.dateModified,
  };
  for (const f of ITEM_FIELD_SORTS) sorts[f] = (i) => str(i[f]);
  const spec: ListSpec<ItemData> = {
    objects: filterItems(r.ctx, objects, children),
    keyOf: (i) => i.key,
    versionOf: (i) => i.version,
    render: (i) => itemJson(rc(r), i),
    sorts,
    defaultSort: 'dateModified',
    keyParam: 'itemKey',
    alternate: alternateUrl(r.state, r.lib, rest),
    ignoreStart: r.ignoreStart,
    unpaged: r.unpaged,
    items: { output: outputCtx(r), itemOf: (i) => i },
  };
  sendList(r.ctx, r.lib.version, spec);
  return true;
}

function outputCtx(r: LibraryRoute): OutputCtx {
  return { local: r.unpaged === true, prefix: r.lib.prefix, params: r.ctx.params };
}

/**
 * One item with Zotero's outputs: `include` on JSON, `format=bib` or an export format (the
 * body alone, as Zotero answers a single-object export).
 */
function singleItem(r: LibraryRoute, item: ItemData): true {
  const format = r.ctx.params.get('format') ?? 'json';
  const o = outputCtx(r);
  const version = { 'Last-Modified-Version': String(item.version) };
  if (format === 'json')
    return single(r, item, withIncludes(itemJson(rc(r), item) as Record<string, unknown>, item, o));
  if (format === 'bib') {
    send(r.ctx, 200, bibliographyHtml([item], o), { ...version, 'Content-Type': 'text/html; charset=utf-8' });
    return true;
  }
  if (isExportFormat(format)) {
    const out = exportBody(format, [item], o);
    send(r.ctx, 200, out.body, { ...version, 'Content-Type': out.type });
    return true;
  }
  throw new HttpError(400, `Invalid 'format' value '${format}'`);
}

/**
 * Zotero search parameters: `q` (+ `qmode`), and `tag` / `itemType` where `a || b` is OR,
 * a leading `-` negates, and repeating the parameter ANDs.
 */
function filterItems(ctx: Ctx, items: ItemData[], children?: ItemData[]): ItemData[] {
  let out = items;
  const q = ctx.params.get('q')?.trim().toLowerCase();
  if (q) {
    const everything = ctx.params.get('qmode') === 'everything';
    // `/items/top?q=`: a child that matches counts for its parent, as in Zotero's own search.
    const parents = new Set(
      (children ?? [])
        .filter((c) => c.parentItem && searchableText(c, everything).includes(q))
        .map((c) => c.parentItem),
    );
    out = out.filter((i) => parents.has(i.key) || searchableText(i, everything).includes(q));
  }
  for (const expr of ctx.params.getAll('tag')) {
    const set = orSet(expr);
    if (set) out = out.filter((i) => set.negate !== i.tags.some((t) => set.values.includes(t.tag)));
  }
  for (const expr of ctx.params.getAll('itemType')) {
    const set = orSet(expr);
    if (set) out = out.filter((i) => set.negate !== set.values.includes(i.itemType));
  }
  return out;
}

function orSet(expr: string): { negate: boolean; values: string[] } | undefined {
  let v = expr.trim();
  if (v === '') return undefined;
  let negate = false;
  if (v.startsWith('-')) {
    negate = true;
    v = v.slice(1);
  } else if (v.startsWith('\\-')) v = v.slice(1);
  return { negate, values: v.split(/\s+\|\|\s+/) };
}

function searchableText(i: ItemData, everything: boolean): string {
  const creators = Array.isArray(i.creators)
    ? (i.creators as Array<Record<string, unknown>>).map((c) =>
        [c.firstName, c.lastName, c.name].map(str).join(' '),
      )
    : [];
  const parts = [str(i.title), ...creators, str(i.date).slice(0, 4)];
  if (everything) for (const v of Object.values(i)) if (typeof v === 'string') parts.push(v);
  return parts.join('\n').toLowerCase();
}

interface TagRow {
  tag: string;
  type: number;
  numItems: number;
}

function listTags(r: LibraryRoute, items: ItemData[]): true {
  const rows = new Map<string, TagRow>();
  for (const item of items) {
    for (const t of item.tags) {
      const type = t.type ?? 0;
      const id = `${type}\u0000${t.tag}`;
      const row = rows.get(id) ?? { tag: t.tag, type, numItems: 0 };
      row.numItems++;
      rows.set(id, row);
    }
  }
  // `q` (+ `qmode`): tags whose name contains q (or starts with it), case-insensitively.
  const q = r.ctx.params.get('q')?.trim().toLowerCase();
  const startsWith = r.ctx.params.get('qmode') === 'startsWith';
  const named = (t: TagRow) =>
    !q || (startsWith ? t.tag.toLowerCase().startsWith(q) : t.tag.toLowerCase().includes(q));
  const spec: ListSpec<TagRow> = {
    objects: [...rows.values()].filter(named),
    keyOf: (t) => t.tag,
    render: (t) => tagJson(rc(r), t.tag, t.type, t.numItems),
    sorts: { title: (t) => t.tag, numItems: (t) => t.numItems },
    defaultSort: 'title',
    alternate: alternateUrl(r.state, r.lib, 'tags'),
    ignoreStart: r.ignoreStart,
    unpaged: r.unpaged,
  };
  sendList(r.ctx, r.lib.version, spec);
  return true;
}

function deleted(r: LibraryRoute): true {
  const since = intParam(r.ctx, 'since');
  if (since === undefined) throw new HttpError(400, "'since' parameter must be provided");
  if (notModified(r.ctx, r.lib.version)) return true;
  const out: Record<DeletedKind, string[]> = {
    collections: [],
    items: [],
    searches: [],
    tags: [],
    settings: [],
  };
  for (const d of r.lib.deletedLog) if (d.version > since) out[d.kind].push(d.key);
  send(r.ctx, 200, out, { 'Last-Modified-Version': String(r.lib.version) });
  return true;
}
