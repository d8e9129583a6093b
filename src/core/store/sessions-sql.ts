/**
 * The sessions of the older revisions, kept in the state database when the server has one (a
 * shared deployment), so that a session opened on one replica continues on another: a replica
 * that receives an `Mcp-Session-Id` it does not hold finds the row, and rebuilds the session
 * for the same tenant from what its `initialize` said (protocol version, client info and
 * capabilities). A row lives as long as the session: DELETE removes it, and so does idleness
 * (no request on any replica for the idle period); a replica that stops leaves its rows for
 * the others. The 2026-07-28 revision has no sessions and nothing here.
 */
import type { Migration } from './migrations.js';
import type { SqlClient } from './sql.js';

export const mcpSessionsMigration: Migration = {
  id: '0010_mcp_sessions',
  statements: [
    `CREATE TABLE IF NOT EXISTS mcp_sessions (
      id TEXT PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      protocol_version TEXT NOT NULL,
      client_info TEXT NOT NULL,
      capabilities TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      last_active BIGINT NOT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS mcp_sessions_last_active ON mcp_sessions (last_active)',
  ],
};

/** What a session's `initialize` said, enough to make another server instance answer as the first. */
export interface StoredSession {
  id: string;
  tenantId: string;
  protocolVersion: string;
  clientInfo: unknown;
  capabilities: unknown;
  createdAt: number;
  lastActive: number;
}

export interface SessionStore {
  /** Records a session just opened by `initialize`. */
  put(session: StoredSession): Promise<void>;
  /** The session, if its row is there and it has had a request within `idleMs` of `now`. */
  find(id: string, now: number, idleMs: number): Promise<StoredSession | undefined>;
  /**
   * Marks a request of the session at `now`; false when the row is gone (closed by DELETE on
   * some replica) or has been idle for `idleMs`, that is, when the session is over.
   */
  touch(id: string, now: number, idleMs: number): Promise<boolean>;
  /** DELETE: the session is over on every replica. */
  remove(id: string): Promise<void>;
  /** Removes the rows of every session idle for `idleMs` at `now`; how many. */
  prune(now: number, idleMs: number): Promise<number>;
}

interface Row {
  id: string;
  tenant_id: string;
  protocol_version: string;
  client_info: string;
  capabilities: string;
  created_at: number | string;
  last_active: number | string;
}

export function sqlSessionStore(db: SqlClient): SessionStore {
  return {
    async put(session) {
      await db.run(
        `INSERT INTO mcp_sessions (id, tenant_id, protocol_version, client_info, capabilities, created_at, last_active)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [
          session.id,
          session.tenantId,
          session.protocolVersion,
          JSON.stringify(session.clientInfo ?? null),
          JSON.stringify(session.capabilities ?? null),
          session.createdAt,
          session.lastActive,
        ],
      );
    },
    async find(id, now, idleMs) {
      const [row] = await db.query<Row>(
        `SELECT id, tenant_id, protocol_version, client_info, capabilities, created_at, last_active
         FROM mcp_sessions WHERE id = ? AND last_active > ?`,
        [id, now - idleMs],
      );
      if (!row) return undefined;
      return {
        id: row.id,
        tenantId: row.tenant_id,
        protocolVersion: row.protocol_version,
        clientInfo: JSON.parse(row.client_info) as unknown,
        capabilities: JSON.parse(row.capabilities) as unknown,
        createdAt: Number(row.created_at),
        lastActive: Number(row.last_active),
      };
    },
    async touch(id, now, idleMs) {
      const { changes } = await db.run(
        'UPDATE mcp_sessions SET last_active = ? WHERE id = ? AND last_active > ?',
        [now, id, now - idleMs],
      );
      return changes > 0;
    },
    async remove(id) {
      await db.run('DELETE FROM mcp_sessions WHERE id = ?', [id]);
    },
    async prune(now, idleMs) {
      return (await db.run('DELETE FROM mcp_sessions WHERE last_active <= ?', [now - idleMs])).changes;
    },
  };
}
