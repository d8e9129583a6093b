/**
 * `zotero_get_fulltext` / `zot pdf KEY`: a document's text (an item's best attachment, or the
 * attachment named), from Zotero's index or the stored file, as matching passages with page
 * locators, a page range, the PDF's outline, or the document's start.
 */
import * as z from 'zod';
import { fitRows } from '../../core/items/read/bounds.js';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { answeredFields, provenanceField } from '../shared/output.js';
import { PROVENANCE, libraryParams, maxCharsParam, offsetParam } from '../shared/params.js';

const locator = {
  page: z
    .number()
    .int()
    .optional()
    .describe('The page, known exactly (from the PDF, or an index with page breaks).'),
  pageApprox: z
    .number()
    .int()
    .optional()
    .describe('The page estimated from the character position (the index has no page breaks): ±1–2 pages.'),
};

export default defineTool({
  name: 'zotero_get_fulltext',
  title: 'Read document text',
  summary:
    'Read the text of an item’s PDF/EPUB: best-matching passages for q (with page and heading), a page range, the outline, or the start.',
  description: [
    "Read an item's document text (PDF, EPUB, HTML) or an attachment's: desktop data without a key, else Web API",
    `with ZOTERO_API_KEY. One mode per call: q (best passages, with page), page_range, ${paramRef('outline')}, or none (text from`,
    `${paramRef('offset')}; pass end to read on). complete: false: partly indexed. Find items with`,
    'zotero_search_items or zotero_semantic_search.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'fulltext',
  inDefaultSet: true,
  cli: [{ path: ['pdf'], args: ['item_key'] }],
  input: z
    .object({
      item_key: z
        .string()
        .min(1)
        .max(64)
        .describe(
          onlyOn(
            'cli',
            'An item’s key (its best attachment is read) or an attachment’s key, e.g. "ABCD2345".',
          ),
        ),
      q: z
        .string()
        .max(500)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `Words to find: returns the best-matching passages (not with ${paramRef('page_range')} or ${paramRef('outline')}).`,
          ),
        ),
      page_range: z
        .string()
        .max(20)
        .optional()
        .describe(
          onlyOn('mcp', '"3-5": PDF pages, not printed labels.') +
            onlyOn(
              'cli',
              'Pages to return: "7" or "3-5" (1-based, as the PDF counts them, not printed page labels).',
            ),
        ),
      outline: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Return the PDF’s table of contents (title, page, level).')),
      max_chars: maxCharsParam('', 200_000)
        .meta({ default: 10_000, description: undefined })
        .describe(
          onlyOn(
            'cli',
            `At most this many characters of text in the answer (default 10000). An answer holds at most about 40 KB of text whatever ${paramRef('max_chars')}: read on with ${paramRef('offset')}.`,
          ),
        ),
      offset: offsetParam('')
        .meta({ description: undefined })
        .describe(
          onlyOn(
            'cli',
            `Without ${paramRef('q')}, ${paramRef('page_range')} or ${paramRef('outline')}: start reading at this character offset (the previous answer’s end).`,
          ),
        ),
      limit: z
        .number()
        .int()
        .min(1)
        .max(25)
        .optional()
        .meta({ default: 5 })
        .describe(onlyOn('cli', `With ${paramRef('q')}: at most this many passages (default 5).`)),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    itemKey: z.string(),
    attachment: z.object({
      key: z.string(),
      title: z.string(),
      contentType: z.string().nullable(),
      filename: z.string().nullable(),
    }),
    source: z
      .enum(['ftCache', 'localApi', 'web', 'pdf', 'epub', 'file'])
      .describe(
        'ftCache: the desktop’s .zotero-ft-cache; localApi/web: the API’s indexed full text; pdf/epub/file: extracted from the stored file.',
      ),
    sourceDetail: z.string().describe('The file read, or the request made.'),
    complete: z.boolean().describe('False when the text covers only the pages Zotero indexed.'),
    indexedPages: z.number().nullable(),
    totalPages: z.number().nullable(),
    totalChars: z.number().describe('Length of the whole text; offsets index into it.'),
    pageLocator: z
      .enum(['exact', 'approximate', 'none'])
      .describe(
        'Whether passages carry page (exact), pageApprox (approximate) or neither (EPUB, HTML, text).',
      ),
    mode: z.enum(['start', 'search', 'pages', 'outline']),
    text: z.string().optional().describe('No mode: the text from start to end.'),
    start: z.number().optional(),
    end: z.number().optional(),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'The text, passages or pages were cut at max_chars, or the outline at the answer’s size bound (about 40 KB).',
      ),
    passages: z
      .array(
        z.object({
          start: z.number(),
          end: z.number(),
          text: z.string(),
          heading: z.string().nullable().describe('The nearest heading before the passage.'),
          ...locator,
          score: z.number(),
        }),
      )
      .optional()
      .describe('q: best first.'),
    matched: z.number().optional().describe('q: how many passages match at least one word.'),
    pages: z
      .array(z.object({ page: z.number(), start: z.number(), end: z.number(), text: z.string() }))
      .optional(),
    outline: z
      .array(z.object({ title: z.string(), page: z.number().nullable(), level: z.number() }))
      .optional(),
    message: z.string().optional(),
    ...answeredFields,
    provenance: provenanceField,
  }),
  summarize: (out) => {
    const what =
      out.mode === 'search'
        ? `${out.passages?.length ?? 0} passage(s) of ${out.matched ?? 0} matching`
        : out.mode === 'pages'
          ? `pages ${out.pages?.map((p) => p.page).join(', ') || 'none'}`
          : out.mode === 'outline'
            ? `${out.outline?.length ?? 0} outline entries`
            : `characters ${out.start ?? 0}–${out.end ?? 0} of ${out.totalChars}`;
    return `${out.attachment.key} (${out.source}${out.complete ? '' : ', incomplete'}): ${what}`;
  },
  text: (out) => {
    const lines: string[] = [];
    const where = (p: { page?: number | undefined; pageApprox?: number | undefined }) =>
      p.page !== undefined ? `p. ${p.page}` : p.pageApprox !== undefined ? `p. ~${p.pageApprox}` : '';
    if (out.passages) {
      for (const p of out.passages) {
        lines.push(
          `[${[where(p), p.heading, `${p.start}–${p.end}`].filter(Boolean).join(' · ')}]`,
          p.text,
          '',
        );
      }
    } else if (out.pages) {
      for (const p of out.pages) lines.push(`--- page ${p.page} ---`, p.text, '');
    } else if (out.outline) {
      for (const o of out.outline)
        lines.push(`${'  '.repeat(o.level - 1)}${o.title}${o.page ? `  (p. ${o.page})` : ''}`);
    } else if (out.text !== undefined) lines.push(out.text, '');
    if (out.message) lines.push(out.message);
    lines.push(`(${out.source}: ${out.sourceDetail}; ${out.backend}, ${out.library})`);
    return lines.join('\n');
  },
  async run(input, deps) {
    const { getFulltext } = await import('../../core/fulltext/get.js');
    const { lookUpKeys } = await import('../../core/items/read/common.js');
    const lookup = { keys: [input.item_key], field: 'item_key' };
    const out = await lookUpKeys(deps, input, lookup, () => getFulltext(deps, input));
    if (out.outline) {
      // An outline made from heading-like lines of a long text can run to thousands of entries.
      const fit = fitRows(out.outline);
      if (fit.cut) {
        const note = `The outline has ${out.outline.length} entries; the first ${fit.rows.length} are shown (the answer’s size bound): read a part with ${paramRef('page_range')}.`;
        out.outline = fit.rows;
        out.truncated = true;
        out.message = out.message ? `${out.message} ${note}` : note;
      }
    }
    return { ...out, provenance: PROVENANCE };
  },
});
