/** `zotero_create_note` / `zot note add KEY TEXT | --file F`: a child note from plain text or HTML. */
import * as z from 'zod';
import { noteHtml } from '../../core/items/html.js';
import { defineTool } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

export default defineTool({
  name: 'zotero_create_note',
  title: 'Add a note',
  summary: 'Add a child note to an item, from plain text (escaped) or HTML.',
  description: [
    'Add a child note from plain text (escaped) or HTML, not both; its first line is its title. Standalone notes: zotero_create_items; existing:',
    'zotero_list_notes. Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'notes',
  undo: {
    restores: 'the created note goes to the trash',
  },
  cli: [
    {
      path: ['note', 'add'],
      args: ['parent_item', 'text'],
      flags: { html: 'file', tags: 'tag' },
      files: { html: 'text' },
      // The synopsis' spelling, `zot note KEY --add TEXT | --file F`, runs this command too.
      via: { path: ['note'], flags: { add: 'text', file: 'html' } },
      summary:
        'Add a child note: `zot note add KEY TEXT` (plain text) or `--file F|-` (HTML, or text without tags).',
    },
  ],
  input: z
    .object({
      parent_item: zoteroKey('parent_item').describe(
        onlyOn('cli', 'Key of the parent item, e.g. "ABCD2345".'),
      ),
      text: z
        .string()
        .min(1)
        .optional()
        .describe(
          onlyOn('mcp', 'Plain text, or give HTML.') +
            onlyOn('cli', 'The note as plain text (escaped; blank lines make paragraphs).'),
        ),
      html: z.string().min(1).optional().describe(onlyOn('cli', 'The note as HTML, stored as given.')),
      tags: z
        .array(z.string().min(1).max(255))
        .max(50)
        .optional()
        .describe(onlyOn('cli', 'Tags for the note.')),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    key: z.string().describe('Key of the new note.'),
    parentItem: z.string().describe('Key of the item the note is under.'),
    title: z.string().describe('The note’s first line.'),
    chars: z.number().int().describe('Length of the stored HTML.'),
    libraryVersion: z.number().int().optional(),
  }),
  summarize: (out) => `Added note ${out.key} under ${out.parentItem}: ${out.title}`,
  next: (out) => [`zot note ${out.parentItem}`],
  plan(input) {
    const html = noteHtml(input);
    return {
      parent_item: input.parent_item,
      html: html.length > 500 ? `${html.slice(0, 500)}…` : html,
      chars: html.length,
    };
  },
  async run(input, deps) {
    const { createNote } = await import('../../core/items/notes.js');
    return createNote(deps, input);
  },
});
