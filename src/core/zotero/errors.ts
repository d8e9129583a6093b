/**
 * Maps HTTP answers and transport failures of the Zotero API to ZoteusErrors. Every text
 * built here passes through the redactor (and the shared HTTP layer redacts every error once
 * more on its way out): the API key must never reach a message.
 */
import { toZoteusError, ZoteusError } from '../errors.js';
import { excerpt } from '../http/errors.js';
import type { Redactor } from '../redact.js';
import type { FailedEntry } from './types.js';

export { describeTransportError, isTimeout } from '../http/errors.js';

export interface RequestDescription {
  method: string;
  /** Path and query relative to the API root, e.g. `/users/1/items?itemKey=…`. */
  path: string;
  origin: string;
  redact: Redactor;
}

/** The field a `413` is about, when the server names it. */
export function fieldFrom413(body: string): string | undefined {
  const patterns = [
    /field '([A-Za-z]+)'/i,
    /'([A-Za-z]+)' field/i,
    /^([A-Za-z]+) field\b/i,
    /\b([A-Za-z]+) value is too long/i,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(body.trim());
    if (found?.[1]) return found[1];
  }
  return undefined;
}

export function isInvalidKeyBody(body: string): boolean {
  return /invalid key/i.test(body);
}

/**
 * Zotero's 409 to a whole write while another write holds the library ("The target library is
 * locked", "The library is currently locked. Please wait and try again."): nothing was applied.
 * Not a 409 that refuses the data (a key that does not match, a missing parent), nor a read's.
 */
export function isLockedWrite(method: string, status: number, body: string): boolean {
  const write = method !== 'GET' && method !== 'HEAD';
  return write && status === 409 && /\blibrary\b[^.]*\blocked\b/i.test(body);
}

/** The error for a non-2xx answer that retries did not resolve. */
export function httpError(
  req: RequestDescription,
  status: number,
  body: string,
  field?: string,
): ZoteusError {
  const where = `${req.method} ${req.path}`;
  // Redacted before it is cut (excerpt): a key across the cut would otherwise mostly survive.
  const said = excerpt(body, req.redact);
  const base = `The Zotero API answered HTTP ${status} to ${where}${said ? `: ${said}` : ''}.`;
  const make = (
    code: ConstructorParameters<typeof ZoteusError>[0],
    hint: string,
    extra: object = {},
  ): ZoteusError => new ZoteusError(code, req.redact(base), { hint: req.redact(hint), status, ...extra });

  if (status === 403) {
    const keysPath = req.path.split('?')[0] === '/keys/current';
    if (isInvalidKeyBody(body) || keysPath) {
      return make(
        'auth_invalid',
        'The server refused the API key: check ZOTERO_API_KEY or create a new key at https://www.zotero.org/settings/keys.',
      );
    }
    return make(
      'permission_denied',
      'The API key lacks access to this library or action: check its permissions at https://www.zotero.org/settings/keys (or use a library it can reach).',
    );
  }
  if (status === 404)
    return make('not_found', 'Check the library id and the object key: nothing exists at this path.');
  if (isLockedWrite(req.method, status, body))
    // Only after the retries the HTTP layer gave it: the lock outlasted them (or the budget).
    return make(
      'conflict',
      'Another write held the library locked through every retry of this call; wait a moment, then retry: nothing of this request was applied.',
      { retryable: true },
    );
  if (status === 409)
    return make(
      'conflict',
      'The library is locked or the change conflicts with its current state; read it again before retrying.',
    );
  if (status === 412) {
    return make(
      'conflict',
      'Someone else changed the library or object first: read the current version and apply the change again.',
      { retryable: true },
    );
  }
  if (status === 413) {
    const named = fieldFrom413(body) ?? field;
    return make(
      'validation_error',
      named
        ? `Shorten '${named}' or send fewer objects per request.`
        : 'A value is too long or the request carries too many objects.',
      named ? { field: named } : {},
    );
  }
  if (status === 428) {
    return make(
      'internal_error',
      'Zoteus sent a write without a version precondition: this is a bug in Zoteus; please report it.',
    );
  }
  if (status === 429 || status === 503) {
    return make('rate_limited', 'The Zotero API is throttling requests; wait and retry.');
  }
  if (status >= 500)
    return make('api_error', 'The Zotero API failed on its side; retry in a moment.', { retryable: true });
  return make('api_error', 'The request was refused by the Zotero API; the message above says why.', {
    retryable: false,
  });
}

/** The error for a 429/503 whose wait would overrun the call's retry budget. */
export function rateLimitedError(
  req: RequestDescription,
  retryAfterSeconds: number,
  what: string,
): ZoteusError {
  return new ZoteusError(
    'rate_limited',
    req.redact(
      `The Zotero API asked to wait ${retryAfterSeconds} s (${what}) before ${req.method} ${req.path}, beyond this call's retry budget.`,
    ),
    { retryAfterSeconds, hint: `Wait ${retryAfterSeconds} seconds, then retry.` },
  );
}

/**
 * The error for 429/503 answers that gave no Retry-After, once the layer's own backoff would
 * overrun the call's budget (or the retries are used up): the server asked for nothing, so the
 * message says what it answered and how long Zoteus would have waited, never "asked to wait".
 */
export function throttledError(
  req: RequestDescription,
  waitSeconds: number,
  status: number,
  exhausted: boolean,
): ZoteusError {
  const why = exhausted
    ? 'and the retries are used up'
    : `and waiting ${waitSeconds} s more before retrying would overrun this call's retry budget`;
  return new ZoteusError(
    'rate_limited',
    req.redact(
      `The Zotero API answered HTTP ${status} to ${req.method} ${req.path} without saying how long to wait, ${why}.`,
    ),
    { retryAfterSeconds: waitSeconds, hint: `Wait a minute, then retry.` },
  );
}

/** The error for a refused, reset or timed-out connection (`reason` as the HTTP layer names it). */
export function networkError(req: RequestDescription, reason: string, timedOut: boolean): ZoteusError {
  // A write whose answer never came may have been applied: say so, never "could not reach".
  const write = req.method !== 'GET' && req.method !== 'HEAD';
  const what = write
    ? `No answer from the Zotero API at ${req.origin} to ${req.method} ${req.path} (${reason}): the change may have been applied`
    : `Could not reach the Zotero API at ${req.origin} (${req.method} ${req.path}): ${reason}`;
  return new ZoteusError('network_error', req.redact(`${what}.`), {
    hint: write
      ? 'Retry with the same idempotency key: it finds what landed instead of writing it again.'
      : timedOut
        ? 'The server is slow or unreachable; retry, or raise ZOTEUS_TIMEOUT_MS.'
        : 'Check the network connection and ZOTERO_API_URL, then retry.',
  });
}

/** Per-object failure code → the string code of agent-interface.md. */
/**
 * Whether the same write may land an object Zotero refused with this status: no answer (0),
 * changed concurrently (412), rate limits and server errors; not a missing object, a refusal,
 * invalid data or an object that names something missing (409).
 */
export function retryableStatus(code: number): boolean {
  return code === 0 || code === 412 || code === 429 || code >= 500;
}

/** The failed entry of the object at `index` that Zotero answered with `code` (conventions.md). */
export function failedEntry(
  index: number,
  key: string | undefined,
  code: number,
  message: string,
  reason = reasonForCode(code),
): FailedEntry {
  return { index, ...(key ? { key } : {}), code, message, reason, retryable: retryableStatus(code) };
}

/** The failed entry of an object whose request ended in `error` before Zotero answered for it. */
export function failedByError(index: number, key: string | undefined, error: unknown): FailedEntry {
  const err = toZoteusError(error);
  return {
    index,
    ...(key ? { key } : {}),
    code: err.status ?? 0,
    message: err.message,
    reason: err.code,
    retryable: err.retryable,
  };
}

export function reasonForCode(code: number): string {
  switch (code) {
    case 400:
    case 413:
      return 'validation_error';
    case 403:
      return 'permission_denied';
    case 404:
      return 'not_found';
    case 409:
    case 412:
      return 'conflict';
    default:
      return 'api_error';
  }
}
