/**
 * Replicas of a shared deployment keep one Zotero key's limits together, in PostgreSQL: at
 * most four requests in flight for the key across all replicas, a pause one replica was asked
 * for honoured by the others, and the slots of a replica that died freed when their lease ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/core/store/migrations.js';
import { sharedLimits, sharedLimitsMigration } from '../../../src/core/store/shared-limits.js';
import { openPostgresClient, type SqlClient } from '../../../src/core/store/sql.js';
import { createZoteroClient } from '../../../src/core/zotero/index.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';

const KEY = 'SharedLimitKey0000000001';
let db: SqlClient;
let zotero: ZoteroTestServer;
beforeAll(async () => {
  db = await openPostgresClient(await postgresUrl(), { max: 8 });
  await migrate(db, [sharedLimitsMigration]);
  zotero = await startZoteroServer({ latencyMs: 20 });
  zotero.addUser({ userID: 5, username: 'five' });
  zotero.addKey({ key: KEY, userID: 5, access: { user: { library: true, write: true } } });
  zotero.library('users/5').addItems(Array.from({ length: 30 }, (_, i) => ({ title: `Item ${i}` })));
});
afterAll(async () => {
  await zotero.close();
  await db.close();
});

/** A replica's Web API client for the key, sharing the key's limits through the database. */
const replica = (name: string, scope: string, retryBudgetMs = 60_000) =>
  createZoteroClient({
    apiUrl: zotero.url,
    apiKey: KEY,
    retryBudgetMs,
    shared: sharedLimits(db, [{ scope, max: 4 }], { replica: name, pollMs: 5 }),
  });

describe('limits shared by replicas (PostgreSQL)', () => {
  it('three replicas reading at once: never more than four requests of the key in flight', async () => {
    const clients = ['a', 'b', 'c'].map((name) => replica(name, 'key:inflight'));
    zotero.clearLog();
    await Promise.all(
      clients.flatMap((client) =>
        Array.from({ length: 6 }, (_, i) =>
          client.request('GET', '/users/5/items', { query: { limit: 1, start: i } }),
        ),
      ),
    );
    expect(zotero.log.filter((r) => r.path.startsWith('/users/5/items'))).toHaveLength(18);
    expect(zotero.maxInFlight()).toBeLessThanOrEqual(4);
    expect(zotero.maxInFlight()).toBeGreaterThan(1);
    // Every slot is given back (a release is written after its answer is handed on: wait for it).
    let held = -1;
    for (let i = 0; i < 200 && held !== 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 10));
      const [row] = await db.query<{ n: number }>(
        "SELECT count(*) AS n FROM upstream_slots WHERE scope = 'key:inflight' AND holder IS NOT NULL",
      );
      held = Number(row!.n);
    }
    expect(held).toBe(0);
  });

  it('a Retry-After one replica was given holds the other: it sends nothing while paused', async () => {
    const first = replica('a', 'key:pause', 60_000);
    // The second has too little budget to wait out 30 s: it must fail at once rather than send.
    const second = replica('b', 'key:pause', 2_000);
    zotero.faults.rateLimit({ retryAfter: 30, times: 1 });
    zotero.clearLog();
    const waiting = first.request('GET', '/users/5/items', { query: { limit: 1 } });
    // Wait until the 429 is in, and its pause recorded.
    for (let i = 0; i < 1000; i++) {
      const [row] = await db.query<{ paused_until: number }>(
        "SELECT paused_until FROM upstream_pauses WHERE scope = 'key:pause'",
      );
      if (row) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const sentBefore = zotero.log.length;
    const refused = await second
      .request('GET', '/users/5/items', { query: { limit: 1 } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'rate_limited' });
    expect(zotero.log.length).toBe(sentBefore);
    void waiting.catch(() => undefined);
  });

  it('a replica that died holding slots: they are taken again once its lease ends', async () => {
    let t = 1_000_000;
    const dead = sharedLimits(db, [{ scope: 'key:dead', max: 2 }], {
      replica: 'dead',
      now: () => t,
      leaseMs: 1000,
    });
    await dead.acquire();
    await dead.acquire();
    const alive = sharedLimits(db, [{ scope: 'key:dead', max: 2 }], {
      replica: 'alive',
      now: () => t,
      leaseMs: 1000,
      pollMs: 5,
      sleep: async () => {
        t += 600;
      },
    });
    const got = await alive.acquire();
    // Two polls of 600 ms: the dead replica's lease of 1 s had to end first.
    expect(t).toBeGreaterThanOrEqual(1_001_000);
    got.release();
  });
});
