/**
 * `zotero_summarize` / `zot summarize KEY…`, `zot summarize-all [--collection K] [--start N]
 * [--limit N]`: compact digests of items for an agent. An answer is bounded: the library is
 * read page by page (`nextStart`), or streamed with `--stream`, with progress events.
 */
import * as z from 'zod';
import { ZoteusError } from '../../core/errors.js';
import { digestText } from '../../core/items/digest.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { digestSchema } from './shared.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { PROVENANCE, libraryParams, pagingParams, zoteroKey } from '../shared/params.js';
import { pageLine } from '../shared/text.js';

function summary(
  out: {
    digests: unknown[];
    totalResults: number;
    start: number;
    backend: string;
    nextStart?: number | undefined;
    truncated?: boolean | undefined;
    remaining?: string[] | undefined;
  },
  input: { item_keys?: string[] | undefined; collection_key?: string | undefined },
): string {
  if (input.item_keys?.length) {
    const left = out.remaining?.length
      ? ` ${plural(out.remaining.length, 'more item')} did not fit in this answer: ask again with item_keys set to remaining.`
      : '';
    return `${plural(out.digests.length, 'digest')} (${out.backend}).${left}`;
  }
  const what = input.collection_key ? `items of collection ${input.collection_key}` : 'top-level items';
  return `Digests: ${pageLine(out, out.digests.length, what)}`;
}

export default defineTool({
  name: 'zotero_summarize',
  title: 'Digest Zotero items (read-only)',
  summary:
    'Compact digests of items for an agent: citation line, creators, year, abstract excerpt, tags, notes, full text.',
  description: [
    'Read-only; changes nothing. A digest is what an agent needs to decide whether an item matters, in a few hundred',
    'characters: a citation line (creators (year). Title. Container, volume(issue), pages. DOI), creators, year, the first',
    '400 characters of the abstract, tags, collections (with names), child notes (first line and first 200 characters),',
    'attachments, and whether readable full text exists (each list keeps its first 20; omitted counts the rest). Give item_keys',
    '(up to 100) for those items (a key that names no item, or is not of Zotero’s key form, makes the call not_found, saying which library on this computer holds it when another does); or omit them for the top-level items of',
    'the library (or of collection_key) in the order they were added, paged by start/limit (25 by default; all: true fills the',
    'answer instead, up to its size bound). An answer holds at most about 40 KB of digests: a page the bound cuts short says',
    'truncated: true, and nextStart says where the next page starts (pass it as start; absent on the last page); with',
    'item_keys, remaining lists the keys that did not fit. Nothing returns a whole library at once: page through it.',
    'Use zotero_get_item for everything about one item, zotero_search_items to find keys.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'items',
  inDefaultSet: true,
  cli: [
    {
      path: ['summarize'],
      args: ['item_keys'],
      omit: ['all', 'collection_key', 'start', 'limit'],
      summary:
        'Digest items by key: citation line, creators, year, abstract excerpt, tags, notes, full text.',
    },
    {
      path: ['summarize-all'],
      omit: ['item_keys'],
      preset: { all: true },
      flags: { collection_key: 'collection' },
      summary:
        'Digest the top-level items of the library (or --collection K), oldest first, a bounded page at a time (--start N continues).',
    },
  ],
  input: z
    .object({
      item_keys: z
        .array(z.string().min(1).max(64))
        .min(1)
        .max(100)
        .optional()
        .describe(
          'Keys of the items to digest (8 characters each, e.g. "ABCD2345"). Omit to digest the library.',
        ),
      all: z
        .boolean()
        .optional()
        .describe(
          'Without item_keys: as many digests from start as fit in one answer (limit still caps them when given); continue from nextStart. Default false.',
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe('Without item_keys: only the top-level items directly in this collection.'),
      ...pagingParams(
        { rows: 'Digests', default: 25, max: 100_000 },
        {
          start:
            'Without item_keys: zero-based offset into the items in the order they were added (default 0): the nextStart of a previous answer.',
          limit:
            'Without item_keys: at most this many digests (default 25, at most 100,000; with all: true as many as fit). An answer holds at most about 40 KB of digests.',
        },
      ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    digests: z.array(digestSchema).describe('One digest per item, in the order asked for (or added).'),
    totalResults: z
      .number()
      .int()
      .describe('Items named (item_keys), or top-level items of the library or collection in total.'),
    start: z.number().int().describe('The offset the digests start at.'),
    nextStart: nextStartField,
    truncated: truncatedField,
    remaining: z
      .array(z.string())
      .optional()
      .describe(
        'item_keys: the keys whose digests did not fit in this answer (about 40 KB of digests); pass them as item_keys again.',
      ),
    ...answeredFields,
    provenance: provenanceField,
  }),
  rows: 'digests',
  // Offline, before any key is looked up: listing inputs apply only without item_keys.
  check(input) {
    if (!input.item_keys?.length) return;
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
  },
  summarize: summary,
  text: (out, input) => [summary(out, input), ...out.digests.map((d) => digestText(d))].join('\n\n'),
  async run(input, deps) {
    const { summarize } = await import('../../core/items/read/summarize.js');
    const { lookUpKeys } = await import('../../core/items/read/common.js');
    const lookup = { keys: input.item_keys ?? [], field: 'item_keys' };
    return {
      ...(await lookUpKeys(deps, input, lookup, () => summarize(deps, input))),
      provenance: PROVENANCE,
    };
  },
});
