/**
 * Whether a mutating tool's output is a success, a partial success or a total failure
 * (agent-interface.md, "Partial success"). Shared by both surfaces so they agree.
 */
import { ZoteusError, ERROR_CODES, outcomeUnknown, type ErrorCode } from './errors.js';

export type Outcome =
  | { kind: 'ok' }
  | { kind: 'partial'; failed: unknown[]; total: number }
  | { kind: 'failed'; error: ZoteusError };

const LANDED_FIELDS = ['succeeded', 'updated', 'created', 'deleted', 'unchanged'] as const;

function landedCount(output: Record<string, unknown>): number {
  let n = 0;
  for (const field of LANDED_FIELDS) {
    const v = output[field];
    if (Array.isArray(v)) n += v.length;
    else if (typeof v === 'string' && v) n += 1;
  }
  return n;
}

/** The string code of one failed entry: `reason` for objects, `error.code` for identifiers. */
function entryCode(entry: unknown): ErrorCode {
  const e = entry as { reason?: unknown; error?: { code?: unknown } } | null;
  const code = typeof e?.reason === 'string' ? e.reason : e?.error?.code;
  return (ERROR_CODES as readonly string[]).includes(code as string) ? (code as ErrorCode) : 'api_error';
}

/** Whether this entry's write may have been applied all the same (errors.ts `outcomeUnknown`). */
function entryUnknown(entry: unknown): boolean {
  const status = (entry as { code?: unknown } | null)?.code;
  return outcomeUnknown({ code: entryCode(entry), status: typeof status === 'number' ? status : undefined });
}

function entryRetryable(entry: unknown): boolean {
  const e = entry as { retryable?: unknown; error?: { retryable?: unknown } } | null;
  return e?.error?.retryable === true || e?.retryable === true;
}

/**
 * `read`: the output of a read that answers per entry (nothing was written, so nothing "may
 * have landed": an entry without an answer is only one to ask again).
 */
export function classifyOutcome(output: unknown, options: { read?: boolean } = {}): Outcome {
  const out = (output ?? {}) as Record<string, unknown>;
  const failed = Array.isArray(out.failed) ? out.failed : [];
  if (failed.length === 0) return { kind: 'ok' };
  const landed = landedCount(out);
  if (landed > 0) return { kind: 'partial', failed, total: landed + failed.length };
  const codes = new Set(failed.map(entryCode));
  const code: ErrorCode = codes.size === 1 ? ([...codes][0] as ErrorCode) : 'api_error';
  const noun = failed.length === 1 ? 'entry' : 'entries';
  if (options.read) {
    return {
      kind: 'failed',
      error: new ZoteusError(
        code,
        `Nothing could be answered: all ${failed.length} ${noun} failed (see error.failed).`,
        {
          failed,
          retryable: failed.every(entryRetryable),
          hint: 'Each entry of error.failed says why; those marked retryable may be asked again in a moment.',
        },
      ),
    };
  }
  // An entry that failed for want of an answer may have landed all the same: never claim it did not.
  const unknown = failed.filter(entryUnknown).length;
  const message =
    unknown === 0
      ? `Nothing landed: all ${failed.length} ${noun} failed (see error.failed).`
      : `No entry is known to have landed: all ${failed.length} ${noun} failed, ${unknown === failed.length ? 'each' : `${unknown} of them`} without an answer, so ${unknown === 1 ? 'it' : 'they'} may have landed (see error.failed).`;
  return {
    kind: 'failed',
    error: new ZoteusError(code, message, {
      failed,
      retryable: failed.every(entryRetryable),
      hint:
        unknown === 0
          ? 'Each entry of error.failed says why; fix those and retry (with the same idempotency key, only failed entries run again).'
          : 'Retry with the same idempotency key: what landed is found, not written again, and only the rest is sent.',
    }),
  };
}
