/**
 * The journal's records, the same from every store: the SQLite file of one machine, and the
 * shared deployment's journal on PostgreSQL (and on SQLite through the same SQL), which also
 * keeps each owner's requests apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalMigration, openSqlJournal } from '../../../src/core/journal/store-sql.js';
import { openJournal, type Journal } from '../../../src/core/journal/store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, openSqliteClient, type SqlClient } from '../../../src/core/store/sql.js';
import { postgresUrl } from '../../support/postgres.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2026, 5, 1);
let dir: string;
const clients: SqlClient[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-engines-'));
});
afterAll(async () => {
  for (const c of clients) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

type Opener = (owner: string, now: number, days?: number) => Promise<Journal>;

function sqlOpener(connect: () => Promise<SqlClient>): Opener {
  let db: Promise<SqlClient> | undefined;
  return async (owner, now, days) => {
    db ??= connect().then(async (c) => {
      clients.push(c);
      await migrate(c, [journalMigration]);
      return c;
    });
    return openSqlJournal(await db, owner, { now: () => now, ...(days ? { days } : {}) });
  };
}

const engines: [string, Opener, boolean][] = [
  [
    'the SQLite file',
    async (owner, now, days) =>
      openJournal(join(dir, `${owner}-file.db`), { now: () => now, ...(days ? { days } : {}) }),
    false,
  ],
  ['PostgreSQL', sqlOpener(async () => openPostgresClient(await postgresUrl(), { max: 2 })), true],
  [
    'SQLite through the shared journal',
    sqlOpener(async () => openSqliteClient(join(dir, 'shared.db'))),
    true,
  ],
];

const request = (id: string, createdAt: number, extra: Record<string, unknown> = {}) => ({
  requestId: id,
  tool: 'zotero_manage_tags',
  args: { action: 'add', tags: ['x'] },
  library: 'users/1',
  createdAt,
  undoOf: undefined,
  undo: { restores: 'the tags as they were' },
  ...extra,
});

describe.each(engines)('journal records in %s', (_name, open, shared) => {
  it('a request, its entries pending then settled, and its end', async () => {
    const j = await open('ada', T0);
    await j.beginRequest(request('req1', T0));
    await j.beginRequest(request('req1', T0 + 5, { tool: 'other' }));
    const ids = await j.record('req1', [
      {
        library: 'users/1',
        kind: 'items',
        key: 'AAAA2222',
        op: 'update',
        before: { version: 3, title: 'a' },
        sent: { tags: [] },
      },
      {
        library: 'users/1',
        kind: 'items',
        key: 'BBBB2222',
        op: 'create',
        before: null,
        sent: { title: 'b' },
      },
    ]);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBeGreaterThan(ids[0] as number);
    expect((await j.entries('req1')).map((e) => e.status)).toEqual(['pending', 'pending']);
    await j.settle([
      { id: ids[0] as number, status: 'done', afterVersion: 4 },
      { id: ids[1] as number, status: 'done', afterVersion: 4, after: { key: 'BBBB2222', version: 4 } },
    ]);
    await j.finishRequest('req1', 'done');
    expect(await j.request('req1')).toEqual({
      requestId: 'req1',
      tool: 'zotero_manage_tags',
      args: { action: 'add', tags: ['x'] },
      library: 'users/1',
      status: 'done',
      createdAt: T0,
      finishedAt: T0,
      undoOf: undefined,
      undo: { restores: 'the tags as they were' },
    });
    expect(await j.entries('req1')).toEqual([
      {
        id: ids[0],
        requestId: 'req1',
        library: 'users/1',
        kind: 'items',
        key: 'AAAA2222',
        op: 'update',
        before: { version: 3, title: 'a' },
        sent: { tags: [] },
        status: 'done',
        afterVersion: 4,
        after: null,
      },
      {
        id: ids[1],
        requestId: 'req1',
        library: 'users/1',
        kind: 'items',
        key: 'BBBB2222',
        op: 'create',
        before: null,
        sent: { title: 'b' },
        status: 'done',
        afterVersion: 4,
        after: { key: 'BBBB2222', version: 4 },
      },
    ]);
    await j.close();
  });

  it('history: newest first, counts by status and operation, who undid it, filters and pages', async () => {
    const j = await open('ada', T0 + 10);
    await j.beginRequest(request('req2', T0 + 10, { tool: 'zotero_trash_items' }));
    const [e] = await j.record('req2', [
      {
        library: 'users/1',
        kind: 'items',
        key: 'CCCC2222',
        op: 'update',
        before: { version: 1 },
        sent: { deleted: 1 },
      },
    ]);
    await j.settle([{ id: e as number, status: 'failed' }]);
    await j.finishRequest('req2', 'failed');
    await j.beginRequest(request('undo1', T0 + 20, { tool: 'zotero_undo', undoOf: 'req1' }));
    const all = await j.history({ start: 0, limit: 10 });
    expect(all.total).toBe(3);
    expect(all.requests.map((r) => r.requestId)).toEqual(['undo1', 'req2', 'req1']);
    const req1 = all.requests[2]!;
    expect(req1.counts).toEqual({ pending: 0, done: 2, failed: 0, unchanged: 0, unknown: 0 });
    expect(req1.ops).toEqual({ update: 1, create: 1, delete: 0, other: 0 });
    expect(req1.undoneBy).toEqual(['undo1']);
    expect(all.requests[1]!.counts.failed).toBe(1);
    expect(all.requests[0]!.undoOf).toBe('req1');
    expect((await j.history({ start: 1, limit: 1 })).requests.map((r) => r.requestId)).toEqual(['req2']);
    expect((await j.history({ start: 0, limit: 10, tool: 'zotero_trash_items' })).total).toBe(1);
    expect(
      (await j.history({ start: 0, limit: 10, since: T0 + 15 })).requests.map((r) => r.requestId),
    ).toEqual(['undo1']);
    await j.close();
  });

  it('another owner sees none of it', async () => {
    const j = await open('bob', T0 + 30);
    expect(await j.request('req1')).toBeUndefined();
    expect(await j.entries('req1')).toEqual([]);
    expect((await j.history({ start: 0, limit: 10 })).total).toBe(0);
    // The same request id under another owner is another request.
    await j.beginRequest(request('req1', T0 + 30, { tool: 'zotero_create_note' }));
    expect((await j.request('req1'))!.tool).toBe('zotero_create_note');
    await j.close();
    const ada = await open('ada', T0 + 30);
    expect((await ada.request('req1'))!.tool).toBe('zotero_manage_tags');
    await ada.close();
    if (shared) {
      // Settling another owner's entry id changes nothing.
      const mallory = await open('mallory', T0 + 31);
      const ids = (await (await open('ada', T0 + 31)).entries('req1')).map((e) => e.id);
      await mallory.settle([{ id: ids[0] as number, status: 'unknown' }]);
      expect((await (await open('ada', T0 + 31)).entries('req1'))[0]!.status).toBe('done');
    }
  });

  it('requests older than the retention go, with their entries, when a journal is opened', async () => {
    const later = await open('ada', T0 + 20 + 90 * DAY + 1);
    expect(await later.request('req1')).toBeUndefined();
    expect(await later.entries('req1')).toEqual([]);
    expect(await later.request('undo1')).toBeUndefined();
    await later.close();
    const bob = await open('bob', T0 + 31 * DAY, 30);
    expect((await bob.history({ start: 0, limit: 10 })).total).toBe(0);
    await bob.close();
  });
});

describe('a page of the shared journal', () => {
  it('costs the same few queries for 30 requests as for 1 (no queries per request)', async () => {
    const inner = await openPostgresClient(await postgresUrl(), { max: 2 });
    clients.push(inner);
    await migrate(inner, [journalMigration]);
    let queries = 0;
    const counted: SqlClient = {
      ...inner,
      query: (sql, params) => {
        queries++;
        return inner.query(sql, params);
      },
      run: (sql, params) => {
        queries++;
        return inner.run(sql, params);
      },
    };
    const j = await openSqlJournal(counted, 'carol', { now: () => T0 + 100 });
    for (let i = 0; i < 30; i++) {
      await j.beginRequest(request(`c${String(i).padStart(2, '0')}`, T0 + i));
      await j.record(`c${String(i).padStart(2, '0')}`, [
        {
          library: 'users/1',
          kind: 'items',
          key: `K${i}AAAAAA`.slice(0, 8),
          op: 'update',
          before: {},
          sent: {},
        },
      ]);
    }
    await j.beginRequest(request('undo-c00', T0 + 50, { tool: 'zotero_undo', undoOf: 'c00' }));
    const cost = async (limit: number) => {
      queries = 0;
      const page = await j.history({ start: 0, limit });
      return { queries, page };
    };
    const one = await cost(1);
    const many = await cost(31);
    expect(many.page.requests).toHaveLength(31);
    expect(many.page.requests.at(-1)).toMatchObject({ requestId: 'c00', undoneBy: ['undo-c00'] });
    expect(many.page.requests.at(-1)!.counts.pending).toBe(1);
    expect(many.queries).toBe(one.queries);
    expect(many.queries).toBeLessThanOrEqual(4);
  });
});
