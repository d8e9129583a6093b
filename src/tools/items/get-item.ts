/** `zotero_get_item` / `zot read KEY`: one item with its notes, attachments and collections. */
import * as z from 'zod';
import { citationLine, creatorList, itemYear } from '../../core/items/digest.js';
import { htmlToText } from '../../core/items/html.js';
import type { WebApiItem } from '../../core/library/port.js';
import { defineTool } from '../../core/tool.js';
import { asItemJson, webApiItem } from './shared.js';
import { answeredFields, provenanceField } from '../shared/output.js';
import { PROVENANCE, libraryParams, lookupKey, maxCharsParam, offsetParam } from '../shared/params.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';

const child = z.object({
  key: z.string(),
  itemType: z.string().describe('note, attachment, or (under an attachment) annotation.'),
  title: z.string().describe('The title; a note’s first line.'),
  dateModified: z.string(),
  tags: z.array(z.string()),
  text: z
    .string()
    .optional()
    .describe('Notes: the whole note as plain text. Annotations: the highlighted text and the comment.'),
  contentType: z.string().optional(),
  filename: z.string().optional(),
  linkMode: z
    .string()
    .optional()
    .describe('imported_file, imported_url, linked_file, linked_url or embedded_image.'),
  url: z.string().optional(),
  fulltext: z
    .boolean()
    .optional()
    .describe(
      'Attachments: whether it is a file that holds readable text (stored or linked PDF, EPUB, HTML, plain text), judged from its type.',
    ),
  annotationType: z.string().optional(),
  pageLabel: z.string().optional(),
  truncated: z
    .literal(true)
    .optional()
    .describe('The text is an excerpt (its first 2,000 characters); zotero_list_notes reads a note whole.'),
  totalChars: z.number().int().optional().describe('The whole text’s length, when it was cut.'),
});

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** Fields the text shows elsewhere (or not at all). */
const SKIP = new Set([
  'key',
  'version',
  'itemType',
  'creators',
  'tags',
  'collections',
  'relations',
  'abstractNote',
  'note',
]);

/** What an answer cut to stay bounded, and how to read on. */
function cutsOf(out: {
  truncatedFields?: Array<{ field: string; length: number; end?: number | undefined }> | undefined;
  nextChildrenStart?: number | undefined;
  children: readonly unknown[];
  childrenTotal: number;
}): string[] {
  const cuts: string[] = [];
  for (const f of out.truncatedFields ?? [])
    cuts.push(
      f.end !== undefined
        ? `${f.field} cut at ${f.end} of ${f.length} characters (offset=${f.end} reads on)`
        : `${f.field}: ${f.length} entries, 100 shown`,
    );
  if (out.nextChildrenStart !== undefined)
    cuts.push(
      `children ${out.nextChildrenStart - out.children.length + 1}–${out.nextChildrenStart} of ${out.childrenTotal} (children_start=${out.nextChildrenStart} for more)`,
    );
  return cuts;
}

export default defineTool({
  name: 'zotero_get_item',
  title: 'Read an item',
  summary:
    'Read one item by key: all its metadata, creators, abstract, tags, collections, child notes and attachments.',
  description: [
    'Read one item: metadata, collections, child notes (excerpts) and attachments. Whole notes: zotero_list_notes;',
    'digests: zotero_summarize. Desktop without a key, else Web API (ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'items',
  inDefaultSet: true,
  cli: [{ path: ['read'], args: ['item_key'] }],
  input: z
    .object({
      // agent-interface.md (`zot read NOPE` exits 4): a key that names nothing is not_found,
      // a string that is not of Zotero's key form included.
      item_key: lookupKey().describe(
        onlyOn('cli', 'The item’s key: 8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ, ') +
          'e.g. "ABCD2345"',
      ),
      max_chars: maxCharsParam(
        onlyOn('mcp', 'Per text field.') +
          onlyOn(
            'cli',
            'At most this many characters of each text field of the item (default 10,000; fewer when the item would not fit in the answer’s size bound, about 40 KB).',
          ),
      ).meta({ default: 10_000 }),
      offset: offsetParam(
        onlyOn('mcp', 'A truncatedFields end.') +
          onlyOn(
            'cli',
            `Start the fields longer than ${paramRef('max_chars')} at this character (the end a previous answer gave in truncatedFields); shorter fields are always whole.`,
          ),
      ),
      children_start: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Zero-based offset into the children (default 0): the nextChildrenStart of a previous answer.',
          ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    item: webApiItem,
    children: z
      .array(child)
      .describe('Direct children not in the trash: notes and attachments (annotations, for an attachment).'),
    collections: z
      .array(z.object({ key: z.string(), name: z.string() }))
      .describe('The collections the item is in, with their names.'),
    fulltext: z
      .boolean()
      .describe(
        'Whether an attachment (or the item, if it is one) is a file that holds readable text; zotero_get_fulltext reads it.',
      ),
    inTrash: z.boolean().describe('True when the item is in the trash.'),
    childrenTotal: z.number().int().describe('Direct children in all; children holds this page of them.'),
    nextChildrenStart: z
      .number()
      .int()
      .optional()
      .describe('Where the next page of children starts (pass it as children_start); absent on the last.'),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'True when something was cut to keep the answer bounded: a field (truncatedFields), a child’s text, or the children (nextChildrenStart).',
      ),
    truncatedFields: z
      .array(
        z.object({
          field: z.string().describe('The field of item.data that was cut.'),
          length: z.number().int().describe('Its whole length: characters of a text, entries of a list.'),
          start: z.number().int().optional().describe('Texts: the offset of the characters shown.'),
          end: z
            .number()
            .int()
            .optional()
            .describe('Texts: where the characters shown end; pass it as offset to read on.'),
        }),
      )
      .optional()
      .describe('Fields of the item cut at max_chars (texts) or 100 entries (lists).'),
    ...answeredFields,
    provenance: provenanceField,
  }),
  summarize: (out) => {
    const cuts = cutsOf(out);
    return `${out.item.key}: ${citationLine(out.item as never as WebApiItem)}${out.inTrash ? ' [in the trash]' : ''} (${out.backend})${cuts.length ? `. Cut: ${cuts.join('; ')}.` : ''}`;
  },
  text: (out) => {
    const item = out.item as never as WebApiItem;
    const d = item.data;
    const rows: Array<[string, string]> = [];
    const add = (label: string, value: string) => {
      if (value) rows.push([label, value]);
    };
    add('key', item.key);
    add('itemType', d.itemType);
    add('year', itemYear(item) ?? '');
    add('creators', creatorList(item).join('; '));
    for (const [field, value] of Object.entries(d)) {
      if (SKIP.has(field) || typeof value !== 'string' || value === '') continue;
      add(field, value.replace(/\s+/g, ' '));
    }
    add('tags', (d.tags ?? []).map((t) => t.tag).join(', '));
    add('collections', out.collections.map((c) => `${c.name || '?'} (${c.key})`).join(', '));
    add('inTrash', out.inTrash ? 'yes' : '');
    add('fulltext', out.fulltext ? 'yes' : 'no');
    const width = Math.max(...rows.map(([label]) => label.length));
    const lines = [
      citationLine(item),
      '',
      ...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`),
    ];
    if (str(d.abstractNote)) lines.push('', 'Abstract:', str(d.abstractNote));
    // A note's text is the item: as plain text, its paragraphs wrapped by the terminal's width.
    if (d.itemType === 'note' && str(d.note))
      lines.push('', 'Note:', htmlToText(str(d.note).replace(/<[^>]*$/, '')));
    for (const c of out.children) {
      const facts = [c.itemType, c.contentType, c.filename].filter(Boolean).join(', ');
      lines.push('', `${c.key}  ${c.title || '(untitled)'} [${facts}]`);
      if (c.text) lines.push(c.text);
    }
    lines.push('', `(${out.backend}, ${out.library})`);
    // What was cut to keep the answer bounded, and how to read on.
    const cuts = cutsOf(out);
    if (cuts.length) lines.push(`Cut: ${cuts.join('; ')}.`);
    return lines.join('\n');
  },
  async run(input, deps) {
    const { getItem } = await import('../../core/items/read/get.js');
    const { lookUpKeys } = await import('../../core/items/read/common.js');
    const lookup = { keys: [input.item_key], field: 'item_key' };
    const out = await lookUpKeys(deps, input, lookup, () => getItem(deps, input));
    return { ...out, item: asItemJson(out.item), provenance: PROVENANCE };
  },
});
