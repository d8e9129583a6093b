/**
 * The idempotency store (agent-interface.md, "--idempotency-key"): SQLite at
 * `$ZOT_CACHE_DIR/idempotency.db`, records keyed by (scope, key), 24 h TTL. Both surfaces
 * use it, each with scopes of its own (a CLI command path, an MCP tool and its caller).
 *
 * A record is in one of three states:
 * - `pending`: the logical request has no outcome yet. It holds the seed of the request's
 *   object keys and write tokens (core/writes/ids.ts), written before anything is sent, and
 *   is held under a lease by the process doing the work. A lease that runs out (the process
 *   died, or gave up after a retryable failure and released it) lets the next caller take the
 *   request over with the same seed, so it resumes the same creates instead of making new ones.
 * - `done`: a final outcome (success, or an error that retrying cannot change), replayed byte
 *   for byte.
 * - `partial`: some entries landed, some failed; a retry runs only the failed entries (with
 *   the same seed) and stores the merged outcome.
 *
 * The file is the user's: a damaged one is reported as such (which file, that moving it aside
 * loses only replay records), never as a bug.
 */
import { ZoteusError } from '../errors.js';
import { openOwnDatabase, whyUnusable } from '../sqlite-driver.js';
import { newWriteSeed } from '../writes/ids.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a claim holds without its owner renewing it. */
export const LEASE_MS = 60_000;

export interface StoredResult {
  exitCode: number;
  /** The exact bytes the original call answered (CLI stdout, or an MCP result's JSON). */
  stdout: string;
  partial: boolean;
  /** The tool's input and output, kept so a partial result can retry only its failed entries. */
  input: unknown;
  output: unknown;
}

/** Where a request's writes went: reserved as `side:side` when its library was opened to write. */
export type WriteSide = 'desktop' | 'cloud';

export function reservedSide(json: string | null | undefined): WriteSide | undefined {
  try {
    const side = (JSON.parse(json ?? '{}') as Record<string, unknown>)['side:side'];
    return side === 'desktop' || side === 'cloud' ? side : undefined;
  } catch {
    return undefined;
  }
}

export type BeginResult =
  /**
   * Do the work with this seed; `resumed` when an earlier attempt may already have written,
   * `side` where that attempt sent its writes (the desktop or the cloud), when it said.
   */
  | { kind: 'run'; seed: string; resumed: boolean; side?: WriteSide | undefined }
  /** Retry the failed entries of this partial result, with the request's seed (and on its side). */
  | { kind: 'partial'; seed: string; result: StoredResult; side?: WriteSide | undefined }
  | { kind: 'replay'; result: StoredResult };

export interface IdempotencyStore {
  readonly path: string;
  /** Claims (scope, key) for this process, or returns the stored result to replay. */
  begin(
    scope: string,
    key: string,
    argsHash: string,
    options?: { waitMs?: number; pollMs?: number },
  ): Promise<BeginResult>;
  /**
   * A final outcome stored for (scope, key), without claiming anything: a replay needs neither
   * credentials nor the network. Other arguments under the key are a `conflict` here too.
   */
  peek(scope: string, key: string, argsHash: string): Promise<StoredResult | undefined>;
  /**
   * Notes keys and tokens the request derived (for inspection: they follow from the seed), and
   * the side its writes go to (which a resumed request must keep: awaited before any is sent).
   */
  reserve(scope: string, key: string, derived: Readonly<Record<string, string>>): Promise<void>;
  /** Stores the outcome: final (replayed as is) or partial (retried); the claim ends. */
  complete(scope: string, key: string, result: StoredResult): Promise<void>;
  /**
   * Ends the claim without an outcome (a retryable failure, or one whose effect is unknown):
   * the record stays, with its seed, for the retry to resume.
   */
  release(scope: string, key: string): Promise<void>;
  close(): Promise<void>;
}

/** A record as both stores keep it (`idempotency_requests`). */
export interface IdempotencyRow {
  reserved_json?: string | null;
  args_hash: string;
  status: 'pending' | 'done' | 'partial';
  seed: string;
  owner: string | null;
  owner_pid: number;
  owner_host: string;
  lease_until: number;
  created_at: number;
  exit_code: number | null;
  stdout: string | null;
  input_json: string | null;
  output_json: string | null;
  attempts?: number;
}
type Row = IdempotencyRow;

/**
 * Whether another caller may take a claimed record over: nobody holds it, its lease ran out,
 * or its owner was a process of this host that is gone (the lease need not be waited out).
 */
export function claimIsFree(
  row: Pick<IdempotencyRow, 'owner' | 'lease_until' | 'owner_host' | 'owner_pid'>,
  at: { t: number; host: string; pid: number; isAlive: (pid: number) => boolean },
): boolean {
  return (
    row.owner === null ||
    row.lease_until < at.t ||
    (row.owner_host === at.host && row.owner_pid !== at.pid && !at.isAlive(row.owner_pid))
  );
}

export interface OpenOptions {
  now?: () => number;
  pid?: number;
  host?: string;
  isAlive?: (pid: number) => boolean;
  sleep?: (ms: number) => Promise<void>;
  /** Renewal period of held leases (default LEASE_MS / 3); 0 turns renewal off (tests). */
  renewMs?: number;
}

/** Whether a process of this machine still runs (a claim of a dead one is free at once). */
export function defaultIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The error for a store file that cannot be used: the user's file, named, with the way out. */
export function damagedStore(path: string, error: unknown): ZoteusError {
  const why = whyUnusable(error);
  return new ZoteusError(
    'validation_error',
    `The idempotency store ${path} cannot be used (${why}). Nothing was changed.`,
    {
      field: 'ZOT_CACHE_DIR',
      retryable: false,
      hint: `Move it aside (mv '${path}' '${path}.damaged') and retry: that loses only the replay records of the last 24 hours. Or point ZOT_CACHE_DIR at another folder.`,
    },
  );
}

export function keyReused(key: string): ZoteusError {
  return new ZoteusError(
    'conflict',
    `Idempotency key '${key}' was already used with different arguments for this command.`,
    { retryable: false, field: 'idempotency_key', hint: 'Use a new key for a different request.' },
  );
}

/** One look at a record: claimed or replayed (`done`), held by another (`wait`), or look again. */
export type ClaimStep = { done: BeginResult } | { wait: true } | { again: true };

/**
 * The begin of every store: look until the request is claimed or replayed, waiting for another
 * caller's claim at most `waitMs`, then a retryable conflict.
 */
export async function claimLoop(
  look: () => ClaimStep | Promise<ClaimStep>,
  key: string,
  clock: { now: () => number; sleep: (ms: number) => Promise<void> },
  waitOptions: { waitMs?: number; pollMs?: number },
  onClaim: () => void,
): Promise<BeginResult> {
  const deadline = clock.now() + (waitOptions.waitMs ?? 30_000);
  for (;;) {
    const result = await look();
    if ('again' in result) continue;
    if ('done' in result) {
      if (result.done.kind !== 'replay') onClaim();
      return result.done;
    }
    if (clock.now() >= deadline) {
      throw new ZoteusError(
        'conflict',
        `Another process is still running the request with idempotency key '${key}'.`,
        { retryable: true, field: 'idempotency_key', hint: 'Retry with the same key once it has finished.' },
      );
    }
    await clock.sleep(waitOptions.pollMs ?? 100);
  }
}

/**
 * The leases a store holds: renewed every `renewMs` while any is held (a long request outlives
 * one lease), the timer stopped when the last is dropped; 0 turns renewal off (tests).
 */
export function leaseRenewal(renew: () => void, renewMs: number) {
  const held = new Set<string>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    hold(id: string): void {
      held.add(id);
      if (timer === undefined && renewMs > 0) {
        timer = setInterval(() => {
          try {
            renew();
          } catch {
            // A failed renewal only lets another caller take over later, with the same seed.
          }
        }, renewMs);
        timer.unref();
      }
    },
    drop(id: string): void {
      held.delete(id);
      if (held.size === 0) stop();
    },
    close(): void {
      stop();
      held.clear();
    },
  };
}

/** A stored outcome as a store's row holds it. */
export function storedResult(row: {
  exit_code: number | null;
  stdout: string | null;
  status: string;
  input_json: string | null;
  output_json: string | null;
}): StoredResult {
  return {
    exitCode: row.exit_code ?? 0,
    stdout: row.stdout ?? '',
    partial: row.status === 'partial',
    input: row.input_json === null ? null : (JSON.parse(row.input_json) as unknown),
    output: row.output_json === null ? null : (JSON.parse(row.output_json) as unknown),
  };
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS idempotency_requests (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'partial')),
    seed TEXT NOT NULL,
    owner TEXT,
    owner_pid INTEGER NOT NULL,
    owner_host TEXT NOT NULL,
    lease_until INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    exit_code INTEGER,
    stdout TEXT,
    input_json TEXT,
    output_json TEXT,
    reserved_json TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (scope, key)
  )`;

export async function openIdempotencyStore(
  path: string,
  options: OpenOptions = {},
): Promise<IdempotencyStore> {
  const host = options.host ?? (await import('node:os')).hostname();
  const guard = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      if (error instanceof ZoteusError) throw error;
      throw damagedStore(path, error);
    }
  };
  const db = guard(() =>
    openOwnDatabase(path, (opened) => {
      opened.exec(SCHEMA);
      // The table of the first release (no seeds, no leases): its records cannot be resumed.
      opened.exec('DROP TABLE IF EXISTS idempotency');
    }),
  );
  const now = options.now ?? Date.now;
  const pid = options.pid ?? process.pid;
  const isAlive = options.isAlive ?? defaultIsAlive;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  // One id per claim: a lease renewal or an outcome only ever applies to one's own claim.
  const owner = `${host}:${pid}:${newWriteSeed()}`;

  const statements = guard(() => {
    db.prepare('DELETE FROM idempotency_requests WHERE created_at < ?').run(now() - IDEMPOTENCY_TTL_MS);
    return {
      select: db.prepare<[string, string], Row>(
        'SELECT * FROM idempotency_requests WHERE scope = ? AND key = ?',
      ),
      claim: db.prepare(
        `INSERT OR REPLACE INTO idempotency_requests
           (scope, key, args_hash, status, seed, owner, owner_pid, owner_host, lease_until, created_at, updated_at)
         VALUES (@scope, @key, @hash, 'pending', @seed, @owner, @pid, @host, @lease, @t, @t)`,
      ),
      take: db.prepare(
        `UPDATE idempotency_requests SET owner = @owner, owner_pid = @pid, owner_host = @host,
           lease_until = @lease, updated_at = @t, attempts = attempts + 1
         WHERE scope = @scope AND key = @key`,
      ),
      renew: db.prepare(
        "UPDATE idempotency_requests SET lease_until = ?, updated_at = ? WHERE owner = ? AND status IN ('pending', 'partial')",
      ),
      reserve: db.prepare(
        `UPDATE idempotency_requests SET reserved_json = json_patch(reserved_json, ?)
         WHERE scope = ? AND key = ? AND owner = ?`,
      ),
      complete: db.prepare(
        `UPDATE idempotency_requests SET status = @status, owner = NULL, lease_until = 0, updated_at = @t,
           exit_code = @exit, stdout = @stdout, input_json = @input, output_json = @output
         WHERE scope = @scope AND key = @key AND owner = @owner`,
      ),
      release: db.prepare(
        `UPDATE idempotency_requests SET owner = NULL, lease_until = 0, updated_at = ?
         WHERE scope = ? AND key = ? AND owner = ?`,
      ),
    };
  });

  const toResult = storedResult;

  type Step = ClaimStep;
  // One IMMEDIATE transaction per look: the check and the claim are atomic across processes.
  const step = db.transaction((scope: string, key: string, argsHash: string): Step => {
    const t = now();
    const params = { scope, key, owner, pid, host, lease: t + LEASE_MS, t };
    const row = statements.select.get(scope, key);
    if (!row || row.created_at < t - IDEMPOTENCY_TTL_MS) {
      const seed = newWriteSeed();
      statements.claim.run({ ...params, hash: argsHash, seed });
      return { done: { kind: 'run', seed, resumed: false } };
    }
    if (row.args_hash !== argsHash) throw keyReused(key);
    if (row.status === 'done') return { done: { kind: 'replay', result: toResult(row) } };
    if (!claimIsFree(row, { t, host, pid, isAlive })) return { wait: true };
    statements.take.run(params);
    const side = reservedSide(row.reserved_json);
    if (row.status === 'partial')
      return { done: { kind: 'partial', seed: row.seed, result: toResult(row), ...(side ? { side } : {}) } };
    // An earlier attempt held this request and ended without an outcome: it may have written.
    return { done: { kind: 'run', seed: row.seed, resumed: true, ...(side ? { side } : {}) } };
  });

  const leases = leaseRenewal(
    () => statements.renew.run(now() + LEASE_MS, now(), owner),
    options.renewMs ?? LEASE_MS / 3,
  );
  const hold = leases.hold;
  const drop = leases.drop;

  return {
    path,
    begin: (scope, key, argsHash, waitOptions = {}) =>
      claimLoop(
        () => guard(() => step.immediate(scope, key, argsHash)),
        key,
        { now, sleep },
        waitOptions,
        () => hold(`${scope}\0${key}`),
      ),
    async peek(scope, key, argsHash) {
      const row = guard(() => statements.select.get(scope, key));
      if (!row || row.created_at < now() - IDEMPOTENCY_TTL_MS) return undefined;
      if (row.args_hash !== argsHash) throw keyReused(key);
      return row.status === 'done' ? toResult(row) : undefined;
    },
    async reserve(scope, key, derived) {
      guard(() => statements.reserve.run(JSON.stringify(derived), scope, key, owner));
    },
    async complete(scope, key, result) {
      guard(() =>
        statements.complete.run({
          scope,
          key,
          owner,
          t: now(),
          status: result.partial ? 'partial' : 'done',
          exit: result.exitCode,
          stdout: result.stdout,
          input: JSON.stringify(result.input ?? null),
          output: JSON.stringify(result.output ?? null),
        }),
      );
      drop(`${scope}\0${key}`);
    },
    async release(scope, key) {
      guard(() => statements.release.run(now(), scope, key, owner));
      drop(`${scope}\0${key}`);
    },
    async close() {
      leases.close();
      db.close();
    },
  };
}
