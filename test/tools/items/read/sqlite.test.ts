/**
 * The read tools in process on the sample `zotero.sqlite` (no API key: the router reads the
 * desktop's database): the declaration's handler with its input and output schemas, as the
 * surfaces run it.
 */
import type { StatsOutput } from '../../../../src/core/items/read/stats.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { AnyTool, Deps, ProgressEvent } from '../../../../src/core/tool.js';
import getItem from '../../../../src/tools/items/get-item.js';
import listTags from '../../../../src/tools/tags/list-tags.js';
import searchItems from '../../../../src/tools/items/search-items.js';
import stats from '../../../../src/tools/library/stats.js';
import summarize from '../../../../src/tools/items/summarize.js';
import { C, I, SAMPLE_USER, startSample, type Sample } from './setup.js';

let sample: Sample;
/** One deps for most calls, as one MCP server has: the database is opened once. */
let shared: Deps;
beforeAll(async () => {
  sample = await startSample();
  shared = sample.deps();
});
afterAll(async () => {
  await sample.close();
});

/** Runs a declaration as a surface does: input parsed, output checked against the schema. */
async function run<T extends AnyTool>(
  tool: T,
  input: Record<string, unknown>,
  deps: Deps = shared,
): Promise<z.infer<T['output']>> {
  const parsed = tool.input.parse(input);
  const output = await tool.run(parsed, deps);
  return tool.output.parse(output) as z.infer<T['output']>;
}

const search = (input: Record<string, unknown>, deps?: Deps) =>
  run(searchItems, input, deps) as Promise<{
    items: Array<{ key: string; data: Record<string, unknown> }>;
    totalResults: number;
    start: number;
    backend: string;
    library: string;
    provenance: string;
  }>;
const keys = (r: { items: Array<{ key: string }> }) => r.items.map((i) => i.key);
const titles = (r: { items: Array<{ data: Record<string, unknown> }> }) => r.items.map((i) => i.data.title);

describe('zotero_search_items on zotero.sqlite', () => {
  it('answers in the Web API shape, says which backend answered, carries provenance', async () => {
    const r = await search({ q: 'attention is all' });
    expect(r).toMatchObject({ totalResults: 1, start: 0, backend: 'sqlite', library: SAMPLE_USER });
    expect(r.provenance).toMatch(/never as instructions/);
    expect(r.items[0]).toMatchObject({
      key: I.attentionPaper,
      version: expect.any(Number),
      library: { type: 'user', id: 8675309 },
      meta: { creatorSummary: 'Vaswani et al.', parsedDate: expect.stringMatching(/^2017/) },
      data: { key: I.attentionPaper, itemType: 'conferencePaper', title: 'Attention Is All You Need' },
    });
  });

  it('every word must match, split on spaces and punctuation, case- and accent-insensitively', async () => {
    const sea = await search({ q: 'sea level', limit: 100 });
    expect(titles(sea)).toContain('Sea-level rise from the late 19th to the early 21st century');
    expect(titles(sea)).toContain('Sea Level Change');
    // Punctuation in the query separates words too.
    expect(keys(await search({ q: 'SEA-LEVEL', limit: 100 }))).toEqual(keys(sea));
    expect(keys(await search({ q: 'sea level 2011' }))).toEqual([I.seaLevelArticle]);
    expect(keys(await search({ q: 'sea level 1066' }))).toEqual([]);
    const muller = await search({ q: 'muller' });
    expect(keys(muller)).toContain(I.muellerThesis);
    expect(muller.items.every((i) => JSON.stringify(i.data.creators).includes('Müller'))).toBe(true);
    expect(keys(await search({ q: 'godel escher' }))).toHaveLength(1);
  });

  it('qmode everything also matches other fields, tags, notes and full text', async () => {
    // "altimetry" is in CHURCH22's abstract, note and full text, not in any title.
    expect(keys(await search({ q: 'altimetry' }))).toEqual([]);
    expect(keys(await search({ q: 'altimetry', qmode: 'everything' }))).toContain(I.seaLevelArticle);
    // A word only the full text has ("Thermosteric").
    expect(keys(await search({ q: 'thermosteric', qmode: 'everything' }))).toEqual([I.seaLevelArticle]);
  });

  it('filters: item_type, tag, collection_key, include_trashed, include_children', async () => {
    const books = await search({ item_type: 'book', limit: 100 });
    expect(books.items.every((i) => i.data.itemType === 'book')).toBe(true);
    expect(books.totalResults).toBeGreaterThan(1);
    const notBooks = await search({ item_type: '-book', limit: 100 });
    expect(notBooks.items.some((i) => i.data.itemType === 'book')).toBe(false);
    const either = await search({ item_type: 'book || thesis', limit: 100 });
    expect(either.totalResults).toBe(
      books.totalResults + (await search({ item_type: 'thesis' })).totalResults,
    );

    const tagged = await search({ tag: 'sea level', limit: 100 });
    expect(
      tagged.items.every((i) => (i.data.tags as Array<{ tag: string }>).some((t) => t.tag === 'sea level')),
    ).toBe(true);
    const both = await search({ tag: ['sea level', 'IPCC'], limit: 100 });
    expect(both.totalResults).toBeGreaterThan(0);
    expect(both.totalResults).toBeLessThan(tagged.totalResults);

    const inColl = await search({ collection_key: C.seaLevel, limit: 100 });
    expect(inColl.items.every((i) => (i.data.collections as string[]).includes(C.seaLevel))).toBe(true);
    expect(keys(inColl)).toContain(I.seaLevelArticle);

    expect(keys(await search({ q: 'retracted' }))).toEqual([]);
    const trashed = await search({ q: 'retracted', include_trashed: true });
    expect(keys(trashed)).toEqual([I.trashedArticle]);
    expect(trashed.items[0]!.data.deleted).toBe(1);

    // Top-level items by default; with include_children (the Web API's /items) children are items of their own.
    const top = await search({ limit: 100 });
    expect(top.items.every((i) => i.data.parentItem === undefined)).toBe(true);
    const all = await search({ include_children: true, limit: 100 });
    expect(all.totalResults).toBeGreaterThan(top.totalResults);
    expect(all.items.some((i) => i.data.itemType === 'note' && i.data.parentItem !== undefined)).toBe(true);
    // A word of a child note: its parent matches, or (include_children) the note itself does.
    expect(
      (await search({ q: 'multi head', qmode: 'everything', include_children: true })).items.map(
        (i) => i.data.itemType,
      ),
    ).toContain('note');
    expect(keys(await search({ q: 'multi head', qmode: 'everything' }))).toEqual([I.attentionPaper]);
  });

  it('sorts and pages; totalResults counts every match', async () => {
    const first = await search({ sort: 'title', direction: 'asc', limit: 3 });
    const second = await search({ sort: 'title', direction: 'asc', limit: 3, start: 3 });
    const whole = await search({ sort: 'title', direction: 'asc', limit: 6 });
    expect([...keys(first), ...keys(second)]).toEqual(keys(whole));
    expect(second.start).toBe(3);
    expect(first.totalResults).toBe(whole.totalResults);
    // Default: most recently modified first.
    const modified = (await search({ limit: 100 })).items.map((i) => i.data.dateModified as string);
    expect(modified).toEqual([...modified].sort().reverse());
  });

  it('added_within_days: items added in the last N days, newest first (or oldest first)', async () => {
    const all = (await search({ sort: 'dateAdded', direction: 'desc', limit: 100 })).items;
    const newest = Date.parse(all[0]!.data.dateAdded as string);
    const clock = { now: () => newest + 86_400_000 * 30, sleep: async () => {} };
    const deps = { ...shared, clock };
    const expected = all.filter(
      (i) => Date.parse(i.data.dateAdded as string) >= clock.now() - 86_400_000 * 200,
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(all.length);
    const recent = await search({ added_within_days: 200 }, deps);
    expect(keys(recent)).toEqual(keys({ items: expected }).slice(0, 25));
    expect(recent.totalResults).toBe(expected.length);
    const oldestFirst = await search({ added_within_days: 200, direction: 'asc', limit: 2 }, deps);
    expect(keys(oldestFirst)).toEqual(keys({ items: [...expected].reverse() }).slice(0, 2));
    expect((await search({ added_within_days: 1 }, deps)).totalResults).toBe(0);
    await expect(search({ added_within_days: 3, sort: 'title' }, deps)).rejects.toMatchObject({
      code: 'validation_error',
      field: 'sort',
    });
  });

  it('a collection key the library does not have is not_found', async () => {
    await expect(search({ collection_key: 'ZZZZ2345' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('zotero_get_item on zotero.sqlite', () => {
  const get = (input: Record<string, unknown>) =>
    run(getItem, input) as Promise<{
      item: { key: string; data: Record<string, unknown> };
      children: Array<Record<string, unknown>>;
      collections: Array<{ key: string; name: string }>;
      fulltext: boolean;
      inTrash: boolean;
      backend: string;
      library: string;
      provenance: string;
    }>;

  it('the item, its notes as text, attachments with their file facts, collections by name', async () => {
    const r = await get({ item_key: I.seaLevelArticle });
    expect(r.item).toMatchObject({
      key: I.seaLevelArticle,
      data: { itemType: 'journalArticle', DOI: '10.1007/s10712-011-9119-1', collections: [C.seaLevel] },
    });
    expect(r.item.data.abstractNote).toMatch(/^We estimate global mean sea-level rise/);
    expect(r.collections).toEqual([{ key: C.seaLevel, name: 'Sea Level' }]);
    const note = r.children.find((c) => c.itemType === 'note');
    expect(note).toMatchObject({ title: 'Reading notes', tags: ['to-cite'] });
    expect(note!.text).toMatch(
      /^Reading notes\nAcceleration of about 0\.009 mm\/yr² since 1880; compare with altimetry/,
    );
    const pdf = r.children.find((c) => c.contentType === 'application/pdf');
    expect(pdf).toMatchObject({
      itemType: 'attachment',
      filename: 'Church and White - 2011 - Sea-level rise.pdf',
      fulltext: true,
    });
    expect(r).toMatchObject({ fulltext: true, inTrash: false, backend: 'sqlite', library: SAMPLE_USER });
    expect(r.provenance).toBeTruthy();
  });

  it('an item in the trash is returned and says so', async () => {
    const r = await get({ item_key: I.trashedArticle });
    expect(r).toMatchObject({ inTrash: true, item: { data: { deleted: 1 } } });
  });

  it('an attachment lists its annotations', async () => {
    const parent = await get({ item_key: I.seaLevelArticle });
    const pdf = parent.children.find((c) => c.contentType === 'application/pdf')!;
    const r = await get({ item_key: pdf.key });
    expect(r.children.map((c) => c.itemType)).toEqual(['annotation', 'annotation']);
    expect(r.children[0]).toMatchObject({ annotationType: 'highlight', pageLabel: '587' });
    expect(r.children[0]!.text).toMatch(/3\.2 mm per year/);
  });

  it('an unknown key is not_found', async () => {
    await expect(get({ item_key: 'ABCD2345' })).rejects.toMatchObject({
      code: 'not_found',
      field: 'item_key',
      message: `No item "ABCD2345" in ${SAMPLE_USER}.`,
    });
  });
});

describe('zotero_list_tags on zotero.sqlite', () => {
  const tags = (input: Record<string, unknown>) =>
    run(listTags, input) as Promise<{
      tags: Array<{ tag: string; type: number; numItems: number }>;
      totalResults: number;
      start: number;
      backend: string;
    }>;

  it('every tag with its item count, sorted by name; q, type, sort and paging', async () => {
    const all = await tags({ limit: 1000 });
    expect(all.backend).toBe('sqlite');
    expect(all.totalResults).toBe(all.tags.length);
    const names = all.tags.map((t) => t.tag.toLowerCase());
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')));
    const sea = all.tags.find((t) => t.tag === 'sea level')!;
    expect(sea.numItems).toBeGreaterThan(5);
    expect(all.tags.some((t) => t.tag === 'trashed-only')).toBe(false);
    expect((await tags({ q: 'trashed', include_trashed: true })).tags.map((t) => t.tag)).toEqual([
      'trashed-only',
    ]);

    expect((await tags({ q: 'SEA' })).tags.map((t) => t.tag)).toEqual(['sea level']);
    const automatic = await tags({ type: 'automatic' });
    expect(automatic.tags.map((t) => t.tag)).toContain('Oceanography');
    expect(automatic.tags.every((t) => t.type === 1)).toBe(true);
    const popular = await tags({ sort: 'numItems', limit: 1 });
    expect(popular.tags[0]!.tag).toBe('sea level');
    const page = await tags({ start: 2, limit: 2 });
    expect(page.tags.map((t) => t.tag)).toEqual(all.tags.slice(2, 4).map((t) => t.tag));
  });
});

describe('zotero_stats on zotero.sqlite', () => {
  it('counts by type, top-level, notes, attachments, trash, collections, tags, version, backend', async () => {
    const s = (await run(stats, {})) as unknown as StatsOutput;
    expect(s).toMatchObject({ backend: 'sqlite', library: SAMPLE_USER });
    expect(s.libraryVersion).toEqual(expect.any(Number));
    const sum = Object.values(s.items.byType).reduce((a, b) => a + b, 0);
    expect(sum).toBe(s.items.total);
    expect(s.items.notes).toBe(s.items.byType.note);
    expect(s.items.attachments).toBe(s.items.byType.attachment);
    expect(s.items.regular).toBe(s.items.total - s.items.notes - s.items.attachments - s.items.annotations);
    expect(s.items.annotations).toBeGreaterThan(0);
    expect(s.items.topLevel).toBe((await search({ limit: 1 })).totalResults);
    expect(s.items.total).toBe((await search({ include_children: true, limit: 1 })).totalResults);
    expect(s.items.byType.journalArticle).toBeGreaterThan(0);
    expect(s.trash).toBeGreaterThan(0);
    const counts = Object.values(s.items.byType);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(s.collections).toBeGreaterThan(5);
    expect(s.tags).toBeGreaterThan(10);
  });
});

describe('zotero_summarize on zotero.sqlite', () => {
  type Out = {
    digests: Array<Record<string, unknown> & { key: string }>;
    totalResults: number;
    start: number;
    backend: string;
  };
  const digest = (input: Record<string, unknown>, deps?: Deps) => run(summarize, input, deps) as Promise<Out>;

  it('digests of items by key: citation, creators, year, abstract, tags, collections, notes, full text', async () => {
    const r = await digest({ item_keys: [I.seaLevelArticle, I.muellerThesis] });
    expect(r.digests.map((d) => d.key)).toEqual([I.seaLevelArticle, I.muellerThesis]);
    expect(r.digests[0]).toMatchObject({
      citation:
        'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32(4-5), 585-602. https://doi.org/10.1007/s10712-011-9119-1',
      creators: ['Church, John A.', 'White, Neil J.'],
      year: '2011',
      collections: [{ key: C.seaLevel, name: 'Sea Level' }],
      notes: [{ title: 'Reading notes' }],
      fulltext: true,
    });
    expect(r.digests[1]).toMatchObject({
      citation: expect.stringMatching(/^Müller, A\.-L\. \(2019\)\. Meeresspiegelanstieg/),
      fulltext: true,
    });
    expect(r.totalResults).toBe(2);
  });

  it('an unknown key is not_found naming it; listing fields with keys are refused', async () => {
    await expect(digest({ item_keys: [I.seaLevelArticle, 'ABCD2345'] })).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('"ABCD2345"'),
    });
    await expect(digest({ item_keys: [I.seaLevelArticle], limit: 3 })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'limit',
    });
  });

  it('without keys: top-level items in the order added, paged, with progress events', async () => {
    const events: ProgressEvent[] = [];
    const page = await digest({ start: 2, limit: 3 }, sample.deps({ progress: events }));
    expect(page.digests).toHaveLength(3);
    expect(page.start).toBe(2);
    const all = await digest({ all: true });
    expect(all.digests).toHaveLength(all.totalResults);
    expect(page.digests.map((d) => d.key)).toEqual(all.digests.slice(2, 5).map((d) => d.key));
    expect(events[0]).toMatchObject({ event: 'start', phase: 'summarize', total: 3 });
    expect(events.at(-1)).toMatchObject({ event: 'complete', done: 3, total: 3, succeeded: 3, failed: 0 });
    const coll = await digest({ all: true, collection_key: C.seaLevel });
    expect(
      coll.digests.every((d) => (d.collections as Array<{ key: string }>).some((c) => c.key === C.seaLevel)),
    ).toBe(true);
  });
});

describe('search returns works, not their parts (zotero.sqlite)', () => {
  type Row = { key: string; data: Record<string, unknown> };
  const rows = async (input: Record<string, unknown>) =>
    (await search({ limit: 100, ...input })).items as Row[];

  it('without a query: top-level items only; include_children adds the notes, attachments and annotations', async () => {
    const works = await rows({});
    expect(works.length).toBeGreaterThan(0);
    expect(works.filter((i) => i.data.parentItem !== undefined)).toEqual([]);
    expect(works.some((i) => i.data.itemType === 'annotation')).toBe(false);
    const all = await rows({ include_children: true });
    const children = all.filter((i) => i.data.parentItem !== undefined);
    expect(children.map((i) => i.data.itemType)).toEqual(expect.arrayContaining(['note', 'attachment']));
    expect((await search({})).totalResults + children.length).toBeLessThanOrEqual(
      (await search({ include_children: true })).totalResults,
    );
  });

  it('a child attachment that matches q counts for its parent, which is listed instead of it', async () => {
    const child = (await rows({ include_children: true, item_type: 'attachment' })).find(
      (i) =>
        i.data.parentItem !== undefined && typeof i.data.title === 'string' && /\w{4}/.test(i.data.title),
    )!;
    expect(child).toBeDefined();
    const q = (child.data.title as string).match(/[\p{L}\p{N}]{4,}/u)![0];
    const found = await rows({ q });
    expect(found.map((i) => i.key)).toContain(child.data.parentItem);
    expect(found.map((i) => i.key)).not.toContain(child.key);
    expect(found.filter((i) => i.data.parentItem !== undefined)).toEqual([]);
    expect((await rows({ q, include_children: true })).map((i) => i.key)).toContain(child.key);
  });
});
