/** `zotero_list_notes` / `zot note KEY`: the child notes of an item, as text, a bounded page at a time. */
import * as z from 'zod';
import { clipText, fitRows, nextStartOf, ROWS_BUDGET } from '../../core/items/read/bounds.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, nextStartField } from '../shared/output.js';
import {
  PROVENANCE,
  libraryParams,
  maxCharsParam,
  offsetParam,
  startParam,
  lookupKey,
  ZOTERO_KEY_PATTERN,
} from '../shared/params.js';
import { toolRef, onlyOn, paramRef } from '../../core/call/refs.js';

/** Characters of each note's text (and HTML) an answer holds, by default. */
const NOTE_MAX_CHARS = 10_000;

export default defineTool({
  name: 'zotero_list_notes',
  title: 'List notes',
  summary: 'List the child notes of an item, as plain text (HTML on request).',
  description: [
    "Read an item's child notes as text. Fields: zotero_get_item; digests: zotero_summarize.",
    'Desktop without a key, else Web API (ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'notes',
  inDefaultSet: true,
  cli: [
    {
      path: ['note'],
      args: ['item_key'],
      summary: 'List the child notes of an item (`zot note add KEY TEXT` adds one).',
    },
  ],
  input: z
    .object({
      // agent-interface.md: a key that names nothing is not_found, a string not of the key form included.
      item_key: lookupKey().describe(
        onlyOn('mcp', 'e.g. "ABCD2345"') + onlyOn('cli', 'Key of the parent item, e.g. "ABCD2345".'),
      ),
      include_html: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Also return each note’s HTML as stored (default false).')),
      note_key: lookupKey()
        .optional()
        .describe(
          onlyOn('cli', `Only this child note (to read one long note on with ${paramRef('offset')}).`),
        ),
      max_chars: maxCharsParam(
        onlyOn('mcp', 'Per note.') +
          onlyOn(
            'cli',
            'At most this many characters of each note’s text and HTML (default 10,000; fewer when a note would not fit in the answer’s size bound, about 40 KB).',
          ),
      ).meta({
        default: NOTE_MAX_CHARS,
      }),
      offset: offsetParam(
        onlyOn('mcp', "A previous answer's end.") +
          onlyOn(
            'cli',
            `Start the notes longer than ${paramRef('max_chars')} at this character (the end a previous answer gave); shorter notes are always whole.`,
          ),
      ),
      start: startParam(),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    ...answeredFields,
    itemKey: z.string().describe('The item whose notes these are.'),
    notes: z
      .array(
        z.object({
          key: z.string(),
          version: z.number().int(),
          title: z.string().describe('The first line of the note.'),
          text: z.string().describe('The note as plain text (at most max_chars characters of it).'),
          html: z.string().optional().describe('The note as stored (with include_html; at most max_chars).'),
          tags: z.array(z.string()),
          dateModified: z.string().optional(),
          truncated: z.literal(true).optional().describe('The text (or html) was cut at max_chars.'),
          totalChars: z.number().int().optional().describe('The whole text’s length, when it was cut.'),
          end: z
            .number()
            .int()
            .optional()
            .describe(
              'Where the text shown ends, when it was cut: pass it as offset (with note_key) to read on.',
            ),
        }),
      )
      .describe('This page of the child notes, oldest change first.'),
    totalResults: z.number().int().describe('Child notes the server counts (1 with note_key).'),
    start: z.number().int().optional().describe('The offset this page starts at.'),
    nextStart: nextStartField,
    truncated: z
      .boolean()
      .optional()
      .describe(
        'True when something was cut to keep the answer bounded: a note’s text (see its end) or the page (see nextStart).',
      ),
    complete: z
      .boolean()
      .describe('False when the listing stopped early (see the server’s paging); notes may be missing.'),
    message: z
      .string()
      .optional()
      .describe('Why there are no notes when the key is itself a note, and how to read it.'),
    provenance: z.string(),
  }),
  rows: 'notes',
  summarize: (out) => {
    if (out.message !== undefined && out.notes.length === 0) return out.message;
    const start = out.start ?? 0;
    const range =
      out.nextStart !== undefined || start > 0
        ? ` (${start + 1}–${start + out.notes.length} of ${out.totalResults}; ${out.nextStart !== undefined ? `continue with start=${out.nextStart}` : 'the last page'})`
        : '';
    const cut = out.notes.filter((n) => n.truncated).length;
    const cutLine = cut ? ` ${plural(cut, 'note')} cut at max_chars: offset (with note_key) reads on.` : '';
    return `${plural(out.notes.length, 'note')} under ${out.itemKey}${range}.${cutLine}`;
  },
  // Notes are prose: each one whole, its text wrapped at words by the terminal's width (a
  // table would cut it), then the page line.
  text: (out) => {
    if (out.message !== undefined && out.notes.length === 0) return out.message;
    const lines: string[] = [];
    for (const note of out.notes) {
      // The title is the text's first line: the heading says which note, the text follows.
      const facts = [note.dateModified, note.tags.length ? `tags: ${note.tags.join(', ')}` : ''];
      lines.push([`Note ${note.key}`, ...facts].filter(Boolean).join('  '));
      lines.push(...(note.text === '' ? ['(empty)'] : note.text.split('\n')));
      if (note.truncated && note.end !== undefined && note.totalChars !== undefined)
        lines.push(
          `[cut at ${note.end.toLocaleString('en-US')} of ${note.totalChars.toLocaleString('en-US')} characters: offset=${note.end} with note_key=${note.key} reads on]`,
        );
      lines.push('');
    }
    const start = out.start ?? 0;
    const page =
      out.notes.length === 0
        ? `No notes under ${out.itemKey}${start > 0 ? ` on this page (start ${start}); there are ${out.totalResults} in total` : ''} (${out.backend}).`
        : `Showing ${start + 1}–${start + out.notes.length} of ${plural(out.totalResults, 'note')} under ${out.itemKey} (${out.backend}).${out.nextStart !== undefined ? ` Continue with start=${out.nextStart}.` : ''}`;
    lines.push(page);
    return lines.join('\n');
  },
  async run(input, deps) {
    const { listNotes } = await import('../../core/items/notes.js');
    const { KEY_FORM, lookUpKeys } = await import('../../core/items/read/common.js');
    const lookup = { keys: [input.item_key], field: 'item_key' };
    const listed = await lookUpKeys(deps, input, lookup, () => listNotes(deps, input));
    let notes = listed.notes;
    if (input.note_key !== undefined) {
      notes = notes.filter((n) => n.key === input.note_key);
      if (notes.length === 0) {
        const { ZoteusError } = await import('../../core/errors.js');
        throw new ZoteusError(
          'not_found',
          `Item "${input.item_key}" has no child note "${input.note_key}"${ZOTERO_KEY_PATTERN.test(input.note_key) ? '' : `: "${input.note_key}" is not a Zotero key (${KEY_FORM})`}.`,
          {
            field: 'note_key',
            hint: `${toolRef('zotero_list_notes', { item_key: input.item_key })} lists its notes.`,
          },
        );
      }
    }
    const maxChars = input.max_chars ?? NOTE_MAX_CHARS;
    const offset = input.offset ?? 0;
    const start = input.start ?? 0;
    type Row = (typeof notes)[number] & { truncated?: true; totalChars?: number; end?: number };
    // Whatever max_chars, one note (its text, and its HTML when asked) fits in the size bound.
    const bytes = Math.floor((ROWS_BUDGET * 0.9) / (input.include_html ? 2 : 1));
    const clipped = notes.slice(start).map((note): Row => {
      const text = clipText(note.text, maxChars, offset, bytes);
      const html = note.html === undefined ? undefined : clipText(note.html, maxChars, offset, bytes);
      if (!text.truncated && !html?.truncated) return note;
      return {
        ...note,
        text: text.text,
        ...(html ? { html: html.text } : {}),
        truncated: true as const,
        ...(text.truncated ? { totalChars: text.totalChars, end: text.end } : {}),
      };
    });
    const page = fitRows(clipped);
    const nextStart = nextStartOf(start, page.rows.length, notes.length);
    const truncated = nextStart !== undefined || page.rows.some((n) => n.truncated);
    return {
      backend: listed.backend,
      library: listed.library,
      itemKey: listed.itemKey,
      notes: page.rows,
      totalResults: input.note_key !== undefined ? notes.length : listed.totalResults,
      start,
      ...(nextStart !== undefined ? { nextStart } : {}),
      ...(truncated ? { truncated: true } : {}),
      complete: listed.complete,
      ...(listed.message !== undefined ? { message: listed.message } : {}),
      provenance: PROVENANCE,
    };
  },
});
