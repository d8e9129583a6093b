/**
 * The write journal beyond single undos: history paging and marks, a replayed idempotent
 * request journaled once, creates and collection writes and permanent deletions undone, a
 * concurrent edit in the middle of an undo, MCP request ids, request counts of a large undo.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { ALICE, KEY, startWorld, type World } from '../library/world.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';

const LIB = `users/${ALICE}`;
let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});

const lib = () => w.server.library(LIB);
const zot = (args: string[], env: Record<string, string> = {}) => zotAt(args, { env: w.env(env) });

function snapshot(): Record<string, unknown> {
  const strip = (o: object) => {
    const { version, dateModified, ...rest } = o as Record<string, unknown>;
    void version;
    void dateModified;
    return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== ''));
  };
  return {
    items: Object.fromEntries([...lib().items].map(([k, v]) => [k, strip(v)]).sort()),
    collections: Object.fromEntries([...lib().collections].map(([k, v]) => [k, strip(v)]).sort()),
  };
}

function since(from: number): string[] {
  return w.server.log
    .slice(from)
    .filter((e) => e.path !== '/keys/current' && e.path !== '/schema')
    .map((e) => `${e.method} ${e.path}`);
}

type Env = { meta: { request_id: string }; data: Record<string, unknown>; error?: { code: string } };
async function run(args: string[], extra: Record<string, string> = {}): Promise<Env & { code: number }> {
  const r = await zot(args, extra);
  return { ...(r.json() as Env), code: r.code };
}

describe('zot history', () => {
  it('pages the journaled writes newest first, filters by tool and date, marks what is undone', async () => {
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B' }]) as [string, string];
    const first = await run(['tag', 'add', 'x', a, b]);
    const second = await run(['trash', a]);
    const third = await run(['tag', 'add', 'y', b]);
    // A read is not journaled; nor is a dry run.
    await run(['tag', 'add', 'z', a, '--dry-run']);
    await run(['tag', 'list']);

    const page = await run(['history', '--limit', '2']);
    expect(page.code).toBe(0);
    expect(page.data).toMatchObject({ totalResults: 3, start: 0, nextStart: 2 });
    const rows = page.data.requests as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.requestId)).toEqual([third.meta.request_id, second.meta.request_id]);
    expect(rows[0]).toMatchObject({
      tool: 'zotero_manage_tags',
      library: LIB,
      status: 'done',
      objects: { changed: 1, created: 0, deleted: 0, other: 0, notLanded: 0, unknown: 0 },
      undoable: true,
    });
    const rest = await run(['history', '--limit', '2', '--start', '2']);
    expect((rest.data.requests as Array<{ requestId: string }>).map((r) => r.requestId)).toEqual([
      first.meta.request_id,
    ]);
    expect(rest.data.nextStart).toBeUndefined();

    const trashOnly = await run(['history', '--tool', 'zotero_trash_items']);
    expect((trashOnly.data.requests as Array<{ requestId: string }>).map((r) => r.requestId)).toEqual([
      second.meta.request_id,
    ]);
    const future = await run(['history', '--since', '2999-01-01']);
    expect(future.data).toMatchObject({ totalResults: 0, requests: [] });
    const bad = await run(['history', '--since', 'yesterday']);
    expect([bad.code, bad.error?.code]).toEqual([3, 'validation_error']);

    const undone = await run(['undo', third.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    const after = (await run(['history', '--limit', '2'])).data.requests as Array<Record<string, unknown>>;
    expect(after[0]).toMatchObject({
      requestId: undone.meta.request_id,
      tool: 'zotero_undo',
      undoOf: third.meta.request_id,
      undoable: true,
    });
    expect(after[1]).toMatchObject({
      requestId: third.meta.request_id,
      undoable: false,
      reason: `already undone by ${undone.meta.request_id}`,
      undoneBy: [undone.meta.request_id],
    });
  });

  it('a replayed idempotent request is journaled once', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const once = await run(['trash', a, '--idempotency-key', 'k-1']);
    const again = await run(['trash', a, '--idempotency-key', 'k-1']);
    expect(again.meta.request_id).toBe(once.meta.request_id);
    const h = await run(['history']);
    expect(h.data.totalResults).toBe(1);
  });
});

describe('a journal that cannot be used', () => {
  it('refuses the write before it is sent: validation_error naming the file, the library untouched', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const path = join(w.box.env.ZOTEUS_DATA_DIR as string, 'journal.db');
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, 'this is not a database, and long enough to be read as its header.......');
    const mark = w.server.log.length;
    const r = await run(['tag', 'add', 'x', a]);
    expect([r.code, r.error?.code]).toEqual([3, 'validation_error']);
    expect((r.error as unknown as { message: string }).message).toBe(
      `The write journal ${path} cannot be used (it is not a database). Nothing was changed.`,
    );
    // The engine's read went out; the write did not.
    expect(since(mark)).toEqual([`GET /${LIB}/items`]);
    expect(lib().items.get(a)?.tags ?? []).toEqual([]);
  });
});

describe('zot undo of each kind of write', () => {
  it('created items go to the trash; nothing else changes', async () => {
    lib().addItems([{ title: 'Existing' }]);
    const before = snapshot();
    const file = join(w.box.dir, 'items.json');
    writeFileSync(
      file,
      JSON.stringify([
        { itemType: 'book', title: 'New one' },
        { itemType: 'book', title: 'New two' },
      ]),
    );
    const created = await run(['create', file]);
    expect(created.code).toBe(0);
    const keys = (created.data.created as Array<{ key: string }>).map((c) => c.key);
    const undone = await run(['undo', created.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    expect(undone.data).toMatchObject({ updated: keys, trashed: keys, failed: [] });
    const now = snapshot() as { items: Record<string, Record<string, unknown>>; collections: unknown };
    for (const key of keys) expect(now.items[key]).toMatchObject({ deleted: true });
    const { items, collections } = now;
    const others = Object.fromEntries(Object.entries(items).filter(([k]) => !keys.includes(k)));
    expect({ items: others, collections }).toEqual(before);
  });

  it('collection membership added is taken away; a created collection is deleted', async () => {
    const [c] = lib().addCollections([{ name: 'Reading' }]) as [string];
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B', collections: [c] }]) as [string, string];
    const before = snapshot();
    const added = await run(['collection', 'add', c, a, b]);
    expect(lib().items.get(a)?.collections).toEqual([c]);
    const made = await run(['collection', 'create', 'Fresh']);
    expect(made.code).toBe(0);
    const undoneAdd = await run(['undo', added.meta.request_id, '--yes']);
    expect(undoneAdd.data).toMatchObject({ updated: [a], failed: [] });
    const undoneMake = await run(['undo', made.meta.request_id, '--yes']);
    expect(undoneMake.code).toBe(0);
    expect((undoneMake.data.deleted as string[]).length).toBe(1);
    expect(snapshot()).toEqual(before);
  });

  it('a tag deleted across the library comes back on every item that had it (one read more per 50 items)', async () => {
    const [a, b] = lib().addItems([
      { title: 'A', tags: [{ tag: 'gone' }, { tag: 'stays' }] },
      { title: 'B', tags: [{ tag: 'gone', type: 1 }] },
      { title: 'C', tags: [{ tag: 'stays' }] },
    ]) as [string, string];
    const before = snapshot();
    const mark = w.server.log.length;
    const deleted = await run(['tag', 'delete', 'gone', '--yes']);
    expect(deleted.code).toBe(0);
    // The tool lists the keys that carry the tag and deletes it; the journal reads those items.
    expect(since(mark)).toEqual([`GET /${LIB}/items`, `GET /${LIB}/items`, `DELETE /${LIB}/tags`]);
    expect(lib().items.get(b)?.tags).toEqual([]);
    const h = await run(['history', '--limit', '1']);
    expect((h.data.requests as unknown[])[0]).toMatchObject({
      objects: { changed: 2, other: 0 },
      undoable: true,
    });
    const undone = await run(['undo', deleted.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    expect(undone.data).toMatchObject({ failed: [] });
    expect((undone.data.updated as string[]).sort()).toEqual([a, b].sort());
    expect(snapshot()).toEqual(before);
  });

  it('an item deleted permanently is created again from the journal, under its key', async () => {
    const [a] = lib().addItems([{ title: 'Doomed', date: '1999', tags: [{ tag: 'keep' }] }]) as [string];
    const before = snapshot();
    const mark = w.server.log.length;
    const deleted = await run(['delete', a, '--yes'], { ZOTEUS_ALLOW_DELETE: 'true' });
    expect(deleted.code).toBe(0);
    // The deletion read the item already: journaling it read nothing more.
    expect(since(mark)).toEqual([`GET /${LIB}/items`, `DELETE /${LIB}/items`]);
    expect(lib().items.has(a)).toBe(false);
    const undone = await run(['undo', deleted.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    expect(undone.data).toMatchObject({ created: [a], failed: [] });
    expect(snapshot()).toEqual(before);
  });

  it('tags removed and renamed come back; a collection renamed and deleted comes back under its key', async () => {
    const [c] = lib().addCollections([{ name: 'Before' }]) as [string];
    const [a] = lib().addItems([
      { title: 'A', tags: [{ tag: 'one' }, { tag: 'two' }] },
      { title: 'B', tags: [{ tag: 'two', type: 1 }] },
    ]) as [string, string];
    const before = snapshot();
    const removed = await run(['tag', 'remove', 'one', a, '--yes']);
    const renamed = await run(['tag', 'rename', 'two', 'deux']);
    const retitled = await run(['collection', 'rename', c, 'After']);
    const deleted = await run(['collection', 'delete', c, '--yes']);
    expect([removed.code, renamed.code, retitled.code, deleted.code]).toEqual([0, 0, 0, 0]);
    expect(lib().collections.has(c)).toBe(false);
    // Newest first, as a person would take them back.
    for (const done of [deleted, retitled, renamed, removed]) {
      const undone = await run(['undo', done.meta.request_id, '--yes']);
      expect(undone.code, JSON.stringify(undone.data)).toBe(0);
    }
    expect(snapshot()).toEqual(before);
  });

  it('a created note and imported items go to the trash', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const note = await run(['note', 'add', parent, 'A note to take back']);
    const file = join(w.box.dir, 'refs.bib');
    writeFileSync(file, '@article{one, title={Imported one}, author={Doe, Jane}, journal={J}, year={2001}}');
    const imported = await run(['add', '--from-file', file]);
    expect([note.code, imported.code]).toEqual([0, 0]);
    const made = [...lib().items.values()].filter((i) => i.key !== parent).map((i) => i.key);
    expect(made).toHaveLength(2);
    for (const done of [note, imported]) {
      const undone = await run(['undo', done.meta.request_id, '--yes']);
      expect(undone.code).toBe(0);
      expect((undone.data.trashed as string[]).length).toBe(1);
    }
    for (const key of made) expect(lib().items.get(key)?.deleted).toBe(true);
    expect(lib().items.get(parent)?.deleted ?? false).toBe(false);
  });

  it('an undo addressed to another library is refused, nothing sent', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const added = await run(['tag', 'add', 'x', a]);
    const mark = w.server.log.length;
    const r = await run(['undo', added.meta.request_id, '--library-id', '10', '--yes']);
    expect([r.code, r.error?.code]).toEqual([3, 'validation_error']);
    expect(since(mark)).toEqual([]);
    expect(lib().items.get(a)?.tags).toEqual([{ tag: 'x' }]);
  });

  it('an edit between the undo’s read and its write: a conflict naming the field, the edit kept', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const added = await run(['tag', 'add', 'x', a]);
    // Someone retitles the item just before the undo's write arrives: 412, re-read, judged again.
    w.server.faults.concurrentEdit({
      match: { method: 'POST' },
      apply: (server) => server.library(LIB).editItem(a, { title: 'Retitled meanwhile' }),
    });
    const undone = await run(['undo', added.meta.request_id, '--yes']);
    expect(undone.code).toBe(6);
    expect(undone.error?.code).toBe('conflict');
    expect(lib().items.get(a)).toMatchObject({ title: 'Retitled meanwhile', tags: [{ tag: 'x' }] });
  });

  it('undo of 120 items costs 2·⌈120/50⌉ requests, as the change did', async () => {
    const keys = lib().addItems(Array.from({ length: 120 }, (_, i) => ({ title: `T${i}` })));
    const before = snapshot();
    let mark = w.server.log.length;
    const added = await run(['tag', 'add', 'bulk', ...keys]);
    expect(since(mark)).toHaveLength(6);
    mark = w.server.log.length;
    const undone = await run(['undo', added.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    expect(since(mark)).toEqual([
      ...Array(3).fill(`GET /${LIB}/items`),
      ...Array(3).fill(`POST /${LIB}/items`),
    ]);
    expect(snapshot()).toEqual(before);
  });

  it('over MCP: the request id of a result’s _meta undoes it', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const before = snapshot();
    const mcp = await connect(tools as readonly AnyTool[], {
      ...w.env(),
      ZOTERO_API_URL: w.server.url,
      ZOTERO_API_KEY: KEY,
    });
    try {
      const call = async (name: string, args: Record<string, unknown>) =>
        (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
      const trashed = await call('zotero_trash_items', { item_keys: [a] });
      const id = trashed._meta?.['zoteus/request_id'] as string;
      expect(lib().items.get(a)?.deleted).toBe(true);
      const undone = await call('zotero_undo', { request_id: id });
      expect(undone.isError).toBeFalsy();
      expect(undone.structuredContent).toMatchObject({ requestId: id, updated: [a] });
      expect(snapshot()).toEqual(before);
      const history = await call('zotero_history', {});
      expect((history.structuredContent as { totalResults: number }).totalResults).toBe(2);
      const unknown = await call('zotero_undo', { request_id: 'nosuchreq000' });
      expect(unknown._meta?.['zoteus/error']).toMatchObject({ code: 'not_found' });
    } finally {
      await mcp.close();
    }
  });
});
