/**
 * The state database of a shared deployment: PostgreSQL at ZOTEUS_DATABASE_URL (for
 * replicas), else an embedded SQLite file, `<data dir>/server.db` (a single server); and every
 * table it holds, in the order the migrations make them.
 */
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ZoteusError } from '../errors.js';
import type { Env } from '../paths.js';
import { journalMigration } from '../journal/store-sql.js';
import { searchFulltextMigration, searchIndexMigration } from '../search-index/postgres.js';
import { tenantsMigration, tenantUserMigration } from '../tenants/store.js';
import { authMigrations } from './auth-store.js';
import { idempotencyMigration } from './idempotency-sql.js';
import { migrate, type Migration } from './migrations.js';
import { plansMigration } from './plans-sql.js';
import { mcpSessionsMigration } from './sessions-sql.js';
import { keyChecksMigration, sharedLimitsMigration } from './shared-limits.js';
import { tenantFilesMigration } from './tenant-files.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from './sql.js';

/** Every table of the state database, in the order they are made. */
export const STATE_MIGRATIONS: readonly Migration[] = [
  idempotencyMigration,
  tenantsMigration,
  journalMigration,
  tenantUserMigration,
  plansMigration,
  searchIndexMigration,
  keyChecksMigration,
  sharedLimitsMigration,
  tenantFilesMigration,
  mcpSessionsMigration,
  { id: '0100_auth', statements: authMigrations },
  searchFulltextMigration,
];

export interface StateDatabase {
  db: SqlClient;
  /** For messages: `PostgreSQL` or the SQLite file's path (never the URL, which may hold a password). */
  where: string;
}

/** The state database the environment names, opened (not migrated). */
export async function openStateDatabase(env: Env, config: Pick<Config, 'dataDir'>): Promise<StateDatabase> {
  const url = env.ZOTEUS_DATABASE_URL?.trim();
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new ZoteusError('validation_error', 'ZOTEUS_DATABASE_URL must be a postgres:// URL.', {
        field: 'ZOTEUS_DATABASE_URL',
        hint: 'Set it to postgres://user:password@host:5432/database, or unset it to keep state in a local SQLite file.',
      });
    }
    return { db: await openPostgresClient(url), where: 'PostgreSQL (ZOTEUS_DATABASE_URL)' };
  }
  const path = stateFile(env, config) as string;
  return { db: openSqliteClient(path), where: path };
}

/** The SQLite file of a single server's state, or undefined when the state is in PostgreSQL. */
export function stateFile(env: Env, config: Pick<Config, 'dataDir'>): string | undefined {
  return env.ZOTEUS_DATABASE_URL?.trim() ? undefined : join(config.dataDir, 'server.db');
}

/** Applies what is missing; safe from several replicas at once. */
export async function migrateState(state: StateDatabase): Promise<{ applied: string[]; current: string[] }> {
  const applied = await migrate(state.db, STATE_MIGRATIONS).catch((error: unknown) => {
    throw unreachable(state, error);
  });
  return { applied, current: STATE_MIGRATIONS.map((m) => m.id) };
}

function unreachable(state: StateDatabase, error: unknown): ZoteusError {
  if (error instanceof ZoteusError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new ZoteusError('network_error', `The state database (${state.where}) cannot be used: ${why}.`, {
    retryable: true,
    hint: 'Check that the database server runs and ZOTEUS_DATABASE_URL points at it.',
  });
}
