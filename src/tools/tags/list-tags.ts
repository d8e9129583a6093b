/** `zotero_list_tags` / `zot tag list`: the tags of a library with how many items carry each. */
import * as z from 'zod';
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
  title: 'List Zotero tags (read-only)',
  summary: 'List the tags of a library with how many items carry each; q finds tags by name.',
  description: [
    'Read-only; changes nothing. Every tag of the library is read, then q keeps the tags whose name contains it (case- and',
    'accent-insensitive), type keeps manual or automatic ones (automatic: added by an importer), and start/limit page the',
    'result (100 per page by default, at most 1,000), sorted by name (case-insensitive) or by numItems (most used first).',
    'numItems counts the items carrying the tag (items in the trash only with include_trashed). totalResults counts every',
    'matching tag; nextStart, when present, is the start of the next page (a page holds at most about 40 KB of tags:',
    'truncated: true when that cut it short of limit). Use the exact names as the tag filter of zotero_search_items;',
    'zotero_manage_tags renames or deletes them.',
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
        .describe('Only tags whose name contains this text (case- and accent-insensitive).'),
      type: z
        .enum(['manual', 'automatic'])
        .optional()
        .describe('Only manual tags, or only automatic ones (added by importers and translators).'),
      include_trashed: z
        .boolean()
        .optional()
        .describe(
          'Count items in the trash too (default false: tags only trashed items carry are left out).',
        ),
      sort: z
        .enum(['tag', 'numItems'])
        .optional()
        .describe('"tag" (default): by name, case-insensitive. "numItems": most used first.'),
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
