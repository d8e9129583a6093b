/**
 * What the outbound HTTP layer says about failures, the same for every server: how a transport
 * failure is named, how much of a server's own words a message quotes, and how an error is
 * cleaned of secrets before it leaves the layer.
 */
import { ZoteusError } from '../errors.js';
import { redactValue, type Redactor } from '../redact.js';

/** At most this much of a server's error text goes into a message. */
export const BODY_EXCERPT = 200;

/**
 * A server's text as a message may quote it: redacted, then flattened and cut. The order is the
 * point: cut first, a key standing across the cut would print all but its last characters, and
 * a whole-key match would no longer find it. Cutting a redacted text can only shorten it, so no
 * run of a secret can appear.
 */
export function excerpt(text: string, redact: Redactor, max = BODY_EXCERPT): string {
  const flat = redact(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The same error with every text redacted (message, hint, per-entry failures); a fresh stack. */
export function redactError(error: ZoteusError, redact: Redactor): ZoteusError {
  const message = redact(error.message);
  const hint = error.hint === undefined ? undefined : redact(error.hint);
  if (message === error.message && hint === error.hint && error.failed === undefined) return error;
  return new ZoteusError(error.code, message, {
    hint,
    field: error.field,
    retryable: error.retryable,
    retryAfterSeconds: error.retryAfterSeconds,
    status: error.status,
    failed: error.failed === undefined ? undefined : redactValue(error.failed, redact),
  });
}

export function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** `ECONNRESET`, `ECONNREFUSED`, `ENOTFOUND`…: the most specific code undici gives. */
export function describeTransportError(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    current = (current as { cause?: unknown }).cause;
  }
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message : 'connection failed';
}

/** The transport's code (`ECONNREFUSED`…), else the innermost message: `fetch failed` says nothing. */
export function transportReason(error: unknown): string {
  const described = describeTransportError(error);
  if (described !== 'fetch failed') return described;
  let inner: unknown = error;
  while ((inner as { cause?: unknown } | null)?.cause instanceof Error)
    inner = (inner as { cause: Error }).cause;
  return (inner as Error).message || described;
}

/** Transport failures after which the same request may well succeed at once. */
export const RESETS: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);
