/** `zot trash KEY…`, `zot trash restore KEY…` and the gated `zot delete KEY…`. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import deleteTool from '../../../src/tools/items/delete-items.js';
import { envelope, LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await w.close();
});

const lib = () => w.world.server.library(LIB);

describe('zot trash / zot trash restore', () => {
  it('moves items to the trash and back; items already there are unchanged', async () => {
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B', deleted: true }]) as [string, string];
    const r = await w.zot(['trash', a, b]);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.data).toMatchObject({
      action: 'trash',
      updated: [a],
      unchanged: [b],
      failed: [],
      sync_required: true,
    });
    expect(env.next).toEqual([`zot trash restore ${a}`]);
    expect(lib().items.get(a)?.deleted).toBe(true);
    expect(w.work()).toEqual([`GET /${LIB}/items`, `POST /${LIB}/items`]);

    const back = await w.zot(['trash', 'restore', a, b]);
    expect(back.code).toBe(0);
    expect(envelope(back).data).toMatchObject({ action: 'restore', updated: [a, b], unchanged: [] });
    expect(lib().items.get(a)?.deleted).toBeUndefined();
    expect(lib().items.get(b)?.deleted).toBeUndefined();
  });

  it('a missing key is a failed entry (partial, exit 7); bad keys are refused offline (exit 3)', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const r = await w.zot(['trash', a, 'ZZZZ2345']);
    expect(r.code).toBe(7);
    expect(envelope(r).data.failed).toEqual([
      expect.objectContaining({ index: 1, key: 'ZZZZ2345', code: 404, reason: 'not_found' }),
    ]);
    w.world.server.clearLog();
    const bad = await w.zot(['trash', 'abc']);
    expect(bad.code).toBe(3);
    expect(w.world.server.log).toHaveLength(0);
  });
});

describe('zot delete', () => {
  it('without ZOTEUS_ALLOW_DELETE: permission_denied naming it, before any request (CLI and MCP)', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const r = await w.zot(['delete', a, '--yes']);
    expect(r.code).toBe(2);
    expect(envelope(r).error).toMatchObject({ code: 'permission_denied' });
    expect(envelope(r).error.message).toContain('ZOTEUS_ALLOW_DELETE');
    expect(envelope(r).error.hint).toContain('zot trash');
    const dry = await w.zot(['delete', a, '--dry-run']);
    expect(dry.code).toBe(2);
    const mcp = await mcpOf(w);
    try {
      const res = await mcp.call('zotero_delete_items', { item_keys: [a] });
      expect(res._meta?.['zoteus/error']).toMatchObject({ code: 'permission_denied' });
      expect((res._meta?.['zoteus/error'] as { hint: string }).hint).toContain('zotero_trash_items');
    } finally {
      await mcp.close();
    }
    expect(w.world.server.log).toHaveLength(0);
    expect(lib().items.has(a)).toBe(true);
  });

  it('enabled: confirmation_required without --yes; --dry-run lists the keys offline', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const allow = { ZOTEUS_ALLOW_DELETE: 'true' };
    const noYes = await w.zot(['delete', a], allow);
    expect(noYes.code).toBe(3);
    expect(envelope(noYes).error.code).toBe('confirmation_required');
    const dry = await w.zot(['delete', a, a, '--dry-run'], { ...allow, ZOTERO_API_KEY: undefined });
    expect(dry.code).toBe(0);
    expect(envelope(dry).data.would).toMatchObject({ command: 'delete', item_keys: [a], permanent: true });
    // The refusal came after the key check alone; the dry run sent nothing.
    expect(w.requests()).toEqual(['GET /keys/current']);
    expect(lib().items.has(a)).toBe(true);
  });

  it('enabled with --yes: deletes, and children go with their parents and the result says so', async () => {
    const [p, q, lone] = lib().addItems([{ title: 'Parent' }, { title: 'Other' }, { title: 'Lone' }]) as [
      string,
      string,
      string,
    ];
    const [n1, n2] = lib().addItems([
      { itemType: 'note', note: '<p>n</p>', parentItem: p },
      { itemType: 'attachment', linkMode: 'linked_url', url: 'https://x', parentItem: p },
    ]) as [string, string];
    const r = await w.zot(['delete', p, lone, 'ZZZZ2345', '--yes'], { ZOTEUS_ALLOW_DELETE: 'true' });
    expect(r.code).toBe(7);
    const env = envelope(r);
    expect(env.data).toMatchObject({
      deleted: [p, lone],
      children: expect.arrayContaining([
        { key: n1, parentItem: p, itemType: 'note' },
        { key: n2, parentItem: p, itemType: 'attachment' },
      ]),
      failed: [{ index: 2, key: 'ZZZZ2345', code: 404, reason: 'not_found' }],
    });
    expect([...lib().items.keys()]).toEqual([q]);
    const del = w.world.server.log.filter((e) => e.method === 'DELETE');
    expect(del).toHaveLength(1);
    expect(del[0]?.query.itemKey).toBe(`${p},${lone}`);
    expect(del[0]?.headers['if-unmodified-since-version']).toBeDefined();
  });

  it('bulk threshold: more keys than ZOTEUS_CONFIRM_BULK_WRITES need confirm, checked before any request', async () => {
    const keys = lib().addItems([{ title: 'A' }, { title: 'B' }, { title: 'C' }]);
    const deps = w.deps({ env: { ZOTEUS_ALLOW_DELETE: 'true', ZOTEUS_CONFIRM_BULK_WRITES: '2' } });
    await expect(deleteTool.run({ item_keys: keys }, deps)).rejects.toMatchObject({
      code: 'confirmation_required',
    });
    expect(w.world.server.log).toHaveLength(0);
    const out = await deleteTool.run({ item_keys: keys, confirm: true }, deps);
    expect(out.deleted).toEqual(keys);
  });

  it('the library changing between the read and the delete: a retryable conflict, nothing deleted', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    w.world.server.faults.concurrentEdit({
      match: { method: 'DELETE' },
      apply: (s) => s.library(LIB).editItem(a, { title: 'edited' }),
    });
    const error = await deleteTool
      .run({ item_keys: [a] }, w.deps({ env: { ZOTEUS_ALLOW_DELETE: 'true' } }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'conflict', retryable: true });
    expect(lib().items.has(a)).toBe(true);
  });
});
