/** `zotero_create_items` / `zot create FILE|-`: new items from Web API JSON, schema-checked first. */
import * as z from 'zod';
import { mergeCreate, retryCreateInput } from '../../core/items/retry.js';
import { localSchema } from '../../core/items/schema.js';
import { checkedItems } from '../../core/items/validate.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { failedList, libraryVersion } from '../shared/output.js';
import { libraryParams } from '../shared/params.js';
import { quoted } from '../shared/text.js';
import { onlyOn } from '../../core/call/refs.js';

const MAX_ITEMS = 1000;

export default defineTool({
  name: 'zotero_create_items',
  title: 'Create items',
  summary:
    "Create items from Zotero Web API JSON, validated against Zotero's schema before anything is written.",
  description: [
    'Create items from Zotero item JSON: {itemType, title, creators: [{creatorType, lastName}], tags: [{tag}],',
    'collections: [key]}; a note: {itemType: note, note: html}. By DOI, ISBN, URL, BibTeX: zotero_import; one note:',
    'zotero_create_note. A child: parentItem. Fields: zotero_schema. One invalid item refuses the batch.',
    'Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'items',
  undo: {
    restores: 'the created items go to the trash',
  },
  cli: [
    {
      path: ['create'],
      // `zot create FILE|-`: the file is the positional, so `--json` stays the global output flag
      // (`zot create --json items.json` is that flag and the file, as it always read).
      args: ['items'],
      files: { items: 'json' },
      summary:
        'Create items from a JSON file of Zotero item objects (ITEMS: its path, or - for stdin), schema-checked first.',
    },
  ],
  input: z
    .object({
      items: z
        .array(z.record(z.string(), z.unknown()))
        .min(1)
        .max(MAX_ITEMS)
        .describe(
          onlyOn('mcp', 'Web API item objects.') +
            onlyOn(
              'cli',
              'Items in the Zotero Web API JSON shape (as POSTed to /items), at most 1000. A full API object ({key, version, data: {…}}) is accepted and its data used.',
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    created: z
      .array(
        z.object({
          index: z.number().int().describe('Position in the input.'),
          key: z.string().describe('Key of the new item.'),
          itemType: z.string(),
          title: z.string().optional(),
        }),
      )
      .describe('Items created, in input order.'),
    failed: failedList,
    libraryVersion,
  }),
  summarize: (out) =>
    `Created ${plural(out.created.length, 'item')}${out.failed.length ? `; ${out.failed.length} refused` : ''}.`,
  next: (out) => {
    const first = out.created[0];
    if (!first) return [];
    return [
      `zot note add ${first.key} <text>`,
      `zot tag add <tag> ${out.created
        .slice(0, 10)
        .map((c) => quoted(c.key))
        .join(' ')}`,
    ];
  },
  plan(input, deps) {
    const schema = localSchema(deps.config);
    const items = checkedItems(schema, input.items);
    const types: Record<string, number> = {};
    for (const item of items) types[String(item.itemType)] = (types[String(item.itemType)] ?? 0) + 1;
    return {
      items: items.length,
      itemTypes: types,
      write_requests: Math.ceil(items.length / 50),
      schema_version: schema.version,
    };
  },
  // Every item against Zotero's schema offline: an invalid batch costs no request at all.
  check: (input, { config }) => void checkedItems(localSchema(config), input.items),
  retryFailed: {
    input: (input, previous) => retryCreateInput(input, previous),
    merge: (previous, retry) => mergeCreate(previous, retry),
  },
  async run(input, deps) {
    const { createItems } = await import('../../core/items/create.js');
    return createItems(deps, input, localSchema(deps.config));
  },
});
