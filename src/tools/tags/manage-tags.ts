/** `zotero_manage_tags` / `zot tag add|remove TAG KEY…`, `zot tag rename OLD NEW`, `zot tag delete TAG…`. */
import * as z from 'zod';
import { mergeLists, remapFailed } from '../../core/items/retry.js';
import { paramRef, toolRef, onlyOn } from '../../core/call/refs.js';
import { ZoteusError } from '../../core/errors.js';
import {
  checkTagsInput,
  TAG_ACTIONS,
  tagsBulk,
  tagsToDelete,
  type TagAction,
} from '../../core/items/tag-input.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { failedList, libraryVersion } from '../shared/output.js';
import { itemKeys, libraryParams } from '../shared/params.js';
import { SUGGESTION_KEYS, quoted } from '../shared/text.js';

const tagName = z.string().min(1).max(255);
const ITEM_OMIT = ['new_name', 'tags'];
/**
 * Keys a rename lists at most in updated and in unchanged: a rename touches every item that has
 * the tag, which can be most of a library; the totals count them all.
 */
const RENAME_KEYS_SHOWN = 2000;

interface KeyLists {
  action: string;
  updated?: string[] | undefined;
  unchanged?: string[] | undefined;
  updatedTotal?: number | undefined;
  unchangedTotal?: number | undefined;
}

/** A rename's key lists cut at RENAME_KEYS_SHOWN, with totals when cut (bounded answers). */
function capRename<T extends KeyLists>(out: T): T {
  if (out.action !== 'rename') return out;
  const capped: T = { ...out };
  for (const [list, total] of [
    ['updated', 'updatedTotal'],
    ['unchanged', 'unchangedTotal'],
  ] as const) {
    const keys = out[list];
    if (keys && keys.length > RENAME_KEYS_SHOWN) {
      capped[list] = keys.slice(0, RENAME_KEYS_SHOWN);
      capped[total] = Math.max(out[total] ?? 0, keys.length);
    }
  }
  return capped;
}

/** What a refused call of each action looks like done right, for the hint (a command on the CLI). */
function example(input: { action: TagAction; tag?: string | undefined }): string {
  // The caller's own tag when it is one that can stand in an example, else a stand-in.
  const given = input.tag?.trim() ?? '';
  const tag = given !== '' && given.length <= 60 && !given.includes('||') ? given : 'to-read';
  switch (input.action) {
    case 'add_items':
    case 'remove_items':
      return toolRef('zotero_manage_tags', { action: input.action, tag, item_keys: 'ABCD2345' });
    case 'rename':
      return toolRef('zotero_manage_tags', { action: 'rename', tag, new_name: 'reading' });
    case 'delete':
      return toolRef('zotero_manage_tags', { action: 'delete', tags: tag });
  }
}

/** What each action needs, in the order a person gives it, said for people. */
const NEEDS: Record<
  TagAction,
  ReadonlyArray<readonly [field: 'tag' | 'item_keys' | 'new_name' | 'tags', message: string]>
> = {
  add_items: [
    ['tag', 'A tag is required: the tag to add to the items.'],
    ['item_keys', 'Item keys are required: the items to add the tag to.'],
  ],
  remove_items: [
    ['tag', 'A tag is required: the tag to remove from the items.'],
    ['item_keys', 'Item keys are required: the items to remove the tag from.'],
  ],
  rename: [
    ['tag', 'The tag to rename is required.'],
    ['new_name', 'The new name of the tag is required.'],
  ],
  delete: [],
};

/**
 * The input checks (core/items/tag-input.ts), with a hint that shows a whole call: a missing tag
 * or item list is said in words, and every refusal shows how a call looks done right.
 */
function checkWithExample(input: Parameters<typeof checkTagsInput>[0]): void {
  const hint = () => `For example: ${example(input)}.`;
  for (const [field, message] of NEEDS[input.action]) {
    const value = input[field];
    if (value === undefined || (Array.isArray(value) && value.length === 0))
      throw new ZoteusError('validation_error', message, { field, hint: hint() });
  }
  if (input.action === 'delete' && !input.tags?.length && input.tag === undefined)
    throw new ZoteusError('validation_error', 'At least one tag to delete is required.', {
      field: 'tags',
      hint: hint(),
    });
  if (input.action === 'rename' && input.tag?.trim() && input.tag.trim() === input.new_name?.trim())
    throw new ZoteusError(
      'validation_error',
      `The new name is the tag's own name ('${input.tag?.trim().slice(0, 60)}'): nothing to rename.`,
      { field: 'new_name', hint: hint() },
    );
  try {
    checkTagsInput(input);
  } catch (error) {
    if (!(error instanceof ZoteusError) || error.code !== 'validation_error' || error.hint !== undefined)
      throw error;
    throw new ZoteusError('validation_error', error.message, {
      ...(error.field !== undefined ? { field: error.field } : {}),
      hint: hint(),
    });
  }
}

export default defineTool({
  name: 'zotero_manage_tags',
  title: 'Manage tags',
  summary:
    'Add a tag to items or remove it, rename a tag across the library, or delete tags from the library.',
  description: [
    'Tag or untag items, or rename or delete tags library-wide (remove_items, delete: destructive).',
    'Desktop local API if authorised, else Web API (write ZOTERO_API_KEY). Near-duplicates: zotero_tag_audit.',
  ].join(' '),
  tier: 'destructive',
  openWorld: true,
  idempotent: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'tags',
  undo: {
    restores:
      'the tags of every item it changed, as they were: adding, removing and renaming rewrite each item, and a deletion across the library is journaled per item that had the tag',
  },
  cli: [
    {
      path: ['tag', 'add'],
      args: ['tag', 'item_keys'],
      preset: { action: 'add_items' },
      omit: [...ITEM_OMIT, 'confirm'],
      tier: 'write',
      summary: 'Add a tag to items: zot tag add TAG KEY…',
    },
    {
      path: ['tag', 'remove'],
      args: ['tag', 'item_keys'],
      preset: { action: 'remove_items' },
      omit: ITEM_OMIT,
      tier: 'destructive',
      summary: 'Remove a tag from items: zot tag remove TAG KEY… (bulk threshold: --confirm).',
    },
    {
      path: ['tag', 'rename'],
      args: ['tag', 'new_name'],
      preset: { action: 'rename' },
      omit: ['item_keys', 'tags', 'confirm'],
      tier: 'write',
      summary: 'Rename a tag on every item of the library: zot tag rename OLD NEW',
    },
    {
      path: ['tag', 'delete'],
      args: ['tags'],
      preset: { action: 'delete' },
      omit: ['tag', 'item_keys', 'new_name'],
      tier: 'destructive',
      summary: 'Delete tags from every item of the library: zot tag delete TAG…',
    },
  ],
  input: z
    .object({
      action: z
        .enum(TAG_ACTIONS)
        .describe(
          `add_items, remove_items: ${paramRef('tag')} + ${paramRef('item_keys')}; rename: ${paramRef('tag')} + ${paramRef('new_name')}; delete: ${paramRef('tags')}.`,
        ),
      tag: tagName
        .optional()
        .describe(onlyOn('cli', 'The tag to add, remove or rename (exact, case-sensitive).')),
      item_keys: itemKeys('Items' + onlyOn('cli', ' to add the tag to or remove it from')).optional(),
      new_name: tagName.optional().describe(onlyOn('cli', 'The new name (rename).')),
      tags: z
        .array(tagName)
        .min(1)
        .max(500)
        .optional()
        .describe(onlyOn('cli', 'Tags to delete from the whole library (delete).')),
      confirm: z
        .boolean()
        .optional()
        .describe(
          onlyOn('mcp', 'Needed above ZOTEUS_CONFIRM_BULK_WRITES items.') +
            onlyOn(
              'cli',
              'Required when removing or deleting more items than the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES).',
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    action: z.enum(TAG_ACTIONS),
    updated: z
      .array(z.string())
      .optional()
      .describe('add/remove/rename: keys of the items this call changed.'),
    unchanged: z
      .array(z.string())
      .optional()
      .describe('add/remove/rename: item keys already in the wanted state; delete: tags no item had.'),
    deleted: z.array(z.string()).optional().describe('delete: the tags deleted from the library.'),
    itemsAffected: z.number().int().optional().describe('delete: items that carried a deleted tag.'),
    updatedTotal: z
      .number()
      .int()
      .optional()
      .describe(
        `rename: items changed in all, when there are more than the ${RENAME_KEYS_SHOWN.toLocaleString('en-US')} keys updated lists.`,
      ),
    unchangedTotal: z
      .number()
      .int()
      .optional()
      .describe(
        `rename: items already in the wanted state in all, when there are more than the ${RENAME_KEYS_SHOWN.toLocaleString('en-US')} keys unchanged lists.`,
      ),
    failed: failedList,
    libraryVersion,
  }),
  summarize: (out) => {
    if (out.action === 'delete') {
      return `Deleted ${plural(out.deleted?.length ?? 0, 'tag')} from ${plural(out.itemsAffected ?? 0, 'item')}${out.unchanged?.length ? `; ${out.unchanged.length} not in the library` : ''}.`;
    }
    const verb =
      out.action === 'add_items'
        ? 'Tagged'
        : out.action === 'remove_items'
          ? 'Untagged'
          : 'Renamed the tag on';
    const updated = out.updatedTotal ?? out.updated?.length ?? 0;
    const unchanged = out.unchangedTotal ?? out.unchanged?.length ?? 0;
    const listed =
      out.updatedTotal !== undefined ? ` (the first ${plural(out.updated?.length ?? 0, 'key')} listed)` : '';
    return `${verb} ${plural(updated, 'item')}${listed}${unchanged ? ` (${unchanged} already so)` : ''}${out.failed.length ? `; ${out.failed.length} failed` : ''}.`;
  },
  next: (out, input) => {
    const keys = out.updated ?? [];
    if (keys.length === 0 || keys.length > SUGGESTION_KEYS || input.tag === undefined) return [];
    const list = keys.map(quoted).join(' ');
    if (out.action === 'add_items') return [`zot tag remove ${quoted(input.tag)} ${list}`];
    if (out.action === 'remove_items') return [`zot tag add ${quoted(input.tag)} ${list}`];
    if (out.action === 'rename' && input.new_name !== undefined)
      return [`zot tag rename ${quoted(input.new_name)} ${quoted(input.tag)}`];
    return [];
  },
  check: (input) => checkWithExample(input),
  bulk: (input) => tagsBulk(input),
  async confirmation(input, desktop) {
    const { confirmDeleteTags, confirmRemoveTag } = await import('./confirm.js');
    if (input.action === 'delete')
      return await confirmDeleteTags(
        [...(input.tags ?? []), ...(input.tag !== undefined ? [input.tag] : [])],
        desktop,
      );
    return await confirmRemoveTag(input.tag ?? '', input.item_keys ?? [], desktop);
  },
  plan(input, deps) {
    switch (input.action) {
      case 'add_items':
      case 'remove_items': {
        const items = new Set(input.item_keys ?? []).size;
        const threshold = deps.config.confirmBulkWrites;
        return {
          action: input.action,
          tag: input.tag,
          items,
          requests: `at most ${2 * Math.ceil(items / 50)} (items read and written 50 at a time)`,
          ...(input.action === 'remove_items' && threshold > 0 && items > threshold && !input.confirm
            ? {
                confirmation_needed: `more than ${threshold} items (ZOTEUS_CONFIRM_BULK_WRITES): pass --confirm`,
              }
            : {}),
        };
      }
      case 'rename':
        return {
          action: 'rename',
          tag: input.tag,
          new_name: input.new_name,
          scope: 'every item of the library that has the tag',
        };
      case 'delete':
        return { action: 'delete', tags: tagsToDelete(input), scope: 'every item of the library' };
    }
  },
  retryFailed: {
    input: (input, previous) => {
      const keys = [
        ...new Set(previous.failed.map((f) => f.key).filter((k): k is string => typeof k === 'string')),
      ];
      if (keys.length === 0) return null;
      if (input.action === 'delete') return { ...input, tags: keys, tag: undefined };
      if (input.action === 'rename') return input;
      return { ...input, item_keys: keys };
    },
    merge: (previous, retry) =>
      capRename({
        ...retry,
        updated: retry.updated || previous.updated ? mergeLists(previous.updated, retry.updated) : undefined,
        unchanged:
          retry.unchanged || previous.unchanged ? mergeLists(previous.unchanged, retry.unchanged) : undefined,
        deleted: retry.deleted || previous.deleted ? mergeLists(previous.deleted, retry.deleted) : undefined,
        ...(previous.itemsAffected !== undefined || retry.itemsAffected !== undefined
          ? { itemsAffected: (previous.itemsAffected ?? 0) + (retry.itemsAffected ?? 0) }
          : {}),
        failed: remapFailed(previous.failed, retry.failed),
        libraryVersion: retry.libraryVersion ?? previous.libraryVersion,
        ...(previous.updatedTotal !== undefined || retry.updatedTotal !== undefined
          ? {
              updatedTotal:
                (previous.updatedTotal ?? previous.updated?.length ?? 0) +
                (retry.updatedTotal ?? retry.updated?.length ?? 0),
            }
          : {}),
      }),
  },
  async run(input, deps) {
    const { manageTags } = await import('../../core/items/tags.js');
    return capRename(await manageTags(deps, input));
  },
});
