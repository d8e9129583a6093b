/**
 * The idempotency store (agent-interface.md, "--idempotency-key"): SQLite at
 * `$ZOT_CACHE_DIR/idempotency.db`, records keyed by (command scope, key), 24 h TTL.
 *
 * Only results that landed something are stored (success, and partial success): a failed
 * call stored nothing, so retrying it with the same key does the work, as the retry
 * guidance promises. A `pending` row is the lock that makes two concurrent processes
 * with one key safe: the second waits for the first's result, or gets a retryable
 * `conflict` when the wait runs out.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ZoteusError } from '../errors.js';
import { loadDatabaseClass } from '../sqlite-driver.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredResult {
  exitCode: number;
  /** The exact stdout bytes of the original invocation. */
  stdout: string;
  partial: boolean;
  /** The tool's input and output, kept so a partial result can retry only its failed entries. */
  input: unknown;
  output: unknown;
}

export type BeginResult =
  { kind: 'fresh' } | { kind: 'replay'; result: StoredResult } | { kind: 'partial'; result: StoredResult };

export interface IdempotencyStore {
  /** Claims (scope, key) for this process, or returns the stored result to replay. */
  begin(
    scope: string,
    key: string,
    argsHash: string,
    options?: { waitMs?: number; pollMs?: number },
  ): Promise<BeginResult>;
  complete(scope: string, key: string, result: StoredResult): void;
  /** Releases a claim after a failure, so a retry does the work. */
  abandon(scope: string, key: string): void;
  close(): void;
}

interface Row {
  args_hash: string;
  status: 'pending' | 'done';
  owner_pid: number;
  owner_host: string;
  created_at: number;
  updated_at: number;
  exit_code: number | null;
  stdout: string | null;
  partial: number;
  input_json: string | null;
  output_json: string | null;
}

/** A pending claim older than this is taken over even if its process seems alive. */
const STALE_PENDING_MS = 10 * 60 * 1000;

export interface OpenOptions {
  now?: () => number;
  pid?: number;
  host?: string;
  isAlive?: (pid: number) => boolean;
  sleep?: (ms: number) => Promise<void>;
}

function defaultIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function openIdempotencyStore(
  path: string,
  options: OpenOptions = {},
): Promise<IdempotencyStore> {
  const Database = loadDatabaseClass();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 10000');
  db.exec(`CREATE TABLE IF NOT EXISTS idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    owner_pid INTEGER NOT NULL,
    owner_host TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    exit_code INTEGER,
    stdout TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    input_json TEXT,
    output_json TEXT,
    PRIMARY KEY (scope, key)
  )`);
  const now = options.now ?? Date.now;
  const pid = options.pid ?? process.pid;
  const host = options.host ?? (await import('node:os')).hostname();
  const isAlive = options.isAlive ?? defaultIsAlive;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  db.prepare('DELETE FROM idempotency WHERE created_at < ?').run(now() - IDEMPOTENCY_TTL_MS);

  const select = db.prepare<[string, string], Row>('SELECT * FROM idempotency WHERE scope = ? AND key = ?');
  const claim = db.prepare(
    `INSERT OR REPLACE INTO idempotency (scope, key, args_hash, status, owner_pid, owner_host, created_at, updated_at)
     VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
  );
  const reclaim = db.prepare(
    `UPDATE idempotency SET status = 'pending', owner_pid = ?, owner_host = ?, updated_at = ? WHERE scope = ? AND key = ?`,
  );

  const toResult = (row: Row): StoredResult => ({
    exitCode: row.exit_code ?? 0,
    stdout: row.stdout ?? '',
    partial: row.partial === 1,
    input: row.input_json === null ? null : (JSON.parse(row.input_json) as unknown),
    output: row.output_json === null ? null : (JSON.parse(row.output_json) as unknown),
  });

  type Step = { done: BeginResult } | { wait: true };
  // One IMMEDIATE transaction per look: the check and the claim are atomic across processes.
  const step = db.transaction((scope: string, key: string, argsHash: string): Step => {
    const t = now();
    const row = select.get(scope, key);
    if (!row || row.created_at < t - IDEMPOTENCY_TTL_MS) {
      claim.run(scope, key, argsHash, pid, host, t, t);
      return { done: { kind: 'fresh' } };
    }
    if (row.args_hash !== argsHash) {
      throw new ZoteusError(
        'conflict',
        `Idempotency key '${key}' was already used with different arguments for this command.`,
        { retryable: false, field: 'idempotency_key', hint: 'Use a new key for a different request.' },
      );
    }
    if (row.status === 'done') {
      if (row.partial === 1) {
        reclaim.run(pid, host, t, scope, key);
        return { done: { kind: 'partial', result: toResult(row) } };
      }
      return { done: { kind: 'replay', result: toResult(row) } };
    }
    const ownerGone =
      (row.owner_host === host && !isAlive(row.owner_pid)) || row.updated_at < t - STALE_PENDING_MS;
    if (ownerGone) {
      // A claim left by a process that died: take it over. A partial result it was
      // retrying is still there to merge into.
      reclaim.run(pid, host, t, scope, key);
      return row.stdout !== null
        ? { done: { kind: 'partial', result: toResult(row) } }
        : { done: { kind: 'fresh' } };
    }
    return { wait: true };
  });

  return {
    async begin(scope, key, argsHash, waitOptions = {}) {
      const waitMs = waitOptions.waitMs ?? 30_000;
      const pollMs = waitOptions.pollMs ?? 100;
      const deadline = now() + waitMs;
      for (;;) {
        const result = step.immediate(scope, key, argsHash);
        if ('done' in result) return result.done;
        if (now() >= deadline) {
          throw new ZoteusError(
            'conflict',
            `Another process is still running the request with idempotency key '${key}'.`,
            {
              retryable: true,
              field: 'idempotency_key',
              hint: 'Retry with the same key once it has finished.',
            },
          );
        }
        await sleep(pollMs);
      }
    },
    complete(scope, key, result) {
      db.prepare(
        `UPDATE idempotency SET status = 'done', updated_at = ?, exit_code = ?, stdout = ?, partial = ?, input_json = ?, output_json = ?
         WHERE scope = ? AND key = ?`,
      ).run(
        now(),
        result.exitCode,
        result.stdout,
        result.partial ? 1 : 0,
        JSON.stringify(result.input ?? null),
        JSON.stringify(result.output ?? null),
        scope,
        key,
      );
    },
    abandon(scope, key) {
      // A partial result being retried stays (as done/partial); a fresh claim goes.
      db.prepare(
        `DELETE FROM idempotency WHERE scope = ? AND key = ? AND status = 'pending' AND stdout IS NULL`,
      ).run(scope, key);
      db.prepare(
        `UPDATE idempotency SET status = 'done' WHERE scope = ? AND key = ? AND status = 'pending'`,
      ).run(scope, key);
    },
    close() {
      db.close();
    },
  };
}
