/** `zotero_list_tags` / `zot tag list`: the tags of a library with how many items carry each. */
import * as z from 'zod';
import { paramRef } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { PROVENANCE, libraryParams, pagingParams } from '../shared/params.js';
import { pageLine } from '../shared/text.js';

function summary(
  out: {
    tags: unknown[];
    totalResults: number;
    start: number;
    backend: string;
    nextStart?: number | undefined;
    truncated?: boolean | undefined;
  },
  input: { q?: string | undefined; type?: string | undefined },
): string {
  let what = input.type ? `${input.type} tags` : 'tags';
  if (input.q?.trim()) what += ` containing ${JSON.stringify(input.q.trim())}`;
  return pageLine(out, out.tags.length, what);
}

export default defineTool({
  name: 'zotero_list_tags',
  title: 'List tags',
  summary: 'List the tags of a library with how many items carry each; q finds tags by name.',
  description: [
    "List the tags of a library with how many items carry each, or find tags by name (q). Reads the desktop's data",
    '(local API, else zotero.sqlite) without a key when it holds the library, else the Web API with ZOTERO_API_KEY.',
    "Find a tag's items with zotero_search_items; rename or delete tags with zotero_manage_tags; check them against a",
    'vocabulary with zotero_tag_audit. Pages continue from nextStart; totalResults counts every match; truncated: a',
    `page cut short of ${paramRef('limit')} by the size bound.`,
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'tags',
  cli: [
    { path: ['tag', 'list'], summary: 'List the tags of the library with item counts (--q TEXT finds one).' },
  ],
  input: z
    .object({
      q: z.string().max(255).optional().describe('Part of the name (case- and accent-insensitive).'),
      type: z.enum(['manual', 'automatic']).optional().describe('Automatic tags are added by importers.'),
      include_trashed: z.boolean().optional().describe('Count items in the trash too.'),
      sort: z
        .enum(['tag', 'numItems'])
        .optional()
        .meta({ default: 'tag' })
        .describe('By name, or most used first.'),
      ...pagingParams({ rows: 'Tags', default: 100, max: 1000 }),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    tags: z
      .array(
        z.object({
          tag: z.string(),
          type: z.number().int().describe('0 manual, 1 automatic.'),
          numItems: z.number().int().describe('Items carrying the tag.'),
        }),
      )
      .describe('This page of the tags.'),
    totalResults: z.number().int().describe('Tags matching in total, not just this page.'),
    start: z.number().int().describe('The offset this page starts at.'),
    nextStart: nextStartField,
    truncated: truncatedField,
    ...answeredFields,
    provenance: provenanceField,
  }),
  rows: 'tags',
  summarize: summary,
  text: (out, input) =>
    [
      summary(out, input),
      ...out.tags.map(
        (t) => `${String(t.numItems).padStart(6)}  ${t.tag}${t.type === 1 ? '  (automatic)' : ''}`,
      ),
    ].join('\n'),
  async run(input, deps) {
    const { listTags } = await import('../../core/items/read/tags.js');
    return { ...(await listTags(deps, input)), provenance: PROVENANCE };
  },
});
