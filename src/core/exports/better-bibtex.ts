/**
 * Better BibTeX's citation keys, read from the desktop (`zotero/citations.md`, "Better BibTeX"),
 * which Zotero's own exporter never asks:
 *
 * - its database: `better-bibtex.sqlite` in the Zotero data directory (Better BibTeX on Zotero 7),
 *   table `citationkey(itemID, itemKey, libraryID, citationKey, pinned)`: every key of a library
 *   in one query, without the app. Opened read-only where it lies; when the running app holds
 *   it locked, a private copy is read instead (as zotero.sqlite is: local/sqlite/snapshot.ts).
 *   Once Better BibTeX has moved its keys into Zotero's own `citationKey` field (Zotero 8), it
 *   renames the file `better-bibtex.migrated`: then there is nothing here to read, and the
 *   field holds the keys.
 * - its JSON-RPC endpoint while the app runs: `POST <local API origin>/better-bibtex/json-rpc`,
 *   method `item.citationkey(["<libraryID>:<itemKey>", …])`, answering `{ "<libraryID>:<itemKey>":
 *   key | null }`. It is sent through the outbound HTTP layer (core/http); the URL derives from
 *   the local API's (`ZOTEUS_LOCAL_API_URL`, same host and port), see {@link betterBibtexRpcUrl}.
 *
 * Library ids here are the desktop's own (`libraries.libraryID`: 1 for My Library), not the Web
 * API's user or group ids.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ZoteusError } from '../errors.js';
import {
  createHttpLayer,
  newCall,
  RESETS,
  type CallContext,
  type Clock,
  type FetchLike,
  type Failures,
  type HttpLayer,
} from '../http/index.js';
import { isLockedOrUnopenable, removeSnapshot, takeSnapshot } from '../local/sqlite/snapshot.js';
import type { Redactor } from '../redact.js';

export const BETTER_BIBTEX_DB = 'better-bibtex.sqlite';
/** What Better BibTeX renames its database to once the keys live in Zotero's `citationKey` field. */
export const BETTER_BIBTEX_MIGRATED = 'better-bibtex.migrated';
export const BETTER_BIBTEX_RPC_PATH = '/better-bibtex/json-rpc';
/** How many item keys one JSON-RPC request asks for. */
export const RPC_BATCH = 500;

/** `better-bibtex.sqlite` in a Zotero data directory. */
export function betterBibtexDbPath(zoteroDataDir: string): string {
  return join(zoteroDataDir, BETTER_BIBTEX_DB);
}

/** The JSON-RPC URL on the host and port of the desktop's local API (`http://127.0.0.1:23119/api` → `…:23119/better-bibtex/json-rpc`). */
export function betterBibtexRpcUrl(localApiUrl: string): string {
  return new URL(BETTER_BIBTEX_RPC_PATH, new URL(localApiUrl).origin).href;
}

export interface ReadKeysOptions {
  /** better-sqlite3's class (core/sqlite-driver.ts `loadDatabaseClass()`). */
  Database: typeof BetterSqlite3;
  /** The desktop's library id (1: My Library). */
  libraryID: number;
  /** Where a private copy is made when the file is locked (default the OS temp dir). */
  tmpDir?: string;
  busyTimeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * Every key of one library in `better-bibtex.sqlite`, by item key; undefined when the file is
 * not there (no Better BibTeX, or its keys already moved to Zotero's `citationKey` field).
 */
export async function readBetterBibtexKeys(
  dbPath: string,
  options: ReadKeysOptions,
): Promise<Map<string, string> | undefined> {
  if (!existsSync(dbPath)) return undefined;
  const read = (path: string, timeout: number): Map<string, string> => {
    const db = new options.Database(path, { readonly: true, fileMustExist: true, timeout });
    try {
      const table = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'citationkey'")
        .get() as { name: string } | undefined;
      if (!table) {
        throw new ZoteusError(
          'api_error',
          `${path} has no citationkey table: it is not the database of Better BibTeX for Zotero 7 or later.`,
          {
            hint: 'Update Better BibTeX in Zotero, or remove the file if Better BibTeX is no longer installed.',
          },
        );
      }
      const rows = db
        .prepare('SELECT itemKey, citationKey FROM citationkey WHERE libraryID = ? ORDER BY itemKey')
        .all(options.libraryID) as Array<{ itemKey: unknown; citationKey: unknown }>;
      const keys = new Map<string, string>();
      for (const row of rows) {
        if (
          typeof row.itemKey === 'string' &&
          typeof row.citationKey === 'string' &&
          row.citationKey.trim()
        ) {
          keys.set(row.itemKey, row.citationKey.trim());
        }
      }
      return keys;
    } finally {
      db.close();
    }
  };
  try {
    return read(dbPath, options.busyTimeoutMs ?? 100);
  } catch (error) {
    if (!isLockedOrUnopenable(error)) throw translate(error, dbPath);
    options.log?.(`${dbPath} cannot be read in place (${(error as Error).message}); reading a private copy.`);
  }
  const snap = await takeSnapshot(dbPath, options.Database, options.tmpDir);
  try {
    return read(snap.path, 1000);
  } catch (error) {
    throw translate(error, dbPath);
  } finally {
    removeSnapshot(snap.dir);
  }
}

function translate(error: unknown, path: string): unknown {
  if (error instanceof ZoteusError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new ZoteusError(
      'api_error',
      `Reading Better BibTeX's keys from ${path} failed (${code}: ${(error as Error).message}).`,
      { retryable: code.startsWith('SQLITE_BUSY'), cause: error },
    );
  }
  return error;
}

export interface BetterBibtexRpcOptions {
  /** The JSON-RPC URL ({@link betterBibtexRpcUrl}). */
  url: string;
  clock: Clock;
  redact: Redactor;
  timeoutMs: number;
  /** The retry budget of a call (`ZOTEUS_RETRY_BUDGET_MS`). */
  retryBudgetMs?: number;
  fetch?: FetchLike;
  log?: (line: string) => void;
}

export interface BetterBibtexRpc {
  readonly url: string;
  /**
   * Better BibTeX's keys of the given items of one library, by item key (items it has no key for
   * are left out). Fails with `network_error` when nothing answers (the app is not running), and
   * `not_found` when the app answers without Better BibTeX.
   */
  citationKeys(
    libraryID: number,
    itemKeys: readonly string[],
    call?: CallContext,
  ): Promise<Map<string, string>>;
}

/** A client of Better BibTeX's JSON-RPC endpoint (see the module comment). */
export function createBetterBibtexRpc(options: BetterBibtexRpcOptions): BetterBibtexRpc {
  const { url } = options;
  const layer: HttpLayer = createHttpLayer({
    fetch: options.fetch,
    clock: options.clock,
    redact: options.redact,
    log: options.log,
    timeoutMs: options.timeoutMs,
    // A reset is worth one quick resend (the method reads only); a refused connection means the
    // app is not running, which a second will not change.
    retry: { transient: (reason) => RESETS.has(reason) },
  });
  const server = `Better BibTeX at ${url}`;
  const failures: Failures = {
    rateLimited: (seconds) =>
      new ZoteusError('rate_limited', `${server} asked to wait ${seconds} s.`, {
        retryAfterSeconds: seconds,
        retryable: true,
      }),
    unreachable: (reason, timedOut) =>
      new ZoteusError('network_error', `Could not reach ${server}: ${reason}.`, {
        retryable: timedOut,
        hint: 'Start Zotero (with Better BibTeX installed) to use its citation keys, or check ZOTEUS_LOCAL_API_URL.',
      }),
  };
  let id = 0;

  async function call(method: string, params: unknown[], context: CallContext): Promise<unknown> {
    const body = JSON.stringify({ jsonrpc: '2.0', method, params, id: ++id });
    return layer.send(
      {
        method: 'POST',
        url,
        server,
        label: `${url} ${method}`,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body,
        resendable: true,
        call: context,
        failures,
      },
      ({ status, text }) => {
        if (status === 404) {
          throw new ZoteusError(
            'not_found',
            `Zotero answered at ${url}, but without Better BibTeX (HTTP 404).`,
            {
              hint: 'Install Better BibTeX in Zotero to use its citation keys; without it, keys come from Extra, the citationKey field or Zotero’s formula.',
            },
          );
        }
        let parsed: { result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
        try {
          parsed = JSON.parse(text) as typeof parsed;
        } catch {
          parsed = undefined;
        }
        if (status < 200 || status >= 300 || !parsed || typeof parsed !== 'object') {
          throw new ZoteusError(
            'api_error',
            `${server} answered ${method} with HTTP ${status}${parsed ? '' : ' and a body that is not JSON'}.`,
            { status, retryable: status >= 500 },
          );
        }
        if (parsed.error) {
          const message = typeof parsed.error.message === 'string' ? parsed.error.message : 'no message';
          throw new ZoteusError(
            'api_error',
            `${server} refused ${method}: ${message} (code ${String(parsed.error.code)}).`,
          );
        }
        return parsed.result;
      },
    );
  }

  return {
    url,
    async citationKeys(libraryID, itemKeys, context) {
      const ctx = context ?? newCall(options.retryBudgetMs ?? 30_000);
      const keys = new Map<string, string>();
      for (let start = 0; start < itemKeys.length; start += RPC_BATCH) {
        const batch = itemKeys.slice(start, start + RPC_BATCH);
        const result = await call('item.citationkey', [batch.map((k) => `${libraryID}:${k}`)], ctx);
        if (result === null || typeof result !== 'object' || Array.isArray(result)) {
          throw new ZoteusError('api_error', `${server} answered item.citationkey without a map of keys.`);
        }
        const map = result as Record<string, unknown>;
        for (const itemKey of batch) {
          const value = map[`${libraryID}:${itemKey}`];
          if (typeof value === 'string' && value.trim()) keys.set(itemKey, value.trim());
        }
      }
      return keys;
    },
  };
}

export interface LookupOptions {
  /** The Zotero data directory (where `better-bibtex.sqlite` is), when this computer has one. */
  zoteroDataDir?: string | undefined;
  /** The desktop's library id (1: My Library). */
  libraryID: number;
  /** The items whose keys the JSON-RPC route asks for (the database gives the whole library). */
  itemKeys: readonly string[];
  Database: typeof BetterSqlite3;
  /** The JSON-RPC client, when the app may be running. */
  rpc?: BetterBibtexRpc | undefined;
  call?: CallContext;
  tmpDir?: string;
  log?: (line: string) => void;
}

/** Better BibTeX's keys and where they were read, or why there are none. */
export type LookupResult =
  { keys: Map<string, string>; from: 'sqlite' | 'json-rpc' } | { keys: undefined; reason: string };

/**
 * Better BibTeX's keys from the first route that has them: its database (the whole library, no
 * app needed), else its JSON-RPC endpoint (the given items, the app running). Never fails for
 * a route that is not there: the reason says what was tried. A database that cannot be read
 * (not Better BibTeX's, damaged) still fails.
 */
export async function lookupBetterBibtexKeys(options: LookupOptions): Promise<LookupResult> {
  const tried: string[] = [];
  if (options.zoteroDataDir) {
    const path = betterBibtexDbPath(options.zoteroDataDir);
    const keys = await readBetterBibtexKeys(path, {
      Database: options.Database,
      libraryID: options.libraryID,
      tmpDir: options.tmpDir,
      log: options.log,
    });
    if (keys) return { keys, from: 'sqlite' };
    tried.push(
      existsSync(join(options.zoteroDataDir, BETTER_BIBTEX_MIGRATED))
        ? `${path} was migrated into Zotero's citationKey field`
        : `no ${path}`,
    );
  }
  if (options.rpc) {
    try {
      return {
        keys: await options.rpc.citationKeys(options.libraryID, options.itemKeys, options.call),
        from: 'json-rpc',
      };
    } catch (error) {
      if (!(error instanceof ZoteusError) || (error.code !== 'network_error' && error.code !== 'not_found')) {
        throw error;
      }
      tried.push(error.message);
    }
  }
  return {
    keys: undefined,
    reason: tried.length > 0 ? tried.join('; ') : 'no route to Better BibTeX was given',
  };
}
