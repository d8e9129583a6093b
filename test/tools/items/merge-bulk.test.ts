/**
 * The bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) applies to merges as to the other bulk
 * removals: applying a merge of more items than the threshold (they go to the trash) needs
 * confirm, refused offline before any request; a preview, or a merge at the threshold, does not.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
let keys: [string, string, string, string];
beforeEach(async () => {
  w = await startItemsWorld();
  keys = w.world.server
    .library(LIB)
    .addItems(Array.from({ length: 4 }, () => ({ title: 'Coastal wetlands', date: '2019' }))) as typeof keys;
});
afterEach(async () => {
  await w.close();
});

type Envelope = { data: Record<string, unknown>; error?: { code: string; message: string; hint?: string } };
async function zot(args: string[], env: Record<string, string> = {}): Promise<Envelope & { code: number }> {
  const r = await zotAt(args, { env: w.env({ ZOTEUS_CONFIRM_BULK_WRITES: '2', ...env }) });
  return { ...(r.json() as Envelope), code: r.code };
}
const trashed = () => [...w.world.server.library(LIB).items.values()].filter((i) => i.deleted).length;

describe('zot merge and the bulk-write threshold', () => {
  it('3 items into a master over a threshold of 2: confirmation_required offline; --confirm merges', async () => {
    const [master, ...others] = keys;
    const refused = await zot(['merge', master, ...others, '--apply', '--yes']);
    expect(refused.code).toBe(3);
    expect(refused.error).toMatchObject({
      code: 'confirmation_required',
      message: `Merging 3 items into ${master} (they go to the trash) in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is 2 items. Nothing was changed.`,
      hint: 'Call again with --confirm to proceed, or merge at most 2 items per call.',
    });
    expect(w.requests()).toEqual([]);

    // A preview writes nothing: no confirmation.
    const preview = await zot(['merge', master, ...others]);
    expect(preview.code).toBe(0);
    expect(preview.data).toMatchObject({ applied: false });

    const merged = await zot(['merge', master, ...others, '--apply', '--yes', '--confirm']);
    expect(merged.code, JSON.stringify(merged.error)).toBe(0);
    expect(merged.data).toMatchObject({ applied: true });
    expect(trashed()).toBe(3);
  });

  it('at the threshold no confirmation is needed; over MCP confirm: true is the way', async () => {
    const [master, a, b, c] = keys;
    const two = await zot(['merge', master, a, b, '--apply', '--yes']);
    expect(two.code, JSON.stringify(two.error)).toBe(0);
    expect(trashed()).toBe(2);

    const over = await mcpOf(w, { ZOTEUS_CONFIRM_BULK_WRITES: '1' });
    try {
      const call = async (args: Record<string, unknown>) =>
        (await over.client.callTool({ name: 'zotero_merge_items', arguments: args })) as CallToolResult;
      const refused = await call({ master_key: master, item_keys: [c, a], apply: true });
      expect(refused.isError).toBe(true);
      expect(refused._meta?.['zoteus/error']).toMatchObject({
        code: 'confirmation_required',
        message: `Merging 2 items into ${master} (they go to the trash) in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is 1 item. Nothing was changed.`,
      });
      const done = await call({ master_key: master, item_keys: [c, a], apply: true, confirm: true });
      expect(done.isError).toBeFalsy();
      expect(trashed()).toBe(3);
    } finally {
      await over.close();
    }
  });
});
