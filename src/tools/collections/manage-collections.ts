/**
 * `zotero_manage_collections` (seeds/000) and `zot collection create|rename|move|delete|add|remove`:
 * one declaration, one CLI command per writing action (its `list` action is served on the CLI by
 * `zot collection list`, the read-only sibling). Per-action requirements are checked by the
 * schema, so the CLI, `--dry-run` and MCP refuse the same inputs with the same field.
 */
import * as z from 'zod';
import { onlyOn, paramRef, toolRef } from '../../core/call/refs.js';
import { ZoteusError } from '../../core/errors.js';
import {
  COLLECTION_ACTIONS,
  membershipBulk,
  NAME_MAX,
  type CollectionAction,
} from '../../core/library/collections/constants.js';
import { defineTool, type CliCommand, type Plan, type Tier } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import {
  boundPage,
  collectionRow,
  listParams,
  pageFields,
  seedLibraryParams,
  summarizePage,
} from './shared.js';
import { failedEntry } from '../shared/output.js';
import { zoteroKey } from '../shared/params.js';
import { libraryFlags, quoteWord } from '../shared/text.js';

type Targeted = 'collection_key' | 'name' | 'parent_collection' | 'item_keys';

/** The input fields that steer a write; each action accepts some of them. */
const TARGETED: readonly Targeted[] = ['collection_key', 'name', 'parent_collection', 'item_keys'];

/** Where a field that does not apply belongs instead. */
const ELSEWHERE: Partial<Record<Targeted, string>> = {
  name: 'to rename, use action "rename"',
  parent_collection: 'to move a collection, use action "reparent"',
  item_keys: 'to change membership, use action "add_items" or "remove_items"',
  collection_key: '"list" and "create" act on no existing collection',
};

/**
 * What a required field is for, in each action that needs it: the message names the thing
 * wanted, not the action (on the CLI the command is the action; MCP adds the action's name).
 */
const WANTED: Partial<Record<Targeted, Partial<Record<CollectionAction, string>>>> = {
  name: { create: 'the name of the new collection', rename: 'the new name of the collection' },
  collection_key: {
    rename: 'the key of the collection to rename',
    reparent: 'the key of the collection to move',
    delete: 'the key of the collection to delete',
    add_items: 'the key of the collection to add the items to',
    remove_items: 'the key of the collection to remove the items from',
  },
  item_keys: {
    add_items: 'the keys of the items to add',
    remove_items: 'the keys of the items to remove',
  },
};

/** `name: the new name … is required`: after the field's name, as both surfaces label it. */
function required(
  field: Targeted,
  value: { action: CollectionAction; collection_key?: string | undefined },
): string {
  const what = WANTED[field]?.[value.action] ?? `a value for ${field}`;
  const action = onlyOn('mcp', ` for action "${value.action}"`);
  if (field !== 'name') return `${what} ${field === 'item_keys' ? 'are' : 'is'} required${action}`;
  const example = toolRef('zotero_manage_collections', {
    action: value.action,
    ...(value.action === 'rename' ? { collection_key: value.collection_key ?? 'KEY' } : {}),
    name: '"Reading list"',
  });
  return `${what} is required${action} (1 to ${NAME_MAX} characters), e.g. ${example}`;
}

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
    ...seedLibraryParams,
  })
  .strict()
  .superRefine((value, ctx) => {
    // An unknown action is already an issue of its own.
    const fields = Object.hasOwn(ACTIONS, value.action) ? ACTIONS[value.action] : undefined;
    if (!fields) return;
    for (const field of fields.required) {
      if (value[field] === undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: required(field, value) });
      }
    }
    for (const field of TARGETED) {
      if (value[field] !== undefined && !fields.allowed.includes(field)) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `does not apply to action "${value.action}" (${ELSEWHERE[field]})`,
        });
      }
    }
    if (value.name !== undefined && fields.allowed.includes('name')) {
      const trimmed = value.name.trim();
      if (trimmed === '') {
        ctx.addIssue({ code: 'custom', path: ['name'], message: 'must not be empty or only spaces' });
      } else if (trimmed.length > NAME_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: ['name'],
          message: `must be at most ${NAME_MAX} characters after trimming; got ${trimmed.length}`,
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
        message: `needs at least one item key${onlyOn('mcp', ` for action "${value.action}"`)}`,
      });
    }
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

/** Everything that differs between the actions: the one table the schema, CLI, plan and texts read. */
interface ActionSpec {
  /** The fields of TARGETED the action needs, and those it accepts at all. */
  required: Targeted[];
  allowed: Targeted[];
  /** Takes `confirm`: the bulk-write threshold applies (ZOTEUS_CONFIRM_BULK_WRITES). */
  bulk?: true;
  /** Its CLI command, `zot collection <word>`; none for "list" (`zot collection list` serves it). */
  cli?: { word: string; args: Targeted[]; tier: Tier; summary: string };
  /** What the call would do, for `plan`. */
  effect(i: Input): string;
  /** The one-line summary of what it did. */
  done(out: Output, i: Input): string;
  /** Follow-up commands (`lib`: the library flags of the call). */
  next(out: Output, i: Input, lib: string): string[];
}

const uniqueKeys = (keys: readonly string[]): string[] => [...new Set(keys)];
const keyOf = (i: Input) => i.collection_key ?? '';
const nameOf = (i: Input) => JSON.stringify((i.name ?? '').trim());
const under = (i: Input, top: string) => (i.parent_collection ? `under ${i.parent_collection}` : top);
/** `zot collection list --q NAME`, when the name can be a shell word. */
const findByName = (i: Input, lib: string): string[] => {
  const named = quoteWord((i.name ?? '').trim());
  return named ? [`zot collection list --q ${named}${lib}`] : [];
};

/** add_items and remove_items: the same texts, but for the direction. */
function membership(add: boolean): ActionSpec {
  return {
    required: ['collection_key', 'item_keys'],
    allowed: ['collection_key', 'item_keys'],
    ...(add ? {} : { bulk: true as const }),
    cli: add
      ? {
          word: 'add',
          args: ['collection_key', 'item_keys'],
          tier: 'write',
          summary: 'Add items to a collection (items already in it are left as they are).',
        }
      : {
          word: 'remove',
          args: ['collection_key', 'item_keys'],
          tier: 'destructive',
          summary: 'Remove items from a collection (the items stay in the library).',
        },
    effect: (i) => {
      const n = plural(uniqueKeys(i.item_keys ?? []).length, 'item');
      return add
        ? `add ${n} to collection ${keyOf(i)} (items already in it are skipped)`
        : `remove ${n} from collection ${keyOf(i)} (the items stay in the library)`;
    },
    done: (out, i) => {
      const parts = [
        `${add ? 'Added' : 'Removed'} ${plural(out.updated?.length ?? 0, 'item')} ${add ? 'to' : 'from'} collection ${keyOf(i)}`,
      ];
      const same = out.unchanged?.length ?? 0;
      if (same > 0) parts.push(`${plural(same, 'item')} ${add ? 'already in it' : 'not in it'}`);
      const failed = out.failed?.length ?? 0;
      if (failed > 0) parts.push(`${failed} failed (see failed)`);
      return `${parts.join('; ')}.`;
    },
    next: (out, i, lib) => {
      const again = (out.failed ?? [])
        .filter((f) => f.key !== undefined && f.retryable)
        .map((f) => f.key as string);
      if (again.length === 0) return [];
      const flags = add ? '' : ` --yes${i.confirm ? ' --confirm' : ''}`;
      return [`zot collection ${add ? 'add' : 'remove'} ${keyOf(i)} ${again.join(' ')}${flags}${lib}`];
    },
  };
}

const ACTIONS: Record<CollectionAction, ActionSpec> = {
  list: {
    required: [],
    allowed: [],
    effect: () => 'list the collections (reads only)',
    done: (out, i) => summarizePage({ ...out, collections: out.collections ?? [] }, i),
    next: () => [],
  },
  create: {
    required: ['name'],
    allowed: ['name', 'parent_collection'],
    cli: {
      word: 'create',
      args: ['name'],
      tier: 'write',
      summary: 'Create a collection: at the top level, or under --parent KEY.',
    },
    effect: (i) => `create collection ${nameOf(i)} ${under(i, 'at the top level')}`,
    done: (out, i) =>
      `Created collection ${nameOf(i)} (${out.created?.[0] ?? '?'}) ${under(i, 'at the top level')}.`,
    next: (out, i, lib) => {
      const created = out.created?.[0];
      return [
        ...(created ? [`zot collection add ${created} <ITEM_KEY>...${lib}`] : []),
        ...findByName(i, lib),
      ];
    },
  },
  rename: {
    required: ['collection_key', 'name'],
    allowed: ['collection_key', 'name'],
    cli: { word: 'rename', args: ['collection_key', 'name'], tier: 'write', summary: 'Rename a collection.' },
    effect: (i) => `rename collection ${keyOf(i)} to ${nameOf(i)}`,
    done: (_out, i) => `Renamed collection ${keyOf(i)} to ${nameOf(i)}.`,
    next: (_out, i, lib) => findByName(i, lib),
  },
  reparent: {
    required: ['collection_key'],
    allowed: ['collection_key', 'parent_collection'],
    cli: {
      word: 'move',
      args: ['collection_key'],
      tier: 'write',
      summary: 'Move a collection under --parent KEY, or to the top level without --parent.',
    },
    effect: (i) => `move collection ${keyOf(i)} ${under(i, 'to the top level')}`,
    done: (_out, i) => `Moved collection ${keyOf(i)} ${under(i, 'to the top level')}.`,
    next: (_out, _i, lib) => [`zot collection list${lib}`],
  },
  delete: {
    required: ['collection_key'],
    allowed: ['collection_key'],
    cli: {
      word: 'delete',
      args: ['collection_key'],
      tier: 'destructive',
      summary: 'Delete a collection and all its subcollections (the items stay in the library).',
    },
    effect: (i) => `delete collection ${keyOf(i)} and all its subcollections; the items stay in the library`,
    done: (out, i) => {
      const subs = out.subcollectionsDeleted ?? 0;
      const what = `collection ${JSON.stringify(out.deletedName ?? '')} (${out.deleted ?? keyOf(i)})`;
      return `Deleted ${what}${subs > 0 ? ` and its ${plural(subs, 'subcollection')}` : ''}; its items stay in the library.`;
    },
    next: (_out, _i, lib) => [`zot collection list${lib}`],
  },
  add_items: membership(true),
  remove_items: membership(false),
};

/** The listing's fields: only "list" takes them, and on the CLI `zot collection list` does. */
const LIST_FIELDS = ['q', 'limit', 'start'];

/** One CLI command per action that has one; what it does not take follows from the table. */
const commands: CliCommand[] = COLLECTION_ACTIONS.flatMap((action): CliCommand[] => {
  const spec = ACTIONS[action];
  if (!spec.cli) return [];
  return [
    {
      path: ['collection', spec.cli.word],
      summary: spec.cli.summary,
      preset: { action },
      args: spec.cli.args,
      ...(spec.allowed.includes('parent_collection') ? { flags: { parent_collection: 'parent' } } : {}),
      // The seed's descriptions name the actions; this command is one of them.
      help: Object.fromEntries(
        TARGETED.flatMap((field) => {
          const what = WANTED[field]?.[action];
          return what ? [[field, `${what[0]!.toUpperCase()}${what.slice(1)}.`]] : [];
        }),
      ),
      omit: [
        ...LIST_FIELDS,
        ...(spec.bulk ? [] : ['confirm']),
        ...TARGETED.filter((field) => !spec.allowed.includes(field)),
      ],
      tier: spec.cli.tier,
    },
  ];
});

export default defineTool({
  name: 'zotero_manage_collections',
  title: 'Manage Zotero collections',
  summary: 'List, create, rename, reparent or delete collections, and add or remove items from them.',
  description: [
    'Create, rename, reparent or delete collections, or add/remove items in one. To list or find one, prefer',
    'zotero_list_collections (read-only). delete takes all subcollections; items stay in the library. No-ops are in',
    'unchanged, failures in failed. Writes via the desktop if authorised, else Web API (ZOTERO_API_KEY that can',
    'write). Undoable. remove_items beyond ZOTEUS_CONFIRM_BULK_WRITES items needs confirm: true.',
  ].join(' '),
  tier: 'destructive',
  openWorld: true,
  idempotent: false,
  // "list" may be served by the desktop without a key.
  needsKey: (i) => i.action !== 'list',
  // Removing many items at once is bulk-destructive: the pipeline applies the threshold offline.
  bulk: (i) =>
    ACTIONS[i.action].bulk && i.collection_key !== undefined
      ? membershipBulk({ collection_key: i.collection_key, item_keys: i.item_keys ?? [] })
      : undefined,
  since: '0.1.0',
  toolset: 'collections',
  inDefaultSet: true,
  seed: true,
  undo: {
    restores:
      "memberships added or removed; a collection's name and parent; a created collection (deleted, if unchanged since); a deleted collection with its subcollections (under their keys) and the memberships its deletion dropped",
    cannot:
      'the membership of an item in the trash in a deleted collection the server counted no items in (not read first)',
  },
  cli: commands,
  input,
  output,
  // Known offline, so before credentials: a collection cannot move under itself.
  check(i) {
    if (
      i.action === 'reparent' &&
      i.parent_collection !== undefined &&
      i.parent_collection === i.collection_key
    ) {
      throw new ZoteusError('validation_error', `Collection ${i.collection_key} cannot be its own parent.`, {
        field: 'parent_collection',
        hint: `Choose another parent, or omit ${paramRef('parent_collection')} to move it to the top level.`,
      });
    }
  },
  async confirmation(i, desktop) {
    const { confirmDelete, confirmRemove } = await import('./confirm.js');
    const key = keyOf(i);
    if (i.action === 'delete') return await confirmDelete(key, desktop);
    if (i.action === 'remove_items') return await confirmRemove(key, uniqueKeys(i.item_keys ?? []), desktop);
    return ACTIONS[i.action].effect(i);
  },
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
    if (ACTIONS[i.action].bulk && config.confirmBulkWrites > 0) {
      plan.bulkThreshold = config.confirmBulkWrites;
      plan.needsConfirm = (plan.itemCount as number) > config.confirmBulkWrites && i.confirm !== true;
    }
    plan.effect = ACTIONS[i.action].effect(i);
    return plan;
  },
  summarize: (out, i) => ACTIONS[i.action].done(out, i),
  next: (out, i) => ACTIONS[i.action].next(out, i, libraryFlags(i)),
  retryFailed: {
    input(i, previous) {
      if (!ACTIONS[i.action].allowed.includes('item_keys')) return null;
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
