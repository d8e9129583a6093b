/**
 * `zotero_summarize`: compact digests (`digest.ts`) of the items named by key, or of every
 * top-level item of a library or collection in the order they were added, page by page with
 * progress events (`zot summarize-all`).
 */
import { ZoteusError } from '../../errors.js';
import type { LibraryArgs } from '../../library/address.js';
import type { LibraryReader, WebApiItem } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { digestOf, type Digest } from '../digest.js';
import {
  answered,
  assertKeysWellFormed,
  collectionNames,
  IN_FLIGHT,
  itemNotFound,
  mapLimit,
  openReader,
  type Answered,
} from './common.js';

export const SUMMARIZE_DEFAULT_LIMIT = 25;
const PAGE = 100;

export interface SummarizeInput extends LibraryArgs {
  item_keys?: string[] | undefined;
  all?: boolean | undefined;
  collectionKey?: string | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface SummarizeOutput extends Answered {
  digests: Digest[];
  totalResults: number;
  start: number;
}

/** Children are read only for items that have some (`meta.numChildren`, when the backend tells). */
async function childrenOf(reader: LibraryReader, item: WebApiItem): Promise<WebApiItem[]> {
  const t = item.data.itemType;
  if (t === 'note' || t === 'annotation') return [];
  if (item.meta?.numChildren === 0) return [];
  return reader.children(item.key);
}

async function digests(
  reader: LibraryReader,
  items: readonly WebApiItem[],
  names: ReadonlyMap<string, string>,
): Promise<Digest[]> {
  return mapLimit(items, IN_FLIGHT, async (item) => digestOf(item, await childrenOf(reader, item), names));
}

export async function summarize(deps: Deps, input: SummarizeInput): Promise<SummarizeOutput> {
  const keys = input.item_keys ?? [];
  if (keys.length > 0) {
    const listing = (['all', 'collectionKey', 'start', 'limit'] as const).find((f) => input[f] !== undefined);
    if (listing) {
      throw new ZoteusError(
        'validation_error',
        `${listing} applies only without item_keys (to digest the library).`,
        {
          field: listing,
          hint: 'Give item_keys alone, or omit them to digest the library page by page.',
        },
      );
    }
    assertKeysWellFormed(deps, keys, 'item_keys');
  }
  const { reader, route } = await openReader(deps, input);
  const namesPromise = collectionNames(reader);
  // A rejection is awaited below; keep it from being reported as unhandled meanwhile.
  namesPromise.catch(() => {});

  if (keys.length > 0) {
    const unique = [...new Set(keys)];
    const items = await mapLimit(unique, IN_FLIGHT, (key) => reader.item(key));
    const missing = unique.filter((_, i) => items[i] === undefined);
    if (missing.length > 0) throw itemNotFound(deps, missing, route.library, 'item_keys');
    const found = items as WebApiItem[];
    return {
      digests: await digests(reader, found, await namesPromise),
      totalResults: found.length,
      start: 0,
      ...answered(route),
    };
  }

  const start = input.start ?? 0;
  const limit = input.limit ?? (input.all ? Infinity : SUMMARIZE_DEFAULT_LIMIT);
  const query = {
    top: true,
    sort: 'dateAdded',
    direction: 'asc' as const,
    ...(input.collectionKey !== undefined ? { collectionKey: input.collectionKey } : {}),
  };
  const first = await reader.items({ ...query, start, limit: Math.min(PAGE, limit) });
  const total = Math.max(0, Math.min(limit, first.totalResults - start));
  const phase = 'summarize';
  deps.progress({ event: 'start', phase, done: 0, total });
  const names = await namesPromise;
  const out: Digest[] = [];
  let page = first.items;
  while (page.length > 0 && out.length < total) {
    out.push(...(await digests(reader, page.slice(0, total - out.length), names)));
    deps.progress({ event: 'progress', phase, done: out.length, total });
    if (out.length >= total) break;
    page = (
      await reader.items({ ...query, start: start + out.length, limit: Math.min(PAGE, total - out.length) })
    ).items;
  }
  deps.progress({ event: 'complete', phase, done: out.length, total, succeeded: out.length, failed: 0 });
  return { digests: out, totalResults: first.totalResults, start, ...answered(route) };
}
