/**
 * Multi-object answers: key filters, `since`, sorting, `format`, paging and the headers
 * (`Total-Results`, `Link`, `Last-Modified-Version`) built the way Zotero's dataserver does.
 */
import {
  bibliographyHtml,
  exportBody,
  isExportFormat,
  MAX_BIBLIOGRAPHY_ITEMS,
  withIncludes,
  type OutputCtx,
} from './citations.js';
import { HttpError, intParam, send, versionHeader, type Ctx } from './http.js';
import { isValidKey } from './keys.js';
import type { ItemData } from './types.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/** Cap on `itemKey`/`collectionKey`/`searchKey` lists. */
export const MAX_OBJECT_KEYS = 50;

export interface ListSpec<T> {
  objects: T[];
  keyOf(o: T): string;
  /** Absent for tags: no `since`, no `format=keys|versions`. */
  versionOf?(o: T): number;
  render(o: T): unknown;
  /** Sort field → value; the first entry need not be the default. */
  sorts: Record<string, (o: T) => string | number>;
  defaultSort: string;
  /** `itemKey`, `collectionKey` or `searchKey`. */
  keyParam?: string;
  /** Website URL for `rel="alternate"`. */
  alternate: string;
  /** The deviation switch of the fault injector. */
  ignoreStart: boolean;
  /** The desktop local API: every object unless `limit` is given, and `limit` is not clamped. */
  unpaged?: boolean | undefined;
  /** Item listings: `format=bib`, the export formats and `include` (citations.ts). */
  items?: { output: OutputCtx; itemOf(o: T): ItemData } | undefined;
}

/** `If-Modified-Since-Version` on a multi-object request: 304 when the library has not moved. */
export function notModified(ctx: Ctx, libraryVersion: number): boolean {
  const since = versionHeader(ctx, 'If-Modified-Since-Version');
  if (since === undefined || libraryVersion > since) return false;
  send(ctx, 304, undefined, { 'Last-Modified-Version': String(libraryVersion) });
  return true;
}

/** Parses a comma list of object keys (leading/trailing commas allowed, as in Zotero). */
export function keyList(ctx: Ctx, name: string): string[] | undefined {
  const raw = ctx.params.get(name);
  if (raw === null) return undefined;
  const keys = raw
    .replace(/^,+|,+$/g, '')
    .split(',')
    .filter(Boolean);
  if (keys.length === 0 || !keys.every(isValidKey))
    throw new HttpError(400, `Invalid '${name}' value '${raw}'`);
  if (keys.length > MAX_OBJECT_KEYS) {
    throw new HttpError(400, `Cannot specify more than ${MAX_OBJECT_KEYS} keys in '${name}'`);
  }
  return keys;
}

/** `libraryVersion` feeds `Last-Modified-Version` and the 304 check. */
export function sendList<T>(ctx: Ctx, libraryVersion: number, spec: ListSpec<T>): void {
  if (notModified(ctx, libraryVersion)) return;
  let objects = spec.objects;

  const keys = spec.keyParam ? keyList(ctx, spec.keyParam) : undefined;
  if (keys) objects = objects.filter((o) => keys.includes(spec.keyOf(o)));

  const since = intParam(ctx, 'since');
  const versionOf = spec.versionOf;
  if (since !== undefined && versionOf) objects = objects.filter((o) => versionOf(o) > since);

  objects = sorted(ctx, objects, spec);

  const format = ctx.params.get('format') ?? 'json';
  const formats: string[] = versionOf ? ['json', 'keys', 'versions'] : ['json'];
  const items = spec.items;
  const itemFormat = items !== undefined && (format === 'bib' || isExportFormat(format));
  if (!formats.includes(format) && !itemFormat) {
    throw new HttpError(400, `Invalid 'format' value '${format}'`);
  }
  const total = objects.length;
  if (items && format === 'bib' && !spec.unpaged) {
    // The Web API formats the whole listing, whatever `start` and `limit` say, up to 150 items.
    if (total > MAX_BIBLIOGRAPHY_ITEMS) {
      throw new HttpError(413, `Cannot generate bibliography with more than ${MAX_BIBLIOGRAPHY_ITEMS} items`);
    }
    send(ctx, 200, bibliographyHtml(objects.map(items.itemOf), items.output), {
      'Content-Type': 'text/html; charset=utf-8',
      'Last-Modified-Version': String(libraryVersion),
    });
    return;
  }

  const limitParam = intParam(ctx, 'limit');
  let limit: number;
  if (format === 'keys' || format === 'versions') {
    // keys and versions are unpaged unless the client asks for a page.
    limit = limitParam || total;
  } else if (limitParam) {
    limit = spec.unpaged ? limitParam : Math.min(limitParam, MAX_LIMIT);
  } else if (spec.unpaged) {
    limit = total;
  } else {
    // An explicit key list is served whole (at most 50), as in Zotero.
    limit = keys ? MAX_OBJECT_KEYS : DEFAULT_LIMIT;
  }
  const start = spec.ignoreStart ? 0 : (intParam(ctx, 'start') ?? 0);
  const page = objects.slice(start, start + limit);

  const headers: Record<string, string> = {
    'Total-Results': String(total),
    'Last-Modified-Version': String(libraryVersion),
    Link: linkHeader(
      ctx,
      { total, start, limit, effectiveLimit: limitParam ? limit : undefined },
      spec.alternate,
    ),
  };
  if (format === 'keys') {
    send(ctx, 200, page.map((o) => spec.keyOf(o)).join('\n') + (page.length ? '\n' : ''), headers);
  } else if (format === 'versions' && versionOf) {
    send(ctx, 200, Object.fromEntries(page.map((o) => [spec.keyOf(o), versionOf(o)])), headers);
  } else if (items && format === 'bib') {
    // The desktop pages first, then formats the page.
    const html = bibliographyHtml(page.map(items.itemOf), items.output);
    send(ctx, 200, html, { ...headers, 'Content-Type': 'text/html; charset=utf-8' });
  } else if (items && format !== 'json') {
    const out = exportBody(format, page.map(items.itemOf), items.output);
    send(ctx, 200, out.body, { ...headers, 'Content-Type': out.type });
  } else if (items) {
    send(
      ctx,
      200,
      page.map((o) => withIncludes(spec.render(o) as Record<string, unknown>, items.itemOf(o), items.output)),
      headers,
    );
  } else {
    send(ctx, 200, page.map(spec.render), headers);
  }
}

function sorted<T>(ctx: Ctx, objects: T[], spec: ListSpec<T>): T[] {
  let sort = ctx.params.get('sort') ?? spec.defaultSort;
  let direction = ctx.params.get('direction') ?? undefined;
  // Zotero accepts `sort=asc|desc` as the direction of the default sort.
  if (sort === 'asc' || sort === 'desc') {
    direction = sort;
    sort = spec.defaultSort;
  }
  const value = spec.sorts[sort];
  if (!value) throw new HttpError(400, `Invalid 'sort' value '${sort}'`);
  if (direction !== undefined && direction !== 'asc' && direction !== 'desc') {
    throw new HttpError(400, `Invalid 'direction' value '${direction}'`);
  }
  // Date fields sort newest first by default, everything else ascending.
  const sign = (direction ?? (sort.startsWith('date') ? 'desc' : 'asc')) === 'desc' ? -1 : 1;
  return [...objects].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const c =
      typeof va === 'number' && typeof vb === 'number' ? va - vb : COLLATOR.compare(String(va), String(vb));
    return c !== 0 ? sign * c : spec.keyOf(a) < spec.keyOf(b) ? -1 : spec.keyOf(a) > spec.keyOf(b) ? 1 : 0;
  });
}

/** One collator for every comparison: `localeCompare` with options builds one per call. */
const COLLATOR = new Intl.Collator('en', { sensitivity: 'base' });

/**
 * Zotero's Link header: `<url>; rel="first"` (when not on the first page), `rel="prev"`,
 * `rel="next"`, `rel="last"` (when the last page is not this one) and `rel="alternate"`.
 * URLs carry only non-default parameters, sorted by name, like the dataserver's.
 */
function linkHeader(
  ctx: Ctx,
  p: { total: number; start: number; limit: number; effectiveLimit: number | undefined },
  alternate: string,
): string {
  const { total, start, limit } = p;
  const nonDefault = new URLSearchParams();
  const names = [...new Set(ctx.params.keys())].sort();
  for (const name of names) {
    // The API key must never be echoed into URLs.
    if (name === 'start' || name === 'key') continue;
    if (name === 'limit') {
      if (p.effectiveLimit !== undefined && p.effectiveLimit !== DEFAULT_LIMIT) {
        nonDefault.append('limit', String(p.effectiveLimit));
      }
      continue;
    }
    if (name === 'format' && ctx.params.get('format') === 'json') continue;
    for (const v of ctx.params.getAll(name)) nonDefault.append(name, v);
  }
  const url = (s: number): string => {
    const q = new URLSearchParams(nonDefault);
    if (s > 0) q.append('start', String(s));
    // Keep the parameters sorted with start among them, as the dataserver does.
    q.sort();
    const qs = q.toString();
    return `${ctx.base}${ctx.path}${qs ? `?${qs}` : ''}`;
  };
  const self = url(start);
  const parts: string[] = [];
  const first = url(0);
  if (first !== self) parts.push(`<${first}>; rel="first"`);
  if (start > 0) parts.push(`<${url(Math.max(0, start - limit))}>; rel="prev"`);
  if (limit > 0 && start + limit < total) parts.push(`<${url(start + limit)}>; rel="next"`);
  if (limit > 0 && !(start === 0 && limit >= total)) {
    let lastStart: number;
    if (start >= total) lastStart = total - limit;
    else {
      lastStart = total - (total % limit);
      if (lastStart === total) lastStart = total - limit;
    }
    const last = url(Math.max(0, lastStart));
    if (last !== self) parts.push(`<${last}>; rel="last"`);
  }
  parts.push(`<${alternate}>; rel="alternate"`);
  return parts.join(', ');
}
