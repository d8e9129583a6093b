/**
 * The rows of the older revisions' MCP sessions in the state database, the same on PostgreSQL
 * and on SQLite through the same SQL: a session recorded through one connection (one replica)
 * is found through another with what its `initialize` said; a request keeps it alive; idleness
 * on every replica ends it, and so does its removal (DELETE).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/core/store/migrations.js';
import {
  mcpSessionsMigration,
  sqlSessionStore,
  type SessionStore,
  type StoredSession,
} from '../../../src/core/store/sessions-sql.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { STATE_MIGRATIONS } from '../../../src/core/store/state.js';
import { postgresUrl } from '../../support/postgres.js';

const root = mkdtempSync(join(tmpdir(), 'zt-sessions-'));
const clients: SqlClient[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(root, { recursive: true, force: true });
});

/** Two replicas' views of one database. */
type World = { here: SessionStore; there: SessionStore };

function sqlWorld(
  database: () => Promise<string>,
  connect: (where: string) => Promise<SqlClient>,
): () => Promise<World> {
  return async () => {
    const where = await database();
    const one = await connect(where);
    const two = await connect(where);
    clients.push(one, two);
    await migrate(one, [mcpSessionsMigration]);
    return { here: sqlSessionStore(one), there: sqlSessionStore(two) };
  };
}

const engines: [string, () => Promise<World>][] = [
  ['PostgreSQL', sqlWorld(postgresUrl, async (url) => openPostgresClient(url, { max: 2 }))],
  [
    'SQLite through sql.ts',
    sqlWorld(
      async () => join(mkdtempSync(join(root, 'db-')), 'server.db'),
      async (path) => openSqliteClient(path),
    ),
  ],
];

const IDLE = 60_000;
const T0 = 1_800_000_000_000;
const session = (id: string, at = T0): StoredSession => ({
  id,
  tenantId: '101',
  protocolVersion: '2025-06-18',
  clientInfo: { name: 'replica-test', version: '1.2.3' },
  capabilities: { roots: { listChanged: true }, elicitation: {} },
  createdAt: at,
  lastActive: at,
});

it('is a state migration, in the order of the ids', () => {
  const ids = STATE_MIGRATIONS.map((m) => m.id);
  expect(ids).toContain('0010_mcp_sessions');
  expect([...ids].sort()).toEqual(ids);
});

describe.each(engines)('MCP session rows in %s', (_name, world) => {
  it('a session recorded on one replica is found on another with its client, capabilities and revision', async () => {
    const { here, there } = await world();
    await here.put(session('s-1'));
    expect(await there.find('s-1', T0 + 1000, IDLE)).toEqual(session('s-1'));
    expect(await there.find('s-2', T0 + 1000, IDLE)).toBeUndefined();
  });

  it('a request on any replica keeps it alive; idle for the idle period on all of them, it is over', async () => {
    const { here, there } = await world();
    await here.put(session('s-1'));
    // Used on the other replica just before it would have expired: alive for another period.
    expect(await there.touch('s-1', T0 + IDLE - 1, IDLE)).toBe(true);
    expect((await here.find('s-1', T0 + 2 * IDLE - 2, IDLE))?.lastActive).toBe(T0 + IDLE - 1);
    expect(await here.find('s-1', T0 + 2 * IDLE - 1, IDLE)).toBeUndefined();
    // An idle session is not brought back by a late request.
    expect(await here.touch('s-1', T0 + 2 * IDLE, IDLE)).toBe(false);
  });

  it('prune removes the rows idle for the period, of every replica, and keeps the others', async () => {
    const { here, there } = await world();
    await here.put(session('old'));
    await there.put(session('fresh', T0 + IDLE));
    expect(await here.prune(T0 + IDLE, IDLE)).toBe(1);
    expect(await there.find('fresh', T0 + IDLE, IDLE)).toBeDefined();
    // Gone for good: a touch cannot revive it.
    expect(await there.touch('old', T0 + IDLE - 1, IDLE)).toBe(false);
  });

  it('removed (DELETE on one replica), it is over on the other', async () => {
    const { here, there } = await world();
    await here.put(session('s-1'));
    await there.remove('s-1');
    expect(await here.find('s-1', T0 + 1, IDLE)).toBeUndefined();
    expect(await here.touch('s-1', T0 + 1, IDLE)).toBe(false);
  });
});
