/**
 * The write journal and undo against the Zotero test server: each covered write undone, the
 * library compared object by object with its state before; a partial failure, a concurrent
 * edit in between, the undo of an undo; request counts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, startWorld, type World } from '../library/world.js';
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

/**
 * Every item and collection of the library without what the server keeps itself; an empty
 * field is an absent one (Zotero answers every field of an item's type, empty ones as '').
 */
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

/** Requests the server saw since `from`, as `METHOD /path` (the key check left out). */
function since(from: number): string[] {
  return w.server.log
    .slice(from)
    .filter((e) => e.path !== '/keys/current')
    .map((e) => `${e.method} ${e.path}`);
}

async function write(args: string[]): Promise<{ requestId: string; data: Record<string, unknown> }> {
  const r = await zot([...args, '--yes']);
  const env = r.json() as { meta: { request_id: string }; data: Record<string, unknown> };
  expect([0, 7]).toContain(r.code);
  return { requestId: env.meta.request_id, data: env.data };
}

async function undo(id: string): Promise<{ code: number; data: Record<string, unknown>; requestId: string }> {
  const r = await zot(['undo', id, '--yes']);
  const env = r.json() as { meta: { request_id: string }; data: Record<string, unknown> };
  return { code: r.code, data: env.data, requestId: env.meta.request_id };
}

describe('zot undo', () => {
  it('tags added to 3 items are removed again: the library as before, 2 requests each way', async () => {
    const keys = lib().addItems([
      { title: 'A', tags: [{ tag: 'old' }] },
      { title: 'B' },
      { title: 'C', tags: [{ tag: 'new' }] },
    ]);
    const before = snapshot();
    let mark = w.server.log.length;
    const added = await write(['tag', 'add', 'new', ...keys]);
    // Journaling adds no request: the engine's read is the journal's state before.
    expect(since(mark)).toEqual([`GET /${LIB}/items`, `POST /${LIB}/items`]);
    expect(lib().items.get(keys[0] as string)?.tags).toEqual([{ tag: 'old' }, { tag: 'new' }]);

    mark = w.server.log.length;
    const undone = await undo(added.requestId);
    expect(undone.code).toBe(0);
    expect(undone.data).toMatchObject({
      requestId: added.requestId,
      updated: [keys[0], keys[1]],
      unchanged: [],
      conflicts: [],
      failed: [],
    });
    expect(since(mark)).toEqual([`GET /${LIB}/items`, `POST /${LIB}/items`]);
    expect(snapshot()).toEqual(before);
  });

  it('items moved to the trash come back; the undo of the undo trashes them again', async () => {
    const keys = lib().addItems([{ title: 'A' }, { title: 'B' }]);
    const before = snapshot();
    const trashed = await write(['trash', ...keys]);
    const after = snapshot();
    const undone = await undo(trashed.requestId);
    expect(undone.data).toMatchObject({ updated: keys, failed: [] });
    expect(snapshot()).toEqual(before);
    const redone = await undo(undone.requestId);
    expect(redone.code).toBe(0);
    expect(redone.data).toMatchObject({ updated: keys, failed: [] });
    expect(snapshot()).toEqual(after);
  });

  it('an object edited by someone else since is a conflict naming the field, and is not touched', async () => {
    const keys = lib().addItems([{ title: 'A' }, { title: 'B' }]);
    const added = await write(['tag', 'add', 'x', ...keys]);
    lib().editItem(keys[1] as string, { title: 'B, edited by a colleague' });
    const edited = JSON.stringify(lib().items.get(keys[1] as string));
    const undone = await undo(added.requestId);
    expect(undone.code).toBe(7);
    expect(undone.data).toMatchObject({
      updated: [keys[0]],
      conflicts: [{ key: keys[1], kind: 'items', fields: ['title'] }],
      failed: [{ key: keys[1], code: 409, reason: 'conflict' }],
    });
    expect(lib().items.get(keys[0] as string)?.tags ?? []).toEqual([]);
    expect(JSON.stringify(lib().items.get(keys[1] as string))).toBe(edited);
  });

  it('after a partial failure only what landed is undone', async () => {
    const [a] = lib().addItems([{ title: 'A' }]);
    const before = snapshot();
    // ZZZZZZZZ names nothing: a failed entry; A lands.
    const added = await write(['tag', 'add', 'x', a as string, 'ZZZZZZZZ']);
    expect(added.data.failed).toMatchObject([{ key: 'ZZZZZZZZ', code: 404 }]);
    const undone = await undo(added.requestId);
    expect(undone.code).toBe(0);
    expect(undone.data).toMatchObject({ updated: [a], unchanged: [], failed: [] });
    expect(snapshot()).toEqual(before);
  });

  it('an item update is undone field by field', async () => {
    const [a] = lib().addItems([{ title: 'Old title', date: '2001' }]);
    const before = snapshot();
    const updated = await write(['update', a as string, '--title', 'New title', '--field', 'extra=Note']);
    expect(lib().items.get(a as string)?.title).toBe('New title');
    const undone = await undo(updated.requestId);
    expect(undone.data).toMatchObject({ updated: [a], failed: [] });
    expect(snapshot()).toEqual(before);
  });

  it('--dry-run lists what undo would do from the journal alone, offline and keyless', async () => {
    const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B' }]) as [string, string];
    const added = await write(['tag', 'add', 'x', a, b]);
    const mark = w.server.log.length;
    const r = await zot(['undo', added.requestId, '--dry-run'], { ZOTERO_API_KEY: '' });
    expect(r.code).toBe(0);
    const would = (r.json().data as { would: Record<string, unknown> }).would;
    expect(would).toMatchObject({
      undoes: { request_id: added.requestId, tool: 'zotero_manage_tags', library: LIB },
      objects: [
        { key: a, kind: 'items', would: 'restore', fields: ['tags'] },
        { key: b, kind: 'items', would: 'restore', fields: ['tags'] },
      ],
      not_undoable: [],
    });
    expect(w.server.log.length).toBe(mark);
    expect(lib().items.get(a)?.tags).toEqual([{ tag: 'x' }]);
    // An id the journal does not hold still plans: the undo itself would be not_found.
    const unknown = await zot(['undo', 'nosuchreq000', '--dry-run'], { ZOTERO_API_KEY: '' });
    expect(unknown.code).toBe(0);
    expect((unknown.json().data as { would: Record<string, unknown> }).would).toMatchObject({
      undoes: null,
      not_found: expect.stringMatching(/^No write with request id 'nosuchreq000' is in the journal/),
    });
  });

  it('an unknown request id is not_found, exit 4, nothing sent', async () => {
    const mark = w.server.log.length;
    const r = await zot(['undo', 'abcdef123456', '--yes']);
    expect(r.code).toBe(4);
    expect((r.json() as { error: { code: string } }).error.code).toBe('not_found');
    expect(since(mark)).toEqual([]);
  });
});
