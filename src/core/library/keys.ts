/**
 * The key check every command that sends a key makes first (agent-interface.md, "Order of
 * checks"): `GET /keys/current`, remembered for ten minutes so that it costs one request per
 * MCP server and per ten minutes of CLI invocations. Two caches:
 *
 * - in memory, per `deps` (one MCP server process, one CLI invocation), which also joins
 *   concurrent checks into one request;
 * - on disk for the CLI, `$cacheDir/keys/<sha256(apiUrl NUL key)>.json` (dir 0700, file 0600),
 *   holding `{checkedAt, userID, username, displayName, access}`: never the key itself.
 *
 * Only a successful check is remembered. A refused key (`auth_invalid`) drops both entries,
 * so the next call asks the server again.
 */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { promises as fsp } from 'node:fs';
import { randomHex, sha256 } from '../node-crypto.js';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import type { SharedLimits } from '../http/types.js';
import type { Deps } from '../tool.js';
// Types only: the client loads when a key is first used, so a read of zotero.sqlite never loads it.
import type { CallContext, KeyAccess, KeyInfo, ZoteroClient } from '../zotero/index.js';
import { ensureDir } from '../dirs.js';
import { onlyOn } from '../call/refs.js';

/** How long a successful key check is trusted, in memory and on disk. */
export const KEY_CHECK_TTL_MS = 10 * 60_000;

/** Name of the shared Zotero client in `deps.services`. */
export const ZOTERO_CLIENT_SERVICE = 'zotero';
const KEY_STATE_SERVICE = 'zotero-key-check';

/** A key check as remembered: who the key is and what it may do, and when the server said so. */
export interface KeyCheck {
  info: KeyInfo;
  /** `deps.clock.now()` when the server answered. */
  checkedAt: number;
  /** Where this answer came from in this call (`shared`: another replica's check, in the state database). */
  source: 'server' | 'memory' | 'disk' | 'shared';
}

interface KeyState {
  entry?: { info: KeyInfo; checkedAt: number };
  pending?: Promise<KeyCheck>;
}

/**
 * The Zotero Web API client of these deps: one per deps (so one per MCP server and per CLI
 * invocation), built from the configuration; its request log goes to `deps.log.debug`.
 */
export function webClient(
  deps: Pick<Deps, 'config' | 'clock' | 'redact' | 'log' | 'services' | 'upstream' | 'sharedState'>,
): Promise<ZoteroClient> {
  const { upstream } = deps;
  return deps.services.get(ZOTERO_CLIENT_SERVICE, async () => {
    const [{ createZoteroClient }, observe] = await Promise.all([
      import('../zotero/index.js'),
      upstream ? import('../http/observe.js') : undefined,
    ]);
    return createZoteroClient({
      apiUrl: deps.config.apiUrl,
      apiKey: deps.config.apiKey,
      retryBudgetMs: deps.config.retryBudgetMs,
      timeoutMs: deps.config.timeoutMs,
      // A server's metrics see every answer and wait (http/observe.ts); the layer is the same.
      clock: upstream && observe ? observe.observedClock(upstream, deps.clock) : deps.clock,
      ...(upstream && observe ? { fetch: observe.observedFetch(upstream) } : {}),
      redact: deps.redact,
      log: (line) => deps.log.debug(line),
      shared: await sharedLimitsOf(deps),
    });
  });
}

/**
 * On replicas sharing PostgreSQL, the bounds this key's requests share with the other replicas
 * (the key only ever hashed); undefined on one machine or one server.
 */
async function sharedLimitsOf(deps: Pick<Deps, 'config' | 'sharedState'>): Promise<SharedLimits | undefined> {
  const state = deps.sharedState;
  if (!state || state.replica === undefined || state.db.dialect !== 'postgres' || !deps.config.apiKey)
    return undefined;
  const [{ sharedLimits }, { DEFAULT_MAX_IN_FLIGHT }] = await Promise.all([
    import('../store/shared-limits.js'),
    import('../zotero/index.js'),
  ]);
  const key = sha256().update(deps.config.apiUrl).update('\u0000').update(deps.config.apiKey).digest('hex');
  const upstream = new URL(deps.config.apiUrl).origin;
  return sharedLimits(
    state.db,
    [
      { scope: `key:${key.slice(0, 32)}`, max: DEFAULT_MAX_IN_FLIGHT },
      ...(state.upstreamMaxInFlight
        ? [{ scope: `upstream:${upstream}`, max: state.upstreamMaxInFlight }]
        : []),
    ],
    { replica: state.replica },
  );
}

/** The `auth_missing` error, naming the variable to set for the surface the call came through. */
export function authMissing(config?: Pick<Config, 'apiKeyHint'>): ZoteusError {
  return new ZoteusError('auth_missing', 'No Zotero API key is configured, and this needs one.', {
    hint:
      config?.apiKeyHint ??
      `Set ZOTERO_API_KEY${onlyOn('cli', ' (or ZOT_API_KEY), or select a profile that has one (`zot config init`, then --profile)')}${onlyOn('mcp', ' in the environment of the MCP server')}. Create a key at https://www.zotero.org/settings/keys.`,
  });
}

/** The disk cache file of one server and key: the key is only ever hashed. */
export function keyCachePath(config: Pick<Config, 'cacheDir' | 'apiUrl'>, apiKey: string): string {
  const digest = sha256().update(config.apiUrl).update('\u0000').update(apiKey).digest('hex');
  return join(config.cacheDir, 'keys', `${digest}.json`);
}

function isFlags(value: unknown): boolean {
  if (value === undefined) return true;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every((flag) => typeof flag === 'boolean');
}

function isAccess(value: unknown): value is KeyAccess {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const access = value as { user?: unknown; groups?: unknown };
  if (!isFlags(access.user)) return false;
  if (access.groups === undefined) return true;
  if (access.groups === null || typeof access.groups !== 'object' || Array.isArray(access.groups))
    return false;
  return Object.values(access.groups).every(isFlags);
}

/** A cache file's entry when it is well-formed and fresh at `now`; anything else is a miss. */
export function parseKeyCacheFile(
  text: string,
  now: number,
): { info: KeyInfo; checkedAt: number } | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const { checkedAt, userID, username, displayName, access } = r;
  if (typeof checkedAt !== 'number' || !Number.isFinite(checkedAt)) return undefined;
  // A time in the future (a clock moved back) is not trusted either.
  if (checkedAt > now || now - checkedAt >= KEY_CHECK_TTL_MS) return undefined;
  if (typeof userID !== 'number' || !Number.isSafeInteger(userID)) return undefined;
  if (typeof username !== 'string' || typeof displayName !== 'string' || !isAccess(access)) return undefined;
  return { info: { userID, username, displayName, access }, checkedAt };
}

async function readDisk(
  deps: Deps,
  apiKey: string,
): Promise<{ info: KeyInfo; checkedAt: number } | undefined> {
  try {
    return parseKeyCacheFile(await fsp.readFile(keyCachePath(deps.config, apiKey), 'utf8'), deps.clock.now());
  } catch {
    return undefined; // no file, or unreadable: ask the server
  }
}

async function writeDisk(deps: Deps, apiKey: string, info: KeyInfo, checkedAt: number): Promise<void> {
  const path = keyCachePath(deps.config, apiKey);
  const dir = join(deps.config.cacheDir, 'keys');
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    ensureDir(dir);
    await fsp.chmod(dir, 0o700);
    const body = {
      checkedAt,
      userID: info.userID,
      username: info.username,
      displayName: info.displayName,
      access: info.access,
    };
    await fsp.writeFile(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    // Rename is atomic: a concurrent reader sees the old file or the new one, never half of one.
    await fsp.rename(tmp, path);
  } catch (error) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    // The cache only saves a request; a read-only cache directory must not fail the command.
    deps.log.debug(`Could not write the key cache: ${(error as Error).message}`);
  }
}

async function dropDisk(deps: Deps, apiKey: string): Promise<void> {
  await fsp.rm(keyCachePath(deps.config, apiKey), { force: true }).catch(() => {});
}

/**
 * On a shared deployment, the key checks every replica shares (the state database's
 * `key_checks`, by the key's hash): a key checked by one replica is known to all for the
 * same ten minutes, and a key found revoked is forgotten by all. Failures only cost a request.
 */
const sharedChecks = {
  id: (deps: Deps, apiKey: string) =>
    sha256().update(deps.config.apiUrl).update('\u0000').update(apiKey).digest('hex'),
  async read(deps: Deps, apiKey: string): Promise<{ info: KeyInfo; checkedAt: number } | undefined> {
    const db = deps.sharedState!.db;
    const rows = await db
      .query<{ body: string }>('SELECT body FROM key_checks WHERE key_hash = ?', [
        sharedChecks.id(deps, apiKey),
      ])
      .catch(() => []);
    return rows[0] ? parseKeyCacheFile(rows[0].body, deps.clock.now()) : undefined;
  },
  async write(deps: Deps, apiKey: string, info: KeyInfo, checkedAt: number): Promise<void> {
    const body = JSON.stringify({ checkedAt, ...info });
    await deps
      .sharedState!.db.run(
        `INSERT INTO key_checks (key_hash, body, checked_at) VALUES (?, ?, ?)
         ON CONFLICT (key_hash) DO UPDATE SET body = excluded.body, checked_at = excluded.checked_at`,
        [sharedChecks.id(deps, apiKey), body, checkedAt],
      )
      .catch((error: unknown) => deps.log.debug(`Could not share the key check: ${String(error)}`));
  },
  async drop(deps: Deps, apiKey: string): Promise<void> {
    await deps
      .sharedState!.db.run('DELETE FROM key_checks WHERE key_hash = ?', [sharedChecks.id(deps, apiKey)])
      .catch(() => undefined);
  },
};

/**
 * Who the configured key belongs to and what it may do: from memory, else (CLI) from the
 * disk cache, else from `GET /keys/current`. `fresh: true` skips the caches (and refreshes
 * them): `zotero_whoami` uses it to report on the server as it is now.
 *
 * Throws `auth_missing` without a key, `auth_invalid` when the server refuses it, and the
 * client's errors (`network_error`, `rate_limited`, …) when it cannot be asked.
 */
export async function checkKey(
  deps: Deps,
  options: { fresh?: boolean; call?: CallContext | undefined } = {},
): Promise<KeyCheck> {
  const apiKey = deps.config.apiKey;
  if (apiKey === undefined || apiKey === '') throw authMissing();
  const state = await deps.services.get<KeyState>(KEY_STATE_SERVICE, () => ({}));
  const useDisk = deps.lifetime === 'call';

  if (!options.fresh) {
    const now = deps.clock.now();
    const entry = state.entry;
    if (entry && entry.checkedAt <= now && now - entry.checkedAt < KEY_CHECK_TTL_MS) {
      return { ...entry, source: 'memory' };
    }
    if (state.pending) return state.pending;
    if (useDisk) {
      const found = await readDisk(deps, apiKey);
      if (found) {
        state.entry = found;
        return { ...found, source: 'disk' };
      }
    }
    if (deps.sharedState) {
      const found = await sharedChecks.read(deps, apiKey);
      if (found) {
        state.entry = found;
        return { ...found, source: 'shared' };
      }
    }
  }
  // Checks already on their way answer for this one too: one request, however many callers.
  if (state.pending) return state.pending;

  const pending = (async (): Promise<KeyCheck> => {
    const client = await webClient(deps);
    try {
      const info = await client.getKeyInfo({ call: options.call });
      const checkedAt = deps.clock.now();
      state.entry = { info, checkedAt };
      if (useDisk) await writeDisk(deps, apiKey, info, checkedAt);
      if (deps.sharedState) await sharedChecks.write(deps, apiKey, info, checkedAt);
      return { info, checkedAt, source: 'server' };
    } catch (error) {
      if (isZoteusError(error) && (error.code === 'auth_invalid' || error.code === 'auth_expired')) {
        delete state.entry;
        if (useDisk) await dropDisk(deps, apiKey);
        if (deps.sharedState) await sharedChecks.drop(deps, apiKey);
      }
      throw error;
    }
  })();
  state.pending = pending;
  try {
    return await pending;
  } finally {
    if (state.pending === pending) delete state.pending;
  }
}
