/**
 * The write journal (issue 21): SQLite at `<data dir>/journal.db` (per caller on a shared
 * deployment), kept ZOTEUS_JOURNAL_DAYS days (90). Every mutating call that writes records,
 * before each write batch and in one transaction, what it is about to change: one `requests`
 * row per call (request id, tool, arguments without secrets, library) and one `entries` row per
 * object (the full JSON read before, with its version; for a create, the key). After the batch
 * each entry is settled in one more transaction: `done` with the new version (and a created
 * object's data), `failed`, `unchanged`, or `unknown` (the answer was lost).
 *
 * Crash-safe by construction: an entry is `pending` from before its request is sent until it
 * is settled, and a request is `pending` until its call ends. A process killed in between
 * leaves both `pending`; history reports such a request as interrupted, and undo decides what
 * landed by reading the objects (what the write would have made, or what was there before).
 */
import { ZoteusError } from '../errors.js';
import { openOwnDatabase, whyUnusable } from '../sqlite-driver.js';

export const DEFAULT_JOURNAL_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

export type RequestStatus = 'pending' | 'done' | 'partial' | 'failed';
export type EntryStatus = 'pending' | 'done' | 'failed' | 'unchanged' | 'unknown';
/** What a write did to one object: `update` (fields, trash), `create`, `delete` (permanent), `other` (not recorded per object). */
export type EntryOp = 'update' | 'create' | 'delete' | 'other';

export interface RequestRecord {
  requestId: string;
  tool: string;
  args: Record<string, unknown>;
  library: string | undefined;
  status: RequestStatus;
  createdAt: number;
  finishedAt: number | undefined;
  /** The request this one undid. */
  undoOf: string | undefined;
  /** What the tool's declaration says undo can restore; undefined: nothing. */
  undo: { restores: string; cannot?: string | undefined } | undefined;
}

export interface EntryRecord {
  id: number;
  requestId: string;
  library: string;
  kind: string;
  /** The object's key; for `other`, the request's method and path. */
  key: string;
  op: EntryOp;
  /** The object as read before the write (full JSON with its version); null for a create. */
  before: Record<string, unknown> | null;
  /** The fields sent (an update's changes, a create's object). */
  sent: Record<string, unknown> | null;
  status: EntryStatus;
  afterVersion: number | undefined;
  /** A created object's data as the server answered it. */
  after: Record<string, unknown> | null;
}

export interface NewEntry {
  library: string;
  kind: string;
  key: string;
  op: EntryOp;
  before: Record<string, unknown> | null;
  sent: Record<string, unknown> | null;
}

export interface Settlement {
  id: number;
  status: EntryStatus;
  afterVersion?: number | undefined;
  after?: Record<string, unknown> | null | undefined;
}

export interface RequestSummary extends RequestRecord {
  /** Entries per status. */
  counts: Record<EntryStatus, number>;
  /** Entries per operation. */
  ops: Record<EntryOp, number>;
  /** Requests that undid this one. */
  undoneBy: string[];
}

export interface HistoryQuery {
  start: number;
  limit: number;
  since?: number | undefined;
  tool?: string | undefined;
}

export interface Journal {
  readonly path: string;
  /** The request's row, once (a later call of the same request id keeps the first). */
  beginRequest(request: Omit<RequestRecord, 'status' | 'finishedAt'>): Promise<void>;
  /** One transaction: the entries of one batch, pending; their ids in order. */
  record(requestId: string, entries: readonly NewEntry[]): Promise<number[]>;
  /** One transaction: the outcome of a batch's entries. */
  settle(settlements: readonly Settlement[]): Promise<void>;
  finishRequest(requestId: string, status: RequestStatus): Promise<void>;
  request(requestId: string): Promise<RequestRecord | undefined>;
  entries(requestId: string): Promise<EntryRecord[]>;
  /** Newest first, with counts; `total` matches the filter. */
  history(query: HistoryQuery): Promise<{ requests: RequestSummary[]; total: number }>;
  close(): Promise<void>;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS requests (
  request_id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  args_json TEXT NOT NULL,
  library TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'partial', 'failed')),
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  undo_of TEXT,
  undo_json TEXT
);
CREATE INDEX IF NOT EXISTS requests_created ON requests (created_at);
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id TEXT NOT NULL REFERENCES requests (request_id) ON DELETE CASCADE,
  library TEXT NOT NULL,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('update', 'create', 'delete', 'other')),
  before_json TEXT,
  sent_json TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'unchanged', 'unknown')),
  after_version INTEGER,
  after_json TEXT,
  created_at INTEGER NOT NULL,
  settled_at INTEGER
);
CREATE INDEX IF NOT EXISTS entries_request ON entries (request_id, id);
`;

/** A `requests` row, in the file and in the shared journal alike. */
export interface RequestRow {
  request_id: string;
  tool: string;
  args_json: string;
  library: string | null;
  status: RequestStatus;
  created_at: number;
  finished_at: number | null;
  undo_of: string | null;
  undo_json: string | null;
}

/** An `entries` row, in the file and in the shared journal alike. */
export interface EntryRow {
  id: number;
  request_id: string;
  library: string;
  kind: string;
  key: string;
  op: EntryOp;
  before_json: string | null;
  sent_json: string | null;
  status: EntryStatus;
  after_version: number | null;
  after_json: string | null;
}

/** The error for a journal file that cannot be used: the user's file, named, nothing written. */
export function damagedJournal(path: string, error: unknown): ZoteusError {
  const why = whyUnusable(error);
  return new ZoteusError(
    'validation_error',
    `The write journal ${path} cannot be used (${why}). Nothing was changed.`,
    {
      field: 'ZOTEUS_DATA_DIR',
      retryable: false,
      hint: `Move it aside (mv '${path}' '${path}.damaged') and retry: that loses the record of earlier writes, and undoing them. Or point ZOTEUS_DATA_DIR at another folder.`,
    },
  );
}

/** ZOTEUS_JOURNAL_DAYS, a whole number of days ≥ 1 (90 when unset). */
export function journalDays(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.ZOTEUS_JOURNAL_DAYS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_JOURNAL_DAYS;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 1) {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_JOURNAL_DAYS must be a whole number of days (1 or more), not '${raw}'.`,
      { field: 'ZOTEUS_JOURNAL_DAYS', hint: `Unset it for the default (${DEFAULT_JOURNAL_DAYS} days).` },
    );
  }
  return days;
}

const parse = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

export function requestFromRow(row: RequestRow): RequestRecord {
  return {
    requestId: row.request_id,
    tool: row.tool,
    args: (parse(row.args_json) ?? {}) as Record<string, unknown>,
    library: row.library ?? undefined,
    status: row.status,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? undefined : Number(row.finished_at),
    undoOf: row.undo_of ?? undefined,
    undo: (parse(row.undo_json) ?? undefined) as RequestRecord['undo'],
  };
}

export function entryFromRow(row: EntryRow): EntryRecord {
  return {
    id: Number(row.id),
    requestId: row.request_id,
    library: row.library,
    kind: row.kind,
    key: row.key,
    op: row.op,
    before: parse(row.before_json),
    sent: parse(row.sent_json),
    status: row.status,
    afterVersion: row.after_version === null ? undefined : Number(row.after_version),
    after: parse(row.after_json),
  };
}

export function openJournal(path: string, options: { now?: () => number; days?: number } = {}): Journal {
  const now = options.now ?? Date.now;
  const days = options.days ?? DEFAULT_JOURNAL_DAYS;
  const guard = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      if (error instanceof ZoteusError) throw error;
      throw damagedJournal(path, error);
    }
  };
  const db = guard(() =>
    openOwnDatabase(path, (opened) => {
      // Each batch's record is durable before its request is sent.
      opened.pragma('synchronous = FULL');
      opened.pragma('foreign_keys = ON');
      opened.exec(SCHEMA);
    }),
  );
  const s = guard(() => {
    db.prepare('DELETE FROM requests WHERE created_at < ?').run(now() - days * DAY_MS);
    return {
      begin: db.prepare(
        `INSERT OR IGNORE INTO requests (request_id, tool, args_json, library, status, created_at, undo_of, undo_json)
         VALUES (@requestId, @tool, @args, @library, 'pending', @createdAt, @undoOf, @undo)`,
      ),
      entry: db.prepare(
        `INSERT INTO entries (request_id, library, kind, key, op, before_json, sent_json, status, created_at)
         VALUES (@requestId, @library, @kind, @key, @op, @before, @sent, 'pending', @t)`,
      ),
      settle: db.prepare(
        `UPDATE entries SET status = @status, after_version = @afterVersion, after_json = @after, settled_at = @t
         WHERE id = @id`,
      ),
      finish: db.prepare('UPDATE requests SET status = ?, finished_at = ? WHERE request_id = ?'),
      request: db.prepare<[string], RequestRow>('SELECT * FROM requests WHERE request_id = ?'),
      entries: db.prepare<[string], EntryRow>('SELECT * FROM entries WHERE request_id = ? ORDER BY id'),
      counts: db.prepare<[string], { status: EntryStatus; op: EntryOp; n: number }>(
        'SELECT status, op, COUNT(*) AS n FROM entries WHERE request_id = ? GROUP BY status, op',
      ),
      undoneBy: db.prepare<[string], { request_id: string }>(
        'SELECT request_id FROM requests WHERE undo_of = ? ORDER BY created_at',
      ),
    };
  });
  const toRequest = requestFromRow;
  const record = db.transaction((requestId: string, entries: readonly NewEntry[]): number[] =>
    entries.map((e) =>
      Number(
        s.entry.run({
          requestId,
          library: e.library,
          kind: e.kind,
          key: e.key,
          op: e.op,
          before: e.before === null ? null : JSON.stringify(e.before),
          sent: e.sent === null ? null : JSON.stringify(e.sent),
          t: now(),
        }).lastInsertRowid,
      ),
    ),
  );
  const settle = db.transaction((settlements: readonly Settlement[]): void => {
    for (const x of settlements) {
      s.settle.run({
        id: x.id,
        status: x.status,
        afterVersion: x.afterVersion ?? null,
        after: x.after ? JSON.stringify(x.after) : null,
        t: now(),
      });
    }
  });

  return {
    path,
    async beginRequest(request) {
      guard(() =>
        s.begin.run({
          requestId: request.requestId,
          tool: request.tool,
          args: JSON.stringify(request.args),
          library: request.library ?? null,
          createdAt: request.createdAt,
          undoOf: request.undoOf ?? null,
          undo: request.undo ? JSON.stringify(request.undo) : null,
        }),
      );
    },
    record: async (requestId, entries) => guard(() => record.immediate(requestId, entries)),
    settle: async (settlements) => guard(() => settle.immediate(settlements)),
    async finishRequest(requestId, status) {
      guard(() => s.finish.run(status, now(), requestId));
    },
    async request(requestId) {
      const row = guard(() => s.request.get(requestId));
      return row ? toRequest(row) : undefined;
    },
    async entries(requestId) {
      return guard(() => s.entries.all(requestId)).map(entryFromRow);
    },
    async history(query) {
      return guard(() => {
        const where: string[] = [];
        const params: Array<string | number> = [];
        if (query.since !== undefined) {
          where.push('created_at >= ?');
          params.push(query.since);
        }
        if (query.tool !== undefined) {
          where.push('tool = ?');
          params.push(query.tool);
        }
        const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
        const total = (
          db.prepare(`SELECT COUNT(*) AS n FROM requests ${clause}`).get(...params) as { n: number }
        ).n;
        const rows = db
          .prepare(`SELECT * FROM requests ${clause} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`)
          .all(...params, query.limit, query.start) as RequestRow[];
        const requests = rows.map((row): RequestSummary => {
          const counts: Record<EntryStatus, number> = {
            pending: 0,
            done: 0,
            failed: 0,
            unchanged: 0,
            unknown: 0,
          };
          const ops: Record<EntryOp, number> = { update: 0, create: 0, delete: 0, other: 0 };
          for (const c of s.counts.all(row.request_id)) {
            counts[c.status] += c.n;
            ops[c.op] += c.n;
          }
          return {
            ...toRequest(row),
            counts,
            ops,
            undoneBy: s.undoneBy.all(row.request_id).map((r) => r.request_id),
          };
        });
        return { requests, total };
      });
    },
    async close() {
      db.close();
    },
  };
}
