/**
 * Reading a database that a running Zotero holds: `PRAGMA locking_mode=EXCLUSIVE`, WAL
 * journaling, committed changes still in the WAL (not checkpointed) and the connection kept
 * open. The reader must see those changes (a private copy of the database and its WAL), follow
 * further changes, clean up its copies, and never write to the user's files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import { buildSampleLibrary, SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { fileState, retitle, sqlite, tempDir } from './helpers.js';

const KEY = SAMPLE_KEYS.user.items.seaLevelArticle;
let tmp: ReturnType<typeof tempDir>;
let path: string;
let holder: BetterSqlite3.Database | undefined;
let reader: ZoteroSqliteReader | undefined;

/** A connection that behaves as a running Zotero's: WAL, exclusive lock, no automatic checkpoint. */
async function startZotero(): Promise<BetterSqlite3.Database> {
  const Database = await sqlite();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('wal_autocheckpoint = 0');
  db.prepare('SELECT count(*) FROM items').get();
  return db;
}

beforeEach(async () => {
  tmp = tempDir('zotero-lock-');
  path = join(tmp.dir, 'zotero.sqlite');
  await buildSampleLibrary(path);
});
afterEach(() => {
  reader?.close();
  reader = undefined;
  holder?.close();
  holder = undefined;
  tmp.cleanup();
});

describe('a database locked by a running Zotero', () => {
  it('is read from a private copy that includes the changes still in the WAL, refreshed when they change', async () => {
    holder = await startZotero();
    retitle(holder, 1, KEY, 'Changed while Zotero runs');
    // The change is committed in the WAL only: the main file does not have it yet.
    expect(readFileSync(path).includes('Changed while Zotero runs')).toBe(false);
    expect(readFileSync(`${path}-wal`).includes('Changed while Zotero runs')).toBe(true);

    const logs: string[] = [];
    reader = await openZoteroSqlite(path, { log: (line) => logs.push(line) });
    const status = await reader.status();
    expect(status.mode).toBe('snapshot');
    expect(logs.join('\n')).toMatch(/locked|private copy/);
    const snapshotDir = status.snapshotPath!.replace(/[/\\]zotero\.sqlite$/, '');
    expect(existsSync(snapshotDir)).toBe(true);
    if (process.platform !== 'win32') {
      const { statSync } = await import('node:fs');
      expect(statSync(snapshotDir).mode & 0o777).toBe(0o700);
    }
    expect((await reader.item(1, KEY))!.data.title).toBe('Changed while Zotero runs');
    expect((await reader.searchItems(1, { q: 'changed while zotero' })).items.map((i) => i.key)).toEqual([
      KEY,
    ]);

    // Unchanged source: the same snapshot serves the next calls.
    await reader.items(1, { limit: 1 });
    expect((await reader.status()).opens).toBe(1);

    // Zotero writes again: the next call sees it, from a fresh copy; the old copy is gone.
    retitle(holder, 1, KEY, 'Changed a second time');
    expect((await reader.item(1, KEY))!.data.title).toBe('Changed a second time');
    const after = await reader.status();
    expect(after.opens).toBe(2);
    expect(after.snapshotPath).not.toBe(status.snapshotPath);
    expect(existsSync(snapshotDir)).toBe(false);
    // The cached search table was dropped with the old snapshot.
    expect((await reader.searchItems(1, { q: 'second time' })).items.map((i) => i.key)).toEqual([KEY]);

    const last = (await reader.status()).snapshotPath!.replace(/[/\\]zotero\.sqlite$/, '');
    reader.close();
    reader = undefined;
    expect(existsSync(last)).toBe(false);
  });

  it('never writes to the user files: bytes and mtimes of the database and its WAL unchanged by reads', async () => {
    holder = await startZotero();
    retitle(holder, 1, KEY, 'Pending in the WAL');
    const before = [fileState(path), fileState(`${path}-wal`), fileState(`${path}-shm`)];
    reader = await openZoteroSqlite(path);
    await reader.items(1);
    await reader.searchItems(1, { q: 'sea level', qmode: 'everything' });
    await reader.collections(1);
    await reader.tags(1);
    await reader.fulltextInfo(1, KEY, { content: true });
    expect([fileState(path), fileState(`${path}-wal`), fileState(`${path}-shm`)]).toEqual(before);
  });

  it('lets Zotero start and write while the reader is open in place (held only during a call), then reads a copy', async () => {
    reader = await openZoteroSqlite(path);
    expect((await reader.status()).mode).toBe('direct');
    await reader.items(1, { limit: 1 });
    holder = await startZotero();
    retitle(holder, 1, KEY, 'Zotero started later');
    expect((await reader.item(1, KEY))!.data.title).toBe('Zotero started later');
    expect((await reader.status()).mode).toBe('snapshot');
  });

  it('a lock taken without any change (Zotero just opened) also moves to a copy', async () => {
    reader = await openZoteroSqlite(path);
    expect((await reader.status()).mode).toBe('direct');
    holder = await startZotero();
    // Same fingerprint, so no reopen: the query itself meets the lock and the reader copies.
    holder.pragma('user_version');
    const items = await reader.items(1, { top: true, limit: 2 });
    expect(items.items).toHaveLength(2);
  });
});

describe('a database nobody holds', () => {
  it('is read in place, read-only, and its bytes and mtime stay unchanged', async () => {
    const before = fileState(path);
    reader = await openZoteroSqlite(path);
    expect((await reader.status()).mode).toBe('direct');
    await reader.items(1);
    await reader.searchItems(1, { q: 'attention', qmode: 'everything' });
    await reader.children(1, KEY);
    reader.close();
    reader = undefined;
    expect(fileState(path)).toBe(before);
  });

  it('sees a change made by another (non-exclusive) writer on the next call', async () => {
    reader = await openZoteroSqlite(path);
    expect((await reader.item(1, KEY))!.data.title).toMatch(/^Sea-level rise/);
    await reader.searchItems(1, { q: 'sea' });
    const Database = await sqlite();
    const writer = new Database(path);
    retitle(writer, 1, KEY, 'Edited by a plain writer');
    writer.close();
    expect((await reader.item(1, KEY))!.data.title).toBe('Edited by a plain writer');
    expect((await reader.searchItems(1, { q: 'plain writer' })).totalResults).toBe(1);
  });

  it('mode "snapshot" always reads a copy', async () => {
    reader = await openZoteroSqlite(path, { mode: 'snapshot' });
    expect((await reader.status()).mode).toBe('snapshot');
    expect((await reader.items(1, { top: true })).totalResults).toBeGreaterThan(20);
  });
});
