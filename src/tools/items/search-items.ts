/**
 * `zotero_search_items` / `zot search QUERY`, `zot list`, `zot recent [--days N]`: items of a
 * library, searched, filtered and paged, in the Web API's JSON shape on every backend.
 */
import * as z from 'zod';
import { resultLine } from '../../core/items/digest.js';
import { checkListingFields, fieldNames } from '../../core/items/read/compact.js';
import { checkItemTypeFilter } from '../../core/items/read/filters.js';
import { localSchema } from '../../core/items/schema.js';
import type { WebApiItem } from '../../core/library/port.js';
import { defineTool } from '../../core/tool.js';

// The port module is a light one (types and this list), so `zot --help` stays cheap.
import { ITEM_SORT_FIELDS as SORT_FIELDS } from '../../core/library/port.js';
import { asListedJson, listedItem } from './shared.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { PROVENANCE, libraryParams, pagingParams, zoteroKey } from '../shared/params.js';
import { pageLine } from '../shared/text.js';

const filterExpr = (text: string) =>
  z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(20)])
    .optional()
    .describe(text);

function summary(
  out: {
    items: unknown[];
    totalResults: number;
    start: number;
    backend: string;
    message?: string | undefined;
    nextStart?: number | undefined;
    truncated?: boolean | undefined;
    truncatedFields?: unknown[] | undefined;
  },
  input: { q?: string | undefined; added_within_days?: number | undefined },
): string {
  const q = input.q?.trim();
  let what = q ? `items matching ${JSON.stringify(q)}` : 'items';
  const days = input.added_within_days;
  if (days !== undefined) what += ` added in the last ${days} day${days === 1 ? '' : 's'}`;
  const cut = out.truncatedFields?.length
    ? ` ${out.truncatedFields.length} long field${out.truncatedFields.length === 1 ? ' was' : 's were'} cut (truncatedFields): zotero_get_item reads an item whole.`
    : '';
  return pageLine(out, out.items.length, what) + cut + (out.message ? ` ${out.message}` : '');
}

/** A value of a chosen field as text: names of creators, tag names, lists joined. */
function shown(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) {
    return value
      .map((v) => {
        if (v === null || typeof v !== 'object') return String(v);
        const o = v as Record<string, unknown>;
        if (typeof o.tag === 'string') return o.tag;
        if (typeof o.lastName === 'string' || typeof o.name === 'string') {
          return typeof o.name === 'string'
            ? o.name
            : [o.lastName, o.firstName].filter((p) => typeof p === 'string' && p !== '').join(', ');
        }
        return Object.values(o).map(String).join(' ');
      })
      .join('; ');
  }
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${shown(v)}`)
      .join(', ');
  }
  return String(value);
}

/** One line per item with `fields`: its key, then each chosen field it has, in the order asked. */
function fieldsLine(item: { key: string; meta?: object; data?: object }, names: readonly string[]): string {
  const meta = (item.meta ?? {}) as Record<string, unknown>;
  const data = (item.data ?? {}) as Record<string, unknown>;
  const own = item as Record<string, unknown>;
  const values = names
    .filter((name) => name !== 'key')
    .map((name) => shown(name in meta ? meta[name] : name in data ? data[name] : own[name]))
    .filter((text) => text !== '');
  return [item.key, ...values].join('  ');
}

export default defineTool({
  name: 'zotero_search_items',
  title: 'Search items',
  summary:
    'Search or list the items of a library: words in title, creators and year (or everywhere), filters, sorting, paging.',
  description: [
    'Find items by words in title, creators, year (qmode "everything": any field, notes, full text) or list them.',
    'About a topic or question: zotero_semantic_search. Desktop without a key, else Web API (ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'search',
  inDefaultSet: true,
  cli: [
    {
      path: ['search'],
      args: ['q'],
      flags: { collection_key: 'collection', item_type: 'type', added_within_days: 'days' },
      summary:
        'Search items: words in title, creators and year (--qmode everything: every field, notes, full text).',
    },
    {
      path: ['list'],
      omit: ['q', 'qmode', 'include_children'],
      preset: { include_children: false },
      flags: { collection_key: 'collection', item_type: 'type', added_within_days: 'days' },
      summary: 'List top-level items, most recently modified first (--collection K: one collection).',
    },
    {
      path: ['recent'],
      omit: ['q', 'qmode', 'include_children', 'sort', 'direction'],
      flags: { collection_key: 'collection', item_type: 'type', added_within_days: 'days' },
      preset: { include_children: false, sort: 'dateAdded', direction: 'desc' },
      summary:
        'List the top-level items added most recently, newest first (--days N: those added in the last N days).',
    },
  ],
  input: z
    .object({
      q: z
        .string()
        .max(500)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Words that must all match (case- and accent-insensitive; punctuation separates words). Omit to list items.',
          ),
        ),
      qmode: z
        .enum(['titleCreatorYear', 'everything'])
        .optional()
        .meta({ default: 'titleCreatorYear' })
        .describe(
          onlyOn(
            'cli',
            '"titleCreatorYear" (default): title, creators and year. "everything": also every other field, tags, notes and indexed full text.',
          ),
        ),
      item_type: filterExpr(`As ${paramRef('tag')}.`),
      tag: filterExpr(
        'a || b; -a: not; list: all.' +
          onlyOn(
            'cli',
            ' Exact, case-sensitive tag names: "a || b" matches either, a leading "-" excludes, and several given must all hold ("sea level", "ocean || climate", "-to-read"). The same expressions filter item types ("book || journalArticle", "-attachment").',
          ),
      ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Only items directly in this collection (its key, as the collection listing gives it).',
          ),
        ),
      include_children: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Also list child notes, attachments and annotations as items of their own, each matched on its own (default false: top-level items only, and a match in a child or its full text counts for its parent).',
          ),
        ),
      since: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe(
          'Library version.' + onlyOn('cli', ' Only items changed after it (for syncing; not a date).'),
        ),
      include_trashed: z
        .boolean()
        .optional()
        .describe(onlyOn('cli', 'Include items in the trash (default false).')),
      sort: z
        .enum(SORT_FIELDS)
        .optional()
        .meta({ default: 'dateModified' })
        .describe(
          onlyOn(
            'cli',
            `Sort field (default dateModified; with ${paramRef('added_within_days')} only dateAdded).`,
          ),
        ),
      direction: z
        .enum(['asc', 'desc'])
        .optional()
        .describe(onlyOn('cli', 'Sort direction (default desc for dates, asc for the others).')),
      ...pagingParams({ rows: 'Items', default: 25, max: 100 }),
      added_within_days: z
        .number()
        .int()
        .min(1)
        .max(36500)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `Only items added in the last N days, newest first (${paramRef('direction', 'asc')}: oldest first). Not a Web API parameter: Zoteus reads the newest items until it passes the cut-off (at most 10,000).`,
          ),
        ),
      fields: z
        .array(z.string().min(1).max(500))
        .min(1)
        .max(50)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'The fields each item keeps, e.g. key, title, creators, year (an entry may hold several, comma-separated): Zotero field names as its schema spells them, plus version, library, creatorSummary, parsedDate, numChildren and year. The key is always kept. Default: every field that is not empty.',
          ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    items: z
      .array(listedItem)
      .describe('This page of matching items, in the Web API JSON shape without empty values.'),
    totalResults: z.number().int().describe('Items matching in total, not just this page.'),
    start: z.number().int().describe('The offset this page starts at.'),
    complete: z
      .boolean()
      .optional()
      .describe('False only when added_within_days had more items than Zoteus reads (10,000); see message.'),
    message: z.string().optional(),
    nextStart: nextStartField,
    truncated: truncatedField,
    truncatedFields: z
      .array(
        z.object({
          key: z.string().describe('The item.'),
          field: z.string().describe('The field of its data that was cut.'),
          length: z
            .number()
            .int()
            .describe('Its whole length: characters of a text (2,000 shown), entries of a list (100 shown).'),
        }),
      )
      .optional()
      .describe(
        'Fields of items on this page cut to keep the answer bounded; zotero_get_item reads the item whole.',
      ),
    ...answeredFields,
    provenance: provenanceField,
  }),
  rows: 'items',
  check(input, { config }) {
    if (input.item_type === undefined && input.fields === undefined) return;
    const schema = localSchema(config);
    checkItemTypeFilter(schema, input.item_type);
    checkListingFields(schema, input.fields);
  },
  summarize: summary,
  text: (out, input) => {
    const names = fieldNames(input.fields);
    return [
      summary(out, input),
      ...out.items.map((item) => (names ? fieldsLine(item, names) : resultLine(item as never as WebApiItem))),
    ].join('\n');
  },
  async run(input, deps) {
    const { searchItems } = await import('../../core/items/read/search.js');
    const { include_children: children, ...rest } = input;
    const out = await searchItems(deps, { ...rest, top: children !== true });
    return { ...out, items: out.items.map(asListedJson), provenance: PROVENANCE };
  },
});
