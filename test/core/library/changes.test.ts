/**
 * What changed since a library version (core/library/changes.ts), against the test server's
 * sync endpoints: modified items, collections and searches with what names them, deletions of
 * each kind (tags too), the trash, paging with the details of one page only, and a library
 * version to pass as `since` next time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changesSince } from '../../../src/core/library/changes.js';
import { ALICE, startWorld, type World } from './world.js';

const USER = `users/${ALICE}`;
let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(() => world.close());

const since = (v: number, start = 0, limit = 50) => changesSince(world.deps(), { since: v, start, limit });

describe('changesSince', () => {
  it('lists modified objects oldest first with their names, then deletions, and the version to go on from', async () => {
    const lib = world.server.library(USER);
    const [old] = lib.addItems([{ title: 'Before the mark' }]) as [string];
    const mark = lib.version;
    const [coll] = lib.addCollections([{ name: 'Reading' }]) as [string];
    const [a, b, gone] = lib.addItems([
      { title: 'Alpha', itemType: 'journalArticle' },
      { title: 'Beta', itemType: 'book' },
      { title: 'Gamma' },
    ]) as [string, string, string];
    lib.addSearches([{ name: 'Recent' }]);
    lib.editItem(a, { deleted: 1 });
    lib.deleteItem(gone);

    const answer = await since(mark);
    expect(answer.library).toBe(USER);
    expect(answer.since).toBe(mark);
    expect(answer.libraryVersion).toBe(lib.version);
    expect(answer.counts).toEqual({
      items: { modified: 2, deleted: 1 },
      collections: { modified: 1, deleted: 0 },
      searches: { modified: 1, deleted: 0 },
      tags: { deleted: 0 },
    });
    const versions = answer.changes.filter((c) => c.change === 'modified').map((c) => c.version!);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    expect(answer.changes).toEqual([
      { kind: 'collection', change: 'modified', key: coll, version: expect.any(Number), name: 'Reading' },
      {
        kind: 'item',
        change: 'modified',
        key: b,
        version: expect.any(Number),
        itemType: 'book',
        title: 'Beta',
      },
      {
        kind: 'search',
        change: 'modified',
        key: expect.any(String),
        version: expect.any(Number),
        name: 'Recent',
      },
      {
        kind: 'item',
        change: 'modified',
        key: a,
        version: lib.items.get(a)!.version,
        itemType: 'journalArticle',
        title: 'Alpha',
        trashed: true,
      },
      { kind: 'item', change: 'deleted', key: gone },
    ]);
    expect(answer.changes.some((c) => c.key === old)).toBe(false);
    expect(answer.totalResults).toBe(5);

    // From the version it gave: nothing more.
    const next = await since(answer.libraryVersion);
    expect(next.changes).toEqual([]);
    expect(next.totalResults).toBe(0);
  });

  it('pages: each page reads the change lists and the details of its own entries only', async () => {
    const lib = world.server.library(USER);
    const keys = lib.addItems(Array.from({ length: 120 }, (_, i) => ({ title: `Item ${i}` })));
    world.server.clearLog();
    const first = await since(0, 0, 50);
    expect(first.changes).toHaveLength(50);
    expect(first.totalResults).toBe(120);
    const detailReads = world.server.log.filter(
      (e) => e.path === `/${USER}/items` && e.query.itemKey !== undefined,
    );
    expect(detailReads).toHaveLength(1);
    const pages = [first, await since(0, 50, 50), await since(0, 100, 50)];
    const seen = pages.flatMap((p) => p.changes.map((c) => c.key));
    expect(new Set(seen)).toEqual(new Set(keys));
    expect(pages[2]!.changes).toHaveLength(20);
    expect(pages.every((p) => p.changes.every((c) => c.title?.startsWith('Item ')))).toBe(true);
  });

  it('deleted collections, searches and tags are listed by key and name', async () => {
    const lib = world.server.library(USER);
    const [coll] = lib.addCollections([{ name: 'Doomed' }]) as [string];
    const mark = lib.version;
    lib.deleteCollection(coll);
    lib.deletedLog.push({ kind: 'tags', key: 'obsolete', version: lib.version + 1 });
    lib.version += 1;
    const answer = await since(mark);
    expect(answer.changes).toEqual([
      { kind: 'collection', change: 'deleted', key: coll },
      { kind: 'tag', change: 'deleted', tag: 'obsolete' },
    ]);
    expect(answer.counts.tags.deleted).toBe(1);
  });

  it('refuses a since that is no version, before any request', async () => {
    world.server.clearLog();
    await expect(since(-1)).rejects.toMatchObject({ code: 'validation_error', field: 'since' });
    expect(world.server.log).toEqual([]);
  });
});
