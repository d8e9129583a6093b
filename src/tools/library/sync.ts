/** `zotero_sync` / `zot sync --since VERSION`: what changed in a library since a version, deletions included. */
import * as z from 'zod';
import { fitRows, nextStartOf } from '../../core/items/read/bounds.js';
import { defineTool } from '../../core/tool.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { PROVENANCE, libraryParams, pagingParams, type PageSize } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

const PAGE: PageSize = { rows: 'Changes', default: 100, max: 500 };

const count = z.number().int();
const change = z.object({
  kind: z
    .enum(['item', 'collection', 'search', 'tag'])
    .describe('What changed: an item, a collection, a saved search, a tag.'),
  change: z
    .enum(['modified', 'deleted'])
    .describe('modified: created or changed (moving to or from the trash too); deleted: removed for good.'),
  key: z.string().optional().describe('The object key (items, collections, searches).'),
  tag: z.string().optional().describe('The tag, for a deleted tag.'),
  version: z.number().int().optional().describe('The object’s version after the change (modified entries).'),
  itemType: z.string().optional(),
  title: z.string().optional().describe('An item’s title (a note’s first line).'),
  parentItem: z.string().optional().describe('The item a note, attachment or annotation belongs to.'),
  name: z.string().optional().describe('A collection’s or saved search’s name.'),
  parentCollection: z.string().optional(),
  trashed: z.boolean().optional().describe('True for an item or collection now in the trash.'),
});

export default defineTool({
  name: 'zotero_sync',
  title: 'Library changes',
  summary:
    'List what changed in a library since a library version: modified items, collections and searches, and deletions.',
  description: [
    'List changes since a library version, deletions too. Web API only (ZOTERO_API_KEY); no key:',
    'zotero_search_items `since`. since: the libraryVersion of the last answer (0: all). A libraryVersion',
    'that differs between pages: the library changed, page again from start 0.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  // Checked by the read itself, which says why a sync needs a key (core/library/changes.ts).
  needsKey: false,
  since: '0.2.0',
  toolset: 'library',
  cli: [{ path: ['sync'] }],
  input: z
    .object({
      since: z
        .number()
        .int()
        .min(0)
        .describe(
          onlyOn('mcp', 'Last libraryVersion; 0: all.') +
            onlyOn(
              'cli',
              'The library version to list changes after: the libraryVersion of an earlier answer (or of the library statistics); 0 for everything.',
            ),
        ),
      ...libraryParams,
      ...pagingParams(PAGE),
    })
    .strict(),
  output: z.object({
    ...answeredFields,
    since: count.describe('The version given: changes after it are listed.'),
    libraryVersion: count.describe(
      'The library’s version when the changes were read: the since of the next call.',
    ),
    counts: z
      .object({
        items: z.object({ modified: count, deleted: count }),
        collections: z.object({ modified: count, deleted: count }),
        searches: z.object({ modified: count, deleted: count }),
        tags: z.object({ deleted: count }),
      })
      .describe('How many changes of each kind, over all pages.'),
    changes: z
      .array(change)
      .describe('This page of the changes: modified objects oldest first, then deletions.'),
    totalResults: count.describe('How many changes there are in all.'),
    start: count.describe('The offset this page starts at.'),
    nextStart: nextStartField,
    truncated: truncatedField,
    provenance: provenanceField,
  }),
  rows: 'changes',
  summarize: (out) => {
    const c = out.counts;
    const modified = c.items.modified + c.collections.modified + c.searches.modified;
    const deleted = c.items.deleted + c.collections.deleted + c.searches.deleted + c.tags.deleted;
    const more = out.nextStart !== undefined ? `; continue with start=${out.nextStart}` : '';
    return `${out.library} since version ${out.since}: ${modified} modified (${c.items.modified} items), ${deleted} deleted; now at version ${out.libraryVersion} (${out.changes.length} shown${more}).`;
  },
  async run(input, deps) {
    const { changesSince } = await import('../../core/library/changes.js');
    const start = input.start ?? 0;
    const answer = await changesSince(deps, { ...input, start, limit: input.limit ?? PAGE.default });
    const page = fitRows(answer.changes);
    const nextStart = nextStartOf(start, page.rows.length, answer.totalResults);
    return {
      backend: 'web' as const,
      library: answer.library,
      since: answer.since,
      libraryVersion: answer.libraryVersion,
      counts: answer.counts,
      changes: page.rows,
      totalResults: answer.totalResults,
      start,
      ...(nextStart !== undefined ? { nextStart } : {}),
      ...(page.cut ? { truncated: true } : {}),
      provenance: PROVENANCE,
    };
  },
});
