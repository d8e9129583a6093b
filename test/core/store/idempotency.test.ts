import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  IDEMPOTENCY_TTL_MS,
  LEASE_MS,
  openIdempotencyStore,
  type IdempotencyStore,
  type OpenOptions,
} from '../../../src/core/store/idempotency.js';
import { idempotencyMigration, openSqlIdempotencyStore } from '../../../src/core/store/idempotency-sql.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { postgresUrl } from '../../support/postgres.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'idem-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const result = (stdout: string, partial = false) => ({
  exitCode: partial ? 7 : 0,
  stdout,
  partial,
  input: { a: 1 },
  output: { ok: 1 },
});

/**
 * One suite, every store: the CLI's SQLite file, and the shared deployment's store on
 * PostgreSQL (and on SQLite through the same SQL), each `open` a new process or replica.
 */
interface Engine {
  name: string;
  open(options?: OpenOptions): Promise<IdempotencyStore>;
  /** The record's noted keys and tokens. */
  reserved(): Promise<Record<string, string>>;
  count(): Promise<number>;
}

const sqliteFile: Engine = {
  name: 'SQLite file (one machine)',
  open: (options) => openIdempotencyStore(join(dir, 'idem.db'), options),
  async reserved() {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, 'idem.db'), { readonly: true });
    const row = db.prepare('SELECT reserved_json FROM idempotency_requests').get() as {
      reserved_json: string;
    };
    db.close();
    return JSON.parse(row.reserved_json) as Record<string, string>;
  },
  async count() {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, 'idem.db'), { readonly: true });
    const row = db.prepare('SELECT count(*) AS n FROM idempotency_requests').get() as { n: number };
    db.close();
    return row.n;
  },
};

/**
 * A store over sql.ts. PostgreSQL: each `open` its own pool, as replicas have. SQLite: one
 * connection for the process, as a single server has (better-sqlite3 waits for a lock
 * synchronously, so two connections of one process would wait on each other).
 */
function sqlEngine(name: string, client: () => Promise<SqlClient>, shared: boolean): Engine {
  let one: Promise<SqlClient> | undefined;
  afterEach(async () => {
    await (await one)?.close();
    one = undefined;
  });
  const connect = () => (shared ? (one ??= client()) : client());
  const done = async (db: SqlClient) => {
    if (!shared) await db.close();
  };
  return {
    name,
    async open(options) {
      const db = await connect();
      await migrate(db, [idempotencyMigration]);
      return openSqlIdempotencyStore(db, { ...options, closeClient: !shared });
    },
    async reserved() {
      const db = await connect();
      const [row] = await db.query<{ reserved_json: string }>(
        'SELECT reserved_json FROM idempotency_requests',
      );
      await done(db);
      return JSON.parse(row!.reserved_json) as Record<string, string>;
    },
    async count() {
      const db = await connect();
      const [row] = await db.query<{ n: number }>('SELECT count(*) AS n FROM idempotency_requests');
      await done(db);
      return Number(row!.n);
    },
  };
}

let pgUrl: string | undefined;
beforeAll(async () => {
  pgUrl = await postgresUrl();
});
afterAll(() => {
  pgUrl = undefined;
});
const postgres = sqlEngine(
  'PostgreSQL (shared deployment)',
  () => openPostgresClient(pgUrl!, { max: 2 }),
  false,
);
beforeEach(async () => {
  if (!pgUrl) return;
  const db = await openPostgresClient(pgUrl, { max: 1 });
  await migrate(db, [idempotencyMigration]);
  await db.run('DELETE FROM idempotency_requests');
  await db.close();
});
const sqliteSql = sqlEngine(
  'SQLite through the shared store',
  async () => openSqliteClient(join(dir, 'shared.db')),
  true,
);

describe.each([sqliteFile, postgres, sqliteSql])('idempotency store: $name', (engine) => {
  const openIdempotencyStore = (_path: string, options?: OpenOptions) => engine.open(options);
  it('records expire after 24 hours', async () => {
    let t = 1_000_000;
    const path = join(dir, 'idem.db');
    const store = await openIdempotencyStore(path, { now: () => t });
    expect((await store.begin('cmd', 'k', 'h1')).kind).toBe('run');
    await store.complete('cmd', 'k', result('out\n'));
    t += IDEMPOTENCY_TTL_MS - 1;
    expect(await store.begin('cmd', 'k', 'h1')).toMatchObject({
      kind: 'replay',
      result: { stdout: 'out\n' },
    });
    t += 2;
    // Expired: the same key now stands for a new request, even with other arguments.
    expect((await store.begin('cmd', 'k', 'h2')).kind).toBe('run');
    await store.close();
  });

  it('purges expired records when opened', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const a = await openIdempotencyStore(path, { now: () => t });
    await a.begin('cmd', 'k', 'h');
    await a.complete('cmd', 'k', result('x'));
    await a.close();
    t = IDEMPOTENCY_TTL_MS + 10;
    const b = await openIdempotencyStore(path, { now: () => t });
    await b.close();
    expect(await engine.count()).toBe(0);
  });

  it('a claim held by a live process makes the other wait, then a retryable conflict when the wait runs out', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, {
      now: () => t,
      pid: 111,
      host: 'h',
      isAlive: () => true,
    });
    await owner.begin('cmd', 'k', 'h');
    const waiter = await openIdempotencyStore(path, {
      now: () => t,
      pid: 222,
      host: 'h',
      isAlive: () => true,
      sleep: async (ms) => {
        t += ms;
      },
    });
    const error = await waiter.begin('cmd', 'k', 'h', { waitMs: 1000, pollMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZoteusError);
    expect(error).toMatchObject({ code: 'conflict', retryable: true });
    await owner.close();
    await waiter.close();
  });

  it('eight callers claiming one key at once: exactly one runs, the others replay its outcome', async () => {
    const stores = await Promise.all(
      Array.from({ length: 8 }, (_, i) => engine.open({ pid: 100 + i, host: `replica-${i}`, renewMs: 0 })),
    );
    let runs = 0;
    const answers = await Promise.all(
      stores.map(async (store) => {
        const begun = await store.begin('cmd', 'race', 'h', { pollMs: 5 });
        if (begun.kind === 'run') {
          runs++;
          await new Promise((r) => setTimeout(r, 30));
          await store.complete('cmd', 'race', result('the one\n'));
          return 'ran';
        }
        return begun.kind === 'replay' ? begun.result.stdout : begun.kind;
      }),
    );
    expect(runs).toBe(1);
    expect(answers.filter((a) => a === 'ran')).toHaveLength(1);
    expect(answers.filter((a) => a === 'the one\n')).toHaveLength(7);
    expect(await engine.count()).toBe(1);
    for (const store of stores) await store.close();
  });

  it('a waiter gets the owner’s result as soon as it is stored', async () => {
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, { pid: 1, host: 'h', isAlive: () => true });
    await owner.begin('cmd', 'k', 'h');
    const waiter = await openIdempotencyStore(path, {
      pid: 2,
      host: 'h',
      isAlive: () => true,
      sleep: async () => {
        await owner.complete('cmd', 'k', result('done\n'));
      },
    });
    expect(await waiter.begin('cmd', 'k', 'h')).toMatchObject({
      kind: 'replay',
      result: { stdout: 'done\n' },
    });
    await owner.close();
    await waiter.close();
  });

  it('a claim left by a dead process is taken over', async () => {
    const path = join(dir, 'idem.db');
    const dead = await openIdempotencyStore(path, { pid: 999_999, host: 'h' });
    await dead.begin('cmd', 'k', 'h');
    await dead.close();
    const next = await openIdempotencyStore(path, { pid: 5, host: 'h', isAlive: () => false });
    expect((await next.begin('cmd', 'k', 'h')).kind).toBe('run');
    await next.close();
  });

  it('release keeps a claimed request, with its seed, for the retry to resume', async () => {
    const path = join(dir, 'idem.db');
    const store = await openIdempotencyStore(path, { renewMs: 0 });
    const first = await store.begin('cmd', 'r', 'h');
    expect(first).toMatchObject({ kind: 'run', resumed: false });
    await store.release('cmd', 'r');
    const again = await store.begin('cmd', 'r', 'h');
    // The same logical request: same seed, and it may have written already.
    expect(again).toEqual({ kind: 'run', seed: (first as { seed: string }).seed, resumed: true });
    // Still one request: other arguments under the same key are refused.
    await expect(store.begin('cmd', 'r', 'other')).rejects.toMatchObject({
      code: 'conflict',
      retryable: false,
    });
    await store.close();
  });

  it('a partial result is retried with the request seed, and a released retry keeps it', async () => {
    const path = join(dir, 'idem.db');
    const store = await openIdempotencyStore(path, { renewMs: 0 });
    const first = (await store.begin('cmd', 'p', 'h')) as { seed: string };
    await store.complete('cmd', 'p', result('partial\n', true));
    const retry = await store.begin('cmd', 'p', 'h');
    expect(retry).toMatchObject({
      kind: 'partial',
      seed: first.seed,
      result: { stdout: 'partial\n', input: { a: 1 } },
    });
    await store.release('cmd', 'p');
    expect((await store.begin('cmd', 'p', 'h')).kind).toBe('partial');
    await store.close();
  });

  it('an expired lease is taken over even when its owner seems alive', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, {
      now: () => t,
      pid: 1,
      host: 'h',
      isAlive: () => true,
      renewMs: 0,
    });
    const first = (await owner.begin('cmd', 'k', 'h')) as { seed: string };
    t += LEASE_MS + 1;
    const next = await openIdempotencyStore(path, {
      now: () => t,
      pid: 2,
      host: 'h',
      isAlive: () => true,
      renewMs: 0,
    });
    expect(await next.begin('cmd', 'k', 'h')).toEqual({ kind: 'run', seed: first.seed, resumed: true });
    // The first owner's late outcome does not overwrite the new owner's claim.
    await owner.complete('cmd', 'k', result('late\n'));
    await next.complete('cmd', 'k', result('mine\n'));
    expect(await next.begin('cmd', 'k', 'h')).toMatchObject({ kind: 'replay', result: { stdout: 'mine\n' } });
    await owner.close();
    await next.close();
  });

  it('a held lease is renewed while the work goes on', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, {
      now: () => t,
      pid: 1,
      host: 'h',
      isAlive: () => true,
      renewMs: 5,
    });
    await owner.begin('cmd', 'k', 'h');
    t += LEASE_MS - 10;
    await new Promise((r) => setTimeout(r, 50));
    t += 20;
    const other = await openIdempotencyStore(path, {
      now: () => t,
      pid: 2,
      host: 'h',
      isAlive: () => true,
      renewMs: 0,
      sleep: async () => {},
    });
    await expect(other.begin('cmd', 'k', 'h', { waitMs: 0 })).rejects.toMatchObject({
      code: 'conflict',
      retryable: true,
    });
    await owner.close();
    await other.close();
  });

  describe('the keys and tokens a request derived', () => {
    it('are noted with its record, all of them, once a request is about to be sent', async () => {
      const { runIdempotent } = await import('../../../src/core/call/idempotency.js');
      const store = await engine.open({ renewMs: 0 });
      const tool = { retryFailed: undefined } as never;
      const keys: string[] = [];
      await runIdempotent({
        store,
        scope: 'cmd',
        key: 'k',
        argsHash: 'h',
        tool,
        input: {},
        run: async (_input, ids) => {
          for (let c = 0; c < 2; c++) {
            for (let i = 0; i < 50; i++) keys.push(ids.objectKey(`items/item/${c * 50 + i}`));
            ids.writeToken(`items/chunk/${c}`);
          }
          return { value: 0, bytes: 'ok\n', exitCode: 0, partial: false };
        },
        fail: () => {
          throw new Error('no failure expected');
        },
        replay: () => 0,
      });
      await store.close();
      const reserved = await engine.reserved();
      expect(Object.keys(reserved)).toHaveLength(102);
      expect(reserved['key:items/item/0']).toBe(keys[0]);
      expect(reserved['key:items/item/99']).toBe(keys[99]);
      expect(reserved['token:items/chunk/1']).toMatch(/^[0-9a-f]{32}$/);
    });
  });
});

describe('the SQLite file store', () => {
  it.each([
    ['garbage', (p: string) => writeFileSync(p, 'this is not a database, just text '.repeat(200))],
    [
      'a truncated database',
      (p: string) => writeFileSync(p, Buffer.from('SQLite format 3\0').subarray(0, 12)),
    ],
    ['a directory', (p: string) => mkdirSync(p)],
  ])('a store file that is %s is named as damaged, never a bug', async (_what, make) => {
    const path = join(dir, 'idem.db');
    make(path);
    const error = await openIdempotencyStore(path).then(
      async (store) => {
        try {
          await store.begin('cmd', 'k', 'h');
        } finally {
          await store.close();
        }
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ZoteusError);
    expect(error).toMatchObject({ code: 'validation_error', field: 'ZOT_CACHE_DIR' });
    expect((error as ZoteusError).message).toContain(path);
    expect((error as ZoteusError).hint).toMatch(/Move it aside.*only the replay records/);
  });
});
