/**
 * The rate limits that replicas of a shared deployment keep together, in PostgreSQL: the
 * four-requests-in-flight bound of one Zotero key (and, when configured, a cap on all requests
 * to one upstream server) as leased slot rows, and the pauses Zotero asked one replica for
 * (`Backoff`, `Retry-After`), which every replica then waits out before its next request.
 *
 * A slot is taken with `FOR UPDATE SKIP LOCKED`, so replicas never wait on each other's row
 * locks, only for a free slot. A slot's lease is renewed while its replica holds it; a
 * replica that dies frees its slots when their lease runs out. If the database does not
 * answer, a request goes ahead under its own replica's bound alone (the next 429 is retried).
 */
import type { SharedLimits } from '../http/types.js';
import type { Migration } from './migrations.js';
import type { SqlClient } from './sql.js';

export const sharedLimitsMigration: Migration = {
  id: '0008_shared_limits',
  statements: [
    `CREATE TABLE IF NOT EXISTS upstream_slots (
      scope TEXT NOT NULL,
      slot INTEGER NOT NULL,
      replica TEXT,
      holder TEXT,
      lease_until BIGINT NOT NULL DEFAULT 0,
      PRIMARY KEY (scope, slot)
    )`,
    `CREATE TABLE IF NOT EXISTS upstream_pauses (
      scope TEXT PRIMARY KEY,
      paused_until BIGINT NOT NULL
    )`,
  ],
};

/** Key checks (`GET /keys/current`) shared by the replicas, by the key's hash (library/keys.ts). */
export const keyChecksMigration: Migration = {
  id: '0008_key_checks',
  statements: [
    `CREATE TABLE IF NOT EXISTS key_checks (
      key_hash TEXT PRIMARY KEY,
      body TEXT NOT NULL,
      checked_at BIGINT NOT NULL
    )`,
  ],
};

/** One bound: `max` requests in flight at once under `scope` (a hashed key, or an upstream). */
export interface LimitScope {
  scope: string;
  max: number;
}

export interface SharedLimitsOptions {
  /** This replica's id: its slots are renewed together and freed when it is gone. */
  replica: string;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How often a request waiting for a slot looks again. */
  pollMs?: number;
  leaseMs?: number;
}

export function sharedLimits(
  db: SqlClient,
  scopes: readonly LimitScope[],
  options: SharedLimitsOptions,
): SharedLimits {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const pollMs = options.pollMs ?? 25;
  const leaseMs = options.leaseMs ?? 120_000;
  const ready = new Map<string, Promise<void>>();
  let counter = 0;
  let held = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const ensure = (s: LimitScope): Promise<void> => {
    let made = ready.get(s.scope);
    if (!made) {
      made = (async () => {
        for (let slot = 0; slot < s.max; slot++) {
          await db.run(
            'INSERT INTO upstream_slots (scope, slot) VALUES (?, ?) ON CONFLICT (scope, slot) DO NOTHING',
            [s.scope, slot],
          );
        }
      })();
      made.catch(() => ready.delete(s.scope));
      ready.set(s.scope, made);
    }
    return made;
  };

  const renewing = (delta: number): void => {
    held += delta;
    if (held > 0 && timer === undefined) {
      timer = setInterval(() => {
        db.run('UPDATE upstream_slots SET lease_until = ? WHERE replica = ? AND holder IS NOT NULL', [
          now() + leaseMs,
          options.replica,
        ]).catch(() => undefined);
      }, leaseMs / 4);
      timer.unref();
    } else if (held === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const take = async (s: LimitScope, holder: string): Promise<number> => {
    await ensure(s);
    for (;;) {
      const t = now();
      const [row] = await db.query<{ slot: number }>(
        `UPDATE upstream_slots SET replica = ?, holder = ?, lease_until = ?
         WHERE scope = ? AND slot = (
           SELECT slot FROM upstream_slots WHERE scope = ? AND slot < ? AND (holder IS NULL OR lease_until < ?)
           ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED
         ) RETURNING slot`,
        [options.replica, holder, t + leaseMs, s.scope, s.scope, s.max, t],
      );
      if (row) return Number(row.slot);
      await sleep(pollMs / 2 + Math.random() * pollMs);
    }
  };

  const give = (s: LimitScope, slot: number, holder: string): void => {
    db.run(
      'UPDATE upstream_slots SET holder = NULL, lease_until = 0 WHERE scope = ? AND slot = ? AND holder = ?',
      [s.scope, slot, holder],
    ).catch(() => undefined);
  };

  return {
    async acquire() {
      const holder = `${options.replica}:${++counter}`;
      const taken: Array<[LimitScope, number]> = [];
      try {
        // Always in the same order (the key's, then the upstream's), so no two requests wait on each other.
        for (const s of scopes) taken.push([s, await take(s, holder)]);
        const pauses = await db.query<{ paused_until: number }>(
          `SELECT paused_until FROM upstream_pauses WHERE scope IN (${scopes.map(() => '?').join(', ')})`,
          scopes.map((s) => s.scope),
        );
        renewing(1);
        let released = false;
        return {
          pausedUntil: Math.max(0, ...pauses.map((p) => Number(p.paused_until))),
          release: () => {
            if (released) return;
            released = true;
            renewing(-1);
            for (const [s, slot] of taken) give(s, slot, holder);
          },
        };
      } catch {
        for (const [s, slot] of taken) give(s, slot, holder);
        return { pausedUntil: 0, release: () => {} };
      }
    },
    pause(until) {
      // The key's pause: Zotero asks it of the key that was answered (the first scope).
      for (const s of scopes.slice(0, 1)) {
        db.run(
          `INSERT INTO upstream_pauses (scope, paused_until) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE
           SET paused_until = CASE WHEN excluded.paused_until > upstream_pauses.paused_until
             THEN excluded.paused_until ELSE upstream_pauses.paused_until END`,
          [s.scope, Math.round(until)],
        ).catch(() => undefined);
      }
    },
  };
}
