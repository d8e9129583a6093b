/** The fixture builder writes what Zotero writes: real tables and columns, values stored Zotero's way. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZOTERO_SCHEMA_PATH } from '../../../src/core/local/schema-data.js';
import {
  buildLargeLibrary,
  buildSampleLibrary,
  buildZoteroDb,
  KEY_ALPHABET,
} from '../../support/zotero-sqlite/index.js';
import { fileState, sqlite, tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('zotero-builder-');
});
afterEach(() => tmp.cleanup());

const TABLES = [
  'libraries',
  'groups',
  'items',
  'itemTypes',
  'itemTypesCombined',
  'fields',
  'fieldsCombined',
  'itemTypeFields',
  'baseFieldMappings',
  'creatorTypes',
  'itemTypeCreatorTypes',
  'itemData',
  'itemDataValues',
  'creators',
  'itemCreators',
  'collections',
  'collectionItems',
  'tags',
  'itemTags',
  'itemNotes',
  'itemAttachments',
  'itemAnnotations',
  'deletedItems',
  'deletedCollections',
  'savedSearches',
  'savedSearchConditions',
  'itemRelations',
  'relationPredicates',
  'fulltextItems',
  'fulltextWords',
  'fulltextItemWords',
  'version',
  'settings',
  'syncedSettings',
];

describe('buildZoteroDb', () => {
  it('creates Zotero’s tables and stores values the way Zotero does', async () => {
    const path = join(tmp.dir, 'zotero.sqlite');
    const built = await buildSampleLibrary(path);
    const Database = await sqlite();
    const db = new Database(path, { readonly: true });
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
    for (const t of TABLES) expect(tables, t).toContain(t);
    const cols = (t: string) =>
      db
        .prepare(`PRAGMA table_info(${t})`)
        .all()
        .map((c) => (c as { name: string }).name);
    expect(cols('items')).toEqual([
      'itemID',
      'itemTypeID',
      'dateAdded',
      'dateModified',
      'clientDateModified',
      'libraryID',
      'key',
      'version',
      'synced',
    ]);
    expect(cols('creators')).toEqual(['creatorID', 'firstName', 'lastName', 'fieldMode']);
    expect(cols('itemAnnotations')).toContain('isExternal');
    expect(db.prepare("SELECT version FROM version WHERE schema = 'userdata'").pluck().get()).toBe(125);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');

    // Dates are multipart; access dates and timestamps SQL UTC; a base field stored under the type's field.
    const value = (key: string, field: string) =>
      db
        .prepare(
          `SELECT v.value FROM items i JOIN itemData d ON d.itemID = i.itemID JOIN fields f ON f.fieldID = d.fieldID
           JOIN itemDataValues v ON v.valueID = d.valueID WHERE i.key = ? AND f.fieldName = ?`,
        )
        .pluck()
        .get(key, field);
    expect(value('GREENLD2', 'date')).toBe('2020-03-00 March 2020');
    expect(value('CHURCH22', 'date')).toBe('2011-09-01 2011-09-01');
    expect(value('CHURCH22', 'accessDate')).toBe('2023-05-04 10:11:12');
    expect(db.prepare("SELECT dateAdded FROM items WHERE key = 'CHURCH22'").pluck().get()).toBe(
      '2023-05-04 10:11:12',
    );
    const sections = db
      .prepare(
        `SELECT DISTINCT f.fieldName FROM items i JOIN itemTypes t ON t.itemTypeID = i.itemTypeID
         JOIN itemData d ON d.itemID = i.itemID JOIN fields f ON f.fieldID = d.fieldID WHERE t.typeName = 'bookSection'`,
      )
      .pluck()
      .all();
    expect(sections).toContain('bookTitle');
    expect(sections).not.toContain('publicationTitle');
    // Single-field names: fieldMode 1, the name in lastName.
    expect(
      db
        .prepare(
          "SELECT firstName, fieldMode FROM creators WHERE lastName = 'Intergovernmental Panel on Climate Change'",
        )
        .get(),
    ).toEqual({ firstName: '', fieldMode: 1 });
    // Tags, creators and values are shared rows across libraries.
    expect(db.prepare("SELECT count(*) FROM tags WHERE name = 'sea level'").pluck().get()).toBe(1);
    // Ids follow the bundled schema's types, shuffled.
    expect(Object.keys(built.itemTypeIds)).toHaveLength(
      (JSON.parse(readFileSync(ZOTERO_SCHEMA_PATH, 'utf8')) as { itemTypes: unknown[] }).itemTypes.length,
    );
    // Keys are Zotero keys.
    for (const item of built.items) expect(item.key).toMatch(new RegExp(`^[${KEY_ALPHABET}]{8}$`));
    // Full-text cache files beside the database.
    const pdf = built.items.find((i) => i.parentKey === 'CHURCH22' && i.itemType === 'attachment')!;
    expect(readFileSync(join(tmp.dir, 'storage', pdf.key, '.zotero-ft-cache'), 'utf8')).toMatch(
      /^Sea-level rise/,
    );
    db.close();
  });

  it('is deterministic', async () => {
    const a = await buildSampleLibrary(join(tmp.dir, 'a', 'zotero.sqlite'));
    const b = await buildSampleLibrary(join(tmp.dir, 'b', 'zotero.sqlite'));
    expect(a.items).toEqual(b.items);
    expect(a.itemTypeIds).toEqual(b.itemTypeIds);
    const Database = await sqlite();
    const dump = (p: string) => {
      const db = new Database(p, { readonly: true });
      const out = ['items', 'itemData', 'itemDataValues', 'collections', 'itemCreators']
        .map((t) => JSON.stringify(db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all()))
        .join('\n');
      db.close();
      return out;
    };
    expect(dump(a.path)).toBe(dump(b.path));
  });

  it('refuses to overwrite a file unless told to, and rejects invalid specs', async () => {
    const path = join(tmp.dir, 'zotero.sqlite');
    await buildZoteroDb(path, { libraries: [{ type: 'user' }] });
    const before = fileState(path);
    await expect(buildZoteroDb(path, { libraries: [{ type: 'user' }] })).rejects.toThrow(/exists/);
    expect(fileState(path)).toBe(before);
    await buildZoteroDb(path, { overwrite: true, libraries: [{ type: 'user' }] });
    await expect(
      buildZoteroDb(join(tmp.dir, 'x.sqlite'), {
        libraries: [{ type: 'user', items: [{ itemType: 'book', fields: { proceedingsTitle: 'x' } }] }],
      }),
    ).rejects.toThrow(/not valid for item type book/);
    await expect(
      buildZoteroDb(join(tmp.dir, 'y.sqlite'), { libraries: [{ type: 'group', items: [] }] }),
    ).rejects.toThrow(/groupID/);
    await expect(
      buildZoteroDb(join(tmp.dir, 'z.sqlite'), {
        libraries: [{ type: 'user', items: [{ itemType: 'book', collections: ['NOPENOPE'] }] }],
      }),
    ).rejects.toThrow(/No collection NOPENOPE/);
  });

  it('builds a large library quickly enough for tests (scaled down here)', async () => {
    const path = join(tmp.dir, 'large.sqlite');
    const built = await buildLargeLibrary(path, { items: 2000, collections: 100, groupItems: 50 });
    expect(existsSync(path)).toBe(true);
    expect(built.collections.filter((c) => c.libraryID === 1)).toHaveLength(100);
    const top = built.items.filter((i) => i.libraryID === 1 && i.parentKey === undefined);
    expect(top).toHaveLength(2000);
    // Deterministic for the same options.
    const again = await buildLargeLibrary(join(tmp.dir, 'large2.sqlite'), {
      items: 2000,
      collections: 100,
      groupItems: 50,
    });
    expect(again.items.map((i) => i.key)).toEqual(built.items.map((i) => i.key));
  });
});
