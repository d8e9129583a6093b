/**
 * `zot duplicates` / `zotero_find_duplicates` on a crafted library of the Zotero test server:
 * true duplicates by DOI (field and Extra), arXiv id (archive id and URL), ISBN (10 and 13),
 * and by title, first creator and year (one exact, one fuzzy); near misses that must not
 * match (another year, another first author, Part I / Part II, a book and a review of it, a
 * book and its chapter sharing the ISBN, two DOIs); children and trashed items left out;
 * paging; and the same groups read from the desktop's zotero.sqlite without a key.
 */
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDuplicateGroups, titleNumbers } from '../../../src/core/duplicates/detect.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
let k: Record<string, string>;

const smith = [{ creatorType: 'author', firstName: 'Ann', lastName: 'Smith' }];
const jones = [{ creatorType: 'author', firstName: 'Bo', lastName: 'Jones' }];
const carson = [{ creatorType: 'author', firstName: 'Rachel', lastName: 'Carson' }];

beforeEach(async () => {
  w = await startItemsWorld();
  const lib = w.world.server.library(LIB);
  const seeds: Array<[string, Record<string, unknown>]> = [
    [
      'doi1',
      { title: 'Sea ice decline', DOI: '10.5555/ICE.1', date: '2020', dateAdded: '2021-01-01T00:00:00Z' },
    ],
    [
      'doi2',
      {
        title: 'Sea-ice decline in the Arctic',
        extra: 'DOI: 10.5555/ice.1',
        dateAdded: '2022-01-01T00:00:00Z',
      },
    ],
    [
      'arx1',
      {
        itemType: 'preprint',
        title: 'Glacier mapping',
        archiveID: 'arXiv:2101.00001',
        dateAdded: '2021-02-01T00:00:00Z',
      },
    ],
    [
      'arx2',
      {
        itemType: 'preprint',
        title: 'Mapping glaciers with deep nets',
        url: 'https://arxiv.org/abs/2101.00001v2',
        dateAdded: '2021-03-01T00:00:00Z',
      },
    ],
    [
      'isbn1',
      { itemType: 'book', title: 'Oceans', ISBN: '0-306-40615-2', dateAdded: '2021-04-01T00:00:00Z' },
    ],
    [
      'isbn2',
      {
        itemType: 'book',
        title: 'Oceans (2nd printing)',
        ISBN: '978-0-306-40615-7',
        dateAdded: '2021-05-01T00:00:00Z',
      },
    ],
    [
      'chapter',
      {
        itemType: 'bookSection',
        title: 'A chapter of Oceans',
        ISBN: '9780306406157',
        dateAdded: '2021-05-02T00:00:00Z',
      },
    ],
    [
      't1',
      {
        title: 'The Ecology of Coastal Wetlands',
        creators: smith,
        date: '2019-03-01',
        dateAdded: '2020-06-01T00:00:00Z',
        volume: '3',
      },
    ],
    [
      't2',
      {
        title: 'The ecology of coastal wetlands.',
        creators: smith,
        date: 'March 2019',
        dateAdded: '2020-01-01T00:00:00Z',
      },
    ],
    [
      't3',
      {
        title: 'Ecology of coastal wetlands',
        creators: smith,
        date: '2019',
        dateAdded: '2020-09-01T00:00:00Z',
      },
    ],
    [
      'year1',
      { title: 'Peatland carbon stocks', creators: smith, date: '2018', dateAdded: '2021-06-01T00:00:00Z' },
    ],
    [
      'year2',
      { title: 'Peatland carbon stocks', creators: smith, date: '2020', dateAdded: '2021-06-02T00:00:00Z' },
    ],
    ['author1', { title: 'Kelp forests', creators: smith, date: '2017', dateAdded: '2021-07-01T00:00:00Z' }],
    ['author2', { title: 'Kelp forests', creators: jones, date: '2017', dateAdded: '2021-07-02T00:00:00Z' }],
    [
      'part1',
      { title: 'Climate models, Part I', creators: smith, date: '2016', dateAdded: '2021-08-01T00:00:00Z' },
    ],
    [
      'part2',
      { title: 'Climate models, Part II', creators: smith, date: '2016', dateAdded: '2021-08-02T00:00:00Z' },
    ],
    [
      'book',
      {
        itemType: 'book',
        title: 'Silent Spring',
        creators: carson,
        date: '1962',
        dateAdded: '2021-09-01T00:00:00Z',
      },
    ],
    ['review', { title: 'Silent Spring', creators: carson, date: '1962', dateAdded: '2021-09-02T00:00:00Z' }],
    [
      'twoDoi1',
      {
        title: 'River deltas',
        creators: jones,
        date: '2015',
        DOI: '10.5555/delta.1',
        dateAdded: '2021-10-01T00:00:00Z',
      },
    ],
    [
      'twoDoi2',
      {
        title: 'River deltas',
        creators: jones,
        date: '2015',
        DOI: '10.5555/delta.2',
        dateAdded: '2021-10-02T00:00:00Z',
      },
    ],
    [
      'trashed',
      {
        title: 'The Ecology of Coastal Wetlands',
        creators: smith,
        date: '2019',
        deleted: true,
        dateAdded: '2019-01-01T00:00:00Z',
      },
    ],
  ];
  const keys = lib.addItems(seeds.map(([, seed]) => seed as never));
  k = Object.fromEntries(seeds.map(([name], i) => [name, keys[i] as string]));
  lib.addItems([{ itemType: 'note', parentItem: k.t1, note: '<p>The Ecology of Coastal Wetlands</p>' }]);
});
afterEach(async () => {
  await w.close();
});

async function zot(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end('');
  const code = await runCli({
    argv,
    env: w.env(env),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink(() => undefined), stdin },
    tools,
    groups,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  return { code, env: JSON.parse(stdout) as { ok: boolean; data: any; error: any; next?: string[] } };
}

describe('zot duplicates', () => {
  it('groups the true duplicates, strongest first, and leaves every near miss alone', async () => {
    w.world.server.clearLog();
    const { code, env } = await zot(['duplicates']);
    expect(code).toBe(0);
    const d = env.data;
    expect(d.threshold).toBe(0.9);
    expect(d.checked).toBe(20);
    expect(d.totalResults).toBe(4);
    expect(
      d.groups.map(
        (g: { keys: string[]; match: string; confidence: number; master: string; reason: string }) => ({
          keys: g.keys,
          match: g.match,
          confidence: g.confidence,
          master: g.master,
          reason: g.reason,
        }),
      ),
    ).toEqual([
      {
        keys: [k.doi1, k.doi2],
        match: 'doi',
        confidence: 1,
        master: k.doi1,
        reason: 'same DOI 10.5555/ice.1',
      },
      {
        keys: [k.arx1, k.arx2],
        match: 'arxiv',
        confidence: 1,
        master: k.arx1,
        reason: 'same arXiv id 2101.00001',
      },
      {
        keys: [k.isbn1, k.isbn2],
        match: 'isbn',
        confidence: 1,
        master: k.isbn1,
        reason: 'same ISBN 9780306406157',
      },
      {
        // Oldest first: t2 was added before t1; the fuzzy title is the weakest link.
        keys: [k.t2, k.t1, k.t3],
        match: 'title',
        confidence: 0.939,
        master: k.t2,
        reason:
          'title similarity 1, same first creator Smith, same year 2019; title similarity 0.939, same first creator Smith, same year 2019',
      },
    ]);
    expect(d.groups[3].items[0]).toEqual({
      key: k.t2,
      title: 'The ecology of coastal wetlands.',
      itemType: 'journalArticle',
      firstCreator: 'Smith',
      year: '2019',
      dateAdded: '2020-01-01T00:00:00Z',
    });
    expect(d.provenance).toMatch(/never as instructions/);
    expect(d.backend).toBe('web');
    expect(env.next).toEqual([`zot merge ${k.doi1} ${k.doi2}`]);
    // One page of top-level items, read once.
    expect(w.work()).toEqual([`GET /${LIB}/items/top`]);
  });

  it('pages the groups: start and limit, nextStart, totalResults', async () => {
    const first = await zot(['duplicates', '--limit', '3']);
    expect(first.env.data.groups.map((g: { master: string }) => g.master)).toEqual([k.doi1, k.arx1, k.isbn1]);
    expect(first.env.data).toMatchObject({ start: 0, totalResults: 4, nextStart: 3 });
    const rest = await zot(['duplicates', '--start', '3', '--limit', '3']);
    expect(rest.env.data.groups.map((g: { master: string }) => g.master)).toEqual([k.t2]);
    expect(rest.env.data.nextStart).toBeUndefined();
  });

  it('--collection compares only that collection’s items', async () => {
    const lib = w.world.server.library(LIB);
    const [c] = lib.addCollections([{ name: 'Wetlands' }]) as [string];
    lib.editItem(k.t1 as string, { collections: [c] });
    lib.editItem(k.t3 as string, { collections: [c] });
    lib.editItem(k.doi1 as string, { collections: [c] });
    const { env } = await zot(['duplicates', '--collection', c]);
    expect(env.data.checked).toBe(3);
    expect(env.data.groups.map((g: { keys: string[] }) => g.keys)).toEqual([[k.t1, k.t3]]);
  });

  it('MCP: the same groups as structured content', async () => {
    const mcp = await mcpOf(w);
    try {
      const r = await mcp.call('zotero_find_duplicates', { limit: 1 });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        totalResults: 4,
        nextStart: 1,
        groups: [{ master: k.doi1 }],
      });
    } finally {
      await mcp.close();
    }
  });
});

describe('the detection itself', () => {
  const item = (key: string, data: Record<string, unknown>) => ({
    key,
    data: { itemType: 'journalArticle', key, ...data },
  });

  it('numbers in titles must agree: parts, volumes, roman numerals and number words', () => {
    expect(titleNumbers('climate models part ii')).toBe('ii');
    expect(titleNumbers('volume 02 of the survey')).toBe('2');
    expect(
      findDuplicateGroups([
        item('AAAA2345', { title: 'Survey of tides, volume 2', date: '2001' }),
        item('BBBB2345', { title: 'Survey of tides, volume 3', date: '2001' }),
        item('CCCC2345', { title: 'Survey of tides: part one', date: '2001' }),
        item('DDDD2345', { title: 'Survey of tides: part two', date: '2001' }),
      ]),
    ).toEqual([]);
  });

  it('a title just below the threshold does not match; an empty title never does', () => {
    expect(
      findDuplicateGroups([
        item('AAAA2345', { title: 'Ocean acidification' }),
        item('BBBB2345', { title: 'Ocean acidity' }),
        item('CCCC2345', { title: '' }),
        item('DDDD2345', { title: '' }),
      ]),
    ).toEqual([]);
  });
});
