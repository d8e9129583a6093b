/**
 * `zotero_merge_items` / `zot merge MASTER_KEY OTHER_KEY… [--fill] [--apply [--plan ID]]`:
 * duplicates merged into one item as Zotero merges them. Previews unless asked to apply.
 */
import * as z from 'zod';
import { checkMerge } from '../../core/duplicates/check.js';
import { previewUnlessApplied } from '../shared/preview.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList } from '../shared/output.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { libraryFlags } from '../shared/text.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';

export default defineTool({
  name: 'zotero_merge_items',
  title: 'Merge duplicate items',
  summary: 'Merge duplicate items into a master item, as Zotero does; preview, then apply.',
  description:
    "Merge duplicates into master_key as Zotero does; item_keys, the others (not master_key), are trashed. fill: the master's empty fields take their first values; confirm: above ZOTEUS_CONFIRM_BULK_WRITES items. Preview, then apply its plan_id: writes via the desktop's local API if authorised, else Web API with a ZOTERO_API_KEY that can write. Find: zotero_find_duplicates.",
  ...previewUnlessApplied('destructive'),
  openWorld: true,
  since: '0.2.0',
  toolset: 'items',
  undo: {
    restores:
      "the master's fields, tags, collections and relations, each child's parent, the related items' relations, and the other items out of the trash",
  },
  cli: [
    {
      path: ['merge'],
      args: ['master_key', 'item_keys'],
      flags: { plan_id: 'plan' },
      summary:
        'Merge duplicates into a master: zot merge MASTER_KEY OTHER_KEY… (preview), then --apply --plan ID.',
    },
  ],
  input: z
    .object({
      master_key: zoteroKey('master_key').describe(
        onlyOn('cli', 'The item that stays: it keeps its fields and takes the others’.'),
      ),
      item_keys: z
        .array(zoteroKey('Each item key'))
        .min(1)
        .max(5000)
        .max(100)
        .describe(
          onlyOn(
            'cli',
            'The items merged into the master, which go to the trash (8-character Zotero keys, e.g. "ABCD2345").',
          ),
        ),
      fill: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Fill the master’s empty fields from the others (default false: the master’s fields only).',
          ),
        ),
      apply: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Write the merge (default false: preview only, which returns a plan id).')),
      plan_id: z
        .string()
        .max(64)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `With ${paramRef('apply')}: the plan id a preview returned, applied exactly; an item changed since is a conflict.`,
          ),
        ),
      confirm: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Required when applying a merge that trashes more items than the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES).',
          ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    applied: z.boolean().describe('False for a preview: nothing was written.'),
    planId: z.string().optional().describe('The preview’s plan, to apply with apply and plan_id.'),
    expiresAt: z.string().optional().describe('When the plan is forgotten.'),
    master: z.object({ key: z.string(), title: z.string() }),
    merged: z
      .array(
        z.object({
          key: z.string(),
          title: z.string(),
          status: z
            .enum(['planned', 'trashed', 'unchanged'])
            .describe(
              'planned: preview only; trashed: moved to the trash now; unchanged: already in the trash.',
            ),
        }),
      )
      .describe('The items merged into the master.'),
    filled: z
      .array(
        z.object({
          field: z.string(),
          value: z.string(),
          from: z.string().describe('The item it came from.'),
        }),
      )
      .describe('With fill: the master’s empty fields filled, and from which item.'),
    tagsAdded: z.array(z.string()).describe('Tags the master takes from the others.'),
    collectionsAdded: z.array(z.string()).describe('Collections (keys) the master joins.'),
    relationsAdded: z
      .array(z.object({ predicate: z.string(), object: z.string() }))
      .describe('Relations the master takes: the others’ (dc:relation …) and a dc:replaces per other item.'),
    children: z
      .array(z.object({ key: z.string(), itemType: z.string(), from: z.string() }))
      .describe('Child notes and attachments moved to the master, and the item they leave.'),
    totalChildren: z.number().int().describe('How many children move (children may list fewer).'),
    related: z
      .array(z.string())
      .describe('Items related to an other item that become related to the master too.'),
    succeeded: z
      .array(z.string())
      .describe('An apply: the objects written (children, related items, master, others).'),
    unchanged: z
      .array(z.string())
      .describe('An apply: objects already as the merge wants them (nothing sent).'),
    failed: failedList,
    libraryVersion: z.number().int().optional(),
    truncated: z
      .boolean()
      .optional()
      .describe('The size bound cut children or failed short (counts stay exact).'),
    ...answeredFields,
  }),
  summarize: (out) => {
    const what = out.applied
      ? `Merged ${plural(out.merged.filter((m) => m.status === 'trashed').length, 'item')} into ${out.master.key}`
      : `Would merge ${plural(out.merged.length, 'item')} into ${out.master.key} (preview${out.planId ? `, plan ${out.planId}` : ''})`;
    const moved = [
      out.totalChildren ? plural(out.totalChildren, 'child', 'children') : '',
      out.tagsAdded.length ? plural(out.tagsAdded.length, 'tag') : '',
      out.collectionsAdded.length ? plural(out.collectionsAdded.length, 'collection') : '',
      out.filled.length ? plural(out.filled.length, 'field') + ' filled' : '',
    ].filter(Boolean);
    return `${what}${moved.length ? `: ${moved.join(', ')}` : ''}${out.failed.length ? `; ${out.failed.length} failed` : ''}.`;
  },
  text: (out) => {
    const lines = [`Master ${out.master.key}  ${out.master.title}`];
    for (const m of out.merged) lines.push(`  ${m.key}  ${m.title}  [${m.status}]`);
    for (const f of out.filled) lines.push(`  fill ${f.field}: ${JSON.stringify(f.value)} (from ${f.from})`);
    if (out.tagsAdded.length) lines.push(`  tags: ${out.tagsAdded.join(', ')}`);
    if (out.collectionsAdded.length) lines.push(`  collections: ${out.collectionsAdded.join(', ')}`);
    for (const r of out.relationsAdded) lines.push(`  ${r.predicate} ${r.object}`);
    for (const c of out.children) lines.push(`  child ${c.key} (${c.itemType}) from ${c.from}`);
    return `${lines.join('\n')}\n`;
  },
  next: (out, input) =>
    !out.applied && out.planId
      ? [
          `zot merge ${input.master_key} ${input.item_keys.join(' ')}${input.fill ? ' --fill' : ''} --apply --plan ${out.planId}${libraryFlags(input)}`,
        ]
      : [],
  check: (input) => checkMerge(input),
  // The others go to the trash: an applied merge of more than the threshold needs confirm.
  bulk: (input) => {
    if (input.apply !== true) return undefined;
    const count = new Set(input.item_keys).size;
    return {
      count,
      what: `Merging ${plural(count, 'item')} into ${input.master_key} (they go to the trash)`,
      verb: 'merge',
    };
  },
  confirmation: (input) =>
    Promise.resolve(
      `merge ${plural(new Set(input.item_keys).size, 'item')} (${input.item_keys.join(', ')}) into ${input.master_key}: their children, tags, collections and relations move to it and they go to the trash`,
    ),
  plan(input) {
    return {
      master_key: input.master_key,
      item_keys: input.item_keys,
      fill: input.fill === true,
      apply: input.apply === true,
      ...(input.plan_id ? { plan_id: input.plan_id } : {}),
      note: 'Reads the items, then writes only with apply: children moved to the master, the others to the trash.',
    };
  },
  retryFailed: {
    // The merge runs again as the items now are (its plan was checked by the first call): what
    // landed reads as unchanged, what failed is written.
    input: (input, previous) => (previous.failed.length === 0 ? null : { ...input, plan_id: undefined }),
    merge: (previous, retry) => ({
      ...retry,
      ...(previous.planId ? { planId: previous.planId, expiresAt: previous.expiresAt } : {}),
      merged: retry.merged.map((m) =>
        previous.merged.some((p) => p.key === m.key && p.status === 'trashed')
          ? { ...m, status: 'trashed' as const }
          : m,
      ),
      succeeded: [...new Set([...previous.succeeded, ...retry.succeeded])],
      unchanged: retry.unchanged.filter((k) => !previous.succeeded.includes(k)),
      children: previous.children.length >= retry.children.length ? previous.children : retry.children,
      totalChildren: Math.max(previous.totalChildren, retry.totalChildren),
    }),
  },
  async run(input, deps) {
    const { mergeItems } = await import('../../core/duplicates/merge.js');
    return mergeItems(deps, input);
  },
});
