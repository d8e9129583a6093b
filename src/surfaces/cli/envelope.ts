/** The envelopes of agent-interface.md: success, error, partial, dry-run, stream lines. */
import type { ZoteusError } from '../../core/errors.js';
import { describeLibrary, type LibraryRef } from '../../core/library/address.js';
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

/** A dry run's `would` as a person reads it: a heading and the plan, each field once. */
export interface PlanView {
  heading: string;
  fields: Record<string, unknown>;
}

/** `would` of a dry-run envelope (`{command, library?, args, …the tool's plan}`), by its shape. */
export function isDryRunPlan(data: Record<string, unknown>): boolean {
  const { command, args } = data;
  return typeof command === 'string' && args !== null && typeof args === 'object' && !Array.isArray(args);
}

/** `item_keys`, `writeRequests` → "item keys", "write requests". */
function label(name: string): string {
  return name
    .replace(/_/g, ' ')
    .replace(/([a-z\d])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`);
}

/** A field's value in the plan view: yes/no for flags, a flat object as `key: value` pairs. */
function planValue(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.every(([, v]) => v === null || typeof v !== 'object'))
      return entries
        .filter(([, v]) => v !== null && v !== undefined && v !== '')
        .map(([k, v]) => `${k}: ${typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v)}`)
        .join(', ');
  }
  return value;
}

/**
 * The plan of a dry run for table mode: "Would run zot trash in users/8675309." and the tool's
 * plan, its fields labelled in words. The arguments are the plan's own account of them, so
 * they are shown only when the tool has no plan of its own (`--json` prints everything).
 */
export function planView(would: Record<string, unknown>): PlanView {
  const { command, library, args, ...plan } = would;
  const ref = library as Partial<LibraryRef> | null | undefined;
  const where =
    ref && (ref.type === 'user' || ref.type === 'group')
      ? ` in ${describeLibrary({ type: ref.type, id: ref.id ?? null, source: ref.source ?? 'config' })}`
      : '';
  const shown = Object.keys(plan).length > 0 ? plan : (args as Record<string, unknown>);
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(shown)) fields[label(name)] = planValue(value);
  return { heading: `Would run zot ${String(command)}${where}.`, fields };
}
