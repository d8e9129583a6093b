/**
 * The read tools in process on the Web API test server (a key, no desktop app): the same
 * declarations and outputs as on zotero.sqlite, answered by `backend: "web"`, with the
 * requests they cost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps, ProgressEvent } from '../../../../src/core/tool.js';
import type { AnyTool } from '../../../../src/core/tool.js';
import getItem from '../../../../src/tools/items/get-item.js';
import listTags from '../../../../src/tools/tags/list-tags.js';
import searchItems from '../../../../src/tools/items/search-items.js';
import stats from '../../../../src/tools/library/stats.js';
import summarize from '../../../../src/tools/items/summarize.js';
import { startWorld, type World } from '../../../core/library/world.js';
import { depsFor } from './setup.js';

const USER = 'users/1';
let world: World;
let deps: Deps;
let coll: string;
let church: string;
let book: string;
let thesis: string;
let trashed: string;
let note: string;
let pdf: string;

const env = (extra: Record<string, string | undefined> = {}) =>
  world.env({ ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9', ...extra });

beforeAll(async () => {
  world = await startWorld();
  const lib = world.server.library(USER);
  [coll] = lib.addCollections([{ name: 'Sea Level' }]) as [string];
  [church, book, thesis, trashed] = lib.addItems([
    {
      title: 'Sea-level rise from the late 19th to the early 21st century',
      creators: [
        { creatorType: 'author', firstName: 'John A.', lastName: 'Church' },
        { creatorType: 'author', firstName: 'Neil J.', lastName: 'White' },
      ],
      publicationTitle: 'Surveys in Geophysics',
      volume: '32',
      pages: '585-602',
      date: '2011',
      DOI: '10.1007/s10712-011-9119-1',
      abstractNote: 'Tide gauges and altimetry.',
      tags: [{ tag: 'sea level' }, { tag: 'Oceanography', type: 1 }],
      collections: [coll],
    },
    {
      itemType: 'book',
      title: 'Deep Learning',
      creators: [{ creatorType: 'author', firstName: 'Ian', lastName: 'Goodfellow' }],
      publisher: 'MIT Press',
      date: '2016',
      tags: [{ tag: 'deep learning' }],
    },
    {
      itemType: 'thesis',
      title: 'Meeresspiegelanstieg an der Nordseeküste',
      creators: [{ creatorType: 'author', firstName: 'Anna-Lena', lastName: 'Müller' }],
      date: '2019',
      tags: [{ tag: 'sea level' }],
      collections: [coll],
    },
    { title: 'A retracted study', tags: [{ tag: 'trashed-only' }], deleted: true },
  ]) as [string, string, string, string];
  [note, pdf] = lib.addItems([
    { itemType: 'note', parentItem: church, note: '<h1>Reading notes</h1><p>Compare with altimetry.</p>' },
    {
      itemType: 'attachment',
      parentItem: church,
      title: 'Full Text PDF',
      linkMode: 'imported_file',
      contentType: 'application/pdf',
      filename: 'church.pdf',
    },
  ]) as [string, string];
  deps = depsFor(env());
});

afterAll(async () => {
  await deps?.services.close();
  await world.close();
});

/** Runs a declaration as a surface does (input parsed, output checked); the output typed loosely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(declaration: object, input: Record<string, unknown>, d: Deps = deps): Promise<any> {
  const tool = declaration as AnyTool;
  const output = await tool.run(tool.input.parse(input), d);
  return tool.output.parse(output);
}

const keys = (r: { items: Array<{ key: string }> }) => r.items.map((i) => i.key).sort();

describe('zotero_search_items on the Web API', () => {
  it('answers with backend "web" and the library it read, items in the Web API shape', async () => {
    const r = await run(searchItems, { q: 'sea' });
    expect(r).toMatchObject({ backend: 'web', library: USER, start: 0, totalResults: 1 });
    expect(r.items[0]).toMatchObject({
      key: church,
      data: { itemType: 'journalArticle', collections: [coll] },
    });
    expect(r.provenance).toBeTruthy();
  });

  it('filters by type, tag, collection; trash only when asked; children only with include_children', async () => {
    expect(keys(await run(searchItems, { item_type: 'book' }))).toEqual([book]);
    expect(keys(await run(searchItems, { tag: 'sea level' }))).toEqual([church, thesis].sort());
    expect(keys(await run(searchItems, { collection_key: coll }))).toEqual([church, thesis].sort());
    const top = await run(searchItems, {});
    expect(keys(top)).toEqual([church, book, thesis].sort());
    const withTrash = await run(searchItems, { include_trashed: true });
    expect(keys(withTrash)).toContain(trashed);
    const children = await run(searchItems, { include_children: true });
    expect(keys(children)).toEqual([church, book, thesis, note, pdf].sort());
  });

  it('works, not their parts: a query matching a child attachment lists its parent, from items/top', async () => {
    world.server.clearLog();
    expect(keys(await run(searchItems, { q: 'Full Text PDF' }))).toEqual([church]);
    expect(world.server.log.map((e) => e.path)).toContain(`/${USER}/items/top`);
    expect(world.server.log.map((e) => e.path)).not.toContain(`/${USER}/items`);
    world.server.clearLog();
    expect(keys(await run(searchItems, { q: 'Full Text PDF', include_children: true }))).toEqual([pdf]);
    expect(world.server.log.map((e) => e.path)).toContain(`/${USER}/items`);
  });

  it('pages: limit and start map to the Web API, totalResults from Total-Results', async () => {
    world.server.clearLog();
    const r = await run(searchItems, { limit: 2, start: 1, sort: 'title' });
    expect(r.items).toHaveLength(2);
    expect(r).toMatchObject({ totalResults: 3, start: 1 });
    const gets = world.server.log.filter((e) => e.path === `/${USER}/items/top`);
    expect(gets).toHaveLength(1);
  });

  it('added_within_days by the deps clock: everything was added just now', async () => {
    const later = { ...deps, clock: { now: () => Date.now() + 10 * 86_400_000, sleep: async () => {} } };
    expect((await run(searchItems, { added_within_days: 5 }, later)).totalResults).toBe(0);
    expect((await run(searchItems, { added_within_days: 20 }, later)).totalResults).toBe(3);
  });
});

describe('zotero_get_item on the Web API', () => {
  it('item, children (note text, attachment facts), collection names, full text', async () => {
    const r = await run(getItem, { item_key: church });
    expect(r).toMatchObject({
      backend: 'web',
      library: USER,
      item: { key: church, data: { title: expect.stringMatching(/^Sea-level rise/) } },
      collections: [{ key: coll, name: 'Sea Level' }],
      fulltext: true,
      inTrash: false,
    });
    expect(r.children).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          key: note,
          itemType: 'note',
          title: 'Reading notes',
          text: 'Reading notes\nCompare with altimetry.',
        }),
        expect.objectContaining({
          key: pdf,
          contentType: 'application/pdf',
          filename: 'church.pdf',
          fulltext: true,
        }),
      ]),
    );
  });

  it('a trashed item is returned with inTrash; unknown keys are not_found', async () => {
    expect(await run(getItem, { item_key: trashed })).toMatchObject({ inTrash: true });
    await expect(run(getItem, { item_key: 'ABCD2345' })).rejects.toMatchObject({
      code: 'not_found',
      message: `No item "ABCD2345" in ${USER}.`,
    });
  });
});

describe('zotero_list_tags, zotero_stats, zotero_summarize on the Web API', () => {
  it('tags with counts', async () => {
    const r = await run(listTags, {});
    expect(r.backend).toBe('web');
    expect(r.tags).toEqual(
      expect.arrayContaining([
        { tag: 'sea level', type: 0, numItems: 2 },
        { tag: 'Oceanography', type: 1, numItems: 1 },
      ]),
    );
    const names = r.tags.map((t: { tag: string }) => t.tag);
    expect(names.slice(0, 3)).toEqual(['deep learning', 'Oceanography', 'sea level']);
  });

  it('stats', async () => {
    const s = await run(stats, {});
    expect(s).toMatchObject({
      backend: 'web',
      library: USER,
      libraryVersion: world.server.library(USER).version,
      items: { total: 5, topLevel: 3, regular: 3, notes: 1, attachments: 1, annotations: 0 },
      trash: 1,
      collections: 1,
    });
    expect(s.items.byType).toEqual({ attachment: 1, book: 1, journalArticle: 1, note: 1, thesis: 1 });
  });

  it('summarize by key and the whole library with progress', async () => {
    const one = await run(summarize, { item_keys: [church] });
    expect(one.digests[0]).toMatchObject({
      citation:
        'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32, 585-602. https://doi.org/10.1007/s10712-011-9119-1',
      notes: [{ key: note, title: 'Reading notes' }],
      attachments: [{ key: pdf, fulltext: true }],
      collections: [{ key: coll, name: 'Sea Level' }],
      fulltext: true,
    });
    const events: ProgressEvent[] = [];
    const all = await run(summarize, { all: true }, { ...deps, progress: (e) => void events.push(e) });
    expect(all.digests.map((d: { key: string }) => d.key).sort()).toEqual([church, book, thesis].sort());
    expect(events.map((e) => e.event)).toEqual(['start', 'progress', 'complete']);
  });
});
