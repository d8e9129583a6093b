/**
 * The write journal of a shared deployment: the journal of store.ts (the same records, the
 * same states, the same retention), kept in the replicas' shared database (sql.ts), each row
 * under its owner (the caller whose writes it records), so an undo can reach any replica and
 * no caller reads another's journal.
 */
import { ZoteusError } from '../errors.js';
import type { Migration } from '../store/migrations.js';
import type { SqlClient } from '../store/sql.js';
import {
  DEFAULT_JOURNAL_DAYS,
  entryFromRow,
  requestFromRow,
  type EntryRow,
  type RequestRow,
  type EntryOp,
  type EntryStatus,
  type Journal,
  type RequestSummary,
} from './store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export const journalMigration: Migration = {
  id: '0004_journal',
  statements: (dialect) => [
    `CREATE TABLE IF NOT EXISTS journal_requests (
      owner TEXT NOT NULL,
      request_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      args_json TEXT NOT NULL,
      library TEXT,
      status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'partial', 'failed')),
      created_at BIGINT NOT NULL,
      finished_at BIGINT,
      undo_of TEXT,
      undo_json TEXT,
      PRIMARY KEY (owner, request_id)
    )`,
    'CREATE INDEX IF NOT EXISTS journal_requests_created ON journal_requests (owner, created_at)',
    `CREATE TABLE IF NOT EXISTS journal_entries (
      id ${dialect === 'postgres' ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      owner TEXT NOT NULL,
      request_id TEXT NOT NULL,
      library TEXT NOT NULL,
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      op TEXT NOT NULL CHECK (op IN ('update', 'create', 'delete', 'other')),
      before_json TEXT,
      sent_json TEXT,
      status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'unchanged', 'unknown')),
      after_version BIGINT,
      after_json TEXT,
      created_at BIGINT NOT NULL,
      settled_at BIGINT
    )`,
    'CREATE INDEX IF NOT EXISTS journal_entries_request ON journal_entries (owner, request_id, id)',
  ],
};

const json = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

function unavailable(error: unknown): ZoteusError {
  if (error instanceof ZoteusError) return error;
  return new ZoteusError(
    'network_error',
    'The shared state database did not answer, so the write journal could not be read or written. Nothing was sent to Zotero for this step.',
    {
      retryable: true,
      hint: 'Retry with the same idempotency key; check ZOTEUS_DATABASE_URL if it persists.',
    },
  );
}

/** The journal of `owner` in the shared database (opening it purges what is older than `days`). */
export async function openSqlJournal(
  db: SqlClient,
  owner: string,
  options: { now?: () => number; days?: number; where?: string } = {},
): Promise<Journal> {
  const now = options.now ?? Date.now;
  const days = options.days ?? DEFAULT_JOURNAL_DAYS;
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw unavailable(error);
    }
  };
  await guard(() =>
    db.transaction(async (tx) => {
      // The expired requests' entries, then the requests: by the index, never a scan of all entries.
      const cutoff = now() - days * DAY_MS;
      await tx.run(
        `DELETE FROM journal_entries WHERE owner = ? AND request_id IN
           (SELECT request_id FROM journal_requests WHERE owner = ? AND created_at < ?)`,
        [owner, owner, cutoff],
      );
      await tx.run('DELETE FROM journal_requests WHERE owner = ? AND created_at < ?', [owner, cutoff]);
    }),
  );
  const toRequest = requestFromRow;

  return {
    path: options.where ?? 'the shared state database',
    beginRequest: (request) =>
      guard(async () => {
        await db.run(
          `INSERT INTO journal_requests (owner, request_id, tool, args_json, library, status, created_at, undo_of, undo_json)
           VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (owner, request_id) DO NOTHING`,
          [
            owner,
            request.requestId,
            request.tool,
            JSON.stringify(request.args),
            request.library ?? null,
            request.createdAt,
            request.undoOf ?? null,
            json(request.undo),
          ],
        );
      }),
    record: (requestId, entries) =>
      guard(() =>
        db.transaction(async (tx) => {
          const ids: number[] = [];
          for (const e of entries) {
            const [row] = await tx.query<{ id: number }>(
              `INSERT INTO journal_entries (owner, request_id, library, kind, key, op, before_json, sent_json, status, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?) RETURNING id`,
              [owner, requestId, e.library, e.kind, e.key, e.op, json(e.before), json(e.sent), now()],
            );
            ids.push(Number(row!.id));
          }
          return ids;
        }),
      ),
    settle: (settlements) =>
      guard(() =>
        db.transaction(async (tx) => {
          for (const x of settlements) {
            await tx.run(
              `UPDATE journal_entries SET status = ?, after_version = ?, after_json = ?, settled_at = ?
               WHERE id = ? AND owner = ?`,
              [
                x.status,
                x.afterVersion ?? null,
                x.after ? JSON.stringify(x.after) : null,
                now(),
                x.id,
                owner,
              ],
            );
          }
        }),
      ),
    finishRequest: (requestId, status) =>
      guard(async () => {
        await db.run(
          'UPDATE journal_requests SET status = ?, finished_at = ? WHERE owner = ? AND request_id = ?',
          [status, now(), owner, requestId],
        );
      }),
    request: (requestId) =>
      guard(async () => {
        const [row] = await db.query<RequestRow>(
          'SELECT * FROM journal_requests WHERE owner = ? AND request_id = ?',
          [owner, requestId],
        );
        return row ? toRequest(row) : undefined;
      }),
    entries: (requestId) =>
      guard(async () =>
        (
          await db.query<EntryRow>(
            'SELECT * FROM journal_entries WHERE owner = ? AND request_id = ? ORDER BY id',
            [owner, requestId],
          )
        ).map(entryFromRow),
      ),
    history: (query) =>
      guard(async () => {
        const where = ['owner = ?'];
        const params: Array<string | number> = [owner];
        if (query.since !== undefined) {
          where.push('created_at >= ?');
          params.push(query.since);
        }
        if (query.tool !== undefined) {
          where.push('tool = ?');
          params.push(query.tool);
        }
        const clause = `WHERE ${where.join(' AND ')}`;
        const [count] = await db.query<{ n: number }>(
          `SELECT COUNT(*) AS n FROM journal_requests ${clause}`,
          params,
        );
        const rows = await db.query<RequestRow>(
          `SELECT * FROM journal_requests ${clause} ORDER BY created_at DESC, request_id DESC LIMIT ? OFFSET ?`,
          [...params, query.limit, query.start],
        );
        // The page's entry counts and undos in two queries, not two per request.
        const ids = rows.map((r) => r.request_id);
        const marks = ids.map(() => '?').join(', ');
        const grouped =
          ids.length === 0
            ? []
            : await db.query<{ request_id: string; status: EntryStatus; op: EntryOp; n: number }>(
                `SELECT request_id, status, op, COUNT(*) AS n FROM journal_entries
                 WHERE owner = ? AND request_id IN (${marks}) GROUP BY request_id, status, op`,
                [owner, ...ids],
              );
        const undos =
          ids.length === 0
            ? []
            : await db.query<{ request_id: string; undo_of: string }>(
                `SELECT request_id, undo_of FROM journal_requests WHERE owner = ? AND undo_of IN (${marks})
                 ORDER BY created_at, request_id`,
                [owner, ...ids],
              );
        const requests: RequestSummary[] = rows.map((row) => {
          const counts: Record<EntryStatus, number> = {
            pending: 0,
            done: 0,
            failed: 0,
            unchanged: 0,
            unknown: 0,
          };
          const ops: Record<EntryOp, number> = { update: 0, create: 0, delete: 0, other: 0 };
          for (const c of grouped) {
            if (c.request_id !== row.request_id) continue;
            counts[c.status] += Number(c.n);
            ops[c.op] += Number(c.n);
          }
          const undoneBy = undos.filter((u) => u.undo_of === row.request_id).map((u) => u.request_id);
          return { ...toRequest(row), counts, ops, undoneBy };
        });
        return { requests, total: Number(count?.n ?? 0) };
      }),
    close: async () => {},
  };
}
