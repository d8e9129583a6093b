/** `zotero_create_note` / `zot note add KEY TEXT | --file F`: a child note from plain text or HTML. */
import * as z from 'zod';
import { noteHtml } from '../../core/items/html.js';
import { defineTool } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';

export default defineTool({
  name: 'zotero_create_note',
  title: 'Add a note to an item',
  summary: 'Add a child note to an item, from plain text (escaped) or HTML.',
  description: [
    'Add one child note to an item, from plain text (escaped; blank lines make paragraphs) or Zotero note HTML',
    '(<p>, <h1>, <ul>, <a href>...). For standalone notes or many at once use zotero_create_items;',
    "zotero_list_notes shows an item's notes. The note is written via the desktop's local API once a person authorised it, else the",
    'Web API with a write-enabled ZOTERO_API_KEY. A repeat call adds another note unless it reuses idempotency_key.',
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
      parent_item: zoteroKey('parent_item').describe('The item the note goes under.'),
      text: z.string().min(1).optional().describe('Plain text; give this or the HTML.'),
      html: z.string().min(1).optional().describe('The note as HTML.'),
      tags: z.array(z.string().min(1).max(255)).max(50).optional().describe('Tags for the note.'),
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
