/**
 * The two databases the OAuth store runs on, each fresh and migrated: an embedded SQLite file
 * in a temporary folder, and a new database in the test PostgreSQL cluster (postgresUrl fails,
 * never skips, when there is none).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authMigrations } from '../../../../src/core/store/auth-store.js';
import { migrate } from '../../../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../../src/core/store/sql.js';
import { postgresUrl } from '../../../support/postgres.js';

export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASES: DatabaseKind[] = ['sqlite', 'postgres'];

export interface TestDatabase {
  db: SqlClient;
  close(): Promise<void>;
}

export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  let db: SqlClient;
  let cleanup = () => {};
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'zoteus-auth-'));
    db = openSqliteClient(join(dir, 'state.db'));
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  } else {
    db = await openPostgresClient(await postgresUrl(), { max: 4 });
  }
  await migrate(db, [{ id: '0100_auth', statements: authMigrations }]);
  return {
    db,
    async close() {
      await db.close();
      cleanup();
    },
  };
}
