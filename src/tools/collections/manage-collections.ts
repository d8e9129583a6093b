/**
 * `zotero_manage_collections` (seeds/000) and `zot collection create|rename|move|delete|add|remove`:
 * one declaration, one CLI command per writing action (its `list` action is served on the CLI by
 * `zot collection list`, the read-only sibling). Per-action requirements are checked by the
 * schema, so the CLI, `--dry-run` and MCP refuse the same inputs with the same field.
 */
import * as z from 'zod';
import {
  COLLECTION_ACTIONS,
  membershipBulk,
  NAME_MAX,
  type CollectionAction,
} from '../../core/library/collections/constants.js';
import { defineTool, type Plan } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import {
  collectionRow,
  libraryFlags,
  listParams,
  pageFields,
  boundPage,
  plural,
  quoteWord,
  summarizePage,
} from './shared.js';

type Targeted = 'collection_key' | 'name' | 'parent_collection' | 'item_keys';

/** What each action needs, and which of the fields that steer a write it accepts at all. */
const ACTION_FIELDS: Record<CollectionAction, { required: Targeted[]; allowed: Targeted[] }> = {
  list: { required: [], allowed: [] },
  create: { required: ['name'], allowed: ['name', 'parent_collection'] },
  rename: { required: ['collection_key', 'name'], allowed: ['collection_key', 'name'] },
  reparent: { required: ['collection_key'], allowed: ['collection_key', 'parent_collection'] },
  delete: { required: ['collection_key'], allowed: ['collection_key'] },
  add_items: { required: ['collection_key', 'item_keys'], allowed: ['collection_key', 'item_keys'] },
  remove_items: { required: ['collection_key', 'item_keys'], allowed: ['collection_key', 'item_keys'] },
};

/** Where a field that does not apply belongs instead. */
const ELSEWHERE: Partial<Record<Targeted, string>> = {
  name: 'to rename, use action "rename"',
  parent_collection: 'to move a collection, use action "reparent"',
  item_keys: 'to change membership, use action "add_items" or "remove_items"',
  collection_key: '"list" and "create" act on no existing collection',
};

const ACTION_DESCRIPTION =
  'What to do. "list" reads every collection (then `q`, `start`, `limit` apply); "create" needs `name`; "rename" needs `collection_key` + `name`; "reparent" needs `collection_key`; "delete" needs `collection_key`; "add_items"/"remove_items" need `collection_key` + `item_keys`.';

const input = z
  .object({
    action: z.enum(COLLECTION_ACTIONS).describe(ACTION_DESCRIPTION),
    collection_key: zoteroKey('collection_key')
      .optional()
      .describe('Target collection key (all actions except list/create).'),
    name: z.string().optional().describe('Collection name (create/rename).'),
    parent_collection: zoteroKey('parent_collection')
      .optional()
      .describe('Parent collection key; omit for top-level.'),
    item_keys: z.array(zoteroKey('Each item key')).optional().describe('Item keys (add_items/remove_items).'),
    confirm: z
      .boolean()
      .optional()
      .describe("Required to remove more items in one call than the server's bulk-write threshold."),
    ...listParams,
    ...libraryParams,
  })
  .strict()
  .superRefine((value, ctx) => {
    const fields = ACTION_FIELDS[value.action];
    if (!fields) return; // an unknown action is already an issue of its own
    for (const field of fields.required) {
      if (value[field] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} is required for action "${value.action}"`,
        });
      }
    }
    for (const field of ['collection_key', 'name', 'parent_collection', 'item_keys'] as const) {
      if (value[field] !== undefined && !fields.allowed.includes(field)) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} does not apply to action "${value.action}" (${ELSEWHERE[field]})`,
        });
      }
    }
    if (value.name !== undefined && fields.allowed.includes('name')) {
      const trimmed = value.name.trim();
      if (trimmed === '') {
        ctx.addIssue({ code: 'custom', path: ['name'], message: 'name must not be empty or only spaces' });
      } else if (trimmed.length > NAME_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: ['name'],
          message: `name must be at most ${NAME_MAX} characters after trimming; got ${trimmed.length}`,
        });
      }
    }
    if (
      value.item_keys !== undefined &&
      value.item_keys.length === 0 &&
      fields.allowed.includes('item_keys')
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['item_keys'],
        message: `item_keys needs at least one item key for action "${value.action}"`,
      });
    }
  });

const failedEntry = z.object({
  index: z.number().describe('Position of the failed object in the request.'),
  key: z.string().optional().describe('Item key, when the failed object named one.'),
  code: z.number().describe('Zotero status for this object, e.g. 400 or 412.'),
  message: z.string().describe('Why Zotero refused it.'),
  reason: z
    .string()
    .describe(
      'The error code for it: not_found (404, no such item), permission_denied (403), validation_error (400, 413), conflict (409, or 412 when the item kept changing), or another code of the error table.',
    ),
});

const output = z.object({
  collections: z
    .array(collectionRow)
    .optional()
    .describe('This page of the collections, sorted by name (action:"list").'),
  ...pageFields,
  created: z.array(z.string()).optional().describe('Key of the collection created (action:"create").'),
  collection_key: z.string().optional().describe('The collection renamed or reparented.'),
  deleted: z.string().optional().describe('Key of the collection deleted.'),
  deletedName: z.string().optional().describe('Name of the collection deleted (action:"delete").'),
  subcollectionsDeleted: z
    .number()
    .optional()
    .describe(
      'How many subcollections were deleted with it (the whole subtree goes; the items stay in the library).',
    ),
  updated: z.array(z.string()).optional().describe('Item keys added to or removed from the collection.'),
  unchanged: z
    .array(z.string())
    .optional()
    .describe(
      'Item keys already in the wanted state (already members for add_items, not members for remove_items): nothing was written for them.',
    ),
  failed: z
    .array(failedEntry)
    .optional()
    .describe('One entry per object the write could not land; absent or empty when all of them did.'),
  libraryVersion: z.number().optional().describe("The library's Last-Modified-Version after this write."),
});

type Input = z.infer<typeof input>;
type Output = z.infer<typeof output>;

/** Fields of the listing, of the bulk gate, and the write fields a command does not take. */
const LIST_FIELDS = ['q', 'limit', 'start'];

const uniqueKeys = (keys: readonly string[]): string[] => [...new Set(keys)];

function effectOf(i: Input): string {
  const key = i.collection_key ?? '';
  const name = i.name === undefined ? '' : JSON.stringify(i.name.trim());
  const keys = uniqueKeys(i.item_keys ?? []);
  switch (i.action) {
    case 'create':
      return `create collection ${name} ${i.parent_collection ? `under ${i.parent_collection}` : 'at the top level'}`;
    case 'rename':
      return `rename collection ${key} to ${name}`;
    case 'reparent':
      return `move collection ${key} ${i.parent_collection ? `under ${i.parent_collection}` : 'to the top level'}`;
    case 'delete':
      return `delete collection ${key} and all its subcollections; the items stay in the library`;
    case 'add_items':
      return `add ${plural(keys.length, 'item')} to collection ${key} (items already in it are skipped)`;
    case 'remove_items':
      return `remove ${plural(keys.length, 'item')} from collection ${key} (the items stay in the library)`;
    case 'list':
      return 'list the collections (reads only)';
  }
}

function summarize(out: Output, i: Input): string {
  const key = i.collection_key ?? '';
  const name = JSON.stringify((i.name ?? '').trim());
  switch (i.action) {
    case 'list':
      return summarizePage({ ...out, collections: out.collections ?? [] }, i);
    case 'create':
      return `Created collection ${name} (${out.created?.[0] ?? '?'}) ${i.parent_collection ? `under ${i.parent_collection}` : 'at the top level'}.`;
    case 'rename':
      return `Renamed collection ${key} to ${name}.`;
    case 'reparent':
      return `Moved collection ${key} ${i.parent_collection ? `under ${i.parent_collection}` : 'to the top level'}.`;
    case 'delete': {
      const subs = out.subcollectionsDeleted ?? 0;
      const what = `collection ${JSON.stringify(out.deletedName ?? '')} (${out.deleted ?? key})`;
      return `Deleted ${what}${subs > 0 ? ` and its ${plural(subs, 'subcollection')}` : ''}; its items stay in the library.`;
    }
    case 'add_items':
    case 'remove_items': {
      const add = i.action === 'add_items';
      const parts = [
        `${add ? 'Added' : 'Removed'} ${plural(out.updated?.length ?? 0, 'item')} ${add ? 'to' : 'from'} collection ${key}`,
      ];
      const same = out.unchanged?.length ?? 0;
      if (same > 0) parts.push(`${plural(same, 'item')} ${add ? 'already in it' : 'not in it'}`);
      const failed = out.failed?.length ?? 0;
      if (failed > 0) parts.push(`${failed} failed (see failed)`);
      return `${parts.join('; ')}.`;
    }
  }
}

/** Failures worth running again as they are (not a missing item, not a refusal). */
const RETRYABLE_CODES = new Set([0, 409, 412, 429, 500, 502, 503, 504]);

function next(out: Output, i: Input): string[] {
  const lib = libraryFlags(i);
  const key = i.collection_key ?? '';
  switch (i.action) {
    case 'create': {
      const created = out.created?.[0];
      const named = quoteWord((i.name ?? '').trim());
      return [
        ...(created ? [`zot collection add ${created} <ITEM_KEY>...${lib}`] : []),
        ...(named ? [`zot collection list --q ${named}${lib}`] : []),
      ];
    }
    case 'rename': {
      const named = quoteWord((i.name ?? '').trim());
      return named ? [`zot collection list --q ${named}${lib}`] : [];
    }
    case 'reparent':
    case 'delete':
      return [`zot collection list${lib}`];
    case 'add_items':
    case 'remove_items': {
      const again = (out.failed ?? [])
        .filter((f) => f.key !== undefined && RETRYABLE_CODES.has(f.code))
        .map((f) => f.key as string);
      if (again.length === 0) return [];
      const command = i.action === 'add_items' ? 'add' : 'remove';
      const flags = i.action === 'remove_items' ? ` --yes${i.confirm ? ' --confirm' : ''}` : '';
      return [`zot collection ${command} ${key} ${again.join(' ')}${flags}${lib}`];
    }
    case 'list':
      return [];
  }
}

export default defineTool({
  name: 'zotero_manage_collections',
  title: 'Manage Zotero collections',
  summary: 'List, create, rename, reparent or delete collections, and add or remove items from them.',
  description: [
    'List, create, rename, reparent, or delete collections, and move items into or out of a collection.',
    'For read-only listing prefer zotero_list_collections (available in read-only mode, and it can keep top-level collections only).',
    'Set action to one of:',
    '"list" (collections with key/name/parent, sorted by name; q filters by name over the whole library, start/limit page, totalResults counts them all,',
    'nextStart is the start of the next page, and truncated: true says the answer’s size bound, about 40 KB of rows, cut the page short of limit;',
    'complete is false only past ZOTEUS_MAX_COLLECTIONS, 100,000 by default);',
    '"create" (needs name, optional parent_collection key; omit it for top-level; returns created: [key]);',
    '"rename" (needs collection_key + name);',
    '"reparent" (needs collection_key; parent_collection key, or omit to move to top level; a collection cannot go under itself or its own subcollections);',
    '"delete" (needs collection_key; deletes the whole subtree of subcollections too, the result says how many; items stay in the library);',
    '"add_items" / "remove_items" (need collection_key + item_keys; collection membership lives on each item, and only it changes).',
    'Names are trimmed and must be 1 to 255 characters. All actions except "list" write to the cloud Web API (the desktop app shows the change after its next sync).',
    "Writes carry each object's version and are re-read and retried when another client wrote first.",
    'add_items/remove_items work in batches of 50 (500 items cost about 20 requests): items already in the wanted state are listed in unchanged and not written;',
    'an item that cannot be changed (missing: code 404) is one entry of failed while the others still land; the call fails only when every item failed.',
    'A collection that does not exist is not_found.',
    'When the server sets a bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES, off by default), removing more items than that from a collection in one call also needs confirm: true.',
    'library_id (alone: a group id) addresses a group library (zotero_groups lists them). Needs ZOTERO_API_KEY with write access, except for "list".',
  ].join(' '),
  tier: 'destructive',
  openWorld: true,
  idempotent: false,
  // "list" may be served by the desktop without a key.
  needsKey: (i) => i.action !== 'list',
  // Removing many items at once is bulk-destructive: the pipeline applies the threshold offline.
  bulk: (i) =>
    i.action === 'remove_items' && i.collection_key !== undefined
      ? membershipBulk({ collection_key: i.collection_key, item_keys: i.item_keys ?? [] })
      : undefined,
  since: '0.1.0',
  cli: [
    {
      path: ['collection', 'create'],
      summary: 'Create a collection: at the top level, or under --parent KEY.',
      preset: { action: 'create' },
      args: ['name'],
      flags: { parent_collection: 'parent' },
      omit: [...LIST_FIELDS, 'confirm', 'item_keys', 'collection_key'],
      tier: 'write',
    },
    {
      path: ['collection', 'rename'],
      summary: 'Rename a collection.',
      preset: { action: 'rename' },
      args: ['collection_key', 'name'],
      omit: [...LIST_FIELDS, 'confirm', 'item_keys', 'parent_collection'],
      tier: 'write',
    },
    {
      path: ['collection', 'move'],
      summary: 'Move a collection under --parent KEY, or to the top level without --parent.',
      preset: { action: 'reparent' },
      args: ['collection_key'],
      flags: { parent_collection: 'parent' },
      omit: [...LIST_FIELDS, 'confirm', 'item_keys', 'name'],
      tier: 'write',
    },
    {
      path: ['collection', 'delete'],
      summary: 'Delete a collection and all its subcollections (the items stay in the library).',
      preset: { action: 'delete' },
      args: ['collection_key'],
      omit: [...LIST_FIELDS, 'confirm', 'item_keys', 'name', 'parent_collection'],
      tier: 'destructive',
    },
    {
      path: ['collection', 'add'],
      summary: 'Add items to a collection (items already in it are left as they are).',
      preset: { action: 'add_items' },
      args: ['collection_key', 'item_keys'],
      omit: [...LIST_FIELDS, 'confirm', 'name', 'parent_collection'],
      tier: 'write',
    },
    {
      path: ['collection', 'remove'],
      summary: 'Remove items from a collection (the items stay in the library).',
      preset: { action: 'remove_items' },
      args: ['collection_key', 'item_keys'],
      omit: [...LIST_FIELDS, 'name', 'parent_collection'],
      tier: 'destructive',
    },
  ],
  input,
  output,
  plan(i, { config }): Plan {
    const plan: Plan = { action: i.action };
    if (i.collection_key !== undefined) plan.collection_key = i.collection_key;
    if (i.name !== undefined) plan.name = i.name.trim();
    if (i.action === 'create' || i.action === 'reparent')
      plan.parent_collection = i.parent_collection ?? null;
    if (i.item_keys !== undefined) {
      const keys = uniqueKeys(i.item_keys);
      plan.item_keys = keys;
      plan.itemCount = keys.length;
    }
    if (i.action === 'remove_items' && config.confirmBulkWrites > 0) {
      plan.bulkThreshold = config.confirmBulkWrites;
      plan.needsConfirm = (plan.itemCount as number) > config.confirmBulkWrites && i.confirm !== true;
    }
    plan.effect = effectOf(i);
    return plan;
  },
  summarize,
  next,
  retryFailed: {
    input(i, previous) {
      if (i.action !== 'add_items' && i.action !== 'remove_items') return null;
      const keys = uniqueKeys(
        (previous.failed ?? []).map((f) => f.key).filter((k): k is string => k !== undefined),
      );
      return keys.length > 0 ? { ...i, item_keys: keys } : null;
    },
    merge(previous, retry) {
      // Failures of the retry keep the positions they had in the original request.
      const indexOf = new Map((previous.failed ?? []).map((f) => [f.key, f.index]));
      const updated = [...(previous.updated ?? []), ...(retry.updated ?? [])];
      const landed = new Set(updated);
      const unchanged = [...(previous.unchanged ?? []), ...(retry.unchanged ?? [])].filter(
        (k) => !landed.has(k),
      );
      const failed = (retry.failed ?? []).map((f) => ({ ...f, index: indexOf.get(f.key) ?? f.index }));
      const libraryVersion = retry.libraryVersion ?? previous.libraryVersion;
      return {
        ...previous,
        updated,
        unchanged,
        failed,
        ...(libraryVersion !== undefined ? { libraryVersion } : {}),
      };
    },
  },
  async run(i, deps) {
    const { manageCollections } = await import('../../core/library/collections.js');
    const out = await manageCollections(deps, i);
    return i.action === 'list' ? boundPage(out) : out;
  },
});
