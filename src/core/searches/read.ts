/**
 * `zotero_saved_searches`: a library's saved searches (their definitions: name and conditions)
 * on every backend, and running one. Only the desktop's local API runs a saved search
 * (`searches/KEY/items`, Zotero's own search engine); the Web API and zotero.sqlite hold the
 * definitions only, so `run` there is refused, saying what could run it — never an empty page.
 */
import { paramRef, toolRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import { boundItem, fitRows, nextStartOf } from '../items/read/bounds.js';
import { answered, openReader, type Answered, type OpenedLibrary } from '../items/read/common.js';
import { withoutEmpty, type ListedItem } from '../items/read/compact.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiSearch } from '../library/port.js';
import { compareNames } from '../text-order.js';
import type { Deps } from '../tool.js';
import type { SearchCondition } from './conditions.js';
import { LIST_DEFAULT, RUN_DEFAULT, type SavedSearchesAction } from './constants.js';

/** Characters of one text field (an abstract, a note) that a row of a run keeps. */
const FIELD_CHARS = 2_000;
const KEY = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

/** A saved search as the tools show it. */
export interface SearchRow {
  key: string;
  version: number;
  name: string;
  conditions: SearchCondition[];
  /** In the trash. */
  deleted?: true;
}

export interface SavedSearchesInput extends LibraryArgs {
  action: SavedSearchesAction;
  search_key?: string | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface SavedSearchesOutput extends Answered {
  searches?: SearchRow[];
  search?: SearchRow;
  items?: ListedItem[];
  totalResults?: number;
  start?: number;
  nextStart?: number;
  truncated?: boolean;
  truncatedFields?: Array<{ key: string; field: string; length: number }>;
}

export function toSearchRow(s: WebApiSearch): SearchRow {
  const data = s.data ?? ({} as Partial<WebApiSearch['data']>);
  const row: SearchRow = {
    key: s.key,
    version: s.version,
    name: typeof data.name === 'string' ? data.name : '',
    conditions: (Array.isArray(data.conditions) ? data.conditions : []).map((c) => ({
      condition: String(c.condition ?? ''),
      operator: String(c.operator ?? ''),
      value: c.value === undefined || c.value === null ? '' : String(c.value),
    })),
  };
  if (data.deleted === true || (data.deleted as unknown) === 1) row.deleted = true;
  return row;
}

const byName = (a: SearchRow, b: SearchRow): number =>
  compareNames(a.name, b.name) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

async function readRows(opened: OpenedLibrary): Promise<SearchRow[]> {
  const { reader } = opened;
  if (!reader.searches) {
    throw new ZoteusError('internal_error', 'Internal error in Zoteus (a reader without saved searches).');
  }
  return (await reader.searches()).searches.map(toSearchRow).sort(byName);
}

function notFound(key: string, library: string): ZoteusError {
  const form = KEY.test(key)
    ? ''
    : `: ${JSON.stringify(key.slice(0, 40))} is not a Zotero key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ)`;
  return new ZoteusError(
    'not_found',
    `No saved search ${JSON.stringify(key.slice(0, 40))} in ${library}${form}.`,
    {
      field: 'search_key',
      hint: `${toolRef('zotero_saved_searches', { action: 'list' })} lists the saved searches and their keys.`,
    },
  );
}

function requiredKey(input: SavedSearchesInput): string {
  if (input.search_key === undefined) {
    throw new ZoteusError('validation_error', `search_key is required for action "${input.action}".`, {
      field: 'search_key',
    });
  }
  return input.search_key;
}

export async function savedSearches(deps: Deps, input: SavedSearchesInput): Promise<SavedSearchesOutput> {
  const opened = await openReader(deps, input);
  const where = answered(opened.route);
  if (input.action === 'list') {
    const rows = await readRows(opened);
    const start = input.start ?? 0;
    const limit = input.limit ?? LIST_DEFAULT;
    const fit = fitRows(rows.slice(start, start + limit));
    const nextStart = nextStartOf(start, fit.rows.length, rows.length);
    return {
      searches: fit.rows,
      totalResults: rows.length,
      start,
      ...(nextStart !== undefined ? { nextStart } : {}),
      ...(fit.cut ? { truncated: true } : {}),
      ...where,
    };
  }
  const key = requiredKey(input);
  if (input.action === 'show') {
    const found = KEY.test(key) ? (await readRows(opened)).find((s) => s.key === key) : undefined;
    if (!found) throw notFound(key, where.library);
    return { search: found, ...where };
  }
  return runSearch(deps, opened, key, input, where);
}

/** `run`: the saved search's items through the local API; elsewhere a refusal that says why. */
async function runSearch(
  deps: Deps,
  opened: OpenedLibrary,
  key: string,
  input: SavedSearchesInput,
  where: Answered,
): Promise<SavedSearchesOutput> {
  if (!KEY.test(key)) throw notFound(key, where.library);
  const { reader, route } = opened;
  const start = input.start ?? 0;
  const limit = input.limit ?? RUN_DEFAULT;
  if (!reader.savedSearchItems) {
    const found = (await readRows(opened)).find((s) => s.key === key);
    if (!found) throw notFound(key, where.library);
    throw await cannotRun(deps, found, route);
  }
  const [definition, page] = await Promise.all([
    readRows(opened).then((rows) => rows.find((s) => s.key === key)),
    reader.savedSearchItems(key, { start, limit }),
  ]);
  if (!page || !definition) throw notFound(key, where.library);
  const cuts: Array<{ key: string; field: string; length: number }> = [];
  const shaped = page.items.map((item) => {
    const b = boundItem(item, FIELD_CHARS);
    const compact = withoutEmpty(b.item) as ListedItem;
    const data = (compact.data ?? {}) as Record<string, unknown>;
    for (const cut of b.cuts) {
      if (data[cut.field] !== undefined) cuts.push({ key: item.key, field: cut.field, length: cut.length });
    }
    return compact;
  });
  const fit = fitRows(shaped);
  const shown = new Set(fit.rows.map((i) => i.key));
  const kept = cuts.filter((c) => shown.has(c.key));
  const nextStart = nextStartOf(start, fit.rows.length, page.totalResults);
  return {
    search: definition,
    items: fit.rows,
    totalResults: page.totalResults,
    start,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(fit.cut ? { truncated: true } : {}),
    ...(kept.length > 0 ? { truncatedFields: kept } : {}),
    ...where,
  };
}

/**
 * Why this backend cannot run a saved search, and what can: the desktop app (Zotero 7 or
 * later) with its local API enabled, holding the library. Never an empty result.
 */
async function cannotRun(deps: Deps, search: SearchRow, route: OpenedLibrary['route']): Promise<ZoteusError> {
  const named = `Saved search ${JSON.stringify(search.name)} (${search.key})`;
  const why =
    route.backend === 'web'
      ? `${named} cannot be run through the Zotero Web API, which stores saved searches but does not run them.`
      : `${named} cannot be run from zotero.sqlite, which holds its definition but not Zotero's search engine.`;
  let now: string;
  if (deps.config.local === 'off') {
    now = ' ZOTEUS_LOCAL=off keeps the desktop app out of this call.';
  } else {
    // The router has detected the local API for this call already: this asks nothing new.
    const { localApi } = await import('../local/local-api.js');
    const status = await (await localApi(deps)).status();
    now = status.available
      ? ` The desktop app's local API answers, but ${route.library} is not read there: ${route.reason}`
      : ` Now: ${status.detail}`;
  }
  return new ZoteusError(
    'validation_error',
    `${why} Only the Zotero desktop app runs saved searches: Zotero 7 or later, running on this computer with its local API enabled (Settings → Advanced → “Allow other applications on this computer to communicate with Zotero”) and holding ${route.library}.${now}`,
    {
      field: 'action',
      hint: `Start Zotero with its local API enabled and run it again; meanwhile ${toolRef('zotero_saved_searches', { action: 'show', search_key: search.key })} shows its conditions, and ${toolRef('zotero_search_items', { q: 'WORDS' })} (with ${paramRef('tag')}, ${paramRef('item_type')}, ${paramRef('collection_key')}) can approximate them.`,
    },
  );
}
