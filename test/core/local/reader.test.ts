/**
 * The zotero.sqlite reader against the sample library (fixture builder): Web API shapes,
 * library isolation, the trash, children, filters, sorting, paging and search.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openZoteroSqlite, type WebApiItem, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import {
  buildSampleLibrary,
  buildZoteroDb,
  SAMPLE_KEYS,
  sampleLibrarySpec,
} from '../../support/zotero-sqlite/index.js';
import { tempDir } from './helpers.js';

const U = SAMPLE_KEYS.user;
const G = SAMPLE_KEYS.group;
let tmp: ReturnType<typeof tempDir>;
let reader: ZoteroSqliteReader;
let userLib: number;
let groupLib: number;

beforeAll(async () => {
  tmp = tempDir();
  const path = join(tmp.dir, 'zotero.sqlite');
  await buildSampleLibrary(path);
  reader = await openZoteroSqlite(path);
  userLib = await reader.libraryIdFor({ type: 'user' });
  groupLib = await reader.libraryIdFor({ type: 'group', groupID: G.groupID });
});
afterAll(() => {
  reader?.close();
  tmp?.cleanup();
});

const keys = (items: WebApiItem[]) => items.map((i) => i.key);

describe('libraries', () => {
  it('account() is the user id the desktop is signed in to, 0 when it is signed in to none', async () => {
    expect(await reader.account()).toBe(sampleLibrarySpec().user!.userID);
    const { user: _user, ...spec } = sampleLibrarySpec();
    const path = join(tmp.dir, 'no-account.sqlite');
    await buildZoteroDb(path, spec);
    const signedOut = await openZoteroSqlite(path);
    try {
      expect(await signedOut.account()).toBe(0);
    } finally {
      signedOut.close();
    }
  });

  it('lists the user library and the group, with versions and the Web API group id', async () => {
    const libs = await reader.libraries();
    expect(libs).toEqual([
      {
        libraryID: userLib,
        type: 'user',
        name: 'My Library',
        version: 1600,
        editable: true,
        filesEditable: true,
      },
      {
        libraryID: groupLib,
        type: 'group',
        groupID: G.groupID,
        name: 'Ocean Lab (shared)',
        version: 320,
        editable: true,
        filesEditable: true,
      },
    ]);
    expect(await reader.libraryVersion(userLib)).toBe(1600);
    await expect(reader.libraryIdFor({ type: 'group', groupID: 1 })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(reader.items(999)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('collections', () => {
  it('come out as Web API collection objects, nested, trash left out', async () => {
    const cols = await reader.collections(userLib);
    expect(cols.map((c) => c.data.name)).toEqual([
      'Attribution',
      'Climate Science',
      'Ice Sheets',
      'Machine Learning',
      'Sea Level',
      'Thesis Writing',
      'Transformers',
    ]);
    const seaLevel = cols.find((c) => c.key === U.collections.seaLevel)!;
    expect(seaLevel).toEqual({
      key: U.collections.seaLevel,
      version: 901,
      library: { type: 'user', id: U.userID, name: 'sample-user' },
      // Ice Sheets; items: the eight sea-level items not in the trash (the trashed article is not counted).
      meta: { numCollections: 1, numItems: 8 },
      data: {
        key: U.collections.seaLevel,
        version: 901,
        name: 'Sea Level',
        parentCollection: U.collections.climate,
        relations: {},
      },
    });
    expect(cols.find((c) => c.key === U.collections.climate)!.data.parentCollection).toBe(false);
  });

  it('includes trashed collections when asked, flagged deleted', async () => {
    const all = await reader.collections(userLib, { includeTrashed: true });
    const old = all.find((c) => c.key === U.collections.oldProjects)!;
    expect(old.data.deleted).toBe(true);
    expect(all).toHaveLength(8);
  });

  it('top-level and subcollections', async () => {
    expect((await reader.collections(userLib, { top: true })).map((c) => c.key).sort()).toEqual(
      [U.collections.climate, U.collections.ml, U.collections.thesis].sort(),
    );
    expect(
      (await reader.collections(userLib, { parentKey: U.collections.climate })).map((c) => c.key),
    ).toEqual([U.collections.attribution, U.collections.seaLevel]);
  });

  it('a group has its own collections only', async () => {
    const cols = await reader.collections(groupLib);
    expect(cols.map((c) => c.key).sort()).toEqual([G.collections.fieldwork, G.collections.shared].sort());
    expect(cols[0]!.library).toEqual({ type: 'group', id: G.groupID, name: 'Ocean Lab (shared)' });
  });
});

describe('items', () => {
  it('a regular item: every field of its type by name, creators, tags, collections, relations, meta', async () => {
    const item = (await reader.item(userLib, U.items.seaLevelArticle))!;
    expect(item.library).toEqual({ type: 'user', id: U.userID, name: 'sample-user' });
    expect(item.meta).toEqual({
      creatorSummary: 'Church and White',
      parsedDate: '2011-09-01',
      numChildren: 3,
    });
    const d = item.data;
    expect(Object.keys(d).slice(0, 5)).toEqual(['key', 'version', 'itemType', 'title', 'creators']);
    expect(d).toMatchObject({
      key: U.items.seaLevelArticle,
      version: 1201,
      itemType: 'journalArticle',
      title: 'Sea-level rise from the late 19th to the early 21st century',
      creators: [
        { creatorType: 'author', firstName: 'John A.', lastName: 'Church' },
        { creatorType: 'author', firstName: 'Neil J.', lastName: 'White' },
      ],
      publicationTitle: 'Surveys in Geophysics',
      journalAbbreviation: 'Surv Geophys',
      date: '2011-09-01',
      accessDate: '2023-05-04T10:11:12Z',
      DOI: '10.1007/s10712-011-9119-1',
      // Empty fields of the type are there, as the Web API serves them.
      series: '',
      seriesTitle: '',
      tags: [{ tag: 'Oceanography', type: 1 }, { tag: 'sea level' }, { tag: 'tide gauges' }],
      collections: [U.collections.seaLevel],
      relations: { 'dc:relation': `http://zotero.org/users/8675309/items/${U.items.greenlandArticle}` },
      dateAdded: '2023-05-04T10:11:12Z',
      dateModified: '2024-02-01T08:00:00Z',
    });
    expect(d.parentItem).toBeUndefined();
    expect(d.deleted).toBeUndefined();
  });

  it('base-mapped fields keep their type-specific names; dates keep the text as entered', async () => {
    const all = (await reader.items(userLib, { itemType: 'bookSection' })).items;
    const ipcc = all.find((i) => i.data.title === 'Sea Level Change')!;
    expect(ipcc.data.bookTitle).toMatch(/^Climate Change 2013/);
    expect(ipcc.data).not.toHaveProperty('publicationTitle');
    // Given as publicationTitle to the builder, stored (and served) as bookTitle.
    const seq = all.find((i) => i.data.title === 'Sequence Modeling: Recurrent and Recursive Nets')!;
    expect(seq.data.bookTitle).toBe('Deep Learning');
    const greenland = (await reader.item(userLib, U.items.greenlandArticle))!;
    expect(greenland.data.date).toBe('March 2020');
    expect(greenland.meta.parsedDate).toBe('2020-03');
    expect(greenland.meta.creatorSummary).toBe('The IMBIE Team et al.');
    expect((greenland.data.creators as unknown[])[0]).toEqual({
      creatorType: 'author',
      name: 'The IMBIE Team',
    });
  });

  it('children are children: notes, attachments (with annotations) carry parentItem and never show as top-level', async () => {
    const children = await reader.children(userLib, U.items.seaLevelArticle);
    // In the order they were added.
    expect(children.map((c) => c.data.itemType)).toEqual(['attachment', 'attachment', 'note']);
    const [pdf, snapshot, note] = children as [WebApiItem, WebApiItem, WebApiItem];
    expect(note.data).toMatchObject({
      itemType: 'note',
      parentItem: U.items.seaLevelArticle,
      tags: [{ tag: 'to-cite' }],
    });
    expect(note.data.note).toContain('<h1>Reading notes</h1>');
    expect(note.data).not.toHaveProperty('collections');
    expect(note.meta).toEqual({});
    expect(pdf.data).toMatchObject({
      itemType: 'attachment',
      parentItem: U.items.seaLevelArticle,
      linkMode: 'imported_file',
      title: 'Full Text PDF',
      contentType: 'application/pdf',
      filename: 'Church and White - 2011 - Sea-level rise.pdf',
      md5: '9e107d9d372bb6826bd81d3542a419d6',
      mtime: 1683195072000,
    });
    expect(snapshot.data).toMatchObject({
      linkMode: 'imported_url',
      charset: 'utf-8',
      filename: 'snapshot.html',
    });
    const annotations = await reader.children(userLib, pdf.key);
    expect(annotations.map((a) => a.data.annotationType)).toEqual(['highlight', 'note']);
    expect(annotations[0]!.data).toMatchObject({
      itemType: 'annotation',
      parentItem: pdf.key,
      annotationText: 'a rate of 3.2 mm per year since 1993',
      annotationComment: 'Key number for chapter 2',
      annotationPageLabel: '587',
      annotationSortIndex: '00002|000410|00120',
    });
    expect(annotations[1]!.data).not.toHaveProperty('annotationText');

    const top = await reader.items(userLib, { top: true });
    const types = new Set(top.items.map((i) => i.data.itemType));
    expect(types.has('annotation')).toBe(false);
    expect(top.items.every((i) => i.data.parentItem === undefined)).toBe(true);
    // The standalone note and the standalone linked file are top-level.
    expect(keys(top.items)).toEqual(expect.arrayContaining([U.items.standaloneNote, U.items.linkedFile]));
    const all = await reader.items(userLib);
    expect(all.totalResults).toBeGreaterThan(top.totalResults);
    expect(all.items.filter((i) => i.data.itemType === 'annotation')).toHaveLength(3);
  });

  it('a linked file shows its path; a standalone note has collections', async () => {
    const linked = (await reader.item(userLib, U.items.linkedFile))!;
    expect(linked.data).toMatchObject({
      linkMode: 'linked_file',
      path: 'attachments:fieldwork/Field notes 2023.pdf',
      collections: [U.collections.seaLevel],
    });
    expect(linked.data).not.toHaveProperty('filename');
    const note = (await reader.item(userLib, U.items.standaloneNote))!;
    expect(note.data.collections).toEqual([U.collections.thesis]);
  });

  it('trashed items are left out unless asked for; their children too', async () => {
    const top = await reader.items(userLib, { top: true });
    expect(keys(top.items)).not.toContain(U.items.trashedArticle);
    const all = await reader.items(userLib);
    const trashedChild = (
      await reader.children(userLib, U.items.trashedArticle, { includeTrashed: true })
    )[0]!;
    expect(keys(all.items)).not.toContain(trashedChild.key);
    const withTrash = await reader.items(userLib, { top: true, includeTrashed: true });
    expect(withTrash.totalResults).toBe(top.totalResults + 1);
    const trash = await reader.items(userLib, { onlyTrashed: true });
    expect(keys(trash.items).sort()).toEqual([U.items.trashedArticle, trashedChild.key].sort());
    // By key, a trashed item is found, flagged deleted: 1 (as the Web API serves it).
    expect((await reader.item(userLib, U.items.trashedArticle))!.data.deleted).toBe(1);
  });

  it('group items never leak into the user library, nor user items into the group', async () => {
    const user = await reader.items(userLib, { includeTrashed: true });
    const group = await reader.items(groupLib, { includeTrashed: true });
    const groupKeys = new Set(keys(group.items));
    expect(keys(user.items).filter((k) => groupKeys.has(k))).toEqual([]);
    expect(groupKeys.has(G.items.coralReport)).toBe(true);
    expect(await reader.item(userLib, G.items.coralReport)).toBeUndefined();
    expect(await reader.item(groupLib, U.items.seaLevelArticle)).toBeUndefined();
    expect(group.items.every((i) => i.library.type === 'group' && i.library.id === G.groupID)).toBe(true);
    // Tags are shared rows in Zotero's tags table; counts stay per library.
    const tags = await reader.tags(groupLib);
    expect(tags.find((t) => t.tag === 'sea level')).toEqual({
      tag: 'sea level',
      meta: { type: 0, numItems: 1 },
    });
    await expect(reader.children(groupLib, U.items.seaLevelArticle)).rejects.toMatchObject({
      code: 'not_found',
    });
    const search = await reader.searchItems(groupLib, { q: 'sea level', qmode: 'everything' });
    expect(keys(search.items)).toEqual([G.items.groupArticle]);
  });

  it('filters as the Web API does: itemType and tag with || and -, collection, since, keys', async () => {
    const books = await reader.items(userLib, { itemType: 'book', top: true });
    expect(books.items.every((i) => i.data.itemType === 'book')).toBe(true);
    expect(books.totalResults).toBe(4);
    const booksOrTheses = await reader.items(userLib, { itemType: 'book || thesis' });
    expect(booksOrTheses.totalResults).toBe(7);
    const noChildren = await reader.items(userLib, { itemType: ['-attachment', '-note', '-annotation'] });
    expect(
      noChildren.items.every((i) => !['attachment', 'note', 'annotation'].includes(i.data.itemType)),
    ).toBe(true);
    const tagged = await reader.items(userLib, { tag: ['sea level', '-IPCC'] });
    expect(
      tagged.items.every((i) => (i.data.tags as Array<{ tag: string }>).some((t) => t.tag === 'sea level')),
    ).toBe(true);
    expect(
      tagged.items.some((i) => (i.data.tags as Array<{ tag: string }>).some((t) => t.tag === 'IPCC')),
    ).toBe(false);
    const inIce = await reader.items(userLib, { collectionKey: U.collections.iceSheets });
    expect(inIce.items.map((i) => i.data.title).sort()).toEqual([
      'Antarctic ice-sheet contribution to future sea-level rise',
      'Mass balance of the Greenland Ice Sheet from 1992 to 2018',
    ]);
    await expect(reader.items(userLib, { collectionKey: G.collections.fieldwork })).rejects.toMatchObject({
      code: 'not_found',
    });
    const recent = await reader.items(userLib, { since: 1500 });
    expect(recent.items.every((i) => i.version > 1500)).toBe(true);
    const byKeys = await reader.items(userLib, {
      keys: [U.items.attentionPaper, U.items.trashedArticle, G.items.coralReport, U.items.greenlandArticle],
      sort: 'title',
    });
    expect(keys(byKeys.items)).toEqual([U.items.attentionPaper, U.items.greenlandArticle]);
  });

  it('sorts and pages; totalResults counts before paging', async () => {
    const byTitle = await reader.items(userLib, { top: true, sort: 'title', limit: 3 });
    expect(byTitle.items.map((i) => i.data.title)).toEqual([
      'Antarctic ice-sheet contribution to future sea-level rise',
      'Attention Is All You Need',
      'Attribution of extreme weather events in the context of climate change',
    ]);
    const next = await reader.items(userLib, { top: true, sort: 'title', start: 3, limit: 3 });
    expect(next.totalResults).toBe(byTitle.totalResults);
    expect(keys(next.items)).not.toContain(byTitle.items[2]!.key);
    const newest = await reader.items(userLib, { top: true, sort: 'dateAdded', limit: 1 });
    expect(newest.items[0]!.key).toBe(U.items.linkedFile);
    const oldestFirst = await reader.items(userLib, {
      top: true,
      sort: 'dateAdded',
      direction: 'asc',
      limit: 1,
    });
    expect(oldestFirst.items[0]!.data.title).toBe('Old project draft references');
    const byDate = await reader.items(userLib, { top: true, itemType: 'book', sort: 'date' });
    expect(byDate.items.map((i) => i.meta.parsedDate)).toEqual(['1962', '1979', '2001', '2016-11-18']);
    const byCreator = await reader.items(userLib, {
      top: true,
      itemType: 'conferencePaper',
      sort: 'creator',
    });
    expect(byCreator.items.map((i) => i.meta.creatorSummary)).toEqual([
      'Bahdanau et al.',
      'Devlin et al.',
      'He et al.',
      'Vaswani et al.',
    ]);
    const byPublication = await reader.items(userLib, {
      top: true,
      itemType: 'journalArticle',
      sort: 'publicationTitle',
    });
    expect(byPublication.items[0]!.data.publicationTitle).toBe(
      'Bulletin of the American Meteorological Society',
    );
  });

  it('tags: one entry per tag and type, counted without the trash', async () => {
    const tags = await reader.tags(userLib);
    expect(tags.find((t) => t.tag === 'sea level')!.meta).toEqual({ type: 0, numItems: 10 });
    expect(tags.find((t) => t.tag === 'Oceanography')!.meta).toEqual({ type: 1, numItems: 1 });
    expect(tags.find((t) => t.tag === 'trashed-only')).toBeUndefined();
    const withTrash = await reader.tags(userLib, { includeTrashed: true });
    expect(withTrash.find((t) => t.tag === 'sea level')!.meta.numItems).toBe(11);
    expect(tags.map((t) => t.tag)).toEqual([...tags.map((t) => t.tag)].sort());
  });

  it('full-text state of an attachment, or of every attachment of an item, with the cache text on request', async () => {
    const info = await reader.fulltextInfo(userLib, U.items.seaLevelArticle, { content: true });
    expect(info).toHaveLength(2);
    expect(info[0]).toMatchObject({
      parentItem: U.items.seaLevelArticle,
      contentType: 'application/pdf',
      indexedPages: 18,
      totalPages: 18,
    });
    expect(info[0]!.cacheFile).toMatch(/storage[/\\][A-Z0-9]{8}[/\\]\.zotero-ft-cache$/);
    expect(info[0]!.content).toContain('3.2 mm per year');
    expect(info[1]).toMatchObject({ contentType: 'text/html', indexedPages: null, cacheFile: null });
    const one = await reader.fulltextInfo(userLib, info[0]!.key);
    expect(one).toHaveLength(1);
    expect(one[0]).not.toHaveProperty('content');
  });
});

describe('searchItems', () => {
  const titles = (r: { items: WebApiItem[] }) => r.items.map((i) => i.data.title ?? i.data.note).sort();

  it('titleCreatorYear: every word must match in title, creators or year', async () => {
    const r = await reader.searchItems(userLib, { q: 'church 2011' });
    expect(keys(r.items)).toEqual([U.items.seaLevelArticle]);
    expect(r.totalResults).toBe(1);
    const none = await reader.searchItems(userLib, { q: 'church 1999' });
    expect(none.totalResults).toBe(0);
    // The abstract is not searched in this mode.
    expect((await reader.searchItems(userLib, { q: 'altimetry' })).totalResults).toBe(0);
  });

  it('words split on punctuation, case- and accent-insensitive', async () => {
    const seaLevel = await reader.searchItems(userLib, { q: 'SEA level' });
    expect(titles(seaLevel)).toEqual(
      expect.arrayContaining([
        'Sea-level rise from the late 19th to the early 21st century',
        'Antarctic ice-sheet contribution to future sea-level rise',
        'Sea Level Change',
      ]),
    );
    expect(keys((await reader.searchItems(userLib, { q: 'sea-level rise church' })).items)).toEqual([
      U.items.seaLevelArticle,
    ]);
    const muellers = [
      'Meeresspiegelanstieg an der Nordseeküste: Beobachtungen und Projektionen',
      'Über die Erwärmung der Ozeane im 20. Jahrhundert',
    ];
    expect(titles(await reader.searchItems(userLib, { q: 'muller' }))).toEqual(muellers);
    expect(titles(await reader.searchItems(userLib, { q: 'MÜLLER' }))).toEqual(muellers);
    expect(titles(await reader.searchItems(userLib, { q: 'uber erwarmung' }))).toEqual([muellers[1]]);
    expect((await reader.searchItems(userLib, { q: 'godel escher' })).totalResults).toBe(1);
    expect((await reader.searchItems(userLib, { q: 'lukasz kaiser' })).items[0]!.key).toBe(
      U.items.attentionPaper,
    );
    expect((await reader.searchItems(userLib, { q: 'ostergaard' })).totalResults).toBe(1);
  });

  it('everything: abstracts, other fields, tags, child notes, annotations and indexed full text count for the parent', async () => {
    expect(
      keys((await reader.searchItems(userLib, { q: 'altimetry acceleration', qmode: 'everything' })).items),
    ).toEqual([U.items.seaLevelArticle]);
    // A child note's text.
    expect(
      keys((await reader.searchItems(userLib, { q: 'multi-head attention', qmode: 'everything' })).items),
    ).toEqual([U.items.attentionPaper]);
    // Full text only (Zotero's word index): "thermosteric" appears in the PDF's text alone.
    expect(
      keys((await reader.searchItems(userLib, { q: 'thermosteric', qmode: 'everything' })).items),
    ).toEqual([U.items.seaLevelArticle]);
    // An annotation comment.
    expect(
      keys((await reader.searchItems(userLib, { q: 'IMBIE antarctic term', qmode: 'everything' })).items),
    ).toEqual([U.items.seaLevelArticle]);
    // Words may match in different places: title + tag + full text.
    expect(
      keys((await reader.searchItems(userLib, { q: 'mass balance gravimetry', qmode: 'everything' })).items),
    ).toEqual([U.items.greenlandArticle]);
    // A tag.
    expect(keys((await reader.searchItems(userLib, { q: 'Nordsee', qmode: 'everything' })).items)).toEqual([
      U.items.muellerThesis,
    ]);
  });

  it('top: false returns the matching children themselves; the trash stays out unless asked', async () => {
    const r = await reader.searchItems(userLib, { q: 'thermosteric', qmode: 'everything', top: false });
    expect(r.items.map((i) => i.data.itemType)).toEqual(['attachment']);
    expect(r.items[0]!.data.parentItem).toBe(U.items.seaLevelArticle);
    expect((await reader.searchItems(userLib, { q: 'retracted' })).totalResults).toBe(0);
    const trashed = await reader.searchItems(userLib, { q: 'retracted', includeTrashed: true });
    expect(keys(trashed.items)).toEqual([U.items.trashedArticle]);
    // A trashed child's text does not make its parent match.
    expect(
      (await reader.searchItems(userLib, { q: 'duplicate record', qmode: 'everything' })).totalResults,
    ).toBe(0);
  });

  it('combines with filters, sorting and paging', async () => {
    const r = await reader.searchItems(userLib, {
      q: 'sea level',
      qmode: 'everything',
      itemType: 'journalArticle',
      sort: 'date',
      direction: 'asc',
      limit: 2,
    });
    expect(r.items.map((i) => i.meta.parsedDate)).toEqual(['1998', '2011-09-01']);
    expect(r.totalResults).toBeGreaterThan(2);
    const all = await reader.searchItems(userLib, { q: '', top: true });
    expect(all.totalResults).toBe((await reader.items(userLib, { top: true })).totalResults);
  });
});
