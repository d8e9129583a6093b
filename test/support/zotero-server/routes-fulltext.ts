/**
 * Full-text routes under a library prefix:
 * - `GET items/{key}/fulltext`: `{content, indexedPages, totalPages}` (or the `Chars` pair),
 *   `Last-Modified-Version` the full-text version; 404 when the item is not there, is not a
 *   file attachment, or has no full text;
 * - `PUT items/{key}/fulltext` (write access, `Content-Type: application/json`): 204, the
 *   library version moves and becomes the item's full-text version;
 * - `GET fulltext?since=V`: `{itemKey: version}` of the texts newer than V, with the library
 *   version (400 without `since`, as documented; 304 under `If-Modified-Since-Version`).
 * The local API serves the two GETs (`routes-local.ts` goes through `handleRead`).
 */
import { HttpError, intParam, send } from './http.js';
import { fulltextJson, holdsFulltext, parseFulltext, storeFulltext } from './fulltext.js';
import { notModified } from './listing.js';
import { WriteError } from './mutate.js';
import type { LibraryRoute } from './routes-read.js';
import type { ItemData } from './types.js';

export function getItemFulltext(r: LibraryRoute, item: ItemData): true {
  const data = holdsFulltext(item) ? r.lib.fulltext.get(item.key) : undefined;
  if (!data) throw new HttpError(404, 'Not found');
  send(r.ctx, 200, fulltextJson(data), { 'Last-Modified-Version': String(data.version) });
  return true;
}

export function fulltextSince(r: LibraryRoute): true {
  const since = intParam(r.ctx, 'since');
  if (since === undefined) throw new HttpError(400, "'since' parameter must be provided");
  if (notModified(r.ctx, r.lib.version)) return true;
  const out: Record<string, number> = {};
  for (const [key, data] of r.lib.fulltext) {
    // The dataserver joins with the items: text of a deleted item is not listed.
    if (data.version > since && r.lib.items.has(key)) out[key] = data.version;
  }
  send(r.ctx, 200, out, { 'Last-Modified-Version': String(r.lib.version) });
  return true;
}

export function putItemFulltext(r: LibraryRoute, key: string): true {
  const type = (r.ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new HttpError(400, 'Content-Type must be application/json');
  if (typeof r.ctx.body === 'string') throw new HttpError(400, 'Invalid JSON');
  try {
    const input = parseFulltext(r.ctx.body);
    storeFulltext(r.lib, key, input, r.lib.version + 1);
  } catch (e) {
    if (e instanceof WriteError) throw new HttpError(e.code, e.message);
    throw e;
  }
  r.lib.version++;
  send(r.ctx, 204, undefined, { 'Last-Modified-Version': String(r.lib.version) });
  return true;
}
