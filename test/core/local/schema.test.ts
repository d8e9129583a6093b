/**
 * What the reader assumes about the database: the schema version range, names not numbers
 * (shuffled ids), the `…Combined` tables or their absence, and clear errors otherwise.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openZoteroSqlite, SUPPORTED_SCHEMA } from '../../../src/core/local/index.js';
import { buildZoteroDb, type BuildSpec } from '../../support/zotero-sqlite/index.js';
import { sqlite, tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('zotero-schema-');
});
afterEach(() => tmp.cleanup());

const spec = (extra: Partial<BuildSpec> = {}): BuildSpec => ({
  libraries: [
    {
      type: 'user',
      collections: [{ key: 'COLLAAAA', name: 'Cases' }],
      items: [
        {
          key: 'CASEAAAA',
          itemType: 'case',
          fields: { title: 'Brown v. Board of Education', date: '1954-05-17', court: 'Supreme Court' },
          creators: [{ lastName: 'Warren', firstName: 'Earl' }],
          collections: ['COLLAAAA'],
        },
        {
          key: 'ARTAAAAA',
          itemType: 'artwork',
          fields: { title: 'Guernica', artworkMedium: 'Oil on canvas', date: '1937' },
          creators: [{ lastName: 'Picasso', firstName: 'Pablo' }],
        },
        {
          key: 'BOOKSECT',
          itemType: 'bookSection',
          fields: { title: 'A chapter', publicationTitle: 'The Book' },
          creators: [
            { lastName: 'Editor', firstName: 'Ed', creatorType: 'editor' },
            { lastName: 'Author', firstName: 'Al', creatorType: 'bookAuthor' },
          ],
        },
      ],
    },
  ],
  ...extra,
});

describe('schema version', () => {
  it.each([SUPPORTED_SCHEMA.min, 125, SUPPORTED_SCHEMA.max])('reads userdata version %i', async (version) => {
    const path = join(tmp.dir, `v${version}.sqlite`);
    await buildZoteroDb(path, spec({ schemaVersion: version }));
    const reader = await openZoteroSqlite(path);
    expect((await reader.status()).schemaVersion).toBe(version);
    reader.close();
  });

  it('refuses an older database with a clear error and a hint', async () => {
    const path = join(tmp.dir, 'old.sqlite');
    await buildZoteroDb(path, spec({ schemaVersion: 113 }));
    const error = await openZoteroSqlite(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api_error' });
    expect((error as Error).message).toMatch(/userdata schema version 113.*123–129 \(Zotero 7 to 10\)/);
    expect((error as { hint: string }).hint).toMatch(/Update Zotero/);
  });

  it('refuses a newer database, saying to update Zoteus', async () => {
    const path = join(tmp.dir, 'new.sqlite');
    await buildZoteroDb(path, spec({ schemaVersion: 140 }));
    const error = await openZoteroSqlite(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'api_error' });
    expect((error as { hint: string }).hint).toMatch(/newer than this Zoteus/);
  });

  it('a file that is not a Zotero database, and a missing one', async () => {
    const other = join(tmp.dir, 'other.sqlite');
    const Database = await sqlite();
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    await expect(openZoteroSqlite(other)).rejects.toMatchObject({
      code: 'api_error',
      message: expect.stringMatching(/not a Zotero database/),
    });
    const garbage = join(tmp.dir, 'garbage.sqlite');
    writeFileSync(garbage, 'this is not sqlite at all, just text '.repeat(200));
    await expect(openZoteroSqlite(garbage)).rejects.toMatchObject({ code: 'api_error' });
    await expect(openZoteroSqlite(join(tmp.dir, 'missing', 'zotero.sqlite'))).rejects.toMatchObject({
      code: 'not_found',
      hint: expect.stringMatching(/ZOTERO_DATA_DIR/),
    });
  });
});

describe('names, not numbers', () => {
  it('shuffled, non-sequential ids differ between seeds; the reader answers the same', async () => {
    const a = await buildZoteroDb(join(tmp.dir, 'a.sqlite'), spec({ idSeed: 1 }));
    const b = await buildZoteroDb(join(tmp.dir, 'b.sqlite'), spec({ idSeed: 2 }));
    const typeIds = Object.values(a.itemTypeIds);
    const sorted = [...typeIds].sort((x, y) => x - y);
    // Not 1..n, not in alphabetical order of the names.
    expect(sorted).not.toEqual(sorted.map((_, i) => i + 1));
    const byName = Object.keys(a.itemTypeIds)
      .sort()
      .map((n) => a.itemTypeIds[n]!);
    expect(byName).not.toEqual([...byName].sort((x, y) => x - y));
    expect(a.itemTypeIds.book).not.toBe(b.itemTypeIds.book);
    expect(a.fieldIds.title).not.toBe(b.fieldIds.title);
    expect(a.creatorTypeIds.author).not.toBe(b.creatorTypeIds.author);

    const ra = await openZoteroSqlite(a.path);
    const rb = await openZoteroSqlite(b.path);
    const ia = await ra.items(1, { sort: 'title' });
    const ib = await rb.items(1, { sort: 'title' });
    expect(ia).toEqual(ib);
    const kase = ia.items.find((i) => i.key === 'CASEAAAA')!;
    // `case` names its title field caseName and its date dateDecided (base fields title and date).
    expect(kase.data).toMatchObject({
      itemType: 'case',
      caseName: 'Brown v. Board of Education',
      dateDecided: '1954-05-17',
    });
    expect(kase.data).not.toHaveProperty('title');
    expect(kase.meta.parsedDate).toBe('1954-05-17');
    expect(Object.keys(kase.data).slice(0, 5)).toEqual([
      'key',
      'version',
      'itemType',
      'caseName',
      'creators',
    ]);
    // The primary creator type of artwork is artist; of case, author.
    const art = ia.items.find((i) => i.key === 'ARTAAAAA')!;
    expect(art.data.creators).toEqual([{ creatorType: 'artist', firstName: 'Pablo', lastName: 'Picasso' }]);
    expect(art.meta.creatorSummary).toBe('Picasso');
    // Without authors, the summary falls back to editors.
    expect(ia.items.find((i) => i.key === 'BOOKSECT')!.meta.creatorSummary).toBe('Editor');
    // Searching by the mapped title field and by year works across item types.
    expect((await ra.searchItems(1, { q: 'brown board 1954' })).items.map((i) => i.key)).toEqual([
      'CASEAAAA',
    ]);
    expect((await rb.items(1, { sort: 'title' })).items.map((i) => i.key)).toEqual([
      'BOOKSECT',
      'CASEAAAA',
      'ARTAAAAA',
    ]);
    const schema = await ra.schema();
    expect(schema.combined).toBe(true);
    expect(schema.baseFieldOf('case', 'caseName')).toBe('title');
    expect(schema.typeFieldFor('bookSection', 'publicationTitle')).toBe('bookTitle');
    expect(schema.itemTypeId('book')).toBe(a.itemTypeIds.book);
    ra.close();
    rb.close();
  });

  it('falls back to itemTypes/fields when the …Combined tables are absent', async () => {
    const built = await buildZoteroDb(
      join(tmp.dir, 'plain.sqlite'),
      spec({ combined: false, schemaVersion: 123 }),
    );
    const reader = await openZoteroSqlite(built.path);
    expect((await reader.schema()).combined).toBe(false);
    const item = (await reader.item(1, 'BOOKSECT'))!;
    expect(item.data).toMatchObject({ itemType: 'bookSection', title: 'A chapter', bookTitle: 'The Book' });
    reader.close();
  });

  it('a custom item type in itemTypesCombined is resolved by its name', async () => {
    const built = await buildZoteroDb(join(tmp.dir, 'custom.sqlite'), spec());
    const Database = await sqlite();
    const db = new Database(built.path);
    db.prepare(
      "INSERT INTO itemTypesCombined (itemTypeID, typeName, display, custom) VALUES (10001, 'dataPaper', 1, 1)",
    ).run();
    const titleId = built.fieldIds.title!;
    db.prepare(
      'INSERT INTO itemTypeFieldsCombined (itemTypeID, fieldID, hide, orderIndex) VALUES (10001, ?, 0, 0)',
    ).run(titleId);
    db.prepare(
      "INSERT INTO items (itemID, itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key, version) VALUES (900, 10001, '2024-01-01 00:00:00', '2024-01-01 00:00:00', '2024-01-01 00:00:00', 1, 'CUSTOMAA', 5)",
    ).run();
    db.prepare("INSERT INTO itemDataValues (valueID, value) VALUES (9000, 'A custom record')").run();
    db.prepare('INSERT INTO itemData (itemID, fieldID, valueID) VALUES (900, ?, 9000)').run(titleId);
    db.close();
    const reader = await openZoteroSqlite(built.path);
    expect((await reader.item(1, 'CUSTOMAA'))!.data).toMatchObject({
      itemType: 'dataPaper',
      title: 'A custom record',
    });
    reader.close();
  });
});
