/**
 * JSON shapes of the objects as the Zotero Web API v3 serves them (`format=json`):
 * `{key, version, library, links, meta, data}` for collections, items and searches.
 */
import type { Library, ServerState, GroupRecord } from './state.js';
import type { CollectionData, ItemData, SearchData } from './types.js';

const WWW = 'https://www.zotero.org';

export interface RenderCtx {
  base: string;
  state: ServerState;
  lib: Library;
}

function wwwLibrary(state: ServerState, lib: Library): string {
  return lib.type === 'user' ? `${WWW}/${state.libraryName(lib)}` : `${WWW}/groups/${lib.id}`;
}

/** The website counterpart of an API path, for `alternate` links. */
export function alternateUrl(state: ServerState, lib: Library, rest: string): string {
  return rest ? `${wwwLibrary(state, lib)}/${rest}` : wwwLibrary(state, lib);
}

function link(href: string, type = 'application/json'): { href: string; type: string } {
  return { href, type };
}

export function libraryJson(rc: RenderCtx): unknown {
  return {
    type: rc.lib.type,
    id: rc.lib.id,
    name: rc.state.libraryName(rc.lib),
    links: { alternate: link(wwwLibrary(rc.state, rc.lib), 'text/html') },
  };
}

function objectLinks(
  rc: RenderCtx,
  kind: string,
  key: string,
): Record<string, { href: string; type: string }> {
  return {
    self: link(`${rc.base}/${rc.lib.prefix}/${kind}/${key}`),
    alternate: link(alternateUrl(rc.state, rc.lib, `${kind}/${key}`), 'text/html'),
  };
}

export function collectionJson(rc: RenderCtx, c: CollectionData): unknown {
  let numCollections = 0;
  for (const other of rc.lib.collections.values()) {
    if (other.parentCollection === c.key && !other.deleted) numCollections++;
  }
  let numItems = 0;
  for (const item of rc.lib.items.values()) if (!item.deleted && item.collections.includes(c.key)) numItems++;
  const data: Record<string, unknown> = {
    key: c.key,
    version: c.version,
    name: c.name,
    parentCollection: c.parentCollection,
    relations: c.relations,
  };
  if (c.deleted) data.deleted = true;
  return {
    key: c.key,
    version: c.version,
    library: libraryJson(rc),
    links: objectLinks(rc, 'collections', c.key),
    meta: { numCollections, numItems },
    data,
  };
}

/** Items that can have children (not notes, attachments or annotations) carry meta.numChildren. */
const CHILD_TYPES = new Set(['note', 'attachment', 'annotation']);

export function itemJson(rc: RenderCtx, item: ItemData): unknown {
  const meta: Record<string, unknown> = {};
  const summary = creatorSummary(item.creators);
  if (summary) meta.creatorSummary = summary;
  const parsedDate =
    typeof item.date === 'string' ? /^\d{4}(-\d{2}(-\d{2})?)?/.exec(item.date)?.[0] : undefined;
  if (parsedDate) meta.parsedDate = parsedDate;
  if (!item.parentItem && !CHILD_TYPES.has(item.itemType)) {
    let numChildren = 0;
    for (const other of rc.lib.items.values())
      if (other.parentItem === item.key && !other.deleted) numChildren++;
    meta.numChildren = numChildren;
  }
  const links = objectLinks(rc, 'items', item.key);
  if (item.parentItem) links.up = link(`${rc.base}/${rc.lib.prefix}/items/${item.parentItem}`);
  // Field order as Zotero serves it: identity first, fields, then the bookkeeping arrays and dates.
  const {
    key,
    version,
    itemType,
    collections,
    tags,
    relations,
    dateAdded,
    dateModified,
    deleted,
    ...fields
  } = item;
  const data: Record<string, unknown> = {
    key,
    version,
    itemType,
    ...fields,
    tags,
    collections,
    relations,
    dateAdded,
    dateModified,
  };
  // Zotero serves the trash flag as 1 and leaves it out otherwise.
  if (deleted) data.deleted = 1;
  return { key: item.key, version: item.version, library: libraryJson(rc), links, meta, data };
}

function creatorSummary(creators: unknown): string | undefined {
  if (!Array.isArray(creators) || creators.length === 0) return undefined;
  const names = creators.map((c: Record<string, unknown>) => String(c.lastName ?? c.name ?? ''));
  if (names.length === 1) return names[0];
  if (names.length === 2) return `${names[0]} and ${names[1]}`;
  return `${names[0]} et al.`;
}

export function searchJson(rc: RenderCtx, s: SearchData): unknown {
  return {
    key: s.key,
    version: s.version,
    library: libraryJson(rc),
    links: objectLinks(rc, 'searches', s.key),
    meta: {},
    data: { ...s },
  };
}

export function tagJson(rc: RenderCtx, tag: string, type: number, numItems: number): unknown {
  const encoded = encodeURIComponent(tag);
  return {
    tag,
    links: {
      self: link(`${rc.base}/${rc.lib.prefix}/tags/${encoded}`),
      alternate: link(alternateUrl(rc.state, rc.lib, `tags/${encoded}`), 'text/html'),
    },
    meta: { type, numItems },
  };
}

export function groupJson(base: string, state: ServerState, g: GroupRecord): unknown {
  const lib = state.library(`groups/${g.id}`);
  const meta: Record<string, unknown> = { created: g.created, lastModified: g.created };
  if (!g.omitNumItems) {
    let numItems = 0;
    for (const item of lib.items.values()) if (!item.deleted) numItems++;
    meta.numItems = numItems;
  }
  return {
    id: g.id,
    version: g.version,
    links: {
      self: link(`${base}/groups/${g.id}`),
      alternate: link(`${WWW}/groups/${g.id}`, 'text/html'),
    },
    meta,
    data: {
      id: g.id,
      version: g.version,
      name: g.name,
      owner: g.owner,
      type: g.type,
      description: g.description,
      url: '',
      libraryEditing: g.libraryEditing,
      libraryReading: g.libraryReading,
      fileEditing: g.fileEditing,
      members: g.members,
      admins: g.admins,
    },
  };
}
