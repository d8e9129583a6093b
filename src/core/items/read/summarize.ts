/**
 * `zotero_summarize`: compact digests (`digest.ts`) of the items named by key, or of the
 * top-level items of a library or collection in the order they were added, page by page with
 * progress events (`zot summarize-all`). An answer holds at most ROWS_BUDGET bytes of digests
 * (bounds.ts): a listing then says where the next page starts (`nextStart`), and with item_keys
 * `remaining` lists the keys left out; nothing returns a whole library in one message.
 */
import { ZoteusError } from '../../errors.js';
import type { LibraryArgs } from '../../library/address.js';
import type { LibraryReader, WebApiItem } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { digestOf, type Digest } from '../digest.js';
import { fitRows, jsonBytes, nextStartOf, ROWS_BUDGET } from './bounds.js';
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
/** Digests made at once while filling an answer: few are made that the budget then leaves out. */
const CHUNK = 10;

export interface SummarizeInput extends LibraryArgs {
  item_keys?: string[] | undefined;
  all?: boolean | undefined;
  collection_key?: string | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface SummarizeOutput extends Answered {
  digests: Digest[];
  totalResults: number;
  start: number;
  /** Listing: where the next page starts, when items follow this page. */
  nextStart?: number;
  /** The size bound cut the answer short of `limit` (or of every item, with `all`). */
  truncated?: boolean;
  /** item_keys: the keys whose digests did not fit in this answer (ask for them again). */
  remaining?: string[];
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
    const listing = (['all', 'collection_key', 'start', 'limit'] as const).find(
      (f) => input[f] !== undefined,
    );
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
    const all = await digests(reader, found, await namesPromise);
    const fit = fitRows(all);
    return {
      digests: fit.rows,
      totalResults: found.length,
      start: 0,
      ...(fit.cut ? { truncated: true, remaining: all.slice(fit.rows.length).map((d) => d.key) } : {}),
      ...answered(route),
    };
  }

  const start = input.start ?? 0;
  const limit = input.limit ?? (input.all ? Infinity : SUMMARIZE_DEFAULT_LIMIT);
  const query = {
    top: true,
    sort: 'dateAdded',
    direction: 'asc' as const,
    ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
  };
  const first = await reader.items({ ...query, start, limit: Math.min(PAGE, limit) });
  const total = Math.max(0, Math.min(limit, first.totalResults - start));
  const phase = 'summarize';
  // `total` is what is asked for; how many fit in the answer is known at the end (complete).
  deps.progress({ event: 'start', phase, done: 0, total });
  const names = await namesPromise;
  const out: Digest[] = [];
  let used = 0;
  let full = false;
  let page = first.items;
  while (page.length > 0 && out.length < total && !full) {
    const wanted = page.slice(0, total - out.length);
    for (let i = 0; i < wanted.length && !full; i += CHUNK) {
      for (const digest of await digests(reader, wanted.slice(i, i + CHUNK), names)) {
        const size = jsonBytes(digest) + 1;
        if (out.length > 0 && used + size > ROWS_BUDGET) {
          full = true;
          break;
        }
        used += size;
        out.push(digest);
      }
    }
    deps.progress({ event: 'progress', phase, done: out.length, total });
    if (full || out.length >= total) break;
    page = (
      await reader.items({ ...query, start: start + out.length, limit: Math.min(PAGE, total - out.length) })
    ).items;
  }
  deps.progress({
    event: 'complete',
    phase,
    done: out.length,
    total: out.length,
    succeeded: out.length,
    failed: 0,
  });
  const nextStart = nextStartOf(start, out.length, first.totalResults);
  return {
    digests: out,
    totalResults: first.totalResults,
    start,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(full ? { truncated: true } : {}),
    ...answered(route),
  };
}
