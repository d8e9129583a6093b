/**
 * What the two collection tools share: the listing parameters and rows (seeds 000 and 001 word
 * them the same), the one-line summaries, and helpers for `next` suggestions. Light on
 * purpose: the declarations load for `zot --help`, the API code only when a handler runs.
 */
import * as z from 'zod';
import { onlyOn } from '../../core/call/refs.js';
import { fitRows, nextStartOf } from '../../core/items/read/bounds.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../core/library/collections/constants.js';
import { count } from '../../core/words.js';
import { nextStartField } from '../shared/output.js';
import { continuation, counted } from '../shared/text.js';

// Seeds 000 and 001 word them, and fix their schema: no `default` keyword, the default is in the text.
const paging = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .optional()
    .describe(`Collections to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`),
  start: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Zero-based offset into the listing, for paging (default 0). Page with start += limit while `totalResults` is larger.',
    ),
};

/** The addressing pair in the seeds' words (seeds 000 and 001); other tools say it shorter (params.ts). */
export const seedLibraryParams = {
  library_id: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Numeric id of the library to address, e.g. 5234875 for a group (zotero_groups lists the ids you can reach). Omit to use the configured default library; an id given without library_type is read as a group id.',
    ),
  library_type: z
    .enum(['user', 'group'])
    .optional()
    .describe(
      `Which library to address: "user" (a personal library) or "group" (a shared group library). Omit to use ${onlyOn('mcp', 'the library this server is configured for')}${onlyOn('cli', 'the configured default library')}. "group" on its own is refused: pass library_id with it.`,
    ),
};

export const listParams = {
  q: z
    .string()
    .optional()
    .describe(
      'Only collections whose name contains this text (case-insensitive), searched over the whole library, not one page. Use it to find a collection by name.',
    ),
  limit: paging.limit,
  start: paging.start,
};

export const collectionRow = z.object({
  key: z.string().describe('8-character collection key.'),
  name: z.string().describe('Collection name.'),
  parentCollection: z
    .union([z.string(), z.boolean()])
    .describe('Parent collection key, or false for a top-level collection.'),
  numItems: z.number().optional().describe('Items directly in the collection, when the backend reports it.'),
});

/** The listing's own output fields besides `collections`. */
export const pageFields = {
  start: z.number().optional().describe('The offset this page starts at.'),
  totalResults: z
    .number()
    .optional()
    .describe(
      'Collections matching in total (every collection when there is no `q`), not just this page. Page with start/limit while it is larger.',
    ),
  complete: z
    .boolean()
    .optional()
    .describe(
      'False when the library holds more collections than Zoteus reads in one listing (ZOTEUS_MAX_COLLECTIONS, 100,000 by default); the page then comes from those read.',
    ),
  read: z
    .number()
    .optional()
    .describe('How many collections were read, when the listing is incomplete (complete: false).'),
  message: z
    .string()
    .optional()
    .describe(
      'Why the listing is incomplete (the cap, or a server that ignores paging); absent when complete.',
    ),
  nextStart: nextStartField,
  truncated: z
    .boolean()
    .optional()
    .describe(
      'True when the page holds fewer collections than limit because of the answer’s size bound (about 40 KB of rows); continue from nextStart.',
    ),
};

/**
 * A listing page within the size bound (core/items/read/bounds.ts: at most about 40 KB of
 * rows), with `nextStart` when collections follow it and `truncated` when the bound cut it.
 */
export function boundPage<
  T extends { collections?: unknown[] | undefined; start?: number; totalResults?: number },
>(out: T): T & { nextStart?: number; truncated?: boolean } {
  if (out.collections === undefined) return out;
  const page = fitRows(out.collections);
  const start = out.start ?? 0;
  const nextStart = nextStartOf(start, page.rows.length, out.totalResults ?? out.collections.length);
  return {
    ...out,
    collections: page.rows,
    ...(nextStart !== undefined ? { nextStart } : {}),
    ...(page.cut ? { truncated: true } : {}),
  };
}

/** "Showing 1–200 of 1,234 collections." and its empty and incomplete variants. */
export function summarizePage(
  out: {
    collections: unknown[];
    totalResults?: number | undefined;
    start?: number | undefined;
    complete?: boolean | undefined;
    message?: string | undefined;
    nextStart?: number | undefined;
    truncated?: boolean | undefined;
  },
  input: { q?: string | undefined; top?: boolean | undefined },
): string {
  const total = out.totalResults ?? out.collections.length;
  const start = out.start ?? 0;
  const shown = out.collections.length;
  const filtered = (input.q !== undefined && input.q !== '') || input.top === true;
  const what =
    input.q !== undefined && input.q !== ''
      ? `${input.top ? 'top-level ' : ''}collections matching ${JSON.stringify(input.q)}`
      : input.top
        ? 'top-level collections'
        : 'collections';
  let line: string;
  if (total === 0) line = filtered ? `No ${what}.` : 'The library has no collections.';
  else if (shown === 0)
    line = `No collections on this page (start ${count(start)}); there are ${count(total)} in total.`;
  else line = `Showing ${count(start + 1)}–${count(start + shown)} of ${counted(total, what)}.`;
  line += continuation(out);
  if (out.complete === false)
    line += ` Incomplete: ${out.message ?? 'the listing could not read the whole library.'}`;
  return line;
}
