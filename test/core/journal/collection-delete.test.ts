/**
 * A collection deletion takes its subcollections and the memberships of every item in them
 * with it (the server's cascade), which the deletion itself never reads. The journal reads them
 * first (the listing the deletion already made, and one listing per collection that has items,
 * 100 a page), so undo brings back the collections under their keys, parents first, and every
 * membership; request counts asserted both ways.
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
    .filter((e) => e.path !== '/keys/current' && e.path !== '/schema')
    .map((e) => `${e.method} ${e.path}`);
}

type Envelope = { meta: { request_id: string }; data: Record<string, unknown> };
async function run(args: string[]): Promise<Envelope & { code: number }> {
  const r = await zotAt(args[0] === 'history' ? args : [...args, '--yes'], { env: w.env() });
  return { ...(r.json() as Envelope), code: r.code };
}

describe('undo of a collection deletion', () => {
  it('2 subcollections and 120 members: read first in 2 listings, all back under their keys in 8 requests', async () => {
    const [top, outside] = lib().addCollections([{ name: 'Top' }, { name: 'Outside' }]) as [string, string];
    const [subA, subB] = lib().addCollections([
      { name: 'Sub A', parentCollection: top },
      { name: 'Sub B (empty)', parentCollection: top },
    ]) as [string, string];
    // 80 in Top (every fifth also outside), 40 in Sub A (one of them in the trash), none in Sub B.
    const inTop = lib().addItems(
      Array.from({ length: 80 }, (_, i) => ({
        title: `Top ${i}`,
        collections: i % 5 === 0 ? [top, outside] : [top],
      })),
    );
    const inSub = lib().addItems(
      Array.from({ length: 40 }, (_, i) => ({
        title: `Sub ${i}`,
        collections: [subA],
        ...(i === 0 ? { deleted: true } : {}),
      })),
    );
    const [untouched] = lib().addItems([{ title: 'Elsewhere', collections: [outside] }]) as [string];
    const before = snapshot();

    let mark = w.server.log.length;
    const deleted = await run(['collection', 'delete', top]);
    expect(deleted.code).toBe(0);
    expect(deleted.data).toMatchObject({ deleted: top, subcollectionsDeleted: 2 });
    // The deletion's read and listing, then the journal's: one listing per collection with items
    // (⌈123/50⌉ = 3 at most; Sub B holds none and is not listed), then the DELETE.
    expect(since(mark)).toEqual([
      `GET /${LIB}/collections`,
      `GET /${LIB}/collections`,
      `GET /${LIB}/collections/${top}/items`,
      `GET /${LIB}/collections/${subA}/items`,
      `DELETE /${LIB}/collections`,
    ]);
    for (const key of [top, subA, subB]) expect(lib().collections.has(key)).toBe(false);
    expect(lib().items.get(inTop[0] as string)?.collections).toEqual([outside]);
    expect(lib().items.get(inSub[0] as string)?.collections).toEqual([]);
    const after = snapshot();

    const h = await run(['history', '--limit', '1']);
    expect((h.data.requests as unknown[])[0]).toMatchObject({
      requestId: deleted.meta.request_id,
      objects: { changed: 120, deleted: 3, other: 0 },
      undoable: true,
    });

    mark = w.server.log.length;
    const undone = await run(['undo', deleted.meta.request_id]);
    expect(undone.code, JSON.stringify(undone.data)).toBe(0);
    expect(undone.data).toMatchObject({ created: [top, subA, subB], conflicts: [], failed: [] });
    expect((undone.data.updated as string[]).sort()).toEqual([...inTop, ...inSub].sort());
    // Which collections are back (1), the three created in one batch, parent first (1); the
    // members read and written back 50 at a time (3 + 3).
    expect(since(mark)).toEqual([
      `GET /${LIB}/collections`,
      `POST /${LIB}/collections`,
      ...Array(3).fill(`GET /${LIB}/items`),
      ...Array(3).fill(`POST /${LIB}/items`),
    ]);
    expect(snapshot()).toEqual(before);
    expect(lib().items.get(untouched)?.collections).toEqual([outside]);

    // The undo is journaled too: undoing it deletes the three again, the memberships with them.
    const redone = await run(['undo', undone.meta.request_id]);
    expect(redone.code, JSON.stringify(redone.data)).toBe(0);
    expect(snapshot()).toEqual(after);
  });

  it('a member edited since the deletion is a conflict naming the field; the rest comes back', async () => {
    const [top] = lib().addCollections([{ name: 'Top' }]) as [string];
    const [a, b] = lib().addItems([
      { title: 'A', collections: [top] },
      { title: 'B', collections: [top] },
    ]) as [string, string];
    const deleted = await run(['collection', 'delete', top]);
    expect(deleted.code).toBe(0);
    lib().editItem(b, { title: 'B, retitled by a colleague' });
    const edited = JSON.stringify(lib().items.get(b));
    const undone = await run(['undo', deleted.meta.request_id]);
    expect(undone.code).toBe(7);
    expect(undone.data).toMatchObject({
      created: [top],
      updated: [a],
      conflicts: [{ key: b, kind: 'items', fields: ['title'] }],
    });
    expect(lib().items.get(a)?.collections).toEqual([top]);
    expect(JSON.stringify(lib().items.get(b))).toBe(edited);
  });
});
