/**
 * The operator's commands of a shared deployment, as processes: `zot server migrate` (two at
 * once on one PostgreSQL: each migration applied exactly once), its dry run (creates
 * nothing), and `zot server rotate-keys` (keys under an older key move to the newest).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresClient } from '../../../src/core/store/sql.js';
import { parseSecretKeys } from '../../../src/core/tenants/secrets.js';
import { tenantStore } from '../../../src/core/tenants/store.js';
import { runZot, sandbox } from '../../support/cli.js';
import { STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import { postgresUrl } from '../../support/postgres.js';

const OLD = Buffer.alloc(32, 7).toString('base64');
const NEW = Buffer.alloc(32, 9).toString('hex');
// Every migration of the state database, in order (each slice of issue 23 adds its own).
const IDS = STATE_MIGRATIONS.map((m) => m.id);

let box: ReturnType<typeof sandbox>;
let url: string;
beforeAll(async () => {
  box = sandbox();
  url = await postgresUrl();
});
afterAll(() => box.cleanup());

describe('zot server migrate', () => {
  it('a dry run on a single server lists every migration and creates no file', async () => {
    const run = await runZot(['server', 'migrate', '--dry-run'], { env: box.env });
    expect(run.code).toBe(0);
    expect(run.json().data).toEqual({
      database: join(box.env.ZOTEUS_DATA_DIR as string, 'server.db'),
      would_apply: IDS,
      applied: [],
    });
    expect(existsSync(join(box.env.ZOTEUS_DATA_DIR as string, 'server.db'))).toBe(false);
  });

  it('two replicas migrating one PostgreSQL at once: each migration applied once, both succeed', async () => {
    const env = { ...box.env, ZOTEUS_DATABASE_URL: url };
    const [a, b] = await Promise.all([
      runZot(['server', 'migrate'], { env }),
      runZot(['server', 'migrate'], { env }),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const applied = [a, b].flatMap((r) => (r.json().data as { applied: string[] }).applied);
    expect(applied.sort()).toEqual(IDS);
    for (const r of [a, b]) {
      expect((r.json().data as { database: string }).database).toBe('PostgreSQL (ZOTEUS_DATABASE_URL)');
      expect(r.stdout + r.stderr).not.toContain(url);
    }
    const db = new pg.Client(url);
    await db.connect();
    const ledger = await db.query('SELECT id FROM zoteus_migrations ORDER BY id');
    await db.end();
    expect(ledger.rows.map((r: { id: string }) => r.id)).toEqual(IDS);
    const again = await runZot(['server', 'migrate', '--dry-run'], { env });
    expect(again.json().data).toEqual({
      database: 'PostgreSQL (ZOTEUS_DATABASE_URL)',
      would_apply: [],
      applied: IDS,
    });
  });

  it('an unreachable database is a retryable network_error that names no password', async () => {
    const run = await runZot(['server', 'migrate'], {
      env: { ...box.env, ZOTEUS_DATABASE_URL: 'postgres://op:s3cretpassw0rd@127.0.0.1:9/zoteus' },
    });
    expect(run.code).not.toBe(0);
    const error = (run.json() as { error: { code: string; retryable: boolean } }).error;
    expect(error).toMatchObject({ code: 'network_error', retryable: true });
    expect(run.stdout + run.stderr).not.toContain('s3cretpassw0rd');
  });
});

describe('zot server rotate-keys', () => {
  // Its own tables, whatever ran before (a filtered run starts here).
  beforeAll(async () => {
    const migrated = await runZot(['server', 'migrate'], { env: { ...box.env, ZOTEUS_DATABASE_URL: url } });
    expect(migrated.code).toBe(0);
  });

  it('moves every key under the newest key, after which the old key can go', async () => {
    const db = await openPostgresClient(url, { max: 1 });
    await tenantStore(db, parseSecretKeys(OLD)).put({
      id: '77',
      username: 'eve',
      apiKey: 'EveKey000000000000000077',
    });
    await db.close();
    const env = { ...box.env, ZOTEUS_DATABASE_URL: url, ZOTEUS_SECRET_KEYS: `${NEW},${OLD}` };
    const run = await runZot(['server', 'rotate-keys'], { env });
    expect(run.code).toBe(0);
    expect(run.json().data).toMatchObject({ tenants: 1, reencrypted: 1, key_id: parseSecretKeys(NEW)[0].id });
    expect(run.stdout + run.stderr).not.toContain(OLD);
    const second = await runZot(['server', 'rotate-keys'], { env });
    expect(second.json().data).toMatchObject({ tenants: 1, reencrypted: 0 });
    const after = await openPostgresClient(url, { max: 1 });
    expect((await tenantStore(after, parseSecretKeys(NEW)).get('77'))!.apiKey).toBe(
      'EveKey000000000000000077',
    );
    await after.close();
  });

  it('without ZOTEUS_SECRET_KEYS: a validation_error saying what to set, exit 3', async () => {
    const run = await runZot(['server', 'rotate-keys'], { env: { ...box.env, ZOTEUS_DATABASE_URL: url } });
    expect(run.code).toBe(3);
    expect(run.json()).toMatchObject({ error: { code: 'validation_error', field: 'ZOTEUS_SECRET_KEYS' } });
  });
});
