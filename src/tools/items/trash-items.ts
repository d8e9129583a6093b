/** `zotero_trash_items` / `zot trash KEY…` and `zot trash restore KEY…`: reversible removal. */
import * as z from 'zod';
import { mergeLists, remapFailed } from '../../core/items/retry.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { failedList, libraryVersion } from '../shared/output.js';
import { itemKeys, libraryParams } from '../shared/params.js';
import { SUGGESTION_KEYS, quoted } from '../shared/text.js';

export default defineTool({
  name: 'zotero_trash_items',
  title: 'Trash items',
  summary: 'Move items to the trash, or restore them from it: the reversible way to remove items.',
  description: [
    'Move items to or from the trash (action); ones already there: unchanged, nothing sent. zotero_delete_items is permanent.',
    'Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  idempotent: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'items',
  undo: {
    restores: "each item's place in or out of the trash",
  },
  cli: [
    {
      path: ['trash'],
      args: ['item_keys'],
      preset: { action: 'trash' },
      summary: 'Move items to the trash (reversible): zot trash KEY…',
    },
    {
      path: ['trash', 'restore'],
      args: ['item_keys'],
      preset: { action: 'restore' },
      summary: 'Restore items from the trash: zot trash restore KEY…',
    },
  ],
  input: z
    .object({
      item_keys: itemKeys('Items'),
      action: z.enum(['trash', 'restore']).optional().meta({ default: 'trash' }),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    action: z.enum(['trash', 'restore']),
    updated: z.array(z.string()).describe('Keys of the items moved to the trash (or restored from it).'),
    unchanged: z
      .array(z.string())
      .describe('Items already in the trash (or already out of it): nothing was sent.'),
    failed: failedList,
    libraryVersion,
  }),
  summarize: (out) =>
    `${out.action === 'trash' ? 'Moved' : 'Restored'} ${plural(out.updated.length, 'item')} ${out.action === 'trash' ? 'to' : 'from'} the trash${out.unchanged.length ? ` (${out.unchanged.length} already there)` : ''}${out.failed.length ? `; ${out.failed.length} failed` : ''}.`,
  next: (out) => {
    if (out.updated.length === 0 || out.updated.length > SUGGESTION_KEYS) return [];
    const keys = out.updated.map(quoted).join(' ');
    return out.action === 'trash' ? [`zot trash restore ${keys}`] : [`zot trash ${keys}`];
  },
  plan(input) {
    const keys = [...new Set(input.item_keys)];
    return {
      action: input.action ?? 'trash',
      item_keys: keys,
      reversible: true,
      requests: `at most ${2 * Math.ceil(keys.length / 50)}`,
    };
  },
  retryFailed: {
    input: (input, previous) => {
      const keys = [
        ...new Set(previous.failed.map((f) => f.key).filter((k): k is string => typeof k === 'string')),
      ];
      return keys.length ? { ...input, item_keys: keys } : null;
    },
    merge: (previous, retry) => ({
      ...retry,
      updated: mergeLists(previous.updated, retry.updated),
      unchanged: mergeLists(previous.unchanged, retry.unchanged),
      failed: remapFailed(previous.failed, retry.failed),
      ...((retry.libraryVersion ?? previous.libraryVersion) !== undefined
        ? { libraryVersion: retry.libraryVersion ?? previous.libraryVersion }
        : {}),
    }),
  },
  async run(input, deps) {
    const { trashItems } = await import('../../core/items/trash.js');
    return trashItems(deps, input);
  },
});
