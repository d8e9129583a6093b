/**
 * The plans of a shared deployment with a state database: the plans of plans.ts (the same
 * ids, the same day's expiry, the same refusals), kept as the owner's rows of the `plans`
 * table through sql.ts, so a plan previewed on one replica is applied on another. Every row
 * read or deleted is the owner's: another owner's id is "no such plan", as in another folder.
 */
import type { Migration } from './migrations.js';
import {
  checkPlan,
  newPlanId,
  PLAN_ID,
  PLAN_TTL_MS,
  unknownPlan,
  type PlanStore,
  type StoredPlan,
} from './plans.js';
import type { SqlClient } from './sql.js';

export const plansMigration: Migration = {
  id: '0006_plans',
  statements: [
    `CREATE TABLE IF NOT EXISTS plans (
      owner TEXT NOT NULL,
      id TEXT NOT NULL,
      kind TEXT NOT NULL,
      library TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (owner, id)
    )`,
    'CREATE INDEX IF NOT EXISTS plans_expires ON plans (expires_at)',
  ],
};

interface Row {
  id: string;
  kind: string;
  library: string;
  created_at: number | string;
  expires_at: number | string;
  body: string;
}

export function sqlPlanStore(db: SqlClient, owner: string): PlanStore {
  // Plans older than a day, of every owner: nobody can apply them any more.
  const prune = async (now: number = Date.now()) =>
    (await db.run('DELETE FROM plans WHERE expires_at <= ?', [now])).changes;
  return {
    prune,
    async save<T>(kind: string, library: string, body: T, now: number = Date.now()) {
      await prune(now);
      const plan: StoredPlan<T> = {
        id: newPlanId(),
        kind,
        library,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + PLAN_TTL_MS).toISOString(),
        body,
      };
      await db.run(
        'INSERT INTO plans (owner, id, kind, library, created_at, expires_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [owner, plan.id, kind, library, now, now + PLAN_TTL_MS, JSON.stringify(body)],
      );
      return plan;
    },
    async load<T>(kind: string, library: string, id: string, now: number = Date.now()) {
      if (!PLAN_ID.test(id)) throw unknownPlan(id, 'a plan id looks like p_ and 16 letters or digits');
      const [row] = await db.query<Row>(
        'SELECT id, kind, library, created_at, expires_at, body FROM plans WHERE owner = ? AND id = ?',
        [owner, id],
      );
      if (!row) throw unknownPlan(id, 'there is no such plan, or it has expired');
      const plan: StoredPlan<T> = {
        id: row.id,
        kind: row.kind,
        library: row.library,
        createdAt: new Date(Number(row.created_at)).toISOString(),
        expiresAt: new Date(Number(row.expires_at)).toISOString(),
        body: JSON.parse(row.body) as T,
      };
      return checkPlan(plan, kind, library, id, now);
    },
  };
}
