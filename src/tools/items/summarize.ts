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
import { onlyOn, paramRef } from '../../core/call/refs.js';

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
  title: 'Digest items',
  summary:
    'Compact digests of items for an agent: citation line, creators, year, abstract excerpt, tags, notes, full text.',
  description: [
    'Digest items for triage: citation, abstract, tags, notes, files (no item_keys: page the library). Whole item: zotero_get_item; whole notes:',
    'zotero_list_notes. Desktop without a key, else Web API (ZOTERO_API_KEY).',
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
          onlyOn('mcp', 'e.g. "ABCD2345"') +
            onlyOn(
              'cli',
              'Keys of the items to digest (8 characters each, e.g. "ABCD2345"). Omit to digest the library.',
            ),
        ),
      all: z.boolean().optional(),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(
          onlyOn(
            'cli',
            `Without ${paramRef('item_keys')}: only the top-level items directly in this collection.`,
          ),
        ),
      ...pagingParams({ rows: 'Digests', default: 25, max: 100_000 }),
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
