/** `zotero_update_item` / `zot update KEY --field name=value … [--title T] [--date D]`. */
import * as z from 'zod';
import { localSchema } from '../../core/items/schema.js';
import { checkFieldNames, requestedChanges } from '../../core/items/fields.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

export default defineTool({
  name: 'zotero_update_item',
  title: 'Update an item',
  summary: 'Change fields of one item (title, date, any Zotero field), safely against concurrent edits.',
  description: [
    "Change fields of one item; base names map to its type's (title: a case's caseName); a field changed meanwhile by another: conflict, unwritten. Tags, collections, trash: zotero_manage_tags, zotero_manage_collections,",
    'zotero_trash_items. Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  idempotent: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'items',
  undo: {
    restores: "the item's fields as they were",
  },
  cli: [
    {
      path: ['update'],
      args: ['item_key'],
      omit: ['fields', 'dry_run'],
      summary: 'Change fields of an item: --field name=value (repeatable), --title, --date.',
    },
  ],
  input: z
    .object({
      item_key: zoteroKey('item_key').describe(onlyOn('cli', 'Key of the item to change, e.g. "ABCD2345".')),
      fields: z.record(z.string(), z.string()).optional().describe('By field name; "" clears one.'),
      field: z.array(z.string()).optional().describe('name=value, e.g. volume=12.'),
      title: z
        .string()
        .optional()
        .describe(
          onlyOn('cli', 'New title (the type’s title field: caseName for a case, subject for an email, …).'),
        ),
      date: z
        .string()
        .optional()
        .describe(onlyOn('cli', 'New date, as Zotero stores it (e.g. "2021-03-15", "March 2021", "2021").')),
      dry_run: z.boolean().optional(),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    key: z.string(),
    itemType: z.string(),
    changes: z
      .array(z.object({ field: z.string(), from: z.string(), to: z.string() }))
      .describe(
        'Each changed field with its old and new value ("" when empty): written, or with dry_run to be written.',
      ),
    unchanged: z
      .array(z.string())
      .describe('Fields that already had the requested value; nothing was sent for them.'),
    dryRun: z.boolean().describe('True when nothing was written because dry_run was asked.'),
    version: z
      .number()
      .int()
      .describe('The item’s version after the write (its current version when nothing was written).'),
    libraryVersion: z.number().int().optional().describe("The library's version after the write."),
    reapplied: z
      .number()
      .int()
      .describe(
        'How many times the change was re-applied after someone else wrote other fields of the item.',
      ),
  }),
  summarize: (out) =>
    out.dryRun
      ? `Would change ${plural(out.changes.length, 'field')} of ${out.key}: ${out.changes.map((c) => c.field).join(', ') || 'none'}.`
      : `Changed ${plural(out.changes.length, 'field')} of ${out.key}${out.changes.length ? `: ${out.changes.map((c) => c.field).join(', ')}` : ''}.`,
  next: (out) => [`zot note ${out.key}`],
  // Offline, before the key check: field names, and that there is something to change.
  check(input, { config }) {
    checkFieldNames(localSchema(config), requestedChanges(input).keys());
  },
  plan(input, deps) {
    const set = requestedChanges(input);
    checkFieldNames(localSchema(deps.config), set.keys());
    return {
      item_key: input.item_key,
      set: Object.fromEntries(set),
      note: "Names are mapped to the item type's own fields when the item is read (title is caseName for a case).",
    };
  },
  async run(input, deps) {
    const { updateItem } = await import('../../core/items/update.js');
    return updateItem(deps, input, localSchema(deps.config));
  },
});
