/**
 * The POST of a file's bytes to the storage URL an upload authorization gave (the Web API's
 * storage host, or the desktop's upload receiver), through the one outbound HTTP layer
 * (core/http/send.ts) like every other request: `429`/`503` (with or without `Retry-After`)
 * waited out and the file sent again, and a `Backoff` from the storage host holding its next
 * upload, all charged to the call's retry budget. The storage host is a server of its own: a
 * layer per deps with no credentials, so no key and no Zotero header ever goes there, only
 * `Content-Type` and `Content-Length`.
 *
 * The body is prefix + file + suffix, streamed from disk (never held whole); each attempt opens
 * the file again, so a resend never sends a stream an earlier attempt consumed. A reset
 * mid-upload is not resent: the file fails, and nothing was registered. A stall (no bytes taken
 * and no answer for STORAGE_STALL_MS) fails it too; one attempt has no other time limit, since
 * a large file on a slow link may take long. The layer's fetch is node:http's (storageFetch).
 */
import { createHttpLayer, excerpt, type FetchLike, type HttpLayer, type WaitCause } from '../http/index.js';
import { ZoteusError } from '../errors.js';
import type { CallContext } from '../zotero/index.js';
import type { Deps } from '../tool.js';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';

/** Files from this size on report their upload's progress. */
export const PROGRESS_FROM_BYTES = 8 * 1024 * 1024;

/** No bytes taken and no answer for this long: the upload stalled. */
export const STORAGE_STALL_MS = 120_000;

/** One attempt's bound in the layer; the socket's idle timeout is what ends a dead upload. */
const STORAGE_ATTEMPT_MS = 24 * 3600_000;

const STORAGE_SERVICE = 'zotero-storage';

/** What the storage POST needs of one file. */
export interface StorageFile {
  /** What the user named, for messages. */
  file: string;
  size: number;
  /** A fresh stream of the file's bytes. */
  open(): Readable;
}

export interface StorageTarget {
  url: string;
  contentType: string;
  prefix: string;
  suffix: string;
}

/**
 * The layer's `fetch` for the storage host, on node:http: fetch (undici) holds a streamed
 * request body's chunks until the request ends (a 200 MB upload peaked at 260 MB RSS), where
 * node:http writes each chunk once the one before was taken. No redirect is followed here (the
 * layer does that); a socket idle for STORAGE_STALL_MS ends the attempt as a timeout.
 */
const storageFetch: FetchLike = (input, init) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: init.method ?? 'GET',
      headers: init.headers as Record<string, string>,
      timeout: STORAGE_STALL_MS,
    });
    const signal = init.signal ?? undefined;
    const onAbort = (): void => {
      req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let sending = true;
    req.on('timeout', () => req.destroy(new DOMException('The upload stalled.', 'TimeoutError')));
    req.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        // An answer to an upload is short; a long one is only quoted in part.
        if (kept < 64 * 1024) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      res.on('error', reject);
      res.on('end', () => {
        signal?.removeEventListener('abort', onAbort);
        // Answered before the body was all sent (a 503): stop sending it.
        if (sending) req.destroy();
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
            headers.append(name, v);
        }
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 205 || status === 304;
        try {
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    void pump(init.body, req).finally(() => {
      sending = false;
    });
  });

/** Writes the body into the request, each chunk once the one before was taken. */
async function pump(body: RequestInit['body'], req: ClientRequest): Promise<void> {
  if (body === null || body === undefined || typeof body === 'string') {
    req.end(body ?? undefined);
    return;
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (req.destroyed) break;
      if (next.done) {
        req.end();
        return;
      }
      if (!req.write(next.value)) {
        await new Promise<void>((taken) => {
          req.once('drain', taken);
          req.once('close', taken);
        });
      }
    }
  } catch (error) {
    // The file could not be read on: the request ends with that reason.
    req.destroy(error instanceof Error ? error : new Error(String(error)));
  }
  await reader.cancel().catch(() => undefined);
}

/** The storage host's layer of these deps: its pauses shared by every upload of the process. */
function storageLayer(deps: Deps): Promise<HttpLayer> {
  return deps.services.get(STORAGE_SERVICE, () =>
    createHttpLayer({
      fetch: storageFetch,
      clock: deps.clock,
      redact: deps.redact,
      log: (line) => deps.log.debug(line),
      timeoutMs: STORAGE_ATTEMPT_MS,
      retry: { backoffHeader: true },
    }),
  );
}

/**
 * POSTs prefix + file + suffix to `target.url` under `call`'s retry budget; resolves once the
 * storage host took the bytes (2xx), else throws a ZoteusError whose message ends "nothing was
 * registered" (`status` the storage host's answer, when there was one).
 */
export async function sendToStorage(
  deps: Deps,
  target: StorageTarget,
  s: StorageFile,
  call: CallContext,
  progress: { phase: string } | undefined,
  /** The desktop's receiver takes raw bytes as octet-stream (text/plain would be decoded). */
  contentType: string,
): Promise<void> {
  const layer = await storageLayer(deps);
  const prefix = Buffer.from(target.prefix);
  const suffix = Buffer.from(target.suffix);
  const length = prefix.length + s.size + suffix.length;
  const phase = progress?.phase ?? '';
  if (progress) deps.progress({ event: 'start', phase, done: 0, total: s.size });
  let bodyFailure: ZoteusError | undefined;

  const open = (): ReadableStream<Uint8Array> => {
    let lastReported = 0;
    const parts = storageBody(prefix, s, suffix, (sent) => {
      if (progress && sent - lastReported >= PROGRESS_FROM_BYTES) {
        lastReported = sent;
        deps.progress({ event: 'progress', phase, done: sent, total: s.size });
      }
    });
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await parts.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          bodyFailure = error instanceof ZoteusError ? error : readFailure(s, error);
          controller.error(bodyFailure);
        }
      },
      async cancel() {
        await parts.return(undefined);
      },
    });
  };

  const failure = (message: string, opts: { status?: number; retryAfterSeconds?: number } = {}) =>
    new ZoteusError(opts.retryAfterSeconds === undefined ? 'network_error' : 'rate_limited', message, {
      ...opts,
      ...(opts.retryAfterSeconds !== undefined
        ? { hint: `Wait ${opts.retryAfterSeconds} seconds, then attach the file again.` }
        : {}),
    });

  await layer.send(
    {
      method: 'POST',
      url: target.url,
      server: 'the storage server',
      label: 'the storage server',
      headers: { 'Content-Type': contentType, 'Content-Length': String(length) },
      body: open,
      resendable: false,
      call,
      failures: {
        rateLimited: (seconds, cause, exhausted) =>
          failure(rateLimitedMessage(s.file, seconds, cause, exhausted), {
            retryAfterSeconds: seconds,
            ...(cause.kind === 'status' ? { status: cause.status } : {}),
          }),
        unreachable: (reason, timedOut) => {
          if (bodyFailure) return bodyFailure;
          if (timedOut)
            return failure(`The upload of ${s.file} to the storage server stalled; nothing was registered.`);
          return failure(
            `The upload of ${s.file} to the storage server failed (${reason}); nothing was registered.`,
          );
        },
      },
    },
    (answer) => {
      if (answer.status >= 200 && answer.status < 300) return;
      const said = excerpt(answer.text, deps.redact);
      throw new ZoteusError(
        'api_error',
        `The storage server refused ${s.file} (HTTP ${answer.status})${said ? `: ${said}` : ''}; nothing was registered.`,
        { status: answer.status },
      );
    },
  );
  if (progress) deps.progress({ event: 'complete', phase, done: s.size, total: s.size });
}

function rateLimitedMessage(file: string, seconds: number, cause: WaitCause, exhausted: boolean): string {
  const what =
    cause.kind === 'pause'
      ? `asked (Backoff) to wait ${seconds} s before the upload of ${file}`
      : cause.asked
        ? `answered HTTP ${cause.status} to the upload of ${file} and asked to wait ${seconds} s`
        : `answered HTTP ${cause.status} to the upload of ${file} without saying how long to wait`;
  const why = exhausted
    ? 'and the retries are used up'
    : cause.kind === 'status' && !cause.asked
      ? `and waiting ${seconds} s more before retrying would overrun this call's retry budget`
      : "beyond this call's retry budget";
  return `The storage server ${what}, ${why}; nothing was registered.`;
}

function readFailure(s: StorageFile, error: unknown): ZoteusError {
  const why = error instanceof Error ? error.message : String(error);
  return new ZoteusError('network_error', `Reading ${s.file} failed during the upload: ${why}.`);
}

/** prefix, the file as read from disk (its size checked), suffix. */
async function* storageBody(
  prefix: Buffer,
  s: StorageFile,
  suffix: Buffer,
  onBytes: (sent: number) => void,
): AsyncGenerator<Uint8Array> {
  if (prefix.length > 0) yield prefix;
  let sent = 0;
  for await (const chunk of s.open() as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    sent += bytes.length;
    if (sent > s.size) break;
    onBytes(sent);
    yield bytes;
  }
  if (sent !== s.size) {
    throw new ZoteusError(
      'network_error',
      `${s.file} changed during the upload (${sent} bytes read, ${s.size} expected); nothing was registered.`,
    );
  }
  if (suffix.length > 0) yield suffix;
}
