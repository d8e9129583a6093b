/**
 * `zotero_search_items`: items of a library, filtered, searched and paged by the backend the
 * router picks, in the Web API's JSON shape. `added_within_days` (`zot recent --days N`) walks the
 * library newest-added first until it passes the cut-off, so it needs no date filter from the
 * backend.
 */
import { ZoteusError } from '../../errors.js';
import type { LibraryArgs } from '../../library/address.js';
import type { ItemQuery, LibraryReader, WebApiItem } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { localSchema, type ItemSchema } from '../schema.js';
import { boundItem, fitRows, nextStartOf } from './bounds.js';
import { answered, openReader, type Answered, type OpenedLibrary } from './common.js';
import { fieldNames, pickFields, withoutEmpty, type ListedItem } from './compact.js';
import { tagSearchWord, tagVariantsMessage, wantedTags } from './filters.js';

import type { SortField } from '../../library/port.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
/** Characters of one text field (an abstract, a note) that a search result keeps. */
export const SEARCH_FIELD_CHARS = 2_000;
/** At most this many of the newest items are read for `added_within_days`. */
export const RECENT_CAP = 10_000;
const PAGE = 100;
const DAY_MS = 86_400_000;

export interface SearchInput extends LibraryArgs {
  q?: string | undefined;
  qmode?: 'titleCreatorYear' | 'everything' | undefined;
  item_type?: string | string[] | undefined;
  tag?: string | string[] | undefined;
  collection_key?: string | undefined;
  top?: boolean | undefined;
  since?: number | undefined;
  include_trashed?: boolean | undefined;
  sort?: SortField | undefined;
  direction?: 'asc' | 'desc' | undefined;
  start?: number | undefined;
  limit?: number | undefined;
  added_within_days?: number | undefined;
  /** The fields each item keeps (entries may be comma lists); every field that is not empty by default. */
  fields?: readonly string[] | undefined;
}

export interface SearchOutput extends Answered {
  /** Items without their empty values (only the chosen fields with `fields`). */
  items: ListedItem[];
  totalResults: number;
  start: number;
  complete?: boolean;
  message?: string;
  /** Where the next page starts, when items follow this page. */
  nextStart?: number;
  /** The size bound cut the page short of `limit`. */
  truncated?: boolean;
  /** Fields of items on this page cut to keep it bounded. */
  truncatedFields?: Array<{ key: string; field: string; length: number }>;
}

/**
 * `q` as words separated by single spaces: punctuation separates words (`sea-level` → `sea
 * level`), so every backend gets the same words; the Web API then requires each of them.
 */
export function queryText(q: string | undefined): string {
  return q === undefined
    ? ''
    : q
        .split(/[^\p{L}\p{N}\p{M}]+/u)
        .filter(Boolean)
        .join(' ');
}

/** The reader's query for an input (no `start`/`limit`). */
export function itemQuery(input: SearchInput): ItemQuery {
  const q = queryText(input.q);
  const query: ItemQuery = { includeTrashed: input.include_trashed ?? false };
  if (input.top !== undefined) query.top = input.top;
  if (q) {
    query.q = q;
    query.qmode = input.qmode ?? 'titleCreatorYear';
  }
  if (input.item_type !== undefined) query.itemType = input.item_type;
  if (input.tag !== undefined) query.tag = input.tag;
  if (input.collection_key !== undefined) query.collectionKey = input.collection_key;
  if (input.since !== undefined) query.since = input.since;
  if (input.sort !== undefined) query.sort = input.sort;
  if (input.direction !== undefined) query.direction = input.direction;
  return query;
}

/** A page as the reader answered it, before it is made compact and bounded. */
type RawPage = Omit<SearchOutput, keyof Answered | 'items'> & { items: WebApiItem[] };

export async function searchItems(deps: Deps, input: SearchInput): Promise<SearchOutput> {
  if (input.added_within_days !== undefined && input.sort !== undefined && input.sort !== 'dateAdded') {
    throw new ZoteusError(
      'validation_error',
      `added_within_days lists items by the date they were added; sort "${input.sort}" cannot apply.`,
      { field: 'sort', hint: 'Omit sort (or use "dateAdded"); direction "asc" lists the oldest first.' },
    );
  }
  const shape = shaper(deps, input);
  const opened = await openReader(deps, input);
  const { reader, route } = opened;
  const start = input.start ?? 0;
  const limit = input.limit ?? DEFAULT_LIMIT;
  const query = itemQuery(input);
  let page: RawPage;
  if (input.added_within_days !== undefined) {
    page = await addedWithin(deps, reader, query, input.added_within_days, start, limit);
  } else {
    const { items, totalResults, notice } = await reader.items({ ...query, start, limit });
    page = { items, totalResults, start, ...(notice ? { message: notice } : {}) };
  }
  if (page.totalResults === 0 && input.tag !== undefined) {
    const variants = await tagVariants(deps, opened, input);
    if (variants) page.message = page.message ? `${page.message} ${variants}` : variants;
  }
  return { ...bounded(page, shape), ...answered(route) };
}

/** How a listed item is shaped: without its empty values, and with only `fields` when given. */
function shaper(deps: Deps, input: SearchInput): (item: WebApiItem) => ListedItem {
  const names = fieldNames(input.fields);
  if (names === undefined) return (item) => withoutEmpty(item);
  const schema: ItemSchema = localSchema(deps.config);
  return (item) => pickFields(item, names, schema);
}

/**
 * Why a tag filter found nothing, when the library has a wanted tag in another case or spacing
 * (tags match exactly): from the backend's tag list on the desktop's backends, from one tag
 * search of at most 100 tags on the Web API (for the first wanted tag). Never fails the search.
 */
async function tagVariants(
  deps: Deps,
  { reader, route }: OpenedLibrary,
  input: SearchInput,
): Promise<string | undefined> {
  const wanted = wantedTags(input.tag);
  if (wanted.length === 0) return undefined;
  const includeTrashed = input.include_trashed === true;
  try {
    if (reader.backend !== 'web') {
      const tags = await reader.tags({ includeTrashed });
      return tagVariantsMessage(
        wanted,
        tags.map((t) => t.tag),
        true,
      );
    }
    const first = wanted[0] as string;
    const { webClient } = await import('../../library/keys.js');
    const client = await webClient(deps);
    const response = await client.request<unknown>('GET', `/${route.library}/tags`, {
      query: {
        q: tagSearchWord(first),
        qmode: 'contains',
        limit: TAG_SEARCH_LIMIT,
        ...(includeTrashed ? { includeTrashed: 1 } : {}),
      },
      call: client.newCall(),
    });
    const objects = Array.isArray(response.data) ? (response.data as Array<{ tag?: unknown }>) : [];
    const names = objects.map((o) => o?.tag).filter((t): t is string => typeof t === 'string');
    const complete = (response.totalResults ?? names.length) <= names.length;
    return tagVariantsMessage([first], names, complete);
  } catch (error) {
    deps.log.debug(`Looking for variants of the tag filter failed: ${(error as Error).message}`);
    return undefined;
  }
}

/** Tags one Web API tag search reads when a tag filter found nothing. */
const TAG_SEARCH_LIMIT = 100;

/**
 * A page within the size bound (bounds.ts): long text fields cut at SEARCH_FIELD_CHARS and long
 * lists at ITEM_LIST_MAX entries (`truncatedFields` names those the page shows), each item
 * shaped (empty values left out, or only `fields`), then as many items as fit.
 */
function bounded(out: RawPage, shape: (item: WebApiItem) => ListedItem): Omit<SearchOutput, keyof Answered> {
  const cuts: Array<{ key: string; field: string; length: number }> = [];
  const items = out.items.map((item) => {
    const b = boundItem(item, SEARCH_FIELD_CHARS);
    const shaped = shape(b.item);
    const data = (shaped.data ?? {}) as Record<string, unknown>;
    for (const cut of b.cuts) {
      if (data[cut.field] !== undefined) cuts.push({ key: item.key, field: cut.field, length: cut.length });
    }
    return shaped;
  });
  const fit = fitRows(items);
  const shown = new Set(fit.rows.map((i) => i.key));
  const kept = cuts.filter((c) => shown.has(c.key));
  const nextStart = nextStartOf(out.start, fit.rows.length, out.totalResults);
  return {
    ...out,
    items: fit.rows,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(fit.cut ? { truncated: true } : {}),
    ...(kept.length > 0 ? { truncatedFields: kept } : {}),
  };
}

/**
 * Items added in the last `days` days: pages newest-added first until one passes the cut-off
 * (or RECENT_CAP items were read), then `direction` and paging apply to that window.
 */
async function addedWithin(
  deps: Deps,
  reader: LibraryReader,
  query: ItemQuery,
  days: number,
  start: number,
  limit: number,
): Promise<RawPage> {
  const cutoff = deps.clock.now() - days * DAY_MS;
  const window: WebApiItem[] = [];
  let capped = false;
  for (let offset = 0; ; offset += PAGE) {
    const page = await reader.items({
      ...query,
      sort: 'dateAdded',
      direction: 'desc',
      start: offset,
      limit: PAGE,
    });
    let passed = false;
    for (const item of page.items) {
      const added = Date.parse(item.data.dateAdded);
      if (!(added >= cutoff)) {
        passed = true;
        break;
      }
      window.push(item);
    }
    if (passed || page.items.length < PAGE || offset + PAGE >= page.totalResults) break;
    if (window.length >= RECENT_CAP) {
      capped = true;
      break;
    }
  }
  if (query.direction === 'asc') window.reverse();
  const out: RawPage = {
    items: window.slice(start, start + limit),
    totalResults: window.length,
    start,
  };
  if (capped) {
    out.complete = false;
    out.message = `More than ${RECENT_CAP.toLocaleString('en-US')} items were added in the last ${days} days; only the ${RECENT_CAP.toLocaleString('en-US')} newest were read (totalResults counts those).`;
  }
  return out;
}
