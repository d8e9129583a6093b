/**
 * Typed errors shared by every layer. The code table is the stable contract of
 * `agent-interface.md`: each code has one exit code and a default `retryable`.
 */

export const ERROR_CODES = [
  'validation_error',
  'confirmation_required',
  'auth_missing',
  'auth_invalid',
  'auth_expired',
  'permission_denied',
  'not_found',
  'network_error',
  'rate_limited',
  'conflict',
  'api_error',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Exit code and default retryability per error code (agent-interface.md, "Error codes and exit codes"). */
export const ERROR_TABLE: Readonly<Record<ErrorCode, { exit: number; retryable: boolean }>> = {
  validation_error: { exit: 3, retryable: false },
  confirmation_required: { exit: 3, retryable: false },
  auth_missing: { exit: 2, retryable: false },
  auth_invalid: { exit: 2, retryable: false },
  auth_expired: { exit: 2, retryable: false },
  permission_denied: { exit: 2, retryable: false },
  not_found: { exit: 4, retryable: false },
  network_error: { exit: 5, retryable: true },
  rate_limited: { exit: 5, retryable: true },
  conflict: { exit: 6, retryable: false },
  api_error: { exit: 1, retryable: false },
  internal_error: { exit: 1, retryable: false },
};

/** Exit code of an `ok: "partial"` envelope. */
export const PARTIAL_EXIT_CODE = 7;

export interface ZoteusErrorOptions {
  hint?: string;
  /** The input field the error concerns, when there is one. */
  field?: string;
  /** Overrides the code's default retryability (conflict and api_error vary). */
  retryable?: boolean;
  /** For rate_limited: how long to wait before retrying. */
  retryAfterSeconds?: number;
  /** HTTP status of the upstream answer, when the error came from one. */
  status?: number;
  /** Per-entry failures when every entry of a batch failed. */
  failed?: unknown[];
  /** confirmation_required: a person was asked and said no (the CLI then prints "Cancelled."). */
  declined?: boolean;
  cause?: unknown;
}

export class ZoteusError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly hint: string | undefined;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly status: number | undefined;
  readonly failed: unknown[] | undefined;
  readonly declined: boolean;

  constructor(code: ErrorCode, message: string, options: ZoteusErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ZoteusError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_TABLE[code].retryable;
    this.hint = options.hint;
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.status = options.status;
    this.failed = options.failed;
    this.declined = options.declined === true;
  }

  get exitCode(): number {
    return ERROR_TABLE[this.code].exit;
  }

  /** The `error` object of an envelope (and of MCP's `_meta["zoteus/error"]`). */
  toJSON(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.hint !== undefined) body.hint = this.hint;
    if (this.field !== undefined) body.field = this.field;
    if (this.retryAfterSeconds !== undefined) body.retry_after_seconds = this.retryAfterSeconds;
    if (this.failed !== undefined) body.failed = this.failed;
    return body;
  }
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  hint?: string;
  field?: string;
  retry_after_seconds?: number;
  failed?: unknown[];
}

/**
 * Whether a write that failed this way may have been applied all the same: its answer was lost
 * (no answer, a reset, a timeout), the server failed after taking it (5xx), or the retries ran
 * out on rate limits after a resend whose first attempt may have landed. The write engine
 * re-reads after such a failure, and an outcome made only of them never says "nothing landed".
 */
export function outcomeUnknown(err: Pick<ZoteusError, 'code' | 'status'>): boolean {
  return (
    err.code === 'network_error' ||
    err.code === 'rate_limited' ||
    (err.status !== undefined && err.status >= 500)
  );
}

export function isZoteusError(value: unknown): value is ZoteusError {
  return value instanceof ZoteusError;
}

/**
 * Anything thrown that is not a ZoteusError is a bug in Zoteus: it becomes an
 * `internal_error` whose message says what failed, never a stack trace.
 */
export function toZoteusError(value: unknown): ZoteusError {
  if (value instanceof ZoteusError) return value;
  const what = value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  return new ZoteusError('internal_error', `Internal error in Zoteus (${what}).`, {
    hint: 'This is a bug in Zoteus; please report it with the command that triggered it.',
    cause: value,
  });
}
