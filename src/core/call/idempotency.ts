/**
 * One call with an idempotency key, the same on both surfaces (agent-interface.md,
 * "--idempotency-key"): claim the request in the store, then replay its final outcome, retry
 * only the failed entries of a partial one, or do the work with the request's own seed of keys
 * and tokens; store what came of it. Each surface supplies only how a result becomes bytes.
 */
import { sha256 } from '../node-crypto.js';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { toZoteusError, type ErrorCode, type ZoteusError } from '../errors.js';
import type { IdempotencyStore, StoredResult } from '../store/idempotency.js';
import type { AnyTool, Deps } from '../tool.js';
import { writeIdsFrom, type WriteIds } from '../writes/ids.js';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** Canonical JSON: sorted keys, so the same arguments always hash the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What a key stands for: the tool's input in the configured library on the configured server. */
export function requestHash(input: Record<string, unknown>, config: Config): string {
  return sha256()
    .update(canonicalJson({ input, library: [config.apiUrl, config.libraryType, config.libraryId ?? null] }))
    .digest('hex');
}

export function idempotencyStorePath(config: Config): string {
  return join(config.cacheDir, 'idempotency.db');
}

/**
 * The store of these deps: the shared state database on a deployment that has one (the
 * caller is in every scope already), else the file of this configuration.
 */
export async function openIdempotencyStoreFor(
  deps: Pick<Deps, 'config' | 'sharedState'>,
): Promise<IdempotencyStore> {
  if (deps.sharedState) {
    const { openSqlIdempotencyStore } = await import('../store/idempotency-sql.js');
    return openSqlIdempotencyStore(deps.sharedState.db);
  }
  return openIdempotencyStoreOf(deps.config);
}

/** The store of this configuration, loaded on first use (SQLite costs a read its start). */
export async function openIdempotencyStoreOf(config: Config): Promise<IdempotencyStore> {
  const { openIdempotencyStore } = await import('../store/idempotency.js');
  return openIdempotencyStore(idempotencyStorePath(config));
}

/**
 * Errors that are the request's outcome, replayed like a success. Not those that retrying can
 * change (retryable ones, or where the outcome is unknown), nor those about the caller's
 * credentials or a bug, which say nothing of the request.
 */
const NOT_AN_OUTCOME: ReadonlySet<ErrorCode> = new Set([
  'auth_missing',
  'auth_invalid',
  'auth_expired',
  'permission_denied',
  'confirmation_required',
  'internal_error',
]);

export function isFinalError(error: ZoteusError): boolean {
  return !error.retryable && !NOT_AN_OUTCOME.has(error.code);
}

/** What a surface made of one run: the value it returns, and the bytes a replay answers. */
export interface Settled<R> {
  value: R;
  bytes: string;
  exitCode: number;
  partial: boolean;
  output?: unknown;
}

export interface IdempotentCall<R> {
  store: IdempotencyStore;
  scope: string;
  key: string;
  argsHash: string;
  tool: AnyTool;
  input: Record<string, unknown>;
  /**
   * The work: runs the tool on `input` with `ids`, and answers (printing, on the CLI). With
   * `previous`, the input holds only the failed entries of that partial result, and the
   * answer must be the merged one (mergeRetry).
   */
  run(input: Record<string, unknown>, ids: WriteIds, previous: StoredResult | undefined): Promise<Settled<R>>;
  /** Answers a final error (printing it, on the CLI). */
  fail(error: ZoteusError): Settled<R>;
  /** Answers a stored outcome again, exactly. */
  replay(stored: StoredResult): R;
}

/** The output of a retry of a partial result, merged into the earlier one. */
export function mergeRetry(
  tool: AnyTool,
  previous: StoredResult | undefined,
  output: Record<string, unknown>,
): Record<string, unknown> {
  if (!previous || !tool.retryFailed) return output;
  return tool.retryFailed.merge(previous.output as never, output as never) as Record<string, unknown>;
}

export async function runIdempotent<R>(call: IdempotentCall<R>): Promise<R> {
  const { store, scope, key, tool } = call;
  const begun = await store.begin(scope, key, call.argsHash);
  if (begun.kind === 'replay') return call.replay(begun.result);
  let input = call.input;
  let previous: StoredResult | undefined;
  if (begun.kind === 'partial') {
    const retry = tool.retryFailed?.input(begun.result.input as never, begun.result.output as never) ?? null;
    if (retry === null) {
      // Nothing left to retry: the partial result is the answer.
      await store.complete(scope, key, begun.result);
      return call.replay(begun.result);
    }
    previous = begun.result;
    input = retry as Record<string, unknown>;
  }
  // Noted in one write per request sent: a token is derived just before its request, after
  // the keys of its objects (one write per key cost a 1,000-item create 63 ms). The notes go
  // one after another; the side's is awaited before anything is sent to it (ids.ts).
  let derived: Record<string, string> = {};
  let noted: Promise<void> = Promise.resolve();
  const note = (entries: Record<string, string>): Promise<void> => {
    const next = noted.then(() => store.reserve(scope, key, entries));
    noted = next.catch(() => undefined);
    return next;
  };
  const ids = writeIdsFrom(
    begun.seed,
    begun.kind === 'partial' || begun.resumed,
    (kind, label, value) => {
      derived[`${kind}:${label}`] = value;
      // A key waits for its token.
      if (kind === 'key') return;
      const entries = derived;
      derived = {};
      const written = note(entries);
      // A token's note is for inspection: a store that fails it fails the outcome's write too.
      if (kind === 'token') return void written.catch(() => undefined);
      return written;
    },
    begun.side,
  );
  let settled: Settled<R>;
  try {
    settled = await call.run(input, ids, previous);
  } catch (thrown) {
    const error = toZoteusError(thrown);
    if (!isFinalError(error)) {
      // The retry the guidance recommends resumes this same request, with the same seed.
      await noted;
      await store.release(scope, key);
      throw thrown;
    }
    settled = call.fail(error);
  }
  await noted;
  await store.complete(scope, key, {
    exitCode: settled.exitCode,
    stdout: settled.bytes,
    partial: settled.partial,
    input: previous ? previous.input : call.input,
    output: settled.output ?? null,
  });
  return settled.value;
}
