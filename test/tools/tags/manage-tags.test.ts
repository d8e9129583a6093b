/** `zotero_manage_tags` / `zot tag add|remove|rename|delete`: batching, request counts, thresholds. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../../src/core/tool.js';
import tagsTool from '../../../src/tools/tags/manage-tags.js';
import { READ_KEY } from '../../core/library/world.js';
import { envelope, LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

let w: ItemsWorld;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await w.close();
});

const lib = () => w.world.server.library(LIB);
const tagsOf = (key: string) =>
  lib()
    .items.get(key)!
    .tags.map((t) => t.tag);

describe('tags on 500 items: request counts', () => {
  it('add: 10 reads and 10 writes of 50; remove over the threshold needs --confirm and sends nothing without it', async () => {
    const keys = lib().addItems(
      Array.from({ length: 500 }, (_, i) => ({ title: `I${i}`, tags: i < 20 ? [{ tag: 'seen' }] : [] })),
    );
    const events: ProgressEvent[] = [];
    const out = await tagsTool.run(
      { action: 'add_items', tag: 'seen', item_keys: keys },
      w.deps({ progress: events }),
    );
    expect(out.updated).toHaveLength(480);
    expect(out.unchanged).toEqual(keys.slice(0, 20));
    expect(out.failed).toEqual([]);
    const reads = w.work().filter((r) => r === `GET /${LIB}/items`);
    const writes = w.work().filter((r) => r === `POST /${LIB}/items`);
    expect(reads).toHaveLength(10);
    expect(writes).toHaveLength(10);
    expect(w.requests()).toHaveLength(21); // plus the key check
    // Only the tags travel, with each item's version.
    const body = w.world.server.log.find((e) => e.method === 'POST')?.body as Array<Record<string, unknown>>;
    expect(Object.keys(body[0]!).sort()).toEqual(['key', 'tags', 'version']);
    expect(events[0]).toMatchObject({ event: 'start', phase: 'tag_add_items', total: 500 });
    expect(events.at(-1)).toMatchObject({ event: 'complete', succeeded: 480, failed: 0 });
    expect(keys.every((k) => tagsOf(k).includes('seen'))).toBe(true);

    w.world.server.clearLog();
    const refused = await w.zot(['tag', 'remove', 'seen', ...keys], { ZOTEUS_CONFIRM_BULK_WRITES: '100' });
    expect(refused.code).toBe(3);
    expect(envelope(refused).error).toMatchObject({ code: 'confirmation_required', field: 'confirm' });
    expect(envelope(refused).error.hint).toContain('--confirm');
    expect(w.world.server.log).toHaveLength(0);

    // Removing a tag from items is destructive: without --yes, no one is there to confirm.
    const unconfirmed = await w.zot(['tag', 'remove', 'seen', ...keys, '--confirm'], {
      ZOTEUS_CONFIRM_BULK_WRITES: '100',
    });
    expect(envelope(unconfirmed).error).toMatchObject({ code: 'confirmation_required' });
    expect(w.world.server.log.filter((e) => e.method === 'POST')).toHaveLength(0);

    const removed = await w.zot(['tag', 'remove', 'seen', ...keys, '--confirm', '--yes'], {
      ZOTEUS_CONFIRM_BULK_WRITES: '100',
    });
    expect(removed.code).toBe(0);
    expect((envelope(removed).data.updated as string[]).length).toBe(500);
    expect(w.work().filter((r) => r === `GET /${LIB}/items`)).toHaveLength(10);
    expect(w.work().filter((r) => r === `POST /${LIB}/items`)).toHaveLength(10);
    expect(keys.some((k) => tagsOf(k).includes('seen'))).toBe(false);
  });
});

describe('zot tag add / remove', () => {
  it('a key that names nothing is a failed entry; the rest land (exit 7, partial)', async () => {
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B' }]) as [string, string];
    const r = await w.zot(['tag', 'add', 'to read', a, 'ZZZZ2345', b]);
    expect(r.code).toBe(7);
    const env = envelope(r);
    expect(env.ok).toBe('partial');
    expect(env.data).toMatchObject({
      updated: [a, b],
      failed: [{ index: 1, key: 'ZZZZ2345', code: 404, reason: 'not_found' }],
    });
    expect(env.next).toEqual([`zot tag remove "to read" ${a} ${b}`]);
    expect(r.stderr).not.toContain('dropped a follow-up');
    expect(tagsOf(a)).toEqual(['to read']);
  });

  it('every key missing: not_found, exit 4', async () => {
    const r = await w.zot(['tag', 'add', 'x', 'ZZZZ2345']);
    expect(r.code).toBe(4);
    expect(envelope(r).error.failed).toEqual([expect.objectContaining({ key: 'ZZZZ2345', code: 404 })]);
  });
});

describe('zot tag rename / delete', () => {
  it('rename rewrites only the items with the tag, keeping its type and merging into an existing one', async () => {
    const [a, b, c] = lib().addItems([
      { title: 'A', tags: [{ tag: 'ml' }, { tag: 'x' }] },
      { title: 'B', tags: [{ tag: 'ml', type: 1 }] },
      { title: 'C', tags: [{ tag: 'ml' }, { tag: 'machine learning' }] },
      { title: 'D', tags: [{ tag: 'other' }] },
    ]) as [string, string, string];
    const r = await w.zot(['tag', 'rename', 'ml', 'machine learning']);
    expect(r.code).toBe(0);
    expect((envelope(r).data.updated as string[]).sort()).toEqual([a, b, c].sort());
    expect(lib().items.get(a)!.tags).toEqual([{ tag: 'machine learning' }, { tag: 'x' }]);
    expect(lib().items.get(b)!.tags).toEqual([{ tag: 'machine learning', type: 1 }]);
    expect(lib().items.get(c)!.tags).toEqual([{ tag: 'machine learning' }]);
    // One listing of the tagged items, then one read and one write.
    expect(w.work()).toEqual([`GET /${LIB}/items`, `GET /${LIB}/items`, `POST /${LIB}/items`]);
    const missing = await w.zot(['tag', 'rename', 'nope', 'x']);
    expect(missing.code).toBe(4);
  });

  it('delete is destructive: confirmation_required without --yes; then removes the tags everywhere', async () => {
    lib().addItems([
      { title: 'A', tags: [{ tag: 'old' }, { tag: 'keep' }] },
      { title: 'B', tags: [{ tag: '-weird' }] },
    ]);
    const noYes = await w.zot(['tag', 'delete', 'old', '--', '-weird']);
    expect(noYes.code).toBe(3);
    expect(envelope(noYes).error.code).toBe('confirmation_required');
    // Only the key check, which comes before confirmation in the order of checks.
    expect(w.requests()).toEqual(['GET /keys/current']);
    const r = await w.zot(['tag', 'delete', 'old', 'ghost', '--yes', '--', '-weird']);
    expect(r.code).toBe(0);
    expect(envelope(r).data).toMatchObject({
      deleted: ['old', '-weird'],
      unchanged: ['ghost'],
      itemsAffected: 2,
    });
    const del = w.world.server.log.find((e) => e.method === 'DELETE');
    expect(del?.path).toBe(`/${LIB}/tags`);
    expect(del?.query.tag).toBe('old || -weird');
    expect(del?.headers['if-unmodified-since-version']).toBeDefined();
    expect([...lib().items.values()].flatMap((i) => i.tags.map((t) => t.tag))).toEqual(['keep']);
  });

  it('--dry-run shows what would change, offline', async () => {
    const r = await w.zot(['tag', 'remove', 'x', 'ABCD2345', 'ABCD2346', '--dry-run'], {
      ZOTERO_API_KEY: undefined,
      ZOTEUS_CONFIRM_BULK_WRITES: '1',
    });
    expect(r.code).toBe(0);
    expect(envelope(r).data.would).toMatchObject({
      action: 'remove_items',
      tag: 'x',
      items: 2,
      confirmation_needed: expect.any(String),
    });
  });
});

describe('zotero_manage_tags over MCP', () => {
  it('is destructive in its annotations; remove over the threshold needs confirm: true', async () => {
    const keys = lib().addItems([
      { title: 'A', tags: [{ tag: 't' }] },
      { title: 'B', tags: [{ tag: 't' }] },
    ]);
    const mcp = await mcpOf(w, { ZOTEUS_CONFIRM_BULK_WRITES: '1' });
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.find((t) => t.name === 'zotero_manage_tags')?.annotations).toMatchObject({
        destructiveHint: true,
      });
      const refused = await mcp.call('zotero_manage_tags', {
        action: 'remove_items',
        tag: 't',
        item_keys: keys,
      });
      expect(refused._meta?.['zoteus/error']).toMatchObject({ code: 'confirmation_required' });
      expect((refused._meta?.['zoteus/error'] as { hint: string }).hint).toContain('confirm: true');
      const ok = await mcp.call('zotero_manage_tags', {
        action: 'remove_items',
        tag: 't',
        item_keys: keys,
        confirm: true,
      });
      expect(ok.structuredContent).toMatchObject({ updated: keys });
    } finally {
      await mcp.close();
    }
  });
});

describe('library addressing', () => {
  it('--library-id writes to that group; a group the key may only read is permission_denied after the key check alone', async () => {
    const [g] = w.world.server.library('groups/10').addItems([{ title: 'Group item' }]) as [string];
    const r = await w.zot(['tag', 'add', 'lab', g, '--library-id', '10']);
    expect(r.code).toBe(0);
    expect(w.world.server.library('groups/10').items.get(g)?.tags).toEqual([{ tag: 'lab' }]);
    expect(w.work()).toEqual(['GET /groups/10/items', 'POST /groups/10/items']);

    w.world.server.clearLog();
    const [h] = w.world.server.library('groups/20').addItems([{ title: 'Read only' }]) as [string];
    const denied = await w.zot(['trash', h, '--library-id', '20'], { ZOTERO_API_KEY: READ_KEY });
    expect(denied.code).toBe(2);
    expect(envelope(denied).error.code).toBe('permission_denied');
    expect(w.requests()).toEqual(['GET /keys/current']);
    const noType = await w.zot(['tag', 'add', 'x', h, '--library-type', 'group']);
    expect(noType.code).toBe(3);
  });
});
