/**
 * Writes through the desktop app's local API (Zotero 10+; `zotero/local-api-writes.md`).
 *
 * - Detection without side effects (`probeLocalWrites`): `GET /api/` for the
 *   `Zotero-Server-ID`, then `POST /api/users/0/items` with `[]`, that id and no key. Zotero
 *   10+ answers `401` (writes exist, a key is needed); 7–9 answer `400` (read-only). Never with
 *   a key: a one-time key is used up by the first write that reaches the key check.
 * - The write client (`createLocalWriteClient`) has the Web API client's methods, so the write
 *   engine and the tools need no change: the same batches, versions and write tokens, sent to
 *   the local API with the local key. It sends the `Zotero-Server-ID` it has seen on every
 *   request and captures the one of every answer; a `412` that says the id does not match
 *   this server (another database: a profile switch, a restore) drops every version it held,
 *   forgets the detection and is never re-applied; any other `412` is a version conflict,
 *   re-read and re-applied by the engine as on the Web API. Its listing cache is its own, so
 *   local versions are never mixed with Web API versions.
 * - A refused key (`401`: missing, unknown, or a one-time key already used) is `auth_missing`
 *   with the hint to have a person authorise Zoteus again.
 */
import { onlyOn } from '../call/refs.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { deleteBatch, getByKeys, patchObject, writeBatch } from '../zotero/batch.js';
import { createListingCache } from '../zotero/cache.js';
import { createHttp, splitPath, type Http } from '../zotero/http.js';
import { listAll } from '../zotero/paging.js';
import type { FetchLike, ZoteroClient } from '../zotero/index.js';
import { ENABLE_LOCAL_API_HINT } from './local-api.js';

/** The header Zotero 10 answers every `/api` request with, and wants back on every write. */
export const SERVER_ID_HEADER = 'Zotero-Server-ID';
/** The app name `zot auth local` asks the desktop for a key under. */
export const LOCAL_APP_NAME = 'Zoteus';
/** How long the write probe waits for each of its two answers. */
export const WRITE_PROBE_TIMEOUT_MS = 2_000;
/** How long a write probe is trusted by a long-running process. */
export const WRITE_PROBE_RECHECK_MS = 30_000;

/**
 * What the write probe found: `writable` (Zotero 10+ with its local API on: a key makes
 * writes possible), `read_only` (Zotero 7–9: the local API takes no writes), `disabled` (the
 * local API is off in Zotero's settings), `not_running`, `error` (anything else).
 */
export type LocalWriteState = 'writable' | 'read_only' | 'disabled' | 'not_running' | 'error';

export interface LocalWriteProbe {
  state: LocalWriteState;
  url: string;
  /** The database's `Zotero-Server-ID`, when the app sent one. */
  serverId?: string | undefined;
  /** One sentence: what answered, or why nothing did. */
  detail: string;
  hint?: string | undefined;
  checkedAt: number;
}

/** The words of every hint that sends a person to authorise Zoteus in the desktop app. */
export function authoriseHint(): string {
  return `Have a person authorise Zoteus in the Zotero desktop app once: ${onlyOn('cli', 'run `zot auth local` at a terminal')}${onlyOn('mcp', 'they run the auth local command of the Zoteus CLI at a terminal')} and click "Always Allow" (a one-time key cannot do a write of several requests); agents then get the key from ZOTEUS_LOCAL_API_KEY.`;
}

function timeoutSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(ms);
}

async function ask(
  fetchFn: FetchLike,
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetchFn(url, { ...init, signal: timeoutSignal(timeoutMs) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The write probe of `local-api-writes.md`: two requests, no key, nothing changed. */
export async function probeLocalWrites(options: {
  url: string;
  fetch?: FetchLike | undefined;
  now?: () => number;
  timeoutMs?: number;
}): Promise<LocalWriteProbe> {
  const { url } = options;
  const fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? WRITE_PROBE_TIMEOUT_MS;
  const base = { url, checkedAt: (options.now ?? Date.now)() };
  const headers = { 'Zotero-API-Version': '3' };
  let first: { status: number; headers: Headers; text: string };
  try {
    first = await ask(fetchFn, `${url}/`, { method: 'GET', headers }, timeoutMs);
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name;
    return {
      ...base,
      state: 'not_running',
      detail:
        name === 'TimeoutError' || name === 'AbortError'
          ? `The Zotero desktop app did not answer at ${url} within ${timeoutMs} ms.`
          : `The Zotero desktop app is not running (nothing answers at ${url}).`,
      hint: 'Start Zotero 10 or later with its local API enabled to write through it.',
    };
  }
  if (first.status === 403) {
    return {
      ...base,
      state: 'disabled',
      detail: `Zotero is running, but its local API is disabled (HTTP 403 at ${url}).`,
      hint: ENABLE_LOCAL_API_HINT,
    };
  }
  const serverId = first.headers.get(SERVER_ID_HEADER) ?? undefined;
  let second: { status: number; headers: Headers; text: string };
  try {
    second = await ask(
      fetchFn,
      `${url}/users/0/items`,
      {
        method: 'POST',
        headers: {
          ...headers,
          'Content-Type': 'application/json',
          ...(serverId ? { [SERVER_ID_HEADER]: serverId } : {}),
        },
        body: '[]',
      },
      timeoutMs,
    );
  } catch {
    return {
      ...base,
      state: 'error',
      serverId,
      detail: `The Zotero desktop app at ${url} stopped answering during the write probe.`,
      hint: 'Check that Zotero is still running, then retry.',
    };
  }
  if (second.status === 401) {
    return {
      ...base,
      state: 'writable',
      serverId: second.headers.get(SERVER_ID_HEADER) ?? serverId,
      detail: `The Zotero desktop app at ${url} takes writes through its local API (Zotero 10 or later).`,
    };
  }
  if (second.status === 403) {
    return {
      ...base,
      state: 'disabled',
      detail: `Zotero is running, but its local API is disabled (HTTP 403 at ${url}).`,
      hint: ENABLE_LOCAL_API_HINT,
    };
  }
  if (second.status === 400 || second.status === 405 || second.status === 404) {
    return {
      ...base,
      state: 'read_only',
      detail: `The Zotero desktop app at ${url} is older than Zotero 10: its local API takes no writes (HTTP ${second.status} to a write).`,
      hint: 'Update Zotero to version 10 or later to write through the desktop app.',
    };
  }
  return {
    ...base,
    state: 'error',
    serverId,
    detail: `The Zotero desktop app at ${url} answered the write probe with HTTP ${second.status}.`,
    hint: 'Restart Zotero; if it persists, set ZOTEUS_WRITES=cloud.',
  };
}

/** What a local write client knows of the server it writes to. */
export interface ServerIdState {
  /** The `Zotero-Server-ID` last seen. */
  id: string | undefined;
}

/** Whether an error is the local API's "this is another database" 412. */
export function isServerMismatch(error: unknown): boolean {
  return isZoteusError(error) && error.status === 412 && /does not match this server/i.test(error.message);
}

export interface LocalWriteClientOptions {
  url: string;
  key: string;
  server: ServerIdState;
  fetch?: FetchLike | undefined;
  /** Called when the server id changed (another database): caches keyed to the old one go. */
  onServerChange?: ((from: string | undefined, to: string | undefined) => void) | undefined;
}

/** The write client of the desktop's local API: the Web API client's methods over the local API. */
export function createLocalWriteClient(
  deps: Pick<Deps, 'config' | 'clock' | 'redact' | 'log'>,
  o: LocalWriteClientOptions,
): ZoteroClient {
  const cache = createListingCache();
  const baseFetch: FetchLike = o.fetch ?? ((input, init) => fetch(input, init));
  const changed = (from: string | undefined, to: string | undefined): void => {
    cache.clear();
    deps.log.debug(`local API: Zotero-Server-ID changed from ${from ?? '(none)'} to ${to ?? '(none)'}`);
    o.onServerChange?.(from, to);
  };
  // Every request carries the id seen last; every answer's id is captured.
  const localFetch: FetchLike = async (input, init) => {
    const headers = new Headers(init.headers);
    if (o.server.id !== undefined) headers.set(SERVER_ID_HEADER, o.server.id);
    const response = await baseFetch(input, { ...init, headers });
    const seen = response.headers.get(SERVER_ID_HEADER) ?? undefined;
    if (seen !== undefined && seen !== o.server.id) {
      const before = o.server.id;
      o.server.id = seen;
      if (before !== undefined) changed(before, seen);
    }
    return response;
  };
  const http = createHttp({
    apiUrl: o.url,
    apiKey: o.key,
    retryBudgetMs: deps.config.retryBudgetMs,
    timeoutMs: deps.config.timeoutMs,
    clock: deps.clock,
    redact: deps.redact,
    log: (line) => deps.log.debug(`local API (writes): ${line}`),
    fetch: localFetch,
  });
  const mapped: Http = {
    ...http,
    request: async (method, path, opts) => {
      try {
        return await http.request(method, path, opts);
      } catch (error) {
        throw localWriteError(error, o.url, method);
      }
    },
    download: async (path, opts) => {
      try {
        return await http.download(path, opts);
      } catch (error) {
        throw localWriteError(error, o.url, 'GET');
      }
    },
  };
  return {
    request: (method, path, opts) => mapped.request(method, path, opts),
    download: (path, opts) => mapped.download(path, opts),
    listAll: (path, opts) => {
      const split = splitPath(path, opts?.query);
      return listAll(mapped, cache, split.path, { ...opts, query: split.query });
    },
    getByKeys: (library, kind, keys, opts) => getByKeys(mapped, library, kind, keys, opts),
    writeBatch: (library, kind, objects, opts) => writeBatch(mapped, library, kind, objects, opts),
    patch: (library, kind, key, data, version, opts) =>
      patchObject(mapped, library, kind, key, data, version, opts),
    deleteBatch: (library, kind, keys, opts) => deleteBatch(mapped, library, kind, keys, opts),
    getKeyInfo: () =>
      Promise.reject(
        new ZoteusError(
          'internal_error',
          'Internal error in Zoteus (the local API has no /keys/current; its keys are unscoped).',
        ),
      ),
    newCall: () => http.newCall(),
    cache,
    redact: (text) => http.redact(text),
  };
}

/** An error of the local API's write path, in its own words (401, the server id's 412, 403). */
export function localWriteError(error: unknown, url: string, method: string): unknown {
  if (!isZoteusError(error)) return error;
  if (error.status === 401) {
    return new ZoteusError(
      'auth_missing',
      `The Zotero desktop app at ${url} refused the local API key (HTTP 401: no key, an unknown one, one cleared in Zotero's settings, or a one-time key already used by an earlier request).`,
      { status: 401, hint: authoriseHint(), cause: error },
    );
  }
  if (isServerMismatch(error)) {
    // No status: neither the engine nor a create takes this for a version conflict to re-apply.
    return new ZoteusError(
      'conflict',
      `The Zotero desktop app at ${url} now serves another database (its Zotero-Server-ID changed): ${method} was refused before anything changed, and the versions Zoteus held for the old one were dropped.`,
      {
        retryable: false,
        hint: 'Read the library again (it may not hold what was read before), then repeat the change if it still applies.',
        cause: error,
      },
    );
  }
  if (error.status === 403 && /write access denied|file editing denied/i.test(error.message)) {
    return new ZoteusError(
      'permission_denied',
      `The Zotero desktop app refused the write: ${error.message}`,
      {
        status: 403,
        hint: "The library is not editable in Zotero (a group where you may only read, or files you may not edit); ask the group's owner, or write to another library.",
        cause: error,
      },
    );
  }
  return error;
}
