/**
 * Better BibTeX's keys from the desktop: its `better-bibtex.sqlite` (a real database built
 * here, read in place and, when locked, from a private copy) and its JSON-RPC endpoint (through
 * a loopback fake of it), and the choice between them.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  betterBibtexDbPath,
  betterBibtexRpcUrl,
  createBetterBibtexRpc,
  lookupBetterBibtexKeys,
  readBetterBibtexKeys,
  RPC_BATCH,
} from '../../../src/core/exports/better-bibtex.js';
import { systemClock } from '../../../src/core/deps.js';
import { isZoteusError } from '../../../src/core/errors.js';
import { createRedactor } from '../../../src/core/redact.js';
import { loadDatabaseClass } from '../../../src/core/sqlite-driver.js';
import { startBetterBibtexServer, type BetterBibtexServer } from '../../support/better-bibtex-server.js';

/** Better BibTeX 6+'s table, as it creates it. */
function buildDb(path: string, rows: Array<[number, string, number, string, number]>): void {
  const db = new Database(path);
  db.exec(`CREATE TABLE citationkey (
    itemID NOT NULL PRIMARY KEY,
    itemKey NOT NULL,
    libraryID NOT NULL,
    citationKey NOT NULL CHECK (citationKey <> ''),
    pinned CHECK (pinned in (0, 1)),
    UNIQUE (libraryID, itemKey)
  )`);
  const insert = db.prepare('INSERT INTO citationkey VALUES (?, ?, ?, ?, ?)');
  for (const row of rows) insert.run(...row);
  db.close();
}

const ROWS: Array<[number, string, number, string, number]> = [
  [1, 'CHURCH22', 1, 'churchSealevelRiseLate2011', 0],
  [2, 'VASWANI7', 1, 'vaswaniAttentionAllYou2017', 1],
  [3, 'GRPARTC2', 2, 'groupKeyOther2020', 0],
];

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('better-bibtex.sqlite', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'zoteus-bbt-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads every key of one library (the desktop's library id)", async () => {
    buildDb(betterBibtexDbPath(dir), ROWS);
    const keys = await readBetterBibtexKeys(betterBibtexDbPath(dir), {
      Database: loadDatabaseClass(),
      libraryID: 1,
    });
    expect(keys).toEqual(
      new Map([
        ['CHURCH22', 'churchSealevelRiseLate2011'],
        ['VASWANI7', 'vaswaniAttentionAllYou2017'],
      ]),
    );
    const group = await readBetterBibtexKeys(betterBibtexDbPath(dir), {
      Database: loadDatabaseClass(),
      libraryID: 2,
    });
    expect(group).toEqual(new Map([['GRPARTC2', 'groupKeyOther2020']]));
  });

  it('never writes to it: the file is byte-for-byte the same, no journal left behind', async () => {
    const path = betterBibtexDbPath(dir);
    buildDb(path, ROWS);
    const before = readdirSync(dir).sort();
    await readBetterBibtexKeys(path, { Database: loadDatabaseClass(), libraryID: 1 });
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('no file: undefined (no Better BibTeX, or its keys moved into the citationKey field)', async () => {
    expect(
      await readBetterBibtexKeys(betterBibtexDbPath(dir), { Database: loadDatabaseClass(), libraryID: 1 }),
    ).toBeUndefined();
  });

  it('a file that is not Better BibTeX 6+ is an api_error naming it', async () => {
    const path = betterBibtexDbPath(dir);
    const db = new Database(path);
    db.exec('CREATE TABLE "better-bibtex" (name TEXT PRIMARY KEY, data TEXT)');
    db.close();
    const error = await thrown(readBetterBibtexKeys(path, { Database: loadDatabaseClass(), libraryID: 1 }));
    expect(isZoteusError(error) && error.code).toBe('api_error');
    expect((error as Error).message).toBe(
      `${path} has no citationkey table: it is not the database of Better BibTeX for Zotero 7 or later.`,
    );
  });

  it('locked by the running app: read from a private copy, which is removed afterwards', async () => {
    const path = betterBibtexDbPath(dir);
    buildDb(path, ROWS);
    const holder = new Database(path);
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('BEGIN EXCLUSIVE; UPDATE citationkey SET pinned = pinned; COMMIT');
    const copies = mkdtempSync(join(tmpdir(), 'zoteus-bbt-copies-'));
    const lines: string[] = [];
    try {
      const keys = await readBetterBibtexKeys(path, {
        Database: loadDatabaseClass(),
        libraryID: 1,
        tmpDir: copies,
        log: (line) => lines.push(line),
      });
      expect(keys?.get('VASWANI7')).toBe('vaswaniAttentionAllYou2017');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/cannot be read in place \(database is locked\); reading a private copy\.$/);
      expect(readdirSync(copies)).toEqual([]);
    } finally {
      holder.close();
      rmSync(copies, { recursive: true, force: true });
    }
  });
});

describe('JSON-RPC', () => {
  let server: BetterBibtexServer;
  beforeAll(async () => {
    server = await startBetterBibtexServer({
      keys: {
        '1:CHURCH22': 'churchSealevelRiseLate2011',
        '1:VASWANI7': 'vaswaniAttentionAllYou2017',
        '5:GRPARTC2': 'groupKey',
      },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.log.length = 0;
    server.faults.clear();
  });

  const rpc = (url = server.url) =>
    createBetterBibtexRpc({ url, clock: systemClock, redact: createRedactor(), timeoutMs: 2000 });

  it('the URL is on the local API host and port', () => {
    expect(betterBibtexRpcUrl('http://127.0.0.1:23119/api')).toBe(
      'http://127.0.0.1:23119/better-bibtex/json-rpc',
    );
    expect(betterBibtexRpcUrl(`${server.origin}/api/`)).toBe(server.url);
  });

  it('item.citationkey with "<libraryID>:<itemKey>"; items without a key are left out', async () => {
    const keys = await rpc().citationKeys(1, ['CHURCH22', 'VASWANI7', 'NOKEY234']);
    expect(keys).toEqual(
      new Map([
        ['CHURCH22', 'churchSealevelRiseLate2011'],
        ['VASWANI7', 'vaswaniAttentionAllYou2017'],
      ]),
    );
    expect(server.log).toEqual([
      {
        method: 'POST',
        path: '/better-bibtex/json-rpc',
        rpcMethod: 'item.citationkey',
        itemKeys: 3,
        status: 200,
      },
    ]);
    expect(await rpc().citationKeys(5, ['GRPARTC2', 'CHURCH22'])).toEqual(
      new Map([['GRPARTC2', 'groupKey']]),
    );
  });

  it(`asks for at most ${RPC_BATCH} keys a request`, async () => {
    const many = Array.from({ length: 1200 }, (_, i) => `K${String(i).padStart(7, '0')}`);
    const keys = await rpc().citationKeys(1, [...many, 'CHURCH22']);
    expect(keys.get('CHURCH22')).toBe('churchSealevelRiseLate2011');
    expect(server.log.map((l) => l.itemKeys)).toEqual([500, 500, 201]);
  });

  it('Zotero without Better BibTeX: not_found', async () => {
    const bare = await startBetterBibtexServer({ withoutBetterBibtex: true });
    try {
      const error = await thrown(rpc(bare.url).citationKeys(1, ['CHURCH22']));
      expect(isZoteusError(error) && error.code).toBe('not_found');
      expect((error as Error).message).toBe(
        `Zotero answered at ${bare.url}, but without Better BibTeX (HTTP 404).`,
      );
    } finally {
      await bare.close();
    }
  });

  it('nothing listening (the app is not running): network_error with a hint', async () => {
    const gone = await startBetterBibtexServer();
    const url = gone.url;
    await gone.close();
    const error = await thrown(rpc(url).citationKeys(1, ['CHURCH22']));
    expect(isZoteusError(error) && error.code).toBe('network_error');
    expect((error as Error).message).toBe(`Could not reach Better BibTeX at ${url}: ECONNREFUSED.`);
    expect(isZoteusError(error) && error.hint).toMatch(/^Start Zotero/);
  });

  it('a JSON-RPC error is an api_error with its message; a reset is sent once more', async () => {
    server.faults.rpcError({ code: -32602, message: 'unsupported argument' });
    const error = await thrown(rpc().citationKeys(1, ['CHURCH22']));
    expect(isZoteusError(error) && error.code).toBe('api_error');
    expect((error as Error).message).toBe(
      `Better BibTeX at ${server.url} refused item.citationkey: unsupported argument (code -32602).`,
    );
    server.log.length = 0;
    server.faults.reset();
    expect((await rpc().citationKeys(1, ['CHURCH22'])).size).toBe(1);
    expect(server.log.map((l) => l.status)).toEqual([-1, 200]);
  });
});

describe('lookupBetterBibtexKeys: the database first, else JSON-RPC', () => {
  let dir: string;
  let server: BetterBibtexServer;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zoteus-bbt-'));
    server = await startBetterBibtexServer({ keys: { '1:CHURCH22': 'fromRpc' } });
  });
  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });
  const rpc = () =>
    createBetterBibtexRpc({ url: server.url, clock: systemClock, redact: createRedactor(), timeoutMs: 2000 });

  it('the database answers for the whole library without a request', async () => {
    buildDb(betterBibtexDbPath(dir), ROWS);
    const result = await lookupBetterBibtexKeys({
      zoteroDataDir: dir,
      libraryID: 1,
      itemKeys: ['CHURCH22'],
      Database: loadDatabaseClass(),
      rpc: rpc(),
    });
    expect(result.keys?.get('CHURCH22')).toBe('churchSealevelRiseLate2011');
    expect(result.keys?.size).toBe(2);
    expect('from' in result && result.from).toBe('sqlite');
    expect(server.log).toEqual([]);
  });

  it('migrated database (Zotero 8): JSON-RPC, one request', async () => {
    buildDb(betterBibtexDbPath(dir), ROWS);
    renameSync(betterBibtexDbPath(dir), join(dir, 'better-bibtex.migrated'));
    const result = await lookupBetterBibtexKeys({
      zoteroDataDir: dir,
      libraryID: 1,
      itemKeys: ['CHURCH22'],
      Database: loadDatabaseClass(),
      rpc: rpc(),
    });
    expect(result).toEqual({ keys: new Map([['CHURCH22', 'fromRpc']]), from: 'json-rpc' });
    expect(server.log).toHaveLength(1);
  });

  it('neither: no keys, and the reason says what was tried', async () => {
    writeFileSync(join(dir, 'better-bibtex.migrated'), '');
    const url = server.url;
    await server.close();
    server = await startBetterBibtexServer();
    const result = await lookupBetterBibtexKeys({
      zoteroDataDir: dir,
      libraryID: 1,
      itemKeys: ['CHURCH22'],
      Database: loadDatabaseClass(),
      rpc: createBetterBibtexRpc({ url, clock: systemClock, redact: createRedactor(), timeoutMs: 2000 }),
    });
    expect(result).toEqual({
      keys: undefined,
      reason: `${betterBibtexDbPath(dir)} was migrated into Zotero's citationKey field; Could not reach Better BibTeX at ${url}: ECONNREFUSED.`,
    });
    expect(existsSync(betterBibtexDbPath(dir))).toBe(false);
  });

  it('without a data directory or a client there is nothing to try', async () => {
    expect(
      await lookupBetterBibtexKeys({ libraryID: 1, itemKeys: [], Database: loadDatabaseClass() }),
    ).toEqual({
      keys: undefined,
      reason: 'no route to Better BibTeX was given',
    });
  });
});
