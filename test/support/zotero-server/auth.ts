/**
 * API keys and library permissions, following `/keys/current` semantics: a missing flag means
 * no access, and `groups.all` covers only the groups the key's user belongs to.
 */
import { HttpError, type Ctx } from './http.js';
import type { Library, ServerState } from './state.js';

/** The key sent with the request: header forms first; `?key=` is accepted as the real server does. */
export function requestKey(ctx: Ctx): string | undefined {
  const direct = ctx.headers['zotero-api-key'];
  if (direct) return direct.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers['authorization'] ?? '');
  if (bearer?.[1]) return bearer[1];
  return ctx.params.get('key') ?? undefined;
}

/** An unknown key is refused on every path, before routing: body `Invalid key`. */
export function authenticate(ctx: Ctx, state: ServerState): void {
  const key = requestKey(ctx);
  if (key === undefined) return;
  const record = state.keys.get(key);
  if (!record) throw new HttpError(403, 'Invalid key');
  ctx.key = record;
}

/** Throws 403 unless the request's key may read (or write) the library. */
export function authorizeLibrary(ctx: Ctx, state: ServerState, lib: Library, write: boolean): void {
  const key = ctx.key;
  // Public libraries are out of scope: without a key every library is closed.
  if (!key) throw new HttpError(403, 'Forbidden');
  const denied = new HttpError(403, write ? 'Write access denied' : 'Forbidden');

  if (lib.type === 'user') {
    const user = key.userID === lib.id ? key.access.user : undefined;
    if (!user?.library) throw new HttpError(403, 'Forbidden');
    if (write && !user.write) throw denied;
    return;
  }

  const group = state.groups.get(lib.id);
  const member = group ? state.isGroupMember(group, key.userID) : false;
  const all = member ? key.access.groups?.all : undefined;
  const one = key.access.groups?.[String(lib.id)];
  if (!(all?.library || one?.library)) throw new HttpError(403, 'Forbidden');
  if (!write) return;
  if (!(all?.write || one?.write)) throw denied;
  if (
    group?.libraryEditing === 'admins' &&
    group.owner !== key.userID &&
    !group.admins.includes(key.userID)
  ) {
    throw denied;
  }
}

/** Whether the key may read the group: used to filter `/users/{id}/groups`. */
export function canReadGroup(ctx: Ctx, state: ServerState, groupID: number): boolean {
  try {
    authorizeLibrary(ctx, state, state.library(`groups/${groupID}`), false);
    return true;
  } catch {
    return false;
  }
}
