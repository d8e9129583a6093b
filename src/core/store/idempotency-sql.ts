/**
 * The idempotency store of a shared deployment: the records of idempotency.ts, with the same
 * states and rules (exact replay, a conflict for other arguments, a lease the owner renews, a
 * partial outcome retried with the request's seed), kept in the replicas' shared database
 * through sql.ts, so a retry that reaches another replica resumes the same request.
 *
 * The claim is one transaction: the row read under a row lock, or inserted when absent. Two
 * replicas inserting at once both run `ON CONFLICT DO NOTHING`; the one whose insert changed
 * nothing looks again and finds the other's claim, so exactly one of them wins.
 */
import { ZoteusError } from '../errors.js';
import { newWriteSeed } from '../writes/ids.js';
import {
  claimIsFree,
  claimLoop,
  defaultIsAlive,
  IDEMPOTENCY_TTL_MS,
  keyReused,
  leaseRenewal,
  reservedSide,
  storedResult,
  type ClaimStep,
  type IdempotencyRow,
  LEASE_MS,
  type IdempotencyStore,
  type OpenOptions,
} from './idempotency.js';
import type { Migration } from './migrations.js';
import type { SqlClient } from './sql.js';

export const idempotencyMigration: Migration = {
  id: '0001_idempotency',
  statements: [
    `CREATE TABLE IF NOT EXISTS idempotency_requests (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      args_hash TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'partial')),
      seed TEXT NOT NULL,
      owner TEXT,
      owner_pid INTEGER NOT NULL,
      owner_host TEXT NOT NULL,
      lease_until BIGINT NOT NULL,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 1,
      exit_code INTEGER,
      stdout TEXT,
      input_json TEXT,
      output_json TEXT,
      reserved_json TEXT NOT NULL DEFAULT '{}',
      PRIMARY KEY (scope, key)
    )`,
    'CREATE INDEX IF NOT EXISTS idempotency_requests_created ON idempotency_requests (created_at)',
  ],
};

type Row = IdempotencyRow & { reserved_json: string };

function storeUnavailable(error: unknown): ZoteusError {
  if (error instanceof ZoteusError) return error;
  return new ZoteusError(
    'network_error',
    'The shared state database did not answer, so this request was not started. Nothing was changed.',
    {
      retryable: true,
      hint: 'Retry with the same idempotency key; check ZOTEUS_DATABASE_URL if it persists.',
    },
  );
}

const toResult = storedResult;
const sideOf = reservedSide;

export async function openSqlIdempotencyStore(
  db: SqlClient,
  options: OpenOptions & { where?: string; closeClient?: boolean } = {},
): Promise<IdempotencyStore> {
  const host = options.host ?? (await import('node:os')).hostname();
  const now = options.now ?? Date.now;
  const pid = options.pid ?? process.pid;
  // A claim of a process of this host that is gone (a killed replica) is free at once.
  const isAlive = options.isAlive ?? defaultIsAlive;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const owner = `${host}:${pid}:${newWriteSeed()}`;
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw storeUnavailable(error);
    }
  };
  await guard(() =>
    db.run('DELETE FROM idempotency_requests WHERE created_at < ?', [now() - IDEMPOTENCY_TTL_MS]),
  );

  type Step = ClaimStep;
  const step = (scope: string, key: string, argsHash: string): Promise<Step> =>
    db.transaction(async (tx): Promise<Step> => {
      const t = now();
      const [row] = await tx.query<Row>(
        'SELECT * FROM idempotency_requests WHERE scope = ? AND key = ? FOR UPDATE',
        [scope, key],
      );
      if (!row || row.created_at < t - IDEMPOTENCY_TTL_MS) {
        const seed = newWriteSeed();
        const fresh = [argsHash, seed, owner, pid, host, t + LEASE_MS, t, t];
        const claimed = row
          ? await tx.run(
              `UPDATE idempotency_requests SET args_hash = ?, status = 'pending', seed = ?, owner = ?, owner_pid = ?,
                 owner_host = ?, lease_until = ?, created_at = ?, updated_at = ?, attempts = 1, exit_code = NULL,
                 stdout = NULL, input_json = NULL, output_json = NULL, reserved_json = '{}'
               WHERE scope = ? AND key = ?`,
              [...fresh, scope, key],
            )
          : await tx.run(
              `INSERT INTO idempotency_requests
                 (args_hash, status, seed, owner, owner_pid, owner_host, lease_until, created_at, updated_at, scope, key)
               VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING`,
              [...fresh, scope, key],
            );
        // Another replica inserted it between our look and our insert: look again.
        if (claimed.changes === 0) return { again: true };
        return { done: { kind: 'run', seed, resumed: false } };
      }
      if (row.args_hash !== argsHash) throw keyReused(key);
      if (row.status === 'done') return { done: { kind: 'replay', result: toResult(row) } };
      if (!claimIsFree(row, { t, host, pid, isAlive })) return { wait: true };
      await tx.run(
        `UPDATE idempotency_requests SET owner = ?, owner_pid = ?, owner_host = ?, lease_until = ?, updated_at = ?,
           attempts = attempts + 1 WHERE scope = ? AND key = ?`,
        [owner, pid, host, t + LEASE_MS, t, scope, key],
      );
      const side = sideOf(row.reserved_json);
      if (row.status === 'partial')
        return {
          done: { kind: 'partial', seed: row.seed, result: toResult(row), ...(side ? { side } : {}) },
        };
      return { done: { kind: 'run', seed: row.seed, resumed: true, ...(side ? { side } : {}) } };
    });

  const leases = leaseRenewal(
    () => {
      db.run(
        "UPDATE idempotency_requests SET lease_until = ?, updated_at = ? WHERE owner = ? AND status IN ('pending', 'partial')",
        [now() + LEASE_MS, now(), owner],
      ).catch(() => undefined);
    },
    options.renewMs ?? LEASE_MS / 3,
  );
  const hold = leases.hold;
  const drop = leases.drop;

  return {
    path: options.where ?? 'the shared state database',
    begin: (scope, key, argsHash, waitOptions = {}) =>
      claimLoop(
        () => guard(() => step(scope, key, argsHash)),
        key,
        { now, sleep },
        waitOptions,
        () => hold(`${scope}\0${key}`),
      ),
    async peek(scope, key, argsHash) {
      const [row] = await guard(() =>
        db.query<Row>('SELECT * FROM idempotency_requests WHERE scope = ? AND key = ?', [scope, key]),
      );
      if (!row || row.created_at < now() - IDEMPOTENCY_TTL_MS) return undefined;
      if (row.args_hash !== argsHash) throw keyReused(key);
      return row.status === 'done' ? toResult(row) : undefined;
    },
    async reserve(scope, key, derived) {
      await guard(() =>
        db.transaction(async (tx) => {
          const [row] = await tx.query<{ reserved_json: string }>(
            'SELECT reserved_json FROM idempotency_requests WHERE scope = ? AND key = ? AND owner = ? FOR UPDATE',
            [scope, key, owner],
          );
          if (!row) return;
          const merged = { ...(JSON.parse(row.reserved_json) as Record<string, string>), ...derived };
          await tx.run(
            'UPDATE idempotency_requests SET reserved_json = ? WHERE scope = ? AND key = ? AND owner = ?',
            [JSON.stringify(merged), scope, key, owner],
          );
        }),
      );
    },
    async complete(scope, key, result) {
      await guard(() =>
        db.run(
          `UPDATE idempotency_requests SET status = ?, owner = NULL, lease_until = 0, updated_at = ?, exit_code = ?,
             stdout = ?, input_json = ?, output_json = ? WHERE scope = ? AND key = ? AND owner = ?`,
          [
            result.partial ? 'partial' : 'done',
            now(),
            result.exitCode,
            result.stdout,
            JSON.stringify(result.input ?? null),
            JSON.stringify(result.output ?? null),
            scope,
            key,
            owner,
          ],
        ),
      );
      drop(`${scope}\0${key}`);
    },
    async release(scope, key) {
      await guard(() =>
        db.run(
          'UPDATE idempotency_requests SET owner = NULL, lease_until = 0, updated_at = ? WHERE scope = ? AND key = ? AND owner = ?',
          [now(), scope, key, owner],
        ),
      );
      drop(`${scope}\0${key}`);
    },
    async close() {
      leases.close();
      if (options.closeClient) await db.close();
    },
  };
}
