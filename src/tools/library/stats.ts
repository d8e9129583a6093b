/** `zotero_stats` / `zot stats`: counts of a library and which backend answered. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { answeredFields } from '../shared/output.js';
import { libraryParams } from '../shared/params.js';

const n = (v: number): string => v.toLocaleString('en-US');

export default defineTool({
  name: 'zotero_stats',
  title: 'Library statistics',
  summary:
    'Count a library: items by type, top-level items, notes, attachments, the trash, collections, tags.',
  description: [
    "Count a library's items by type, trash, collections and tags; libraryVersion is zotero_sync's since.",
    'Size a library before paging zotero_search_items. Desktop answers without a key (local API, else zotero.sqlite),',
    'else the Web API with ZOTERO_API_KEY (one small request per item type present). A group: library_id from zotero_groups; none: ZOTERO_LIBRARY_ID, else your own.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'library',
  cli: [{ path: ['stats'] }],
  input: z.object({ ...libraryParams }).strict(),
  output: z.object({
    ...answeredFields,
    libraryVersion: z
      .number()
      .nullable()
      .describe(
        'The library version (the desktop: as of its last sync); null when the backend does not tell.',
      ),
    items: z.object({
      total: z
        .number()
        .int()
        .describe('Items not in the trash, children (notes, attachments, annotations) included.'),
      topLevel: z
        .number()
        .int()
        .describe('Top-level items: regular items, standalone notes and attachments.'),
      regular: z.number().int().describe('Items other than notes, attachments and annotations.'),
      notes: z.number().int().describe('Notes, child and standalone.'),
      attachments: z.number().int(),
      annotations: z.number().int(),
      byType: z.record(z.string(), z.number().int()).describe('Items per item type, most frequent first.'),
    }),
    trash: z.number().int().describe('Items in the trash.'),
    collections: z.number().int().describe('Collections not in the trash.'),
    tags: z.number().int().describe('Distinct tags on items not in the trash.'),
  }),
  summarize: (out) =>
    `${out.library} (${out.backend}): ${n(out.items.topLevel)} top-level items (${n(out.items.total)} with notes and attachments), ${n(out.collections)} collections, ${n(out.tags)} tags, ${n(out.trash)} in the trash.`,
  async run(input, deps) {
    const { libraryStats } = await import('../../core/items/read/stats.js');
    return libraryStats(deps, input);
  },
});
