/**
 * `zotero_saved_searches` / `zot saved-search list|show KEY|run KEY`: a library's saved searches
 * (name and conditions) on every backend, and the items one matches, which only the desktop
 * app's local API can compute (the Web API and zotero.sqlite refuse `run`, saying so).
 */
import * as z from 'zod';
import { onlyOn, toolRef } from '../../core/call/refs.js';
import { resultLine } from '../../core/items/digest.js';
import type { WebApiItem } from '../../core/library/port.js';
import {
  LIST_DEFAULT,
  LIST_MAX,
  RUN_DEFAULT,
  SAVED_SEARCHES_ACTIONS,
  type SavedSearchesAction,
} from '../../core/searches/constants.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { asListedJson, listedItem } from '../items/shared.js';
import { answeredFields, nextStartField, provenanceField, truncatedField } from '../shared/output.js';
import { PROVENANCE, libraryParams, lookupKey, startParam } from '../shared/params.js';
import { continuation, pageLine } from '../shared/text.js';
import { conditionsText, searchRow } from './shared.js';

const WANTS_KEY: Record<SavedSearchesAction, boolean> = { list: false, show: true, run: true };

const input = z
  .object({
    action: z.enum(SAVED_SEARCHES_ACTIONS),
    search_key: lookupKey()
      .optional()
      .describe(
        onlyOn(
          'cli',
          `The saved search to show or run: its 8-character key, as ${toolRef('zotero_saved_searches', { action: 'list' })} gives it.`,
        ),
      ),
    start: startParam(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIST_MAX)
      .optional()
      .describe(`Default: list ${LIST_DEFAULT}, run ${RUN_DEFAULT}.`),
    ...libraryParams,
  })
  .strict()
  .superRefine((value, ctx) => {
    if (!Object.hasOwn(WANTS_KEY, value.action)) return;
    const action = onlyOn('mcp', ` for action "${value.action}"`);
    if (WANTS_KEY[value.action] && value.search_key === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['search_key'],
        message: `the key of the saved search is required${action}`,
      });
    }
    if (!WANTS_KEY[value.action] && value.search_key !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['search_key'],
        message: 'does not apply to action "list" (use "show" or "run" for one saved search)',
      });
    }
    if (value.action === 'show') {
      for (const field of ['start', 'limit'] as const) {
        if (value[field] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: 'does not apply to action "show" (one saved search)',
          });
        }
      }
    }
  });

const output = z.object({
  searches: z
    .array(searchRow)
    .optional()
    .describe('This page of the saved searches, sorted by name, trashed ones too (action "list").'),
  search: searchRow.optional().describe('The saved search (actions "show" and "run").'),
  items: z
    .array(listedItem)
    .optional()
    .describe(
      'This page of the items the saved search matches (action "run"), in the Web API JSON shape without empty values; child notes and attachments that match are items of their own, as in Zotero.',
    ),
  totalResults: z
    .number()
    .int()
    .optional()
    .describe('Saved searches ("list") or matching items ("run") in total.'),
  start: z.number().int().optional().describe('The offset this page starts at.'),
  nextStart: nextStartField,
  truncated: truncatedField,
  truncatedFields: z
    .array(z.object({ key: z.string(), field: z.string(), length: z.number().int() }))
    .optional()
    .describe(
      'Fields of items on this page cut at 2,000 characters (or 100 entries); zotero_get_item reads an item whole.',
    ),
  ...answeredFields,
  provenance: provenanceField,
});

type Input = z.infer<typeof input>;
type Output = z.infer<typeof output>;

function summary(out: Output, i: Input): string {
  if (i.action === 'list') {
    const total = out.totalResults ?? 0;
    const shown = out.searches?.length ?? 0;
    const start = out.start ?? 0;
    if (total === 0 || shown === 0)
      return `No saved searches${total > 0 ? ` on this page (start ${start}; ${total} in total)` : ''} (${out.backend}).`;
    return `Showing ${start + 1}–${start + shown} of ${plural(total, 'saved search', 'saved searches')} (${out.backend}).${continuation(out)}`;
  }
  const s = out.search;
  const named = s ? `Saved search ${JSON.stringify(s.name)} (${s.key})` : 'Saved search';
  if (i.action === 'show') {
    return `${named}: ${plural(s?.conditions.length ?? 0, 'condition')}${s?.deleted ? ', in the trash' : ''} (${out.backend}).`;
  }
  return `${named}: ${pageLine(
    {
      totalResults: out.totalResults ?? 0,
      start: out.start ?? 0,
      backend: out.backend,
      nextStart: out.nextStart,
      truncated: out.truncated,
    },
    out.items?.length ?? 0,
    'matching items',
  )}`;
}

export default defineTool({
  name: 'zotero_saved_searches',
  title: 'Saved searches',
  summary: 'List saved searches with their conditions, show one, or run one (through the desktop app).',
  description: [
    "List, show or run a library's saved searches (show: its conditions, run: its items, both by search_key). Reads desktop data without a key, else Web API with",
    'ZOTERO_API_KEY; run needs the running desktop app. Create or delete: zotero_manage_saved_searches.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'search',
  cli: [
    {
      path: ['saved-search', 'list'],
      summary: 'List the saved searches of a library with their conditions.',
      preset: { action: 'list' },
      omit: ['search_key'],
    },
    {
      path: ['saved-search', 'show'],
      summary: 'Show one saved search: its name and conditions.',
      preset: { action: 'show' },
      args: ['search_key'],
      omit: ['start', 'limit'],
    },
    {
      path: ['saved-search', 'run'],
      summary:
        'Run a saved search: the items it matches now (needs the Zotero desktop app with its local API).',
      preset: { action: 'run' },
      args: ['search_key'],
    },
  ],
  input,
  output,
  summarize: summary,
  text: (out, i) => {
    const lines = [summary(out, i)];
    if (i.action === 'list') {
      for (const s of out.searches ?? []) {
        lines.push(
          `${s.key}  ${s.name}${s.deleted ? '  (in the trash)' : ''}`,
          ...conditionsText(s.conditions),
        );
      }
    } else if (i.action === 'show' && out.search) {
      lines.push(...conditionsText(out.search.conditions));
    } else {
      for (const item of out.items ?? []) lines.push(resultLine(item as never as WebApiItem));
    }
    return lines.join('\n');
  },
  async run(i, deps) {
    const { savedSearches } = await import('../../core/searches/read.js');
    const { items, ...out } = await savedSearches(deps, i);
    return {
      ...out,
      ...(items ? { items: items.map(asListedJson) } : {}),
      provenance: PROVENANCE,
    };
  },
});
