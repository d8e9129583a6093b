/**
 * A few-hundred-item zotero.sqlite for the export tests that read a whole library: the large
 * benchmark library's generator at 300 items (journal articles, books, theses, reports…,
 * children, trashed items, collections, accented names, generated keys that clash), plus
 * items crafted for what the citation keys read: Extra's `Citation Key:` line, the
 * `citationKey` field, own keys two items share, a generated key an own key already takes,
 * types whose title and date are other fields (case, statute, email), multipart dates,
 * single-field and missing creators, items added before 2020 (Zotero's legacy key
 * characters), the same date added twice (the item key breaks the tie), trashed items with
 * keys of their own, and standalone notes and attachments (listed, never exported).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildZoteroDb, largeLibrarySpec, type ItemSpec } from '../../support/zotero-sqlite/index.js';

export const CRAFTED_COLLECTION = 'CRAFTCL2';

const crafted: ItemSpec[] = [
  {
    key: 'EXTRAKY2',
    itemType: 'journalArticle',
    fields: {
      title: 'Own key in Extra',
      date: '2019',
      extra: 'Citation Key: smith2019own\noriginal-date: 1990',
    },
    creators: [{ firstName: 'Anna', lastName: 'Smith' }],
    dateAdded: '2021-05-01T10:00:00Z',
    collections: [CRAFTED_COLLECTION],
  },
  {
    key: 'FIELDKY2',
    itemType: 'book',
    fields: { title: 'Own key in the field', date: '2018', citationKey: 'jones2018field' },
    creators: [{ firstName: 'Ben', lastName: 'Jones' }],
    dateAdded: '2021-05-02T10:00:00Z',
    collections: [CRAFTED_COLLECTION],
  },
  {
    key: 'DUPKEYA2',
    itemType: 'book',
    fields: { title: 'Shared key, first', extra: 'Citation Key: shared2020' },
    dateAdded: '2021-05-03T10:00:00Z',
  },
  {
    key: 'DUPKEYB2',
    itemType: 'report',
    fields: { title: 'Shared key, second', citationKey: 'shared2020' },
    dateAdded: '2021-05-04T10:00:00Z',
    collections: [CRAFTED_COLLECTION],
  },
  {
    // Its generated key would be the own key of the next one: it takes the suffix.
    key: 'TAKENBY2',
    itemType: 'journalArticle',
    fields: { title: 'Taken words', date: '2020' },
    creators: [{ firstName: 'Cleo', lastName: 'Taken' }],
    dateAdded: '2021-05-05T10:00:00Z',
    collections: [CRAFTED_COLLECTION],
  },
  {
    key: 'TAKENWN2',
    itemType: 'journalArticle',
    fields: { title: 'Someone else', extra: 'Citation Key: taken_taken_2020' },
    dateAdded: '2021-05-06T10:00:00Z',
  },
  {
    key: 'CASEITM2',
    itemType: 'case',
    fields: { caseName: 'Brown v. Board of Education', dateDecided: '1954-05-17', court: 'Supreme Court' },
    creators: [{ creatorType: 'author', name: 'United States Supreme Court' }],
    dateAdded: '2018-01-01T00:00:00Z',
    collections: [CRAFTED_COLLECTION],
  },
  {
    key: 'STATUTE2',
    itemType: 'statute',
    fields: { nameOfAct: 'The Clean Air Act', dateEnacted: '1970' },
    dateAdded: '2022-02-02T02:02:02Z',
  },
  {
    key: 'EMAILIT2',
    itemType: 'email',
    fields: { subject: 'On the matter of keys', date: '2023-03-00 March 2023' },
    creators: [{ firstName: 'Dora', lastName: "O'Brien-Łukasz" }],
    dateAdded: '2023-03-03T03:03:03Z',
  },
  {
    key: 'NTHNG222',
    itemType: 'document',
    fields: {},
    dateAdded: '2016-06-06T06:06:06Z',
  },
  {
    // Added before 2020: Zotero's legacy set of key characters (`!`, `:`, `.` stay).
    key: 'LEGACY22',
    itemType: 'book',
    fields: { title: 'Über: Die Welt! Ein Buch.', date: 'ca. 1850' },
    creators: [{ firstName: 'Jürgen', lastName: 'von Müller' }],
    dateAdded: '2012-12-12T12:12:12Z',
  },
  {
    key: 'TIEAAAA2',
    itemType: 'book',
    fields: { title: 'Twin', date: '2001' },
    creators: [{ firstName: 'Eve', lastName: 'Twin' }],
    dateAdded: '2020-07-07T07:07:07Z',
  },
  {
    key: 'TIEBBBB2',
    itemType: 'book',
    fields: { title: 'Twin', date: '2001' },
    creators: [{ firstName: 'Eve', lastName: 'Twin' }],
    dateAdded: '2020-07-07T07:07:07Z',
  },
  {
    // Trashed: it takes part in the keys (restoring it changes no other key), never exported.
    key: 'TRASHED2',
    itemType: 'book',
    fields: { title: 'Twin', date: '2001', extra: 'Citation Key: trashed2001' },
    dateAdded: '2019-01-01T00:00:00Z',
    deleted: true,
  },
  {
    key: 'TRASHGN2',
    itemType: 'book',
    fields: { title: 'Twin', date: '2001' },
    creators: [{ firstName: 'Eve', lastName: 'Twin' }],
    dateAdded: '2019-01-02T00:00:00Z',
    deleted: true,
  },
  { key: 'STANDNT2', itemType: 'note', note: '<p>A standalone note</p>', dateAdded: '2021-01-01T00:00:00Z' },
  {
    key: 'STANDAT2',
    itemType: 'attachment',
    attachment: { title: 'A standalone PDF', filename: 'alone.pdf', contentType: 'application/pdf' },
    dateAdded: '2021-01-02T00:00:00Z',
  },
];

/** Builds the library in `dir` (its Zotero data directory) and returns the database's path. */
export async function buildExportLibrary(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'zotero.sqlite');
  const spec = largeLibrarySpec({ items: 300, collections: 30, groupItems: 10 });
  const user = spec.libraries?.[0];
  if (!user) throw new Error('the large library spec has no user library');
  user.collections = [...(user.collections ?? []), { key: CRAFTED_COLLECTION, name: 'Crafted' }];
  user.items = [...(user.items ?? []), ...crafted];
  await buildZoteroDb(path, spec);
  return path;
}
