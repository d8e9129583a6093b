/**
 * `zotero_check_retractions` / `zot retractions KEY…|--collection K|--all`: which items have
 * been retracted, or carry an expression of concern or a correction, from Crossref's update
 * notices (with Retraction Watch's), OpenAlex's is_retracted, and the desktop's own flags.
 * Reads only; `next` holds the tag command for the retracted items.
 */
import * as z from 'zod';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { ZoteusError } from '../../core/errors.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList, provenanceField } from '../shared/output.js';
import { libraryParams, lookupKey, pagingParams, PROVENANCE, zoteroKey } from '../shared/params.js';
import { continuation } from '../shared/text.js';

/** The same as core/metadata/retractions.ts (not imported: the declaration loads without it). */
const PAGE = {
  rows: 'Items',
  default: 1000,
  max: 10_000,
} as const;

const SOURCES = ['crossref', 'retraction-watch', 'openalex', 'zotero'] as const;

const hit = z.object({
  key: z.string().describe('The item.'),
  title: z.string(),
  doi: z.string().describe('The item’s DOI (empty for an item flagged only by Zotero without one).'),
  type: z
    .string()
    .describe(
      'The notice: retraction, partial_retraction, withdrawal, removal, expression_of_concern, correction, corrigendum, erratum or reinstatement.',
    ),
  retraction: z
    .boolean()
    .describe(
      'True for notices that withdraw the work (retraction, partial_retraction, withdrawal, removal); false for concerns and corrections.',
    ),
  date: z.string().optional().describe('When the notice was issued (YYYY, YYYY-MM or YYYY-MM-DD).'),
  noticeDoi: z.string().optional().describe('The notice’s own DOI.'),
  noticeUrl: z.string().optional().describe('Where to read the notice.'),
  sources: z
    .array(z.enum(SOURCES))
    .describe(
      'Who reports it: crossref (the publisher’s notice), retraction-watch (Retraction Watch, through Crossref), openalex, zotero (the desktop’s own flags).',
    ),
});

export default defineTool({
  name: 'zotero_check_retractions',
  title: 'Check items for retractions',
  summary:
    'Check items for retractions, expressions of concern and corrections (Crossref, OpenAlex, Zotero).',
  description:
    "Check items' DOIs for retractions and corrections (Crossref, OpenAlex with ZOTEUS_OPENALEX_API_KEY). Desktop data without a key, else the Web API with ZOTERO_API_KEY. Give one of item_keys, collection_key, all (start, limit page the last two). next: a ready zotero_manage_tags call.",
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'metadata',
  cli: [
    {
      path: ['retractions'],
      args: ['item_keys'],
      flags: { collection_key: 'collection' },
      summary: 'Check items for retractions and other notices: zot retractions KEY…|--collection K|--all',
    },
  ],
  input: z
    .object({
      item_keys: z
        .array(lookupKey())
        .max(1000)
        .optional()
        .describe(onlyOn('cli', 'Items to check, by key (a key that names no item is one entry of failed).')),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Check the top-level items of this collection.')),
      all: z.boolean().optional().describe(onlyOn('cli', 'Check the top-level items of the whole library.')),
      ...pagingParams(PAGE),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    checked: z.number().int().describe('Items checked against every source asked.'),
    succeeded: z.array(z.string()).describe('Keys of the items checked (the first 1,000).'),
    retracted: z.number().int().describe('Items with at least one notice that withdraws them.'),
    hits: z.array(hit).describe('One entry per notice found, in the order of the items.'),
    notChecked: z
      .array(z.object({ key: z.string(), title: z.string(), reason: z.string() }))
      .describe('Items that could not be checked online (no DOI), and why.'),
    failed: failedList,
    sources: z
      .object({ crossref: z.string(), openalex: z.string(), zotero: z.string() })
      .describe('What each source did in this check (asked, skipped and why, not read and why).'),
    notes: z.array(z.string()).describe('What the caller should know: a source skipped, and why.'),
    next: z
      .array(z.string())
      .describe('Ready calls for the findings: the tag call that marks the retracted items "Retracted".'),
    totalResults: z
      .number()
      .int()
      .optional()
      .describe('A collection or the library: how many top-level items it holds.'),
    nextStart: z.number().int().optional().describe('Where the next page of items starts.'),
    truncated: z.boolean().optional().describe('The size bound cut this page short of limit.'),
    remaining: z.array(z.string()).optional().describe('Keys given that did not fit in this answer.'),
    provenance: provenanceField,
    ...answeredFields,
  }),
  // Offline: one way to name the items; paging applies to a listing only.
  check(input) {
    const ways = (['item_keys', 'collection_key', 'all'] as const).filter((f) =>
      f === 'item_keys'
        ? (input.item_keys?.length ?? 0) > 0
        : f === 'all'
          ? input.all === true
          : input[f] !== undefined,
    );
    if (ways.length === 0)
      throw new ZoteusError('validation_error', 'Nothing to check: give item keys, a collection, or all.', {
        field: 'item_keys',
        hint: `Pass the item keys, ${paramRef('collection_key', 'KEY')}, or ${paramRef('all')} for the whole library.`,
      });
    if (ways.length > 1)
      throw new ZoteusError(
        'validation_error',
        `Give one of item keys, a collection or all, not ${ways.join(' and ')}.`,
        {
          field: ways[1] as string,
        },
      );
    const paging = (['start', 'limit'] as const).find((f) => input[f] !== undefined);
    if (ways[0] === 'item_keys' && paging)
      throw new ZoteusError(
        'validation_error',
        `${paging} applies only to a collection or all, not to item keys.`,
        {
          field: paging,
        },
      );
  },
  summarize: (out) => {
    const found = out.hits.length
      ? `${plural(out.retracted, 'retracted item')}, ${plural(out.hits.length, 'notice')}`
      : 'no notices';
    const skipped = out.notChecked.length ? `; ${out.notChecked.length} without DOI not checked` : '';
    const failed = out.failed.length ? `; ${out.failed.length} failed (see failed)` : '';
    return `Checked ${plural(out.checked, 'item')}: ${found}${skipped}${failed}.${continuation(out)}`;
  },
  text: (out) => {
    const lines = out.hits.map(
      (h) =>
        `${h.key}  ${h.retraction ? 'RETRACTED' : h.type.replace(/_/g, ' ')}${h.date ? ` ${h.date}` : ''}  ${h.title}${h.noticeUrl ? `  ${h.noticeUrl}` : ''}  [${h.sources.join(', ')}]`,
    );
    const notes = out.notes.map((n) => `Note: ${n}`);
    const next = out.next.length ? ['', 'Next:', ...out.next.map((n) => `  ${n}`)] : [];
    return `${[...lines, ...notes, ...next].join('\n')}\n`;
  },
  // The tag command for the retracted items, as the surface wrote it (core/metadata/retractions.ts).
  next: (out) => out.next,
  async run(input, deps) {
    const { checkRetractions } = await import('../../core/metadata/retractions.js');
    return { ...(await checkRetractions(deps, input)), provenance: PROVENANCE };
  },
});
