/** `zotero_list_annotations` / `zot annotation list KEY`: the annotations of an attachment or of an item’s attachments. */
import * as z from 'zod';
import { fitRows, nextStartOf } from '../../core/items/read/bounds.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, nextStartField } from '../shared/output.js';
import { PROVENANCE, libraryParams, lookupKey, pagingParams, type PageSize } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

const PAGE: PageSize = {
  rows: 'Annotations',
  default: 100,
  max: 500,
};

export default defineTool({
  name: 'zotero_list_annotations',
  title: 'List annotations',
  summary: 'List the PDF annotations (highlights, underlines, notes, images) of an attachment or of an item.',
  description:
    'List the annotations of an attachment, or of all files of a regular item (item_key), in reading order. Desktop data without a key, else the Web API with ZOTERO_API_KEY. Create: zotero_create_annotation; the text: zotero_get_fulltext.',
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'files',
  cli: [
    {
      path: ['annotation', 'list'],
      args: ['item_key'],
      summary: 'List the annotations of an attachment, or of all attachments of an item.',
    },
  ],
  input: z
    .object({
      item_key: lookupKey().describe(
        onlyOn(
          'cli',
          'Key of the attachment, or of the item whose attachments’ annotations to list, e.g. "ABCD2345".',
        ),
      ),
      ...pagingParams(PAGE),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    ...answeredFields,
    itemKey: z.string().describe('The attachment or item asked about.'),
    annotations: z
      .array(
        z.object({
          key: z.string(),
          version: z.number().int(),
          attachmentKey: z.string().describe('The attachment the annotation is on.'),
          type: z.string().describe('highlight, underline, note, image, ink or text.'),
          text: z.string().optional().describe('The selected text (highlights and underlines).'),
          comment: z.string(),
          color: z.string().describe('#rrggbb.'),
          pageLabel: z.string().describe('The page’s label as printed (may be empty).'),
          sortIndex: z.string().describe('Zotero’s reading-order key (PDF: page|offset|top).'),
          position: z
            .record(z.string(), z.unknown())
            .optional()
            .describe('Where it is, as Zotero stores it (PDF: pageIndex and rects in points).'),
          authorName: z.string().optional(),
          tags: z.array(z.string()),
          dateModified: z.string().optional(),
        }),
      )
      .describe('This page of the annotations, in reading order.'),
    totalResults: z.number().int().describe('All the annotations found.'),
    start: z.number().int().optional().describe('The offset this page starts at.'),
    nextStart: nextStartField,
    truncated: z.boolean().optional().describe('True when the page was cut (see nextStart).'),
    message: z.string().optional().describe('Why there are no annotations, when the key cannot hold any.'),
    provenance: z.string(),
  }),
  rows: 'annotations',
  summarize: (out) => {
    if (out.message !== undefined && out.annotations.length === 0) return out.message;
    const start = out.start ?? 0;
    const range =
      out.nextStart !== undefined || start > 0
        ? ` (${start + 1}–${start + out.annotations.length} of ${out.totalResults}${out.nextStart !== undefined ? `; continue with start=${out.nextStart}` : ''})`
        : '';
    return `${plural(out.annotations.length, 'annotation')} under ${out.itemKey}${range}.`;
  },
  text: (out) => {
    if (out.message !== undefined && out.annotations.length === 0) return out.message;
    const lines: string[] = [];
    for (const a of out.annotations) {
      const page = a.pageLabel ? `p. ${a.pageLabel}` : '';
      lines.push([`${a.type} ${a.key}`, page, a.color, `on ${a.attachmentKey}`].filter(Boolean).join('  '));
      if (a.text) lines.push(`  “${a.text}”`);
      if (a.comment) lines.push(...a.comment.split('\n').map((l) => `  ${l}`));
    }
    const start = out.start ?? 0;
    lines.push(
      out.annotations.length === 0
        ? `No annotations under ${out.itemKey} (${out.backend}).`
        : `Showing ${start + 1}–${start + out.annotations.length} of ${plural(out.totalResults, 'annotation')} under ${out.itemKey} (${out.backend}).${out.nextStart !== undefined ? ` Continue with start=${out.nextStart}.` : ''}`,
    );
    return lines.join('\n');
  },
  async run(input, deps) {
    const { listAnnotations } = await import('../../core/annotations/list.js');
    const { lookUpKeys } = await import('../../core/items/read/common.js');
    const listed = await lookUpKeys(deps, input, { keys: [input.item_key], field: 'item_key' }, () =>
      listAnnotations(deps, input),
    );
    const start = input.start ?? 0;
    const limit = input.limit ?? PAGE.default;
    const page = fitRows(listed.annotations.slice(start, start + limit));
    const nextStart = nextStartOf(start, page.rows.length, listed.annotations.length);
    return {
      backend: listed.backend,
      library: listed.library,
      itemKey: listed.itemKey,
      annotations: page.rows,
      totalResults: listed.totalResults,
      start,
      ...(nextStart !== undefined ? { nextStart, truncated: true } : {}),
      ...(listed.message !== undefined ? { message: listed.message } : {}),
      provenance: PROVENANCE,
    };
  },
});
