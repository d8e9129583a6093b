/**
 * `zotero_stats`'s counts and the tag list, read from zotero.sqlite without the in-memory table
 * (counts.ts): the same numbers as the table's filters give, on the sample library and on a
 * generated one with a trash (trashed parents, their children, a trashed child of a live parent),
 * in both libraries of the file.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeyedEntries } from '../../../src/core/items/read/entries.js';
import { createSqliteReader } from '../../../src/core/library/readers/sqlite.js';
import { openZoteroSqlite } from '../../../src/core/local/index.js';
import { Connections } from '../../../src/core/local/sqlite/connection.js';
import { walkItems } from '../../../src/core/local/sqlite/libraries.js';
import { loadDatabaseClass } from '../../../src/core/sqlite-driver.js';
import { buildLargeLibrary } from '../../../src/demo/sample/index.js';
import { buildSampleLibrary, SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  tmp = tempDir();
  await buildSampleLibrary(join(tmp.dir, 'sample.sqlite'));
  await buildLargeLibrary(join(tmp.dir, 'large.sqlite'), { items: 3000, collections: 50, groupItems: 300 });
}, 120_000);
afterAll(() => tmp?.cleanup());

/** The counts as the in-memory table's filters give them (one listing per question). */
async function byFilters(path: string, libraryID: number) {
  const reader = await openZoteroSqlite(path);
  try {
    const count = async (o: Record<string, unknown>) =>
      (await reader.items(libraryID, { ...o, limit: 0 })).totalResults;
    const all = await reader.items(libraryID, { includeTrashed: true });
    const byType: Record<string, number> = {};
    const live = await reader.items(libraryID, {});
    for (const item of live.items) byType[item.data.itemType] = (byType[item.data.itemType] ?? 0) + 1;
    return {
      counts: {
        total: live.totalResults,
        byType,
        topLevel: await count({ top: true }),
        trash: await count({ onlyTrashed: true }),
      },
      everything: all.totalResults,
      tags: await reader.tags(libraryID),
      allTags: await reader.tags(libraryID, { includeTrashed: true }),
    };
  } finally {
    reader.close();
  }
}

describe('counts without the in-memory table', () => {
  for (const [file, libraries] of [
    ['sample.sqlite', [{ type: 'user' }, { type: 'group', groupID: SAMPLE_KEYS.group.groupID }]],
    ['large.sqlite', [{ type: 'user' }, { type: 'group', groupID: 90001 }]],
  ] as const) {
    it(`equal the table's filters on ${file}, both libraries`, async () => {
      const path = join(tmp.dir, file);
      for (const library of libraries) {
        const reader = await openZoteroSqlite(path);
        let libraryID: number;
        let counts, tags, allTags;
        try {
          libraryID = await reader.libraryIdFor(library);
          // Asked first, so the in-memory table is not built by anything before them.
          counts = await reader.itemCounts(libraryID);
          tags = await reader.tags(libraryID);
          allTags = await reader.tags(libraryID, { includeTrashed: true });
        } finally {
          reader.close();
        }
        const expected = await byFilters(path, libraryID);
        expect(counts).toEqual(expected.counts);
        // Most frequent first, then by name.
        const entries = Object.entries(counts.byType);
        expect(entries).toEqual([...entries].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
        expect(counts.total + counts.trash).toBe(expected.everything);
        expect(tags).toEqual(expected.tags);
        expect(allTags).toEqual(expected.allTags);
      }
    });
  }

  it('the generated library has what the comparison needs: a trash with children under it', async () => {
    const reader = await openZoteroSqlite(join(tmp.dir, 'large.sqlite'));
    try {
      const libraryID = await reader.libraryIdFor({ type: 'user' });
      const trashed = await reader.items(libraryID, { onlyTrashed: true });
      expect(trashed.totalResults).toBeGreaterThan(10);
      expect(trashed.items.some((i) => i.data.parentItem !== undefined)).toBe(true);
      // Some tag is counted differently with the trash: the trash holds tagged items.
      expect(await reader.tags(libraryID, { includeTrashed: true })).not.toEqual(
        await reader.tags(libraryID),
      );
    } finally {
      reader.close();
    }
  });
});

describe('items by key', () => {
  it('are read by key, as the listing gives them, without building the in-memory table', async () => {
    const path = join(tmp.dir, 'large.sqlite');
    const sqlite = await openZoteroSqlite(path);
    try {
      const libraryID = await sqlite.libraryIdFor({ type: 'user' });
      const reader = createSqliteReader({
        sqlite,
        libraryID,
        library: { type: 'user', id: 0 },
        maxCollections: 1000,
      });
      const trashed = (await byFilters(path, libraryID)).counts.trash;
      expect(trashed).toBeGreaterThan(0);
      const keys = (await sqlite.itemKeys(libraryID)).slice(0, 40);
      const { items, failed } = await readKeyedEntries(
        reader,
        [...keys, 'ZZZZ2222'],
        'users/0',
        () => undefined,
      );
      expect((await sqlite.status()).tables).toEqual([]);
      expect(failed.map((f) => f.key)).toEqual(['ZZZZ2222']);
      // The same items, the same bytes, as the listing (which builds the table) gives them.
      const listed = await reader.items({ keys, limit: keys.length, includeTrashed: true });
      expect((await sqlite.status()).tables).toEqual([libraryID]);
      const byKey = new Map(listed.items.map((i) => [i.key, i]));
      expect(items).toEqual(keys.map((k) => byKey.get(k)).filter(Boolean));
    } finally {
      sqlite.close();
    }
  });
});

describe('how a library is walked when every item is read (walkItems)', () => {
  /** The walk of each library and the statements it took, on a fresh connection to `path`. */
  async function walks(
    path: string,
    libraryIDs: number[],
  ): Promise<{ walks: string[]; statements: string[] }> {
    const connections = new Connections(path, tmp.dir, {}, loadDatabaseClass());
    try {
      return await connections.run((conn) => {
        const statements: string[] = [];
        const stmt = conn.ctx.stmt.bind(conn.ctx);
        conn.ctx.stmt = (sql: string) => {
          statements.push(sql);
          return stmt(sql);
        };
        // Twice each: decided once per connection.
        const out = libraryIDs.flatMap((id) => [walkItems(conn, id), walkItems(conn, id)]);
        return { walks: out, statements };
      });
    } finally {
      connections.close();
    }
  }

  it('in table order for the library holding most items, by its index for a small one, counted once', async () => {
    const path = join(tmp.dir, 'large.sqlite');
    const reader = await openZoteroSqlite(path);
    const user = await reader.libraryIdFor({ type: 'user' });
    const group = await reader.libraryIdFor({ type: 'group', groupID: 90001 });
    reader.close();
    const { walks: found, statements } = await walks(path, [user, group]);
    expect(found).toEqual(['NOT INDEXED', 'NOT INDEXED', '', '']);
    // The libraries, then both counts for each library: none on the second call.
    expect(statements.filter((sql) => sql.startsWith('SELECT count(*) FROM items'))).toHaveLength(4);
  });

  it('in table order without counting where the database holds one library', async () => {
    const path = join(tmp.dir, 'one-library.sqlite');
    copyFileSync(join(tmp.dir, 'large.sqlite'), path);
    const Database = loadDatabaseClass();
    const db = new Database(path);
    db.pragma('foreign_keys = OFF');
    db.exec(`DELETE FROM items WHERE libraryID IN (SELECT libraryID FROM libraries WHERE type <> 'user');
             DELETE FROM groups; DELETE FROM libraries WHERE type <> 'user';`);
    const user = db.prepare("SELECT libraryID FROM libraries WHERE type = 'user'").pluck().get() as number;
    db.close();
    const { walks: found, statements } = await walks(path, [user]);
    expect(found).toEqual(['NOT INDEXED', 'NOT INDEXED']);
    expect(statements.filter((sql) => sql.startsWith('SELECT count(*) FROM items'))).toEqual([]);
  });
});
