import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { parseSecretKeys } from '../../../src/core/tenants/secrets.js';
import { tenantStore, tenantsMigration, tenantUserMigration } from '../../../src/core/tenants/store.js';
import { postgresUrl } from '../../support/postgres.js';

const OLD = Buffer.alloc(32, 1).toString('base64');
const NEW = Buffer.alloc(32, 2).toString('base64');
const KEY_A = 'AAAAAAAAAAAAAAAAAAAAAAA1';
const KEY_B = 'BBBBBBBBBBBBBBBBBBBBBBB2';

let dir: string;
const clients: SqlClient[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tenants-'));
});
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

const engines: [string, () => Promise<SqlClient>][] = [
  ['SQLite', async () => openSqliteClient(join(dir, `t-${clients.length}.db`))],
  ['PostgreSQL', async () => openPostgresClient(await postgresUrl(), { max: 2 })],
];

describe.each(engines)('tenant store on %s', (_name, open) => {
  let db: SqlClient;
  beforeAll(async () => {
    db = await open();
    clients.push(db);
    await migrate(db, [tenantsMigration, tenantUserMigration]);
  });

  it('keeps a key encrypted, bound to its tenant, and gives it back decrypted', async () => {
    const store = tenantStore(db, parseSecretKeys(NEW), () => 1000);
    await store.put({ id: '101', username: 'ada', apiKey: KEY_A });
    expect(await store.get('101')).toEqual({
      id: '101',
      username: 'ada',
      apiKey: KEY_A,
      createdAt: 1000,
      updatedAt: 1000,
    });
    const [row] = await db.query<{ key_ciphertext: string }>(
      'SELECT key_ciphertext FROM tenants WHERE id = ?',
      ['101'],
    );
    expect(row!.key_ciphertext).not.toContain(KEY_A);
    expect(row!.key_ciphertext).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(await store.get('999')).toBeUndefined();
  });

  it('a ciphertext copied to another tenant does not decrypt there', async () => {
    const store = tenantStore(db, parseSecretKeys(NEW));
    await store.put({ id: '202', username: 'bob', apiKey: KEY_B });
    await db.run(
      'UPDATE tenants SET key_ciphertext = (SELECT key_ciphertext FROM tenants WHERE id = ?) WHERE id = ?',
      ['101', '202'],
    );
    const error = await store.get('202').catch((e: unknown) => e as Error);
    expect(error).toMatchObject({ code: 'internal_error' });
    expect((error as Error).message).toContain('belongs to another tenant');
    expect((error as Error).message).not.toContain(KEY_A);
    await store.put({ id: '202', username: 'bob', apiKey: KEY_B });
    expect((await store.get('202'))!.apiKey).toBe(KEY_B);
  });

  it('a new sign-in replaces the key and keeps the creation time', async () => {
    const store = tenantStore(db, parseSecretKeys(NEW), () => 5000);
    await store.put({ id: '101', username: 'ada l.', apiKey: KEY_B });
    expect(await store.get('101')).toMatchObject({
      username: 'ada l.',
      apiKey: KEY_B,
      createdAt: 1000,
      updatedAt: 5000,
    });
    await store.put({ id: '101', username: 'ada', apiKey: KEY_A });
  });

  it('rotate: keys under an old secret key move to the newest, then the old one can go', async () => {
    const old = tenantStore(db, parseSecretKeys(OLD));
    await old.put({ id: '303', username: 'cy', apiKey: KEY_A });
    const both = tenantStore(db, parseSecretKeys(`${NEW},${OLD}`));
    expect((await both.get('303'))!.apiKey).toBe(KEY_A);
    expect(await both.rotateKeys()).toEqual({ tenants: 3, reencrypted: 1 });
    expect(await both.rotateKeys()).toEqual({ tenants: 3, reencrypted: 0 });
    const onlyNew = tenantStore(db, parseSecretKeys(NEW));
    expect((await onlyNew.get('303'))!.apiKey).toBe(KEY_A);
    expect((await onlyNew.get('101'))!.apiKey).toBe(KEY_A);
  });

  it('remove forgets a tenant', async () => {
    const store = tenantStore(db, parseSecretKeys(NEW));
    expect(await store.remove('303')).toBe(true);
    expect(await store.remove('303')).toBe(false);
    expect(await store.get('303')).toBeUndefined();
  });
});
