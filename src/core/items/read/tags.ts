/**
 * `zotero_list_tags`: every tag of a library with how many items carry it, read whole, then
 * filtered by `q`, sorted and paged here (the same on every backend).
 */
import type { LibraryArgs } from '../../library/address.js';
import { fold } from '../../local/sqlite/text.js';
import type { Deps } from '../../tool.js';
import { fitRows, nextStartOf } from './bounds.js';
import { answered, openReader, type Answered } from './common.js';

export const TAG_DEFAULT_LIMIT = 100;
export const TAG_MAX_LIMIT = 1000;

export interface ListTagsInput extends LibraryArgs {
  q?: string | undefined;
  type?: 'manual' | 'automatic' | undefined;
  include_trashed?: boolean | undefined;
  sort?: 'tag' | 'numItems' | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface TagRow {
  tag: string;
  /** 0 manual, 1 automatic (added by an importer or a translator). */
  type: number;
  numItems: number;
}

export interface ListTagsOutput extends Answered {
  tags: TagRow[];
  totalResults: number;
  start: number;
  /** Where the next page starts, when tags follow this page. */
  nextStart?: number;
  /** The size bound cut the page short of `limit`. */
  truncated?: boolean;
}

export async function listTags(deps: Deps, input: ListTagsInput): Promise<ListTagsOutput> {
  const { reader, route } = await openReader(deps, input);
  const all = await reader.tags({ includeTrashed: input.include_trashed ?? false });
  let rows: TagRow[] = all.map((t) => ({
    tag: t.tag,
    type: t.meta.type ?? 0,
    numItems: t.meta.numItems ?? 0,
  }));
  const q = input.q === undefined ? '' : fold(input.q.trim());
  if (q) rows = rows.filter((r) => fold(r.tag).includes(q));
  if (input.type !== undefined) rows = rows.filter((r) => (input.type === 'automatic') === (r.type === 1));
  const byName = (a: TagRow, b: TagRow) => {
    const fa = fold(a.tag);
    const fb = fold(b.tag);
    return fa < fb ? -1 : fa > fb ? 1 : a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.type - b.type;
  };
  rows.sort(input.sort === 'numItems' ? (a, b) => b.numItems - a.numItems || byName(a, b) : byName);
  const start = input.start ?? 0;
  const limit = input.limit ?? TAG_DEFAULT_LIMIT;
  const page = fitRows(rows.slice(start, start + limit));
  const nextStart = nextStartOf(start, page.rows.length, rows.length);
  return {
    tags: page.rows,
    totalResults: rows.length,
    start,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(page.cut ? { truncated: true } : {}),
    ...answered(route),
  };
}
