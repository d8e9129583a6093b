/**
 * `zotero_enrich` / `zot enrich [KEY…|--collection K|--all] [--fields abstract,DOI,…] [--apply [--plan ID]]`:
 * empty fields (DOI, abstract, ISSN, pages, publisher) filled from Crossref and OpenAlex,
 * never a field that holds something. Previews unless asked to apply; the preview's plan can
 * be applied exactly, a call later.
 */
import * as z from 'zod';
import { checkEnrich } from '../../core/enrich/fields.js';
import { mergeRetry, retryFailedKeys } from '../shared/retry.js';
import { previewUnlessApplied } from '../shared/preview.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList } from '../shared/output.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';

const evidence = z
  .object({
    source: z.enum(['crossref']),
    via: z
      .enum(['doi', 'search'])
      .describe(
        'doi: the record of the item’s own DOI; search: found by title, first author and year (accepted only when all three agree).',
      ),
    doi: z.string().describe('The DOI of the record the values come from.'),
    title: z.string().optional().describe('A search: the title of the record found.'),
    year: z.string().optional(),
    firstAuthor: z.string().optional().describe('A search: the record’s first author (family name).'),
    similarity: z.number().optional().describe('A search: title similarity with the item, 0 to 1.'),
    yearMatches: z.boolean().optional().describe('A search: the same year as the item’s, ±1.'),
    authorMatches: z.boolean().optional().describe('A search: the same first author’s family name.'),
    score: z.number().optional().describe('A search: Crossref’s relevance score of the hit.'),
  })
  .describe('Which record the values come from, and for a search why it was taken for this item.');

const fill = z.object({
  field: z.string().describe('The field, as the item type names it (publisher is university on a thesis).'),
  from: z.string().describe('Always empty: enrichment fills only empty fields.'),
  to: z.string(),
  source: z.enum(['crossref', 'openalex']),
  status: z
    .enum(['planned', 'applied', 'unchanged', 'conflict'])
    .describe(
      'planned: preview only; applied: written; unchanged: already held this value; conflict: someone filled it since the preview, left as it is (now).',
    ),
  now: z.string().optional().describe('A conflict: what the field holds now.'),
});

export default defineTool({
  name: 'zotero_enrich',
  title: 'Fill empty fields',
  summary:
    'Fill empty DOI, abstract, ISSN, pages and publisher fields from Crossref/OpenAlex; preview, then apply.',
  description:
    "Fill empty DOI, abstract, ISSN, pages, publisher (fields: some; omitted: all) of one of item_keys, collection_key, all. Preview; apply its plan_id alone: writes via the desktop's local API if authorised, else Web API with a ZOTERO_API_KEY that can write. Preprints: zotero_update_status.",
  ...previewUnlessApplied('write'),
  openWorld: true,
  since: '0.2.0',
  toolset: 'metadata',
  undo: {
    restores: "each item's fields as they were",
  },
  cli: [
    {
      path: ['enrich'],
      args: ['item_keys'],
      flags: { collection_key: 'collection', plan_id: 'plan' },
      summary:
        'Fill empty DOI/abstract/ISSN/pages/publisher: zot enrich KEY…|--collection K|--all [--fields …] (preview), then --apply --plan ID.',
    },
  ],
  input: z
    .object({
      item_keys: z
        .array(zoteroKey('Each item key'))
        .min(1)
        .max(5000)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Items to enrich, by key; a key that names no item is one entry of failed (8-character Zotero keys, e.g. "ABCD2345").',
          ),
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Enrich the top-level items of this collection.')),
      all: z.boolean().optional().describe(onlyOn('cli', 'Enrich the top-level items of the whole library.')),
      fields: z
        .array(z.string().min(1).max(200))
        .min(1)
        .max(10)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Which empty fields to fill, among DOI, abstract (abstractNote), ISSN, pages, publisher (an entry may hold several, comma-separated). Default: all of them.',
          ),
        ),
      apply: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Write the fills (default false: preview only, which returns a plan id).')),
      plan_id: z
        .string()
        .max(64)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `With ${paramRef('apply')}: the plan id a preview returned, applied exactly (no new lookups).`,
          ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    applied: z.boolean().describe('False for a preview: nothing was written.'),
    planId: z.string().optional().describe('The preview’s plan, to apply with apply and plan_id.'),
    expiresAt: z.string().optional().describe('When the plan is forgotten.'),
    fields: z.array(z.string()).describe('The fields this enrichment fills.'),
    threshold: z.number().describe('The least title similarity a search hit needs.'),
    checked: z.number().int().describe('Items read.'),
    wanting: z.number().int().describe('Items with at least one of the fields empty.'),
    enrichments: z.array(
      z.object({
        key: z.string(),
        title: z.string(),
        evidence,
        changes: z.array(fill).describe('Field by field, empty → new.'),
        status: z
          .enum(['planned', 'applied', 'unchanged', 'conflict'])
          .describe(
            'planned: preview only; applied: written; unchanged: already held these values; conflict: every field was filled by someone else since the preview, untouched.',
          ),
      }),
    ),
    unmatched: z
      .array(
        z.object({
          key: z.string(),
          title: z.string(),
          empty: z.array(z.string()).describe('Its empty fields among those asked.'),
          why: z.string(),
          evidence: evidence.optional(),
        }),
      )
      .describe(
        'Items with empty fields that nothing was found for, and why (a search hit not accepted shows it).',
      ),
    succeeded: z
      .array(z.string())
      .describe('A preview: the items answered (planned or unmatched); an apply: the items written.'),
    unchanged: z.array(z.string()).describe('An apply: items that already held the plan’s values.'),
    failed: failedList,
    sources: z
      .array(
        z.object({
          service: z.string(),
          requests: z.number().int().optional(),
          note: z.string().optional(),
        }),
      )
      .describe('The services asked (requests sent; cached answers cost none), or skipped and why.'),
    libraryVersion: z.number().int().optional(),
    totalEnrichments: z
      .number()
      .int()
      .optional()
      .describe(
        'How many enrichments there are in all, when the answer lists fewer (the plan holds every one).',
      ),
    totalUnmatched: z.number().int().optional(),
    totalFailed: z
      .number()
      .int()
      .optional()
      .describe('How many entries failed in all, when failed lists fewer.'),
    truncated: z
      .boolean()
      .optional()
      .describe('The size bound cut the lists short: the counts are in totalEnrichments and totalUnmatched.'),
    ...answeredFields,
  }),
  summarize: (out) => {
    const fills = (status: string) =>
      out.enrichments.reduce((n, e) => n + e.changes.filter((c) => c.status === status).length, 0);
    const what = out.applied
      ? `Filled ${plural(fills('applied'), 'field')} of ${plural(out.enrichments.filter((e) => e.status === 'applied').length, 'item')}`
      : `${plural(fills('planned'), 'field')} to fill in ${plural(out.totalEnrichments ?? out.enrichments.length, 'item')} (preview${out.planId ? `, plan ${out.planId}` : ''})`;
    const rest = [
      out.applied && fills('conflict')
        ? `${plural(fills('conflict'), 'field')} filled by someone else since the preview, left as they are`
        : '',
      out.unmatched.length ? `${out.totalUnmatched ?? out.unmatched.length} with nothing found` : '',
      out.failed.length ? `${out.totalFailed ?? out.failed.length} failed` : '',
    ].filter(Boolean);
    const shown = out.truncated
      ? ` The answer lists ${out.enrichments.length} of ${out.totalEnrichments} enrichments and ${out.unmatched.length} of ${out.totalUnmatched} unmatched; the plan holds every enrichment.`
      : '';
    return `${what}; ${out.wanting} of ${out.checked} checked had empty fields${rest.length ? `; ${rest.join(', ')}` : ''}.${shown}`;
  },
  text: (out) => {
    const lines: string[] = [];
    for (const e of out.enrichments) {
      const how =
        e.evidence.via === 'search'
          ? `found by search ${e.evidence.doi}, similarity ${e.evidence.similarity}`
          : `${e.evidence.doi}`;
      lines.push(`${e.key}  ${e.title}  [${e.status}; ${how}]`);
      for (const c of e.changes) {
        const shown = c.to.length > 80 ? `${c.to.slice(0, 79)}…` : c.to;
        lines.push(
          `  ${c.field}: ${JSON.stringify(shown)} (${c.source}${c.status === 'conflict' ? `; left as ${JSON.stringify(c.now)}` : ''})`,
        );
      }
    }
    for (const m of out.unmatched) lines.push(`${m.key}  ${m.title}  [not filled] ${m.why}`);
    for (const s of out.sources) if (s.note) lines.push(`Note: ${s.note}`);
    return `${lines.join('\n')}\n`;
  },
  next: (out) => (!out.applied && out.planId ? [`zot enrich --apply --plan ${out.planId}`] : []),
  check: (input) => checkEnrich(input),
  plan(input) {
    return {
      apply: input.apply === true,
      ...(input.plan_id ? { plan_id: input.plan_id } : {}),
      note: 'Looks up empty fields online (Crossref, OpenAlex with its key), then writes only with apply.',
    };
  },
  retryFailed: {
    input: retryFailedKeys,
    merge: (previous, retry) =>
      mergeRetry(previous, retry, ['enrichments', 'unmatched'], ['checked', 'wanting']),
  },
  async run(input, deps) {
    const { enrich } = await import('../../core/enrich/enrich.js');
    return enrich(deps, input);
  },
});
