/**
 * A zotero.sqlite in rollback-journal mode (journal_mode=DELETE, as Zotero uses it) that another
 * process holds under an EXCLUSIVE lock with an uncommitted change already in the database file
 * (its page cache spilled, as in a big sync or import) and the originals in the `-journal`. The
 * reader's private copy must roll that change back (copy the hot journal with the database, then
 * let SQLite roll it back on the copy) and show the committed data, or refuse clearly when no
 * consistent copy can be had; never show the uncommitted data, never touch the user's files.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, existsSync, promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openZoteroSqlite, type ZoteroSqliteReader } from '../../../src/core/local/index.js';
import { removeSnapshot, takeSnapshot } from '../../../src/core/local/sqlite/snapshot.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { ROOT, runZot, sandbox } from '../../support/cli.js';
import { buildZoteroDb, sampleLibrarySpec, SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import { fileState, sqlite, tempDir } from './helpers.js';

const KEY = SAMPLE_KEYS.user.items.seaLevelArticle;
const COMMITTED = 'Sea-level rise from the late 19th to the early 21st century';
const PENDING = 'Title of a transaction not yet committed';

/**
 * The writer: a separate process (locks are per process), told what to do one JSON line at a
 * time on stdin, answering one line per command. `hold` begins an EXCLUSIVE transaction,
 * retitles the item and rewrites two tables in place (same values) so that, with a 10-page
 * cache, the changed pages spill to the database file before any commit.
 */
const WRITER = String.raw`
const { createRequire } = await import('node:module');
const { createInterface } = await import('node:readline');
const Database = createRequire(process.cwd() + '/package.json')('better-sqlite3');
const db = new Database(process.env.WRITER_DB);
db.pragma('journal_mode = DELETE');
if (process.env.WRITER_LOCKING === 'exclusive') db.pragma('locking_mode = EXCLUSIVE');
db.pragma('cache_size = 10');
db.prepare('SELECT count(*) FROM items').get();
function retitle(key, title) {
  const fieldID = db.prepare("SELECT fieldID FROM fields WHERE fieldName = 'title'").pluck().get();
  const itemID = db.prepare('SELECT itemID FROM items WHERE libraryID = 1 AND key = ?').pluck().get(key);
  db.prepare('INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)').run(title);
  const valueID = db.prepare('SELECT valueID FROM itemDataValues WHERE value = ?').pluck().get(title);
  db.prepare('INSERT OR REPLACE INTO itemData (itemID, fieldID, valueID) VALUES (?, ?, ?)').run(itemID, fieldID, valueID);
  db.prepare("UPDATE items SET dateModified = '2030-01-01 00:00:00', version = version + 1 WHERE itemID = ?").run(itemID);
}
function spill() {
  db.exec('UPDATE itemDataValues SET value = value; UPDATE items SET version = version');
}
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = JSON.parse(line);
  try {
    if (cmd.op === 'ping') {
    } else if (cmd.op === 'hold') {
      db.exec('BEGIN EXCLUSIVE');
      retitle(cmd.key, cmd.title);
      spill();
    } else if (cmd.op === 'commit') db.exec('COMMIT');
    else if (cmd.op === 'churn') {
      // Transactions back to back: an uncommitted title held a moment then rolled back,
      // then a committed one, then a pause; a reader racing this never sees a "pending" title.
      const end = Date.now() + cmd.ms;
      for (let n = 0; Date.now() < end; n++) {
        db.exec('BEGIN EXCLUSIVE');
        retitle(cmd.key, 'pending ' + n);
        spill();
        sleep(cmd.holdMs);
        db.exec('ROLLBACK');
        db.exec('BEGIN EXCLUSIVE');
        retitle(cmd.key, 'committed ' + n);
        spill();
        db.exec('COMMIT');
        sleep(cmd.idleMs);
      }
    }
    process.stdout.write(JSON.stringify({ ok: true }) + '\n');
  } catch (error) {
    process.stdout.write(JSON.stringify({ ok: false, error: String(error) }) + '\n');
  }
});
`;

class Writer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<(line: string) => void> = [];
  private stderr = '';

  constructor(db: string, locking: 'normal' | 'exclusive') {
    this.child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', WRITER_DB: db, WRITER_LOCKING: locking },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
  }

  async send(cmd: Record<string, unknown>): Promise<void> {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`writer did not answer ${JSON.stringify(cmd)}: ${this.stderr}`)),
        15_000,
      );
      this.waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
      this.child.stdin.write(JSON.stringify(cmd) + '\n');
    });
    const answer = JSON.parse(line) as { ok: boolean; error?: string };
    if (!answer.ok) throw new Error(`writer: ${answer.error}`);
  }

  /** Answers once the database is open (in exclusive locking mode: locked). */
  ready(): Promise<void> {
    return this.send({ op: 'ping' });
  }

  hold(title: string): Promise<void> {
    return this.send({ op: 'hold', key: KEY, title });
  }

  commit(): Promise<void> {
    return this.send({ op: 'commit' });
  }

  /** SIGKILL: the transaction is neither committed nor rolled back, its journal stays hot. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

let tmp: ReturnType<typeof tempDir>;
let path: string;
let writer: Writer | undefined;
let reader: ZoteroSqliteReader | undefined;

beforeEach(async () => {
  tmp = tempDir('zotero-journal-');
  path = join(tmp.dir, 'zotero.sqlite');
  await buildZoteroDb(path, { ...sampleLibrarySpec(), journalMode: 'delete' });
});
afterEach(async () => {
  vi.restoreAllMocks();
  reader?.close();
  reader = undefined;
  await writer?.kill();
  writer = undefined;
  tmp.cleanup();
});

/** Holds PENDING uncommitted, and checks that it really is in the database file, with a journal. */
async function holdPending(locking: 'normal' | 'exclusive'): Promise<void> {
  writer = new Writer(path, locking);
  await writer.hold(PENDING);
  expect(readFileSync(path).includes(PENDING)).toBe(true);
  expect(existsSync(`${path}-journal`)).toBe(true);
}

async function title(r: ZoteroSqliteReader): Promise<string | undefined> {
  return (await r.item(1, KEY))?.data.title as string | undefined;
}

describe.each([
  ['BEGIN EXCLUSIVE', 'normal'],
  ['BEGIN EXCLUSIVE with locking_mode=EXCLUSIVE (as Zotero)', 'exclusive'],
] as const)('a rollback-journal database held by a writer: %s', (_name, locking) => {
  it('shows the committed title while the change is uncommitted, the new one once it is committed', async () => {
    // A reader already open (in place) before the writer starts, and one opened while it holds.
    reader = await openZoteroSqlite(path);
    expect(await title(reader)).toBe(COMMITTED);
    expect((await reader.status()).mode).toBe('direct');
    await holdPending(locking);
    const before = [fileState(path), fileState(`${path}-journal`)];

    expect(await title(reader)).toBe(COMMITTED);
    expect((await reader.status()).mode).toBe('snapshot');
    const fresh = await openZoteroSqlite(path);
    try {
      expect((await fresh.status()).mode).toBe('snapshot');
      expect(await title(fresh)).toBe(COMMITTED);
      expect((await fresh.searchItems(1, { q: 'not yet committed' })).totalResults).toBe(0);
    } finally {
      fresh.close();
    }
    // The rollback happened on the private copy only: the user's files are as the writer left them.
    expect([fileState(path), fileState(`${path}-journal`)]).toEqual(before);

    await writer!.commit();
    expect(await title(reader)).toBe(PENDING);
    expect((await reader.searchItems(1, { q: 'not yet committed' })).items.map((i) => i.key)).toEqual([KEY]);

    // A second transaction (in exclusive mode it reuses the journal Zotero keeps) is again unseen.
    await writer!.hold('A second uncommitted title');
    expect(await title(reader)).toBe(PENDING);
  });

  it('zot read KEY (the built CLI, ZOTEUS_LOCAL=on) shows the committed title, then the new one', async () => {
    const box = sandbox();
    try {
      path = join(box.env.ZOTERO_DATA_DIR!, 'zotero.sqlite');
      await buildZoteroDb(path, { ...sampleLibrarySpec(), journalMode: 'delete' });
      await holdPending(locking);
      const env = { ...box.env, ZOTEUS_LOCAL: 'on' };
      const held = await runZot(['read', KEY], { env });
      expect(held.stderr).toBe('');
      expect(held.code).toBe(0);
      expect(held.stdout).not.toContain(PENDING);
      const heldData = held.json().data as { item: { data: { title: string } }; backend: string };
      expect(heldData.backend).toBe('sqlite');
      expect(heldData.item.data.title).toBe(COMMITTED);

      await writer!.commit();
      const after = await runZot(['read', KEY], { env });
      expect(after.code).toBe(0);
      expect((after.json().data as { item: { data: { title: string } } }).item.data.title).toBe(PENDING);
    } finally {
      await writer?.kill();
      writer = undefined;
      box.cleanup();
    }
  });

  it('a writer that died mid-transaction (a hot journal, no lock): the committed title, user files untouched', async () => {
    await holdPending(locking);
    await writer!.kill();
    const before = [fileState(path), fileState(`${path}-journal`)];
    reader = await openZoteroSqlite(path);
    expect(await title(reader)).toBe(COMMITTED);
    expect([fileState(path), fileState(`${path}-journal`)]).toEqual(before);
  });

  it('racing a writer that keeps committing and rolling back: never an uncommitted title', async () => {
    writer = new Writer(path, locking);
    await writer.ready();
    const churn = writer.send({ op: 'churn', key: KEY, ms: 1500, holdMs: 40, idleMs: 40 });
    let done = false;
    void churn.finally(() => (done = true)).catch(() => undefined);
    const seen: string[] = [];
    while (!done) {
      let r: ZoteroSqliteReader | undefined;
      try {
        r = await openZoteroSqlite(path);
        seen.push((await title(r)) ?? '(none)');
      } catch (error) {
        // The clear refusal is allowed (the writer hardly pauses); anything else is not.
        if (!(error instanceof ZoteusError && /Zotero is writing/.test(error.message))) throw error;
      } finally {
        r?.close();
      }
      // A read in place never waits on I/O: without a pause the writer's answer would never be read.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await churn;
    expect(seen.filter((t) => t.startsWith('pending'))).toEqual([]);
    // Some reads were taken while the writer churned, not only before it started.
    expect(seen.some((t) => t.startsWith('committed'))).toBe(true);
    expect(seen.every((t) => t === COMMITTED || /^committed \d+$/.test(t))).toBe(true);
  });
});

describe('taking the snapshot while the writer holds its transaction', () => {
  /** Counts the copies takeSnapshot makes and runs `between` after each copy of the database. */
  function interceptCopies(between: (attempt: number) => void | Promise<void>): { attempts: () => number } {
    const copyFile = fsp.copyFile.bind(fsp);
    let attempts = 0;
    vi.spyOn(fsp, 'copyFile').mockImplementation(async (src, dest, mode) => {
      await copyFile(src, dest, mode);
      if (String(src) === path) await between(++attempts);
    });
    return { attempts: () => attempts };
  }

  it('a journal that keeps changing between the copies: a clear refusal after a few tries', async () => {
    await holdPending('exclusive');
    // Pages journaled while the database is being copied: the journal grows each time.
    const copies = interceptCopies(() => appendFileSync(`${path}-journal`, Buffer.alloc(512)));
    const error = await takeSnapshot(path, await sqlite(), tmp.dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ZoteusError);
    const e = error as ZoteusError;
    expect(e.retryable).toBe(true);
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/Zotero is writing/);
    expect(`${e.message} ${e.hint}`).toMatch(/in a moment/);
    expect(copies.attempts()).toBeGreaterThan(1);
    expect(copies.attempts()).toBeLessThanOrEqual(10);
  });

  it.each(['normal', 'exclusive'] as const)(
    'the writer commits between the copies (%s locking): detected, copied again, the new title',
    async (locking) => {
      await holdPending(locking);
      const copies = interceptCopies(async (attempt) => {
        if (attempt === 1) await writer!.commit();
      });
      const snap = await takeSnapshot(path, await sqlite(), tmp.dir);
      try {
        expect(copies.attempts()).toBe(2);
        const Database = await sqlite();
        const db = new Database(snap.path, { readonly: true, fileMustExist: true });
        try {
          expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
          const value = db
            .prepare(
              `SELECT v.value FROM items i JOIN itemData d ON d.itemID = i.itemID
               JOIN fields f ON f.fieldID = d.fieldID AND f.fieldName = 'title'
               JOIN itemDataValues v ON v.valueID = d.valueID WHERE i.key = ?`,
            )
            .pluck()
            .get(KEY);
          expect(value).toBe(PENDING);
        } finally {
          db.close();
        }
      } finally {
        removeSnapshot(snap.dir);
      }
    },
  );
});
