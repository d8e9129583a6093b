/**
 * Versioned schema migrations of the shared state database. Each migration has an id that
 * sorts in the order it must run and is applied once, in its own transaction, recorded in
 * `zoteus_migrations`. On PostgreSQL a transaction-scoped advisory lock makes the runner safe
 * to start from two replicas at once: the second waits, then finds everything applied. (On
 * SQLite the IMMEDIATE transaction is the lock.)
 */
import { ZoteusError } from '../errors.js';
import type { Dialect, SqlClient } from './sql.js';

export interface Migration {
  /** `0001_idempotency`: a number that orders it, and what it makes. */
  id: string;
  /**
   * Statements run in order, in the portable SQL of sql.ts; a function of the dialect where
   * the two differ (a generated row id is BIGSERIAL in PostgreSQL, AUTOINCREMENT in SQLite).
   */
  statements: readonly string[] | ((dialect: Dialect) => readonly string[]);
}

const LEDGER = `CREATE TABLE IF NOT EXISTS zoteus_migrations (
  id TEXT PRIMARY KEY,
  applied_at BIGINT NOT NULL
)`;

/** One lock id for every Zoteus replica of a database ('zoteus' as 6 bytes). */
const ADVISORY_LOCK = 0x7a6f74657573;

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

function checkOrder(migrations: readonly Migration[]): void {
  const ids = migrations.map((m) => m.id);
  const sorted = [...ids].sort();
  if (new Set(ids).size !== ids.length || ids.some((id, i) => id !== sorted[i])) {
    throw new ZoteusError(
      'internal_error',
      `Migrations must have unique ids in order; got ${ids.join(', ')}.`,
    );
  }
}

async function appliedIds(db: SqlClient): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>('SELECT id FROM zoteus_migrations');
  return new Set(rows.map((row) => row.id));
}

/** Which migrations this database has, and which it lacks (for readiness). */
export async function migrationStatus(
  db: SqlClient,
  migrations: readonly Migration[],
): Promise<MigrationStatus> {
  // Read only: a database never migrated has no ledger yet, and so nothing applied.
  const applied = await appliedIds(db).catch(() => new Set<string>());
  return {
    applied: migrations.filter((m) => applied.has(m.id)).map((m) => m.id),
    pending: migrations.filter((m) => !applied.has(m.id)).map((m) => m.id),
  };
}

/** Applies what is missing, each migration once; returns the ids it applied. */
export async function migrate(
  db: SqlClient,
  migrations: readonly Migration[],
  now: () => number = Date.now,
): Promise<string[]> {
  checkOrder(migrations);
  await db.run(LEDGER).catch(async (error: unknown) => {
    // Two replicas creating the ledger at once: PostgreSQL may refuse the second's CREATE.
    if ((await appliedIds(db).catch(() => undefined)) === undefined) throw error;
  });
  const done: string[] = [];
  for (const migration of migrations) {
    const ran = await db.transaction(async (tx) => {
      if (tx.dialect === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(?)', [ADVISORY_LOCK]);
      const already = await tx.query('SELECT id FROM zoteus_migrations WHERE id = ?', [migration.id]);
      if (already.length > 0) return false;
      const statements =
        typeof migration.statements === 'function' ? migration.statements(tx.dialect) : migration.statements;
      for (const statement of statements) await tx.run(statement);
      await tx.run('INSERT INTO zoteus_migrations (id, applied_at) VALUES (?, ?)', [migration.id, now()]);
      return true;
    });
    if (ran) done.push(migration.id);
  }
  return done;
}
