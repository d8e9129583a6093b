/**
 * A tenant's saved files on a shared deployment with a state database (`Deps.sharedState`):
 * evidence tables, exports, downloaded attachments and .bib files, kept as the owner's rows of
 * `tenant_files` (through sql.ts, on PostgreSQL or SQLite) rather than on one replica's disk,
 * so a file saved through one replica is read back through any other. Every row read, written
 * or deleted is the owner's: another owner's path is "no such file", as in another folder.
 *
 * A path is the file's place in the owner's folder, `/`-separated and already confined and
 * normalised by render/save.ts (`resolveSavePath`). The rows keep a folder's shape: a file
 * cannot be saved where a folder is (`a` while `a/b` exists) nor under a file (`a/b` while `a`
 * is a file), as on a disk. The quota is the sum of the owner's sizes, checked in the same
 * transaction as the write and under a lock on the owner, so two saves at once cannot both
 * pass it.
 */
import { contentTypeByName } from '../attachments/content-type.js';
import type { Migration } from './migrations.js';
import type { SqlClient } from './sql.js';

export const tenantFilesMigration: Migration = {
  id: '0009_tenant_files',
  statements: (dialect) => [
    `CREATE TABLE IF NOT EXISTS tenant_files (
      owner TEXT NOT NULL,
      path TEXT NOT NULL,
      bytes ${dialect === 'postgres' ? 'BYTEA' : 'BLOB'} NOT NULL,
      size BIGINT NOT NULL,
      content_type TEXT,
      updated_at BIGINT NOT NULL,
      PRIMARY KEY (owner, path)
    )`,
  ],
};

/** What a write did: stored, or why nothing was. */
export type PutResult =
  | { stored: true; size: number; replaced: boolean }
  /** A file of that path exists and `overwrite` was not given. */
  | { stored: false; reason: 'exists' }
  /** The path names a folder (files are saved under it). */
  | { stored: false; reason: 'folder' }
  /** A part of the path (`at`) is a file, so it cannot be a folder. */
  | { stored: false; reason: 'under_file'; at: string }
  /** The file would pass the quota: `used` is everything the owner holds now. */
  | { stored: false; reason: 'quota'; used: number };

export interface TenantFileInfo {
  size: number;
  contentType: string | undefined;
  updatedAt: number;
}

export interface TenantFileStore {
  /**
   * Stores `bytes` at `path` in one transaction: refused (nothing written) when the path is
   * taken without `overwrite`, is a folder, lies under a file, or would take the owner past
   * `quota` bytes (the file it replaces given back).
   */
  put(
    path: string,
    bytes: Uint8Array,
    options: { overwrite: boolean; quota: number; contentType?: string | undefined; now?: number },
  ): Promise<PutResult>;
  /** The file at `path`, a folder (some file lies under it), or nothing. */
  stat(path: string): Promise<({ kind: 'file' } & TenantFileInfo) | { kind: 'folder' } | undefined>;
  /** The bytes of the file at `path`, or undefined. */
  read(path: string): Promise<Uint8Array | undefined>;
  /** Deletes the file at `path`; whether there was one. */
  delete(path: string): Promise<boolean>;
  /** The owner's files by path, at most `limit` of them, and how many there are. */
  list(limit: number): Promise<{ files: Array<{ path: string } & TenantFileInfo>; total: number }>;
  /** The bytes the owner's files take. */
  used(): Promise<number>;
}

/** One class of PostgreSQL advisory locks (two-key form) for the owners of tenant files. */
const LOCK_CLASS = 0x7a7466; // 'ztf'

/** `a/b/c` → `a`, `a/b`: the folders a path lies in. */
function parentsOf(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** The length of a string as both databases' `substr` counts it: in characters (code points). */
function charLength(text: string): number {
  return [...text].length;
}

async function usedBy(db: SqlClient, owner: string): Promise<number> {
  const [row] = await db.query<{ used: number | string | null }>(
    'SELECT COALESCE(SUM(size), 0) AS used FROM tenant_files WHERE owner = ?',
    [owner],
  );
  return Number(row?.used ?? 0);
}

async function isFolder(db: SqlClient, owner: string, path: string): Promise<boolean> {
  const prefix = `${path}/`;
  const rows = await db.query(
    'SELECT 1 AS found FROM tenant_files WHERE owner = ? AND substr(path, 1, ?) = ? LIMIT 1',
    [owner, charLength(prefix), prefix],
  );
  return rows.length > 0;
}

export function sqlTenantFileStore(db: SqlClient, owner: string): TenantFileStore {
  return {
    async put(path, bytes, options) {
      return db.transaction(async (tx) => {
        // One save of this owner at a time across replicas; SQLite's IMMEDIATE transaction is the lock.
        if (tx.dialect === 'postgres') {
          await tx.query('SELECT pg_advisory_xact_lock(?, hashtext(?))', [LOCK_CLASS, owner]);
        }
        const parents = parentsOf(path);
        if (parents.length > 0) {
          const files = await tx.query<{ path: string }>(
            `SELECT path FROM tenant_files WHERE owner = ? AND path IN (${parents.map(() => '?').join(', ')})`,
            [owner, ...parents],
          );
          const at = parents.find((p) => files.some((f) => f.path === p));
          if (at !== undefined) return { stored: false, reason: 'under_file', at } as const;
        }
        if (await isFolder(tx, owner, path)) return { stored: false, reason: 'folder' } as const;
        const [existing] = await tx.query<{ size: number | string }>(
          'SELECT size FROM tenant_files WHERE owner = ? AND path = ?',
          [owner, path],
        );
        if (existing !== undefined && !options.overwrite) return { stored: false, reason: 'exists' } as const;
        const used = await usedBy(tx, owner);
        const replaced = existing === undefined ? 0 : Number(existing.size);
        if (bytes.byteLength > options.quota - used + replaced) {
          return { stored: false, reason: 'quota', used } as const;
        }
        await tx.run(
          `INSERT INTO tenant_files (owner, path, bytes, size, content_type, updated_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (owner, path) DO UPDATE SET bytes = excluded.bytes, size = excluded.size,
             content_type = excluded.content_type, updated_at = excluded.updated_at`,
          [
            owner,
            path,
            Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            bytes.byteLength,
            options.contentType ?? null,
            options.now ?? Date.now(),
          ],
        );
        return { stored: true, size: bytes.byteLength, replaced: existing !== undefined } as const;
      });
    },
    async stat(path) {
      const [row] = await db.query<{
        size: number | string;
        content_type: string | null;
        updated_at: number | string;
      }>('SELECT size, content_type, updated_at FROM tenant_files WHERE owner = ? AND path = ?', [
        owner,
        path,
      ]);
      if (row !== undefined) {
        return {
          kind: 'file',
          size: Number(row.size),
          contentType: row.content_type ?? undefined,
          updatedAt: Number(row.updated_at),
        };
      }
      return (await isFolder(db, owner, path)) ? { kind: 'folder' } : undefined;
    },
    async read(path) {
      const [row] = await db.query<{ bytes: Uint8Array }>(
        'SELECT bytes FROM tenant_files WHERE owner = ? AND path = ?',
        [owner, path],
      );
      return row === undefined ? undefined : new Uint8Array(row.bytes);
    },
    async delete(path) {
      const { changes } = await db.run('DELETE FROM tenant_files WHERE owner = ? AND path = ?', [
        owner,
        path,
      ]);
      return changes > 0;
    },
    async list(limit) {
      const rows = await db.query<{
        path: string;
        size: number | string;
        content_type: string | null;
        updated_at: number | string;
      }>(
        'SELECT path, size, content_type, updated_at FROM tenant_files WHERE owner = ? ORDER BY path LIMIT ?',
        [owner, limit],
      );
      const [count] = await db.query<{ n: number | string }>(
        'SELECT count(*) AS n FROM tenant_files WHERE owner = ?',
        [owner],
      );
      return {
        files: rows.map((r) => ({
          path: r.path,
          size: Number(r.size),
          contentType: r.content_type ?? undefined,
          updatedAt: Number(r.updated_at),
        })),
        total: Number(count?.n ?? 0),
      };
    },
    used: () => usedBy(db, owner),
  };
}

/** The media type a saved file's name says (the attachments' table: one list of extensions). */
export const contentTypeOf = contentTypeByName;
