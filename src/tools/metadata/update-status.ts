/**
 * `zotero_update_status` / `zot update-status [KEY…|--collection K|--all] [--apply [--plan ID]]`:
 * preprints and early-access articles brought up to their published version. Previews unless
 * asked to apply; the preview's plan can be applied exactly, a call later.
 */
import * as z from 'zod';
import { mergeRetry, retryFailedKeys } from '../shared/retry.js';
import { previewUnlessApplied } from '../shared/preview.js';
import { defineTool } from '../../core/tool.js';
import { checkUpdateStatus } from '../../core/versions/check.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList } from '../shared/output.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';

const change = z.object({ field: z.string(), from: z.string(), to: z.string() });

const evidence = z
  .object({
    source: z.enum(['crossref', 'arxiv', 'openalex', 'semantic-scholar']),
    relation: z
      .string()
      .describe(
        'How the source ties them: is-preprint-of, has-preprint (Crossref relations), arxiv-doi (the journal DOI on arXiv), openalex-work, s2-doi, same-doi (early access now in an issue).',
      ),
    doi: z.string().describe('DOI of the published version.'),
    title: z.string(),
    venue: z.string().optional(),
    year: z.string().optional(),
    similarity: z.number().describe('Title similarity with the item, 0 to 1.'),
  })
  .describe('Where the published version was found, and what it is.');

const update = z.object({
  key: z.string(),
  title: z.string(),
  reason: z
    .enum(['preprint_type', 'preprint_server', 'early_access'])
    .describe('Why the item was a candidate: a preprint, a preprint server’s DOI or URL, or early access.'),
  server: z.string().optional().describe('The preprint server, when known.'),
  evidence,
  changes: z.array(change).describe('Field by field, old → new.'),
  dropped: z
    .array(change)
    .describe('Fields the new item type has no place for, which the change of type removes.'),
  status: z
    .enum(['planned', 'applied', 'unchanged'])
    .describe('planned: preview only; applied: written; unchanged: the item already held these values.'),
});

export default defineTool({
  name: 'zotero_update_status',
  title: 'Update preprint status',
  summary: 'Find the published versions of preprints and early-access articles; preview, then apply.',
  description:
    "Update preprints to their published version (type, journal, volume, pages, date, DOI, url overwritten; preprint id kept in Extra). Preview one of item_keys, collection_key, all; apply its plan_id alone (tag, note: tag each item, add a note of the change). Writes via the desktop's local API if authorised, else Web API with a ZOTERO_API_KEY that can write. Empty fields: zotero_enrich.",
  ...previewUnlessApplied('destructive'),
  openWorld: true,
  since: '0.2.0',
  toolset: 'metadata',
  undo: {
    restores: "each item's fields and type as they were",
  },
  cli: [
    {
      path: ['update-status'],
      args: ['item_keys'],
      flags: { collection_key: 'collection', plan_id: 'plan' },
      summary:
        'Preprints → published versions: zot update-status KEY…|--collection K|--all (preview), then --apply --plan ID.',
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
            'Items to check, by key; a key that names no item is one entry of failed (8-character Zotero keys, e.g. "ABCD2345").',
          ),
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Check the top-level items of this collection.')),
      all: z.boolean().optional().describe(onlyOn('cli', 'Check the top-level items of the whole library.')),
      apply: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Write the changes (default false: preview only, which returns a plan id).')),
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
      tag: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe(onlyOn('cli', 'Add this tag to each item updated.')),
      note: z
        .boolean()
        .optional()
        .describe(
          onlyOn('cli', 'Add a child note to each item updated: the evidence and every field’s old value.'),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    applied: z.boolean().describe('False for a preview: nothing was written.'),
    planId: z.string().optional().describe('The preview’s plan, to apply with apply and plan_id.'),
    expiresAt: z.string().optional().describe('When the plan is forgotten.'),
    threshold: z.number().describe('The least title similarity a match needs.'),
    checked: z.number().int().describe('Items read.'),
    candidates: z.number().int().describe('Items that may have a published version.'),
    updates: z.array(update),
    unmatched: z
      .array(
        z.object({
          key: z.string(),
          title: z.string(),
          reason: z.string(),
          why: z.string(),
          evidence: evidence.optional(),
        }),
      )
      .describe('Candidates without an accepted published version, and why.'),
    succeeded: z
      .array(z.string())
      .describe('A preview: the candidates answered (planned or unmatched); an apply: the items written.'),
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
    totalUpdates: z
      .number()
      .int()
      .optional()
      .describe('How many updates there are in all, when the answer lists fewer (the plan holds every one).'),
    totalUnmatched: z.number().int().optional(),
    totalFailed: z
      .number()
      .int()
      .optional()
      .describe('How many entries failed in all, when failed lists fewer.'),
    truncated: z
      .boolean()
      .optional()
      .describe('The size bound cut the lists short: the counts are in totalUpdates and totalUnmatched.'),
    ...answeredFields,
  }),
  summarize: (out) => {
    const what = out.applied
      ? `Updated ${plural(out.updates.filter((u) => u.status === 'applied').length, 'item')} to the published version`
      : `${plural(out.updates.length, 'item')} to update (preview${out.planId ? `, plan ${out.planId}` : ''})`;
    const rest = [
      out.unmatched.length ? `${out.unmatched.length} without an accepted match` : '',
      out.failed.length ? `${out.totalFailed ?? out.failed.length} failed` : '',
    ].filter(Boolean);
    const shown = out.truncated
      ? ` The answer lists ${out.updates.length} of ${out.totalUpdates} updates, ${out.unmatched.length} of ${out.totalUnmatched} unmatched${out.totalFailed ? ` and ${out.failed.length} of ${out.totalFailed} failed` : ''}; the plan holds every update.`
      : '';
    return `${what}; ${plural(out.candidates, 'candidate')} of ${out.checked} checked${rest.length ? `; ${rest.join(', ')}` : ''}.${shown}`;
  },
  text: (out) => {
    const lines: string[] = [];
    for (const u of out.updates) {
      lines.push(
        `${u.key}  ${u.title}  [${u.status}; ${u.evidence.source} ${u.evidence.relation} ${u.evidence.doi}, similarity ${u.evidence.similarity}]`,
      );
      for (const c of [...u.changes, ...u.dropped])
        lines.push(`  ${c.field}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`);
    }
    for (const m of out.unmatched) lines.push(`${m.key}  ${m.title}  [not updated] ${m.why}`);
    for (const s of out.sources) if (s.note) lines.push(`Note: ${s.note}`);
    return `${lines.join('\n')}\n`;
  },
  next: (out) => (!out.applied && out.planId ? [`zot update-status --apply --plan ${out.planId}`] : []),
  check: (input) => checkUpdateStatus(input),
  confirmation: (input) =>
    Promise.resolve(
      input.plan_id !== undefined
        ? `rewrite the metadata of the items in plan ${input.plan_id}`
        : `look up and rewrite the metadata of ${
            input.item_keys?.length
              ? plural(input.item_keys.length, 'item')
              : input.collection_key
                ? `the items of collection ${input.collection_key}`
                : 'every item of the library that has a published version'
          }`,
    ),
  plan(input) {
    return {
      apply: input.apply === true,
      ...(input.plan_id ? { plan_id: input.plan_id } : {}),
      note: 'Looks up published versions online, then writes only with apply.',
    };
  },
  retryFailed: {
    input: retryFailedKeys,
    merge: (previous, retry) =>
      mergeRetry(previous, retry, ['updates', 'unmatched'], ['checked', 'candidates']),
  },
  async run(input, deps) {
    const { updateStatus } = await import('../../core/versions/update-status.js');
    return updateStatus(deps, input);
  },
});
