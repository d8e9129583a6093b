/**
 * The Zotero desktop app's local API (`zotero/desktop.md`, "The local API"): the Web API v3
 * served by the running app at `http://127.0.0.1:23119/api/`, user id `0` for the personal
 * library, no key, no rate limits, unpaginated unless `limit` is given, read-only in Zotero 7–9.
 *
 * The client is the Web API client (`core/zotero`) pointed at that base URL without a key.
 * Whether the app runs and the local API is enabled is detected with one cheap request under a
 * short timeout, so a command does not stall when Zotero is closed (connection refused answers
 * at once): refused or no answer → not running; `403` → running, local API disabled (the hint
 * says where to enable it); `404` → running, but without a local API (Zotero 6 or older).
 *
 * The base URL comes from `ZOTEUS_LOCAL_API_URL` (default `http://127.0.0.1:23119/api`), read
 * and validated here until `config.ts` carries it.
 */
import type * as NodeHttp from 'node:http';
import type * as NodeNet from 'node:net';
import { builtin } from '../builtin.js';
import { parseApiUrl } from '../config.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import type { Env } from '../paths.js';
import type { Deps } from '../tool.js';
import type { FetchLike, ZoteroClient } from '../zotero/index.js';

export const LOCAL_API_URL_VAR = 'ZOTEUS_LOCAL_API_URL';
export const DEFAULT_LOCAL_API_URL = 'http://127.0.0.1:23119/api';
/** How long detection waits for an answer: a closed app refuses at once, a hung one must not stall a command. */
export const LOCAL_API_PROBE_TIMEOUT_MS = 500;
/** How long a detection is trusted by a long-running process (an MCP server): Zotero may start or quit. */
export const LOCAL_API_RECHECK_MS = 30_000;

export const ENABLE_LOCAL_API_HINT =
  'In Zotero 7 or later, open Settings → Advanced and tick "Allow other applications on this computer to communicate with Zotero".';

/** `ZOTEUS_LOCAL_API_URL`, validated (an http(s) URL without credentials), without a trailing slash. */
export function localApiUrl(env: Env): string {
  const raw = env[LOCAL_API_URL_VAR]?.trim();
  return parseApiUrl(LOCAL_API_URL_VAR, raw ? raw : DEFAULT_LOCAL_API_URL);
}

/**
 * What detection found: `enabled` (answers as the local API), `disabled` (the app runs, the
 * setting is off: every request answers 403), `not_running` (nothing listens, or no answer in
 * time), `unsupported` (something answers there, but not a local API), `error` (anything else).
 */
export type LocalApiState = 'enabled' | 'disabled' | 'not_running' | 'unsupported' | 'error';

export interface LocalApiStatus {
  available: boolean;
  state: LocalApiState;
  url: string;
  /** One sentence for the agent: what answered, or why nothing did. */
  detail: string;
  /** How to fix it, when it is not available. */
  hint?: string;
  /** `Last-Modified-Version` of the user library when the probe answered. */
  libraryVersion?: number;
  /** The user id in the answer's `library` (0 when the app is not signed in), when it showed one. */
  userID?: number;
  /** `now()` of the detection. */
  checkedAt: number;
}

export interface DetectOptions {
  url: string;
  timeoutMs?: number;
  fetch?: FetchLike;
  now?: () => number;
}

function transportCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return (error as Error | undefined)?.message || 'connection failed';
}

/** What the probe reads of an answer. */
interface ProbeAnswer {
  status: number;
  header(name: string): string | null;
  text: string;
}

/**
 * The probe's GET, with `node:http` unless a `fetch` is given (tests): `fetch` loads undici,
 * which costs a one-shot `zot read` more than reading the database. No agent: a fresh
 * connection that closes after the answer, so nothing keeps the process alive.
 */
async function probeGet(
  url: string,
  timeoutMs: number,
  fetchFn: FetchLike | undefined,
): Promise<ProbeAnswer> {
  const headers = { 'Zotero-API-Version': '3' };
  if (fetchFn) {
    const response = await fetchFn(url, { method: 'GET', headers, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    return { status: response.status, header: (name) => response.headers.get(name), text };
  }
  const target = new URL(url);
  const deadline = Date.now() + timeoutMs;
  await acceptsConnections(target, timeoutMs);
  const left = Math.max(1, deadline - Date.now());
  const { request } = builtin<typeof NodeHttp>(target.protocol === 'https:' ? 'node:https' : 'node:http');
  return new Promise<ProbeAnswer>((resolve, reject) => {
    const req = request(target, { method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(new Error('The connection closed before the answer was complete.'));
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          header: (name) => {
            const value = res.headers[name.toLowerCase()];
            return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
          },
          text: new TextDecoder().decode(Buffer.concat(chunks)),
        });
      });
    });
    function fail(error: Error) {
      clearTimeout(timer);
      req.destroy();
      reject(error);
    }
    const timer = setTimeout(() => fail(timeoutError(timeoutMs)), left);
    req.on('error', fail);
    req.end();
  });
}

function timeoutError(timeoutMs: number): Error {
  const error = new Error(`No answer within ${timeoutMs} ms.`);
  error.name = 'TimeoutError';
  return error;
}

/**
 * Resolves when something accepts a TCP connection at the URL's host and port; rejects with the
 * connection's error otherwise. When Zotero is not running (the usual case for reading
 * zotero.sqlite) nothing does, and node:net says so without loading node:http, which costs a
 * `zot` process about 3 ms more.
 */
function acceptsConnections(target: URL, timeoutMs: number): Promise<void> {
  const { connect } = builtin<typeof NodeNet>('node:net');
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const done = (error?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => done(timeoutError(timeoutMs)), timeoutMs);
    socket.once('connect', () => done());
    socket.once('error', done);
  });
}

/** One request to `{url}/users/0/collections?limit=1`: does the desktop's local API answer? */
export async function detectLocalApi(options: DetectOptions): Promise<LocalApiStatus> {
  const { url } = options;
  const timeoutMs = options.timeoutMs ?? LOCAL_API_PROBE_TIMEOUT_MS;
  const now = options.now ?? Date.now;
  const base = { url, checkedAt: now() };
  let response: ProbeAnswer;
  let text: string;
  try {
    response = await probeGet(`${url}/users/0/collections?limit=1`, timeoutMs, options.fetch);
    text = response.text;
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    const timedOut = name === 'TimeoutError' || name === 'AbortError';
    return {
      ...base,
      available: false,
      state: 'not_running',
      detail: timedOut
        ? `The Zotero desktop app did not answer at ${url} within ${timeoutMs} ms.`
        : `The Zotero desktop app is not running (nothing answers at ${url}: ${transportCode(error)}).`,
      hint: 'Start Zotero 7 or later to read the library through its local API.',
    };
  }
  const status = response.status;
  if (status === 403) {
    return {
      ...base,
      available: false,
      state: 'disabled',
      detail: `Zotero is running, but its local API is disabled (HTTP 403 at ${url}).`,
      hint: ENABLE_LOCAL_API_HINT,
    };
  }
  if (status === 404) {
    return {
      ...base,
      available: false,
      state: 'unsupported',
      detail: `Something answers at ${url}, but not the Zotero local API (HTTP 404): Zotero 6 or older has none.`,
      hint: 'Update Zotero to version 7 or later, then enable its local API.',
    };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status < 200 || status >= 300 || !Array.isArray(body)) {
    return {
      ...base,
      available: false,
      state: 'error',
      detail: `The Zotero local API at ${url} answered HTTP ${status}${Array.isArray(body) ? '' : ' without a JSON list'}.`,
      hint: 'Restart Zotero; if it persists, set ZOTEUS_LOCAL=off or check ZOTEUS_LOCAL_API_URL.',
    };
  }
  const version = Number(response.header('last-modified-version'));
  const library = (body[0] as { library?: { id?: unknown } } | undefined)?.library;
  return {
    ...base,
    available: true,
    state: 'enabled',
    detail: `The Zotero desktop app answers through its local API at ${url}.`,
    ...(Number.isSafeInteger(version) && version >= 0 ? { libraryVersion: version } : {}),
    ...(typeof library?.id === 'number' && Number.isSafeInteger(library.id) ? { userID: library.id } : {}),
  };
}

/**
 * A failure of a request to the local API, in the local API's words: the app stopped
 * answering (it quit), or the local API was disabled meanwhile. Other errors pass unchanged.
 */
export function localApiError(error: unknown, url: string): unknown {
  if (!isZoteusError(error)) return error;
  if (error.code === 'network_error') {
    return new ZoteusError(
      'network_error',
      `The Zotero desktop app stopped answering at ${url}: ${error.message}`,
      {
        hint: 'Start Zotero again and retry (the next call reads zotero.sqlite or the Web API if it stays closed), or set ZOTEUS_LOCAL=off.',
        cause: error,
      },
    );
  }
  if (error.status === 403) {
    return new ZoteusError(
      'api_error',
      `The Zotero local API at ${url} refused the request (HTTP 403): it is disabled.`,
      {
        status: 403,
        hint: `${ENABLE_LOCAL_API_HINT} Or set ZOTEUS_LOCAL=off to use the Web API only.`,
        cause: error,
      },
    );
  }
  return error;
}

/** Name of the per-deps local API state in `deps.services`. */
export const LOCAL_API_SERVICE = 'zotero-local-api';

export interface LocalApi {
  url: string;
  /**
   * The client (no key) every local-API reader of these deps shares: there once a detection
   * found the local API (its module loads then); asked for before, an internal error.
   */
  readonly client: ZoteroClient;
  /** The latest detection: probed on first use, again after `LOCAL_API_RECHECK_MS` or `forget()`. */
  status(): Promise<LocalApiStatus>;
  /** Drops the detection (the app stopped answering): the next `status()` probes again. */
  forget(): void;
}

/**
 * The local API of these deps: one client, one detection shared by every call (a CLI
 * invocation probes once; an MCP server re-probes after 30 s, since Zotero may start or quit).
 */
export function localApi(
  deps: Pick<Deps, 'config' | 'clock' | 'redact' | 'log' | 'services' | 'env'>,
  options: { fetch?: FetchLike } = {},
): Promise<LocalApi> {
  return deps.services.get<LocalApi>(LOCAL_API_SERVICE, () => {
    const url = localApiUrl(deps.env);
    let makeClient: (() => ZoteroClient) | undefined;
    let client: ZoteroClient | undefined;
    let pending: Promise<LocalApiStatus> | undefined;
    let last: LocalApiStatus | undefined;
    return {
      url,
      get client(): ZoteroClient {
        if (!makeClient) {
          throw new ZoteusError(
            'internal_error',
            'Internal error in Zoteus (the local API client asked for before the local API was found).',
          );
        }
        return (client ??= makeClient());
      },
      status: () => {
        const now = deps.clock.now();
        if (last && now >= last.checkedAt && now - last.checkedAt < LOCAL_API_RECHECK_MS) {
          return Promise.resolve(last);
        }
        pending ??= detectLocalApi({ url, now: () => deps.clock.now(), fetch: options.fetch })
          .then(async (status) => {
            if (status.available && !makeClient) {
              const { createLocalApiClient } = await import('./local-api-client.js');
              makeClient = () => createLocalApiClient(deps, url, options);
            }
            last = status;
            deps.log.debug(`local API: ${status.state} (${status.detail})`);
            return status;
          })
          .finally(() => {
            pending = undefined;
          });
        return pending;
      },
      forget: () => {
        last = undefined;
      },
    };
  });
}
