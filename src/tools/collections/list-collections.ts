/**
 * `zotero_list_collections` / `zot collection list` (seeds/001): read-only listing of a
 * library's collections, the whole library read before `q`, `top` and paging apply.
 */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import {
  boundPage,
  collectionRow,
  listParams,
  pageFields,
  seedLibraryParams,
  summarizePage,
} from './shared.js';

export default defineTool({
  name: 'zotero_list_collections',
  title: 'List Zotero collections (read-only)',
  summary:
    'List the collections of a library (key, name, parent, item count), sorted by name; q finds one by name.',
  description: [
    "List a library's collections sorted by name, or in hierarchy order with tree: true. The read-only way to find a",
    'collection and its key (zotero_manage_collections changes them); the keys scope zotero_search_items or',
    'zotero_tag_audit. q, `top` and paging apply after the whole library is read. Desktop without a key, else Web API',
    "(ZOTERO_API_KEY); a group's library_id: zotero_groups.",
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'collections',
  inDefaultSet: true,
  seed: true,
  cli: [{ path: ['collection', 'list'] }],
  input: z
    .object({
      q: listParams.q,
      top: z.boolean().optional().describe('Only top-level collections.'),
      limit: listParams.limit,
      start: listParams.start,
      tree: z
        .boolean()
        .optional()
        .describe('Hierarchy order: each collection after its parent, with its depth (0 at the top).'),
      ...seedLibraryParams,
    })
    .strict(),
  output: z.object({
    collections: z
      .array(
        collectionRow.extend({
          depth: z
            .number()
            .int()
            .optional()
            .describe('With tree: how many ancestors the collection has (0 at the top level).'),
        }),
      )
      .describe(
        'This page of the collections, sorted by name. Use a key to scope zotero_search_items or zotero_tag_audit.',
      ),
    ...pageFields,
  }),
  rows: 'collections',
  summarize: (out, input) => summarizePage(out, input),
  text: (out, input) => collectionsText(out.collections, summarizePage(out, input)),
  async run(input, deps) {
    // The listing alone: the barrel (core/library/collections.ts) loads the writers as well.
    const { listCollections } = await import('../../core/library/collections/list.js');
    return boundPage(await listCollections(deps, input));
  },
});

/**
 * The CLI's table of collections: a top-level one's parent is "(top level)", a row with a
 * depth (tree order) is indented under its parent; the page line follows the rows.
 */
function collectionsText(
  rows: ReadonlyArray<{
    key: string;
    name: string;
    parentCollection: string | boolean;
    numItems?: number | undefined;
    depth?: number | undefined;
  }>,
  summary: string,
): string {
  if (rows.length === 0) return summary;
  const hasItems = rows.some((r) => r.numItems !== undefined);
  const table = [
    ['key', 'name', 'parent', ...(hasItems ? ['items'] : [])],
    ...rows.map((r) => [
      r.key,
      `${'  '.repeat(r.depth ?? 0)}${r.name.replace(/\s*[\r\n]+\s*/g, ' ')}`,
      typeof r.parentCollection === 'string' ? r.parentCollection : '(top level)',
      ...(hasItems ? [r.numItems === undefined ? '' : String(r.numItems)] : []),
    ]),
  ];
  const len = (t: string) => [...t].length;
  const widths = (table[0] as string[]).map((_, i) => Math.max(...table.map((r) => len(r[i] as string))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c + ' '.repeat(Math.max(0, (widths[i] as number) - len(c))))
      .join('  ')
      .trimEnd();
  const [head, ...body] = table as [string[], ...string[][]];
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), summary].join('\n');
}
