/**
 * `zotero_manage_saved_searches` / `zot saved-search create NAME --condition '…'… | delete KEY`:
 * one declaration, one CLI command per action (create is a write, delete is destructive). The
 * conditions are checked against Zotero's own condition and operator names before anything
 * is sent (`core/searches/conditions.ts`).
 */
import * as z from 'zod';
import { onlyOn } from '../../core/call/refs.js';
import { localSchema } from '../../core/items/schema.js';
import { checkConditions } from '../../core/searches/conditions.js';
import {
  CONDITIONS_MAX,
  MANAGE_SAVED_SEARCHES_ACTIONS,
  SEARCH_NAME_MAX,
  type ManageSavedSearchesAction,
} from '../../core/searches/constants.js';
import { defineTool, type Plan } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { libraryVersion } from '../shared/output.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { libraryFlags } from '../shared/text.js';
import { conditionRow } from './shared.js';

type Targeted = 'name' | 'conditions' | 'search_key';

const ALLOWED: Record<ManageSavedSearchesAction, readonly Targeted[]> = {
  create: ['name', 'conditions'],
  delete: ['search_key'],
};

const WANTED: Record<Targeted, string> = {
  name: 'the name of the new saved search',
  conditions: 'at least one condition',
  search_key: 'the key of the saved search to delete',
};

const input = z
  .object({
    action: z.enum(MANAGE_SAVED_SEARCHES_ACTIONS),
    name: z
      .string()
      .optional()
      .describe(onlyOn('cli', 'Name of the new saved search (1 to 255 characters).')),
    conditions: z
      .array(z.string().min(1).max(1000))
      .max(CONDITIONS_MAX)
      .optional()
      .describe(
        onlyOn(
          'mcp',
          '"title contains ocean", "tag is sea level", "dateAdded isInTheLast 30 days"; "joinMode any": one suffices.',
        ) +
          onlyOn(
            'cli',
            'The conditions of the new saved search (1 to 50), each "condition operator value" in Zotero’s names: "title contains ocean", "tag is sea level", "creator contains Hansen", "collection is ABCD2345", "dateAdded isInTheLast 30 days", "year is 2024", "deleted false", "noChildren true"; "joinMode any" makes any condition enough (all must match by default). An unknown condition or an operator it does not take is refused with the closest names.',
          ),
      ),
    search_key: zoteroKey('search_key').optional().describe(onlyOn('cli', 'The saved search to delete.')),
    ...libraryParams,
  })
  .strict()
  .superRefine((value, ctx) => {
    const allowed = Object.hasOwn(ALLOWED, value.action) ? ALLOWED[value.action] : undefined;
    if (!allowed) return;
    const action = onlyOn('mcp', ` for action "${value.action}"`);
    for (const field of ['name', 'conditions', 'search_key'] as const) {
      const given = value[field] !== undefined;
      if (allowed.includes(field) && !given) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${WANTED[field]} is required${action}`,
        });
      }
      if (!allowed.includes(field) && given) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `does not apply to action "${value.action}"`,
        });
      }
    }
    if (value.action === 'create' && value.name !== undefined) {
      const trimmed = value.name.trim();
      if (trimmed === '')
        ctx.addIssue({ code: 'custom', path: ['name'], message: 'must not be empty or only spaces' });
      else if (trimmed.length > SEARCH_NAME_MAX)
        ctx.addIssue({
          code: 'custom',
          path: ['name'],
          message: `must be at most ${SEARCH_NAME_MAX} characters after trimming; got ${trimmed.length}`,
        });
    }
    if (value.action === 'create' && value.conditions !== undefined && value.conditions.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['conditions'],
        message: `needs at least one condition${action}`,
      });
    }
  });

const output = z.object({
  created: z.array(z.string()).optional().describe('Key of the saved search created (action "create").'),
  name: z.string().optional().describe('Name of the saved search created.'),
  conditions: z.array(conditionRow).optional().describe('Its conditions as stored.'),
  deleted: z.string().optional().describe('Key of the saved search deleted (action "delete").'),
  deletedName: z.string().optional().describe('Name of the saved search deleted.'),
  libraryVersion,
});

type Input = z.infer<typeof input>;

function parsed(i: Input, config: Parameters<typeof localSchema>[0]) {
  return checkConditions(localSchema(config), i.conditions ?? []);
}

function effect(i: Input): string {
  if (i.action === 'create') {
    return `create saved search ${JSON.stringify((i.name ?? '').trim())} with ${plural(i.conditions?.length ?? 0, 'condition')}`;
  }
  return `delete saved search ${i.search_key ?? ''} (the items it matched stay in the library)`;
}

export default defineTool({
  name: 'zotero_manage_saved_searches',
  title: 'Manage saved searches',
  summary: 'Create a saved search from conditions, or delete one.',
  description: [
    'Create (name, conditions; all must match) or delete (search_key) a saved search (its items stay; undo restores it). Writes via the desktop if authorised, else',
    'Web API with a write ZOTERO_API_KEY. List or run: zotero_saved_searches.',
  ].join(' '),
  tier: 'destructive',
  openWorld: true,
  idempotent: false,
  needsKey: true,
  since: '0.2.0',
  toolset: 'search',
  undo: {
    restores:
      'a created saved search is deleted (if unchanged since); a deleted one comes back under its key',
  },
  cli: [
    {
      path: ['saved-search', 'create'],
      summary: "Create a saved search: --condition 'field operator value', once per condition.",
      preset: { action: 'create' },
      args: ['name'],
      flags: { conditions: 'condition' },
      omit: ['search_key'],
      tier: 'write',
    },
    {
      path: ['saved-search', 'delete'],
      summary: 'Delete a saved search (the items it matched stay in the library).',
      preset: { action: 'delete' },
      args: ['search_key'],
      omit: ['name', 'conditions'],
      tier: 'destructive',
    },
  ],
  input,
  output,
  check(i, { config }) {
    if (i.action === 'create') parsed(i, config);
  },
  async confirmation(i, desktop) {
    const key = i.search_key ?? '';
    if (i.action !== 'delete' || !desktop?.searches) return effect(i);
    const found = (await desktop.searches()).searches.find((s) => s.key === key);
    if (!found) return effect(i);
    const n = plural(found.data.conditions?.length ?? 0, 'condition');
    return `delete saved search ${JSON.stringify(found.data.name)} (${key}, ${n}); the items it matched stay in the library`;
  },
  plan(i, { config }): Plan {
    const plan: Plan = { action: i.action };
    if (i.action === 'create') {
      plan.name = (i.name ?? '').trim();
      plan.conditions = parsed(i, config);
    } else plan.search_key = i.search_key;
    plan.effect = effect(i);
    return plan;
  },
  summarize: (out, i) =>
    i.action === 'create'
      ? `Created saved search ${JSON.stringify(out.name ?? '')} (${out.created?.[0] ?? '?'}) with ${plural(out.conditions?.length ?? 0, 'condition')}.`
      : `Deleted saved search ${JSON.stringify(out.deletedName ?? '')} (${out.deleted ?? i.search_key ?? '?'}); the items it matched stay in the library.`,
  next: (out, i) => {
    const lib = libraryFlags(i);
    const key = out.created?.[0];
    if (i.action === 'create')
      return key ? [`zot saved-search run ${key}${lib}`, `zot saved-search show ${key}${lib}`] : [];
    return [`zot saved-search list${lib}`];
  },
  async run(i, deps) {
    const { createSavedSearch, deleteSavedSearch } = await import('../../core/searches/write.js');
    const library = { library_id: i.library_id, library_type: i.library_type };
    if (i.action === 'create') {
      return createSavedSearch(deps, { ...library, name: i.name ?? '', conditions: parsed(i, deps.config) });
    }
    return deleteSavedSearch(deps, { ...library, search_key: i.search_key ?? '' });
  },
});
