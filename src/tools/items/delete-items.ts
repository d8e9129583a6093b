/** `zotero_delete_items` / `zot delete KEY…`: permanent deletion, only with ZOTEUS_ALLOW_DELETE=true. */
import * as z from 'zod';
import { DELETE_DISABLED } from '../../core/items/common.js';
import { mergeLists, remapFailed } from '../../core/items/retry.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { failedList, libraryVersion } from '../shared/output.js';
import { itemKeys, libraryParams } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

/**
 * Child items an answer lists at most: deleting many parents can take many times as many
 * children with them; childrenTotal counts them all.
 */
const CHILDREN_SHOWN = 500;

/** Items a confirmation names, and looks up to count their children (the desktop's data only). */
const CONFIRM_NAMED = 3;
const CONFIRM_LOOKUPS = 100;

const listed = (keys: readonly string[]): string =>
  keys.length <= CONFIRM_NAMED
    ? keys.join(', ')
    : `${keys.slice(0, CONFIRM_NAMED).join(', ')} and ${keys.length - CONFIRM_NAMED} more`;

const titleOf = (data: Record<string, unknown>): string => {
  const title = typeof data.title === 'string' ? data.title.trim() : '';
  if (title === '') return `untitled ${String(data.itemType ?? 'item')}`;
  return title.length > 60 ? `${title.slice(0, 59)}…` : title;
};

function capChildren<T extends { children: unknown[]; childrenTotal?: number | undefined }>(out: T): T {
  if (out.children.length <= CHILDREN_SHOWN) return out;
  return {
    ...out,
    children: out.children.slice(0, CHILDREN_SHOWN),
    childrenTotal: Math.max(out.childrenTotal ?? 0, out.children.length),
  };
}

export default defineTool({
  name: 'zotero_delete_items',
  title: 'Delete items',
  summary:
    'Delete items permanently, with their child notes and attachments (needs ZOTEUS_ALLOW_DELETE=true).',
  description: [
    'Permanently delete items and their children; prefer zotero_trash_items (reversible). zotero_undo restores the items, not their children or files.',
    'Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'destructive',
  openWorld: true,
  idempotent: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'items',
  undo: {
    restores:
      'the deleted items themselves (fields, tags, collections, relations), created again from the journal under their keys',
    cannot: 'their child notes and attachments deleted with them, and files',
  },
  cli: [
    {
      path: ['delete'],
      args: ['item_keys'],
      summary: 'Delete items permanently, children included (ZOTEUS_ALLOW_DELETE=true).',
    },
  ],
  input: z
    .object({
      item_keys: itemKeys('Items' + onlyOn('cli', ' to delete permanently')),
      confirm: z
        .boolean()
        .optional()
        .describe(
          onlyOn('mcp', 'Needed above ZOTEUS_CONFIRM_BULK_WRITES items.') +
            onlyOn(
              'cli',
              'Required when deleting more items than the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES).',
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    deleted: z.array(z.string()).describe('The given item keys that were deleted.'),
    children: z
      .array(z.object({ key: z.string(), parentItem: z.string(), itemType: z.string() }))
      .describe(
        `Child notes and attachments that were deleted with their parent (at most ${CHILDREN_SHOWN} listed).`,
      ),
    childrenTotal: z
      .number()
      .int()
      .optional()
      .describe(`Children deleted in all, when there are more than the ${CHILDREN_SHOWN} listed.`),
    failed: failedList,
    libraryVersion,
  }),
  // Listed over MCP only where permanent deletion is allowed; refused by the pipeline otherwise.
  enabled: (config) => config.allowDelete,
  disabled: DELETE_DISABLED,
  bulk: (input) => {
    const count = new Set(input.item_keys).size;
    return { count, what: `Deleting ${count} item${count === 1 ? '' : 's'} permanently` };
  },
  summarize: (out) =>
    `Deleted ${plural(out.deleted.length, 'item')} permanently${out.children.length ? `, with ${plural(out.childrenTotal ?? out.children.length, 'child item')} (notes, attachments)` : ''}${out.failed.length ? `; ${out.failed.length} failed` : ''}.`,
  async confirmation(input, desktop) {
    const keys = [...new Set(input.item_keys)];
    if (!desktop) {
      return `delete ${plural(keys.length, 'item')} permanently (${listed(keys)}), with their child notes and attachments`;
    }
    // Named from the desktop's data; a few names say which, the counts say how much.
    const looked = keys.slice(0, CONFIRM_LOOKUPS);
    const found = await Promise.all(looked.map(async (key) => ({ key, item: await desktop.item(key) })));
    const present = found.filter((f) => f.item !== undefined);
    const absent = found.filter((f) => f.item === undefined).map((f) => f.key);
    const children = await Promise.all(present.map(async ({ key }) => (await desktop.children(key)).length));
    const count = keys.length - absent.length;
    const names = present
      .slice(0, CONFIRM_NAMED)
      .map(({ key, item }) => `${JSON.stringify(titleOf(item?.data ?? {}))} (${key})`);
    const more = count - names.length;
    const childCount = children.reduce((a, b) => a + b, 0);
    const childText =
      keys.length > looked.length
        ? `, with their child notes and attachments (${childCount} among the first ${looked.length})`
        : childCount > 0
          ? `, with their ${plural(childCount, 'child note and attachment', 'child notes and attachments')}`
          : ' (they have no child notes or attachments)';
    const missing = absent.length
      ? `; ${listed(absent)} ${absent.length === 1 ? 'is' : 'are'} not in the library`
      : '';
    if (count === 0)
      return `delete nothing: ${listed(absent)} ${absent.length === 1 ? 'is' : 'are'} not in the library`;
    return `delete ${plural(count, 'item')} permanently: ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}${childText}${missing}`;
  },
  plan(input, deps) {
    const keys = [...new Set(input.item_keys)];
    const threshold = deps.config.confirmBulkWrites;
    // A needed confirmation is shown, not refused: the dry run is where one learns of it.
    return {
      item_keys: keys,
      permanent: true,
      children: 'each item’s child notes and attachments are deleted with it',
      ...(threshold > 0 && keys.length > threshold && !input.confirm
        ? { confirmation_needed: `more than ${threshold} items (ZOTEUS_CONFIRM_BULK_WRITES): pass --confirm` }
        : {}),
    };
  },
  retryFailed: {
    input: (input, previous) => {
      // A key that named nothing (404) will not exist on a retry either.
      const keys = [
        ...new Set(
          previous.failed
            .filter((f) => f.code !== 404)
            .map((f) => f.key)
            .filter((k): k is string => typeof k === 'string'),
        ),
      ];
      return keys.length ? { ...input, item_keys: keys } : null;
    },
    merge: (previous, retry) =>
      capChildren({
        deleted: mergeLists(previous.deleted, retry.deleted),
        children: [...previous.children, ...retry.children],
        ...(previous.childrenTotal !== undefined || retry.childrenTotal !== undefined
          ? {
              childrenTotal:
                (previous.childrenTotal ?? previous.children.length) +
                (retry.childrenTotal ?? retry.children.length),
            }
          : {}),
        failed: [
          ...previous.failed.filter((f) => f.code === 404),
          ...remapFailed(previous.failed, retry.failed),
        ].sort((a, b) => a.index - b.index),
        ...((retry.libraryVersion ?? previous.libraryVersion) !== undefined
          ? { libraryVersion: retry.libraryVersion ?? previous.libraryVersion }
          : {}),
      }),
  },
  async run(input, deps) {
    const { deleteItems } = await import('../../core/items/trash.js');
    return capChildren(await deleteItems(deps, input));
  },
});
