/**
 * The tenants of a shared deployment: one per Zotero user who signed in, with the Zotero API
 * key the sign-in yielded, encrypted at rest (secrets.ts, the tenant's id bound in so a key
 * copied to another tenant's row does not decrypt). Kept in the deployment's state database
 * (sql.ts), so every replica knows every tenant.
 */
import type { Migration } from '../store/migrations.js';
import type { SqlClient } from '../store/sql.js';
import {
  encryptSecret,
  decryptSecret,
  needsReencryption,
  reencryptSecret,
  type SecretKeys,
} from './secrets.js';

export const tenantsMigration: Migration = {
  id: '0003_tenants',
  statements: [
    `CREATE TABLE IF NOT EXISTS tenants (
      id TEXT PRIMARY KEY,
      username TEXT NOT NULL,
      key_ciphertext TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
  ],
};

/** The Zotero user whose library a tenant reaches, when its id is not that user's (ZOTEUS_AUTH=oidc). */
export const tenantUserMigration: Migration = {
  id: '0005_tenant_user',
  statements: ['ALTER TABLE tenants ADD COLUMN user_id BIGINT'],
};

export interface Tenant {
  /** The Zotero user id, as text (with sign-in through Zotero); `oidc:<sub>` with an OpenID provider. */
  id: string;
  username: string;
  /** The Zotero user the key belongs to, when stored with it (put's userId). */
  userId?: number;
  /** The Zotero API key, decrypted. */
  apiKey: string;
  createdAt: number;
  updatedAt: number;
}

export interface TenantStore {
  /** Stores a tenant's key (a new sign-in replaces the old key), encrypted under the newest secret key. */
  put(tenant: { id: string; username: string; apiKey: string; userId?: number }): Promise<void>;
  /** The tenant with its key, or undefined when this user never signed in. */
  get(id: string): Promise<Tenant | undefined>;
  /** Forgets a tenant and its key. */
  remove(id: string): Promise<boolean>;
  /** Re-encrypts every key not under the newest secret key: how many there are, and how many moved. */
  rotateKeys(): Promise<{ tenants: number; reencrypted: number }>;
}

interface Row {
  id: string;
  username: string;
  key_ciphertext: string;
  user_id?: number | string | null;
  created_at: number;
  updated_at: number;
}

const associated = (id: string) => `tenant:${id}`;

export function tenantStore(db: SqlClient, keys: SecretKeys, now: () => number = Date.now): TenantStore {
  return {
    async put(tenant) {
      const t = now();
      await db.run(
        `INSERT INTO tenants (id, username, key_ciphertext, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET username = excluded.username, key_ciphertext = excluded.key_ciphertext,
           user_id = excluded.user_id, updated_at = excluded.updated_at`,
        [
          tenant.id,
          tenant.username,
          encryptSecret(keys, tenant.apiKey, associated(tenant.id)),
          tenant.userId ?? null,
          t,
          t,
        ],
      );
    },
    async get(id) {
      const [row] = await db.query<Row>('SELECT * FROM tenants WHERE id = ?', [id]);
      if (!row) return undefined;
      return {
        id: row.id,
        username: row.username,
        ...(row.user_id !== undefined && row.user_id !== null ? { userId: Number(row.user_id) } : {}),
        apiKey: decryptSecret(keys, row.key_ciphertext, associated(row.id)),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      };
    },
    async remove(id) {
      return (await db.run('DELETE FROM tenants WHERE id = ?', [id])).changes > 0;
    },
    async rotateKeys() {
      const rows = await db.query<Pick<Row, 'id' | 'key_ciphertext'>>(
        'SELECT id, key_ciphertext FROM tenants',
      );
      let reencrypted = 0;
      for (const row of rows) {
        if (!needsReencryption(keys, row.key_ciphertext)) continue;
        // Only the row as it was read: a sign-in that replaced the key meanwhile wins.
        const moved = await db.run(
          'UPDATE tenants SET key_ciphertext = ? WHERE id = ? AND key_ciphertext = ?',
          [reencryptSecret(keys, row.key_ciphertext, associated(row.id)), row.id, row.key_ciphertext],
        );
        reencrypted += moved.changes;
      }
      return { tenants: rows.length, reencrypted };
    },
  };
}
