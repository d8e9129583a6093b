/**
 * `zotero_schema` / `zot item-types [ITEM_TYPE]`: Zotero's item types, their fields and creator
 * types. (tools.md spells the command `zot schema --zotero`; `zot schema` is the CLI's own
 * built-in, which does not hand a flag to a tool, so the tool has a command of its own.)
 */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';

const itemType = z.object({
  itemType: z.string(),
  fields: z
    .array(
      z.object({
        field: z.string(),
        baseField: z
          .string()
          .optional()
          .describe('The base field this type-specific one maps onto (bookTitle → publicationTitle).'),
      }),
    )
    .describe('The fields of this type, in Zotero’s order (title first).'),
  creatorTypes: z.array(z.string()).describe('The creator types of this type, the primary one first.'),
});

/** "book: 29 fields, 5 creator types (schema version 41, bundled)." or the count of types. */
function heading(out: {
  version: number;
  source: string;
  itemTypes: ReadonlyArray<{
    itemType: string;
    fields: readonly unknown[];
    creatorTypes: readonly unknown[];
  }>;
}): string {
  const [one] = out.itemTypes;
  const where = `(schema version ${out.version}, ${out.source})`;
  return out.itemTypes.length === 1 && one
    ? `${one.itemType}: ${plural(one.fields.length, 'field')}, ${plural(one.creatorTypes.length, 'creator type')} ${where}.`
    : `${plural(out.itemTypes.length, 'item type')} ${where}.`;
}

export default defineTool({
  name: 'zotero_schema',
  title: 'Item types and their fields',
  summary: 'List Zotero’s item types with their fields and creator types, from the server’s schema.',
  description: [
    'List Zotero item types with their fields and creator types (the primary one first), and the base field a',
    'type-specific one maps onto (bookTitle -> publicationTitle). Check it before zotero_create_items or zotero_update_item.',
    "All types take about 26 KB: pass item_type for one (exact; unknown: not_found, with the list). From the Web API's /schema, no key needed (checked daily);",
    'offline, the cached or bundled copy: source says which.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'library',
  // `zot schema --zotero [ITEM_TYPE]` (the catalogue's spelling), also `zot item-types`.
  cli: [{ path: ['item-types'], args: ['item_type'], via: { path: ['schema'], flags: { zotero: '' } } }],
  input: z
    .object({
      item_type: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .describe('One item type, e.g. "journalArticle"; omit for all.'),
    })
    .strict(),
  output: z.object({
    version: z.number().int().describe('The schema’s version.'),
    source: z
      .enum(['server', 'cache', 'bundled'])
      .describe(
        'server: fetched from the configured server now or within a day; cache: the server’s copy kept on disk; bundled: the copy that comes with Zoteus.',
      ),
    itemTypes: z.array(itemType).describe('The item types (one, with item_type).'),
  }),
  summarize: (out) => heading(out),
  // The fields are why one asks: each type's fields and creator types as lists, which the
  // terminal wraps under their label (a type-specific field with the base field it maps onto).
  text: (out) => {
    const lines = [heading(out)];
    for (const type of out.itemTypes) {
      const fields = type.fields.map((f) => (f.baseField ? `${f.field} (→ ${f.baseField})` : f.field));
      lines.push(
        '',
        type.itemType,
        `  fields         ${fields.join(', ') || '(none)'}`,
        `  creator types  ${type.creatorTypes.join(', ') || '(none)'}`,
      );
    }
    return lines.join('\n');
  },
  async run(input, deps) {
    const { schemaView } = await import('../../core/items/schema-view.js');
    return schemaView(deps, input.item_type);
  },
});
