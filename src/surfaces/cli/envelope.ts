/** The envelopes of agent-interface.md: success, error, partial, dry-run, stream lines. */
import type { ZoteusError } from '../../core/errors.js';
import { CLI_VERSION, SCHEMA_VERSION } from '../../core/version.js';

export interface Meta {
  schema_version: string;
  cli_version: string;
  request_id: string;
  latency_ms: number;
  total?: number;
  sync_required?: boolean;
}

export function newRequestId(): string {
  // A name for one run in logs and envelopes: unique enough without loading node:crypto
  // (6 ms) in a process that needs it for nothing else. V8 seeds Math.random per process.
  let id = '';
  for (let i = 0; i < 12; i += 1) id += Math.floor(Math.random() * 16).toString(16);
  return id;
}

export function meta(requestId: string, startedAt: number, now: number, extra: Partial<Meta> = {}): Meta {
  return {
    schema_version: SCHEMA_VERSION,
    cli_version: CLI_VERSION,
    request_id: requestId,
    latency_ms: Math.max(0, Math.round(now - startedAt)),
    ...extra,
  };
}

export function successEnvelope(data: unknown, m: Meta, next?: string[]): Record<string, unknown> {
  const env: Record<string, unknown> = { ok: true, data };
  if (next && next.length) env.next = next;
  env.meta = m;
  return env;
}

export function partialEnvelope(data: unknown, m: Meta, next?: string[]): Record<string, unknown> {
  const env: Record<string, unknown> = { ok: 'partial', data };
  if (next && next.length) env.next = next;
  env.meta = m;
  return env;
}

export function dryRunEnvelope(would: unknown, m: Meta): Record<string, unknown> {
  return { ok: true, dry_run: true, data: { would }, meta: m };
}

export function errorEnvelope(error: ZoteusError, m: Meta): Record<string, unknown> {
  return { ok: false, error: error.toJSON(), meta: m };
}

/** Counts the entries a mutating output speaks of, for `meta.total` of a partial result. */
export function countEntries(output: Record<string, unknown>): number {
  let total = 0;
  for (const field of ['succeeded', 'updated', 'created', 'deleted', 'unchanged', 'failed']) {
    const value = output[field];
    if (Array.isArray(value)) total += value.length;
    else if (typeof value === 'string') total += 1;
  }
  return total;
}

export function failedCount(output: unknown): number {
  const failed = (output as { failed?: unknown } | null)?.failed;
  return Array.isArray(failed) ? failed.length : 0;
}

/** The fields in which a write's output says what it wrote (keys, changed fields, entries). */
const WRITTEN_FIELDS = ['succeeded', 'created', 'updated', 'deleted', 'changes', 'collection_key'] as const;

/**
 * Whether a mutating output says that at least one object was written (for SYNC_REMINDER):
 * not a preview (`dryRun: true`), not a call whose counts are all empty (everything was
 * `unchanged`, or every entry `failed`). An output with none of those fields (a note created)
 * landed by succeeding.
 */
export function wroteSomething(output: Record<string, unknown>): boolean {
  if (output.dryRun === true) return false;
  let counted = false;
  for (const field of WRITTEN_FIELDS) {
    const value = output[field];
    if (Array.isArray(value)) {
      counted = true;
      if (value.length > 0) return true;
    } else if (typeof value === 'string') {
      counted = true;
      if (value !== '') return true;
    }
  }
  return !counted;
}
