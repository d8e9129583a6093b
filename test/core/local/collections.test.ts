/**
 * Collection listings of the zotero.sqlite reader on a library of more than a handful of
 * collections: member counts leave trashed items out whichever way they are counted (from
 * the memberships of a few collections, or from the trash for many), a trashed ancestor
 * trashes its whole subtree, and a listing of named keys (what `zot read` asks for an
 * item's collections) answers each collection exactly as the full listing does.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openZoteroSqlite,
  type WebApiCollection,
  type ZoteroSqliteReader,
} from '../../../src/core/local/index.js';
import { buildZoteroDb, type ItemSpec } from '../../support/zotero-sqlite/index.js';
import { tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let reader: ZoteroSqliteReader;
let userLib: number;
let groupLib: number;

/** P01…P24: more collections than the reader tests against their memberships one by one. */
const projectKeys = Array.from({ length: 24 }, (_, i) => `PRJ${String(i + 1).padStart(2, '0')}AAA`);

beforeAll(async () => {
  tmp = tempDir();
  const path = join(tmp.dir, 'zotero.sqlite');
  // Item i is in P(i mod 24 + 1); items 0-5 are in the trash. Two more sit in the trashed
  // subtree (one of them trashed), and one in the group under a colliding name.
  const items: ItemSpec[] = Array.from({ length: 30 }, (_, i) => ({
    key: `ITEM${String(i).padStart(2, '0')}AA`,
    itemType: 'book',
    fields: { title: `Book ${i}` },
    collections: [projectKeys[i % 24]!],
    ...(i < 6 ? { deleted: true } : {}),
  }));
  items.push(
    { key: 'DEEPONEA', itemType: 'book', fields: { title: 'Deep one' }, collections: ['DEEPCOLA'] },
    {
      key: 'DEEPTWOA',
      itemType: 'book',
      fields: { title: 'Deep two' },
      collections: ['DEEPCOLA', 'INNERCOA'],
      deleted: true,
    },
  );
  await buildZoteroDb(path, {
    libraries: [
      {
        type: 'user',
        collections: [
          {
            key: 'ARCHIVEA',
            name: 'Archive',
            deleted: true,
            collections: [
              { key: 'INNERCOA', name: 'Inner', collections: [{ key: 'DEEPCOLA', name: 'Deep' }] },
            ],
          },
          {
            key: 'PROJECTA',
            name: 'Projects',
            collections: projectKeys.map((key, i) => ({ key, name: `P${String(i + 1).padStart(2, '0')}` })),
          },
        ],
        items,
      },
      {
        type: 'group',
        groupID: 77,
        name: 'Lab',
        collections: [{ key: 'GROUPCOA', name: 'Projects' }],
        items: [
          { key: 'GROUPITA', itemType: 'book', fields: { title: 'Group book' }, collections: ['GROUPCOA'] },
        ],
      },
    ],
  });
  reader = await openZoteroSqlite(path);
  userLib = await reader.libraryIdFor({ type: 'user' });
  groupLib = await reader.libraryIdFor({ type: 'group', groupID: 77 });
});
afterAll(() => {
  reader?.close();
  tmp?.cleanup();
});

const counts = (cols: WebApiCollection[]) =>
  Object.fromEntries(
    cols.map((c) => [c.data.name, [c.meta.numItems, c.meta.numCollections, c.data.deleted ?? false]]),
  );

describe('collection listings', () => {
  it('count members without the trashed ones, and trash a trashed collection’s subtree', async () => {
    const all = await reader.collections(userLib, { includeTrashed: true });
    expect(all).toHaveLength(28);
    const c = counts(all);
    // P01-P06 hold one trashed and one live item each (items 0-5 and 24-29), P07-P24 one live item.
    expect(c.P01).toEqual([1, 0, false]);
    expect(c.P06).toEqual([1, 0, false]);
    expect(c.P07).toEqual([1, 0, false]);
    expect(c.P24).toEqual([1, 0, false]);
    expect(c.Projects).toEqual([0, 24, false]);
    // The trashed Archive trashes Inner and Deep; Deep keeps its one live member.
    expect(c.Archive).toEqual([0, 0, true]);
    expect(c.Inner).toEqual([0, 0, true]);
    expect(c.Deep).toEqual([1, 0, true]);
    const live = await reader.collections(userLib);
    expect(live.map((x) => x.data.name)).toEqual([
      'P01',
      ...projectKeys.slice(1).map((_, i) => `P${String(i + 2).padStart(2, '0')}`),
      'Projects',
    ]);
  });

  it('without counts leave numItems out and nothing else; a page is counted by key alike', async () => {
    const all = await reader.collections(userLib, { includeTrashed: true });
    const uncounted = await reader.collections(userLib, { includeTrashed: true, counts: false });
    expect(uncounted.every((c) => !('numItems' in c.meta))).toBe(true);
    expect(uncounted).toEqual(all.map(({ meta: { numItems: _n, ...meta }, ...c }) => ({ ...c, meta })));
    // Every collection counted by key as the full listing counts it (trashed members left out),
    // keys of no collection of this library left out.
    const counts = await reader.collectionItemCounts(userLib, [
      ...all.map((c) => c.key),
      'GROUPCOA',
      'NOSUCHKY',
    ]);
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(all.map((c) => [c.key, c.meta.numItems])));
    expect(Object.fromEntries(await reader.collectionItemCounts(groupLib, ['GROUPCOA']))).toEqual({
      GROUPCOA: 1,
    });
  });

  it('answer named keys exactly as the full listing does, and only in the library asked', async () => {
    const all = await reader.collections(userLib, { includeTrashed: true });
    for (const col of all) {
      expect(await reader.collections(userLib, { keys: [col.key], includeTrashed: true })).toEqual([col]);
    }
    expect(await reader.collections(userLib, { keys: ['INNERCOA', 'PRJ01AAA'] })).toEqual(
      all.filter((c) => c.key === 'PRJ01AAA'),
    );
    expect(
      await reader.collections(userLib, { keys: ['PROJECTA', 'DEEPCOLA'], includeTrashed: true }),
    ).toEqual(all.filter((c) => c.key === 'DEEPCOLA' || c.key === 'PROJECTA'));
    expect(await reader.collections(userLib, { keys: ['GROUPCOA', 'NOSUCHKY'] })).toEqual([]);
    const group = await reader.collections(groupLib, { keys: ['GROUPCOA'] });
    expect(group.map((c) => [c.key, c.meta.numItems])).toEqual([['GROUPCOA', 1]]);
  });
});
