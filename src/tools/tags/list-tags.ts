/** `zotero_list_tags` / `zot tag list`: the tags of a library with how many items carry each. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { PROVENANCE, libraryParams, pagingParams } from '../shared/params.js';
import { pageLine } from '../shared/text.js';
import { onlyOn } from '../../core/call/refs.js';

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
    "List the tags of a library (q: part of a name, any case; sort numItems: most used first). A tag's items: zotero_search_items; cleanup: zotero_tag_audit.",
    'Desktop without a key, else Web API (ZOTERO_API_KEY).',
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
      q: z
        .string()
        .max(255)
        .optional()
        .describe(onlyOn('cli', 'Only tags whose name contains this text (case- and accent-insensitive).')),
      type: z
        .enum(['manual', 'automatic'])
        .optional()
        .describe(
          onlyOn('cli', 'Only manual tags, or only automatic ones (added by importers and translators).'),
        ),
      include_trashed: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Count items in the trash too (default false: tags only trashed items carry are left out).',
          ),
        ),
      sort: z
        .enum(['tag', 'numItems'])
        .optional()
        .meta({ default: 'tag' })
        .describe(onlyOn('cli', '"tag" (default): by name, case-insensitive. "numItems": most used first.')),
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
