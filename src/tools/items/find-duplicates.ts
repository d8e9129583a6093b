/**
 * `zotero_find_duplicates` / `zot duplicates [--collection K]`: groups of likely duplicate
 * items (shared DOI, arXiv id or ISBN; alike title with the same first creator and year).
 */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { libraryParams, pagingParams, PROVENANCE, zoteroKey } from '../shared/params.js';
import { continuation, libraryFlags } from '../shared/text.js';
import { onlyOn } from '../../core/call/refs.js';

/** The same as core/duplicates (not imported: the declaration loads without it). */
const PAGE = {
  rows: 'Groups',
  default: 50,
  max: 200,
} as const;

const member = z.object({
  key: z.string(),
  title: z.string(),
  itemType: z.string(),
  firstCreator: z.string().optional().describe('Last name (or name) of the first creator.'),
  year: z.string().optional(),
  dateAdded: z.string().optional(),
});

const group = z.object({
  keys: z.array(z.string()).describe('The items of the group, oldest first (date added).'),
  items: z.array(member),
  match: z
    .enum(['doi', 'arxiv', 'isbn', 'title'])
    .describe(
      'What ties the group (its weakest link): a shared DOI, arXiv id or ISBN, or title, first creator and year.',
    ),
  reason: z.string().describe('Why these items look like one work, in words.'),
  confidence: z
    .number()
    .describe('1 for a shared identifier; for a title match the title similarity (at least threshold).'),
  master: z
    .string()
    .describe('The suggested master: the oldest item (date added), the most complete one among equals.'),
});

export default defineTool({
  name: 'zotero_find_duplicates',
  title: 'Find duplicate items',
  summary:
    'Find groups of likely duplicate items: shared DOI, arXiv id or ISBN, or alike title, first creator and year.',
  description:
    "Group duplicates (same DOI, arXiv id, ISBN or title+creator+year) among collection_key's items if given, else the library's. Desktop data without a key, else Web API with ZOTERO_API_KEY. Merge: zotero_merge_items.",
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'items',
  cli: [
    {
      path: ['duplicates'],
      flags: { collection_key: 'collection' },
      summary: 'Find likely duplicate items: zot duplicates [--collection K]',
    },
  ],
  input: z
    .object({
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Compare only the top-level items of this collection.')),
      ...pagingParams(PAGE),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    threshold: z.number().describe('The least title similarity a match by title needs.'),
    checked: z.number().int().describe('Regular top-level items compared.'),
    groups: z.array(group),
    start: z.number().int(),
    totalResults: z.number().int().describe('Groups found in all.'),
    nextStart: nextStartField,
    truncated: truncatedField,
    provenance: provenanceField,
    ...answeredFields,
  }),
  rows: 'groups',
  summarize: (out) =>
    `${plural(out.totalResults, 'group')} of likely duplicates among ${plural(out.checked, 'item')}${
      out.groups.length < out.totalResults ? ` (${out.groups.length} shown from ${out.start})` : ''
    }.${continuation(out)}`,
  text: (out) => {
    const lines: string[] = [];
    for (const g of out.groups) {
      lines.push(`${g.keys.join(' ')}  [${g.match}, confidence ${g.confidence}] ${g.reason}`);
      for (const i of g.items)
        lines.push(
          `  ${i.key}${i.key === g.master ? '*' : ' '} ${i.title}${i.firstCreator ? ` — ${i.firstCreator}` : ''}${i.year ? ` (${i.year})` : ''}`,
        );
    }
    return `${lines.join('\n')}\n`;
  },
  next: (out, input) => {
    const g = out.groups[0];
    const others = g ? g.keys.filter((k) => k !== g.master).join(' ') : '';
    return g ? [`zot merge ${g.master} ${others}${libraryFlags(input)}`] : [];
  },
  async run(input, deps) {
    const { findDuplicates } = await import('../../core/duplicates/find.js');
    return { ...(await findDuplicates(deps, input)), provenance: PROVENANCE };
  },
});
