/**
 * `zotero_find_duplicates`: the library's (or a collection's) top-level items read page by page
 * through whichever backend the router picks, grouped by detect.ts, and answered a page of
 * groups at a time within the size bound.
 */
import type { LibraryArgs } from '../library/address.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import { fitRows, nextStartOf } from '../items/read/bounds.js';
import type { Deps } from '../tool.js';
import { findDuplicateGroups, TITLE_DUPLICATE_THRESHOLD, type DuplicateGroup } from './detect.js';

export const DUPLICATES_DEFAULT_LIMIT = 50;
export const DUPLICATES_MAX_LIMIT = 200;
/** Items per page read: the Web API's largest page; a local backend reads more at once. */
const READ_PAGE = 100;
const LOCAL_READ_PAGE = 1000;

export interface FindDuplicatesInput extends LibraryArgs {
  collection_key?: string | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface FindDuplicatesOutput extends Answered {
  threshold: number;
  /** Regular top-level items compared. */
  checked: number;
  groups: DuplicateGroup[];
  start: number;
  /** Groups found in all. */
  totalResults: number;
  nextStart?: number | undefined;
  truncated?: boolean | undefined;
}

export async function findDuplicates(deps: Deps, input: FindDuplicatesInput): Promise<FindDuplicatesOutput> {
  const { reader, route } = await openReader(deps, input);
  const items: Array<{ key: string; data: Record<string, unknown> }> = [];
  for (let at = 0; ;) {
    const page = await reader.items({
      top: true,
      sort: 'dateAdded',
      direction: 'asc',
      start: at,
      limit: reader.backend === 'web' ? READ_PAGE : LOCAL_READ_PAGE,
      ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
    });
    for (const item of page.items) items.push({ key: item.key, data: item.data as Record<string, unknown> });
    at += page.items.length;
    deps.progress({ event: 'progress', phase: 'read', done: at, total: page.totalResults });
    if (page.items.length === 0 || at >= page.totalResults) break;
  }
  const all = findDuplicateGroups(items);
  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? DUPLICATES_DEFAULT_LIMIT, DUPLICATES_MAX_LIMIT);
  const page = all.slice(start, start + limit);
  const fitted = fitRows(page);
  const nextStart = nextStartOf(start, fitted.rows.length, all.length);
  return {
    threshold: TITLE_DUPLICATE_THRESHOLD,
    checked: items.filter(
      (i) => !['note', 'attachment', 'annotation'].includes(String(i.data.itemType)) && !i.data.parentItem,
    ).length,
    groups: fitted.rows,
    start,
    totalResults: all.length,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(fitted.cut ? { truncated: true } : {}),
    ...answered(route),
  };
}
