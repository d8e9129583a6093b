/**
 * The one way tools reach a library on the Zotero Web API, in the order of checks of
 * agent-interface.md: the address (validation_error), the key (auth_missing), read-only mode,
 * the key check at `/keys/current` (auth_invalid; cached, see keys.ts), then the library and
 * the access the call needs (permission_denied) judged from the key's cached access. A call
 * refused at any of these steps has sent no request other than that key check.
 */
import { readOnlyRefusal, type Config, type LibraryType } from '../config.js';
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import type { CallContext, KeyAccess, KeyInfo, ZoteroClient } from '../zotero/index.js';
import {
  describeLibrary,
  libraryPrefix,
  resolveLibrary,
  type LibraryArgs,
  type LibraryRef,
} from './address.js';
import { authMissing, checkKey, webClient } from './keys.js';
import { noteWrite } from './recent-writes.js';
import type { WritePlan } from './write-route.js';
import { paramRef, toolRef } from '../call/refs.js';
import { journaledClient } from '../journal/client.js';

export type Access = 'read' | 'write';

/** What a key's `access` grants on one library, as far as `/keys/current` can tell. */
export interface LibraryGrant {
  read: boolean;
  write: boolean;
  /**
   * Which entry of the key's access decided: its user library, the group's own entry, or
   * `groups.all`, which only covers groups the key's user belongs to (the server has the last
   * word on membership, and answers 403 otherwise); `none` when nothing grants access.
   */
  via: 'user' | 'group' | 'all' | 'none';
}

export interface WebLibrary {
  /** The shared client of these deps. */
  client: ZoteroClient;
  /** `users/123` or `groups/456`: prefix of every path of this library. */
  prefix: string;
  /** The resolved library; `id` is filled from the key when the address left it open. */
  ref: { type: LibraryType; id: number; source: LibraryRef['source'] };
  /** `/keys/current` without the key. */
  keyInfo: KeyInfo;
  /** What the key may do here (write may still be refused by a group that lets only admins edit). */
  grant: LibraryGrant;
  /** Where writes through `client` land: the desktop's local API, or the Web API. */
  side?: 'desktop' | 'cloud' | undefined;
}

export interface OpenOptions {
  access: Access;
  /** Shares the call's retry budget with the key check. */
  call?: CallContext | undefined;
}

/** What `access` grants on a library, from the key's access flags alone (no request). */
export function grantFor(keyInfo: KeyInfo, ref: { type: LibraryType; id: number }): LibraryGrant {
  const access: KeyAccess = keyInfo.access ?? {};
  if (ref.type === 'user') {
    if (ref.id !== keyInfo.userID) return { read: false, write: false, via: 'none' };
    const read = access.user?.library === true;
    return { read, write: read && access.user?.write === true, via: read ? 'user' : 'none' };
  }
  const one = access.groups?.[String(ref.id)];
  const all = access.groups?.all;
  // The server grants the union of the group's own entry and `all` (for members).
  const read = one?.library === true || all?.library === true;
  const write = read && (one?.write === true || all?.write === true);
  return { read, write, via: one?.library === true ? 'group' : all?.library === true ? 'all' : 'none' };
}

function groupsTool(): string {
  return toolRef('zotero_groups');
}

function libraryOption(): string {
  return paramRef('library_id');
}

/** Refusal of another user's library: a key only ever reaches its own user library. */
function otherUser(deps: Deps, ref: LibraryRef & { id: number }, keyInfo: KeyInfo): ZoteusError {
  const own = libraryPrefix({ type: 'user', id: keyInfo.userID });
  const named = libraryPrefix(ref);
  const hint =
    ref.source === 'config'
      ? `ZOTERO_LIBRARY_ID names ${named}; set it to ${keyInfo.userID} or unset it to use the key's own library (${own}), or use a key of user ${ref.id}.`
      : `Omit ${libraryOption()} to use the key's own library (${own}), or pass a group id (${groupsTool()} lists them).`;
  return new ZoteusError(
    'permission_denied',
    `The API key belongs to user ${keyInfo.userID}; it cannot reach ${named}, another user's library.`,
    { hint, ...(ref.source === 'argument' ? { field: 'library_id' } : {}) },
  );
}

function refused(deps: Deps, ref: LibraryRef & { id: number }, grant: LibraryGrant): ZoteusError {
  const named = libraryPrefix(ref);
  const settings = 'https://www.zotero.org/settings/keys';
  if (!grant.read) {
    return new ZoteusError('permission_denied', `The API key has no access to ${named}.`, {
      hint:
        ref.type === 'group'
          ? `${groupsTool()} lists the groups this key can read; or grant the key access to this group at ${settings}.`
          : `Grant the key access to its user library at ${settings}, or pass a group id it can read.`,
      ...(ref.source === 'argument' ? { field: 'library_id' } : {}),
    });
  }
  return new ZoteusError('permission_denied', `The API key can read ${named} but not write to it.`, {
    hint:
      ref.type === 'group'
        ? `Use a group where ${groupsTool()} shows canWrite: true, or give the key write access at ${settings}.`
        : `Give the key write access at ${settings}.`,
    ...(ref.source === 'argument' ? { field: 'library_id' } : {}),
  });
}

/**
 * Opens a Web API library for a tool: validates the address, checks the key (once per
 * ten minutes, see keys.ts) and the access the call needs, and returns the shared client
 * with the library's path prefix. Refusals send nothing but the key check.
 */
export async function openWebLibrary(
  deps: Deps,
  args: LibraryArgs,
  options: OpenOptions,
): Promise<WebLibrary> {
  const ref = resolveLibrary(args, deps.config);
  if (options.access === 'write') {
    // Which side takes the write, decided once (write-route.ts): nothing is sent for it
    // unless a local API key is configured or ZOTEUS_WRITES asks for the desktop.
    const { planWrites } = await import('./write-route.js');
    const plan = await planWrites(deps, ref);
    if (plan.side === null) throw plan.error ?? authMissing(deps.config);
    // The side is remembered by the request's idempotency record before anything is sent.
    await deps.writeIds.side?.pin(plan.side);
    if (plan.side === 'desktop') return openDesktopLibrary(deps, plan, ref, options);
    if (deps.written) deps.written.to = 'cloud';
  }
  if (deps.config.apiKey === undefined) throw authMissing(deps.config);
  if (options.access === 'write' && (deps.config.readOnly || deps.config.readOnlyGrant)) {
    throw readOnlyRefusal(deps.config, 'This');
  }
  const { info: keyInfo } = await checkKey(deps, { call: options.call });
  const resolved = { ...ref, id: ref.id ?? keyInfo.userID };
  if (resolved.type === 'user' && resolved.id !== keyInfo.userID) throw otherUser(deps, resolved, keyInfo);
  const grant = grantFor(keyInfo, resolved);
  if (!grant.read || (options.access === 'write' && !grant.write)) {
    throw refused(deps, resolved, grant);
  }
  const prefix = libraryPrefix(resolved);
  const client = await webClient(deps);
  return {
    client: options.access === 'write' ? journaled(recordingWrites(client, deps, prefix), deps) : client,
    prefix,
    ref: { type: resolved.type, id: resolved.id, source: resolved.source },
    keyInfo,
    grant,
  };
}

/**
 * A library the desktop's local API writes (write-route.ts chose it): the local write client,
 * the desktop's own prefix (`users/0`, `groups/N`), and no Web API key check. Every write that
 * lands keeps later reads of the library on the local API (read-your-writes).
 */
async function openDesktopLibrary(
  deps: Deps,
  plan: WritePlan,
  ref: LibraryRef,
  _options: OpenOptions,
): Promise<WebLibrary> {
  if (deps.config.readOnly || deps.config.readOnlyGrant) throw readOnlyRefusal(deps.config, 'This');
  const { desktopWriteClient, noteDesktopWrite } = await import('./write-route.js');
  const local = plan.local ?? { type: ref.type, id: ref.id ?? 0 };
  const client = await desktopWriteClient(deps);
  if (deps.written) deps.written.to = 'desktop';
  const prefix = plan.library;
  const noted = async <T>(result: T): Promise<T> => {
    await noteDesktopWrite(deps, prefix);
    return result;
  };
  const writer: Partial<ZoteroClient> = {
    writeBatch: (async (...args: Parameters<ZoteroClient['writeBatch']>) =>
      noted(await client.writeBatch(...args))) as ZoteroClient['writeBatch'],
    deleteBatch: (...args) => client.deleteBatch(...args).then(noted),
    patch: (...args) => client.patch(...args).then(noted),
  };
  return {
    client: journaled(Object.assign(Object.create(client) as ZoteroClient, writer), deps),
    prefix,
    ref: { type: local.type, id: local.id, source: ref.source },
    // The local API has no /keys/current: its keys are unscoped (any editable library).
    keyInfo: { userID: local.type === 'user' ? local.id : 0, username: '', displayName: '', access: {} },
    grant: { read: true, write: true, via: local.type === 'user' ? 'user' : 'group' },
    side: 'desktop',
  };
}

/**
 * The client a writer gets: every write that lands records the library version it produced
 * (recent-writes.ts), so later reads of that library stay on the Web API until the desktop's
 * copy has caught up. One place for every write path, rather than a call at each.
 */
function recordingWrites(client: ZoteroClient, deps: Deps, prefix: string): ZoteroClient {
  const note = async <T extends { libraryVersion?: number | undefined }>(result: T): Promise<T> => {
    if (result.libraryVersion !== undefined) await noteWrite(deps, prefix, result.libraryVersion);
    return result;
  };
  const writer: Partial<ZoteroClient> = {
    writeBatch: (async (...args: Parameters<ZoteroClient['writeBatch']>) =>
      note(await client.writeBatch(...args))) as ZoteroClient['writeBatch'],
    deleteBatch: (...args) => client.deleteBatch(...args).then(note),
    patch: (...args) =>
      client.patch(...args).then(async (r) => {
        if (r.version !== undefined) await noteWrite(deps, prefix, r.version);
        return r;
      }),
    request: (async (method: string, path: string, options?: Parameters<ZoteroClient['request']>[2]) => {
      const response = await client.request(method, path, options);
      if (method !== 'GET' && response.lastModifiedVersion !== undefined && path.includes(prefix)) {
        await noteWrite(deps, prefix, response.lastModifiedVersion);
      }
      return response;
    }) as ZoteroClient['request'],
  };
  // Everything else (listAll, getByKeys, the cache…) is the shared client's own.
  return Object.assign(Object.create(client) as ZoteroClient, writer);
}

/** The write client through the call's journal (core/journal/client.ts), when it has one. */
function journaled(client: ZoteroClient, deps: Deps): ZoteroClient {
  return deps.journal ? journaledClient(client, deps.journal) : client;
}

/**
 * The library a call would address, without credentials or network: what `plan()` and
 * `--dry-run` show. The id stays null when it would come from the key (or the desktop).
 * Throws the same `validation_error` as a real call for `library_type: group` without an id.
 */
export function plannedLibrary(
  args: LibraryArgs,
  config: Pick<Config, 'libraryId' | 'libraryType' | 'apiKey'>,
): LibraryRef & { description: string } {
  const ref = resolveLibrary(args, config);
  return { ...ref, description: describeLibrary(ref) };
}
