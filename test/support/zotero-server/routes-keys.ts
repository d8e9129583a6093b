/**
 * Key and group endpoints: `/keys/current`, `/keys/{key}` and `/users/{id}/groups`.
 */
import { canReadGroup } from './auth.js';
import { HttpError, send, type Ctx } from './http.js';
import { sendList } from './listing.js';
import { groupJson } from './render.js';
import type { GroupRecord, KeyRecord, ServerState } from './state.js';

function keyJson(state: ServerState, k: KeyRecord): unknown {
  const user = state.users.get(k.userID);
  return {
    key: k.key,
    userID: k.userID,
    username: user?.username ?? `user${k.userID}`,
    displayName: user?.displayName ?? '',
    access: k.access,
  };
}

/** `segments` start with `keys`. */
export function handleKeys(ctx: Ctx, state: ServerState, segments: string[]): void {
  if (segments.length !== 2 || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
    throw new HttpError(404, 'Not found');
  }
  const which = segments[1]!;
  if (which === 'current') {
    if (!ctx.key) throw new HttpError(403, 'Forbidden');
    send(ctx, 200, keyJson(state, ctx.key));
    return;
  }
  const record = state.keys.get(which);
  if (!record) throw new HttpError(404, 'Key not found');
  send(ctx, 200, keyJson(state, record));
}

/** The groups the user belongs to that the request's key can read. */
export function handleUserGroups(ctx: Ctx, state: ServerState, userID: number, ignoreStart: boolean): void {
  if (!ctx.key) throw new HttpError(403, 'Forbidden');
  if (!state.users.has(userID) && !state.findLibrary('users', userID))
    throw new HttpError(404, 'User not found');
  const groups = [...state.groups.values()].filter(
    (g) => state.isGroupMember(g, userID) && canReadGroup(ctx, state, g.id),
  );
  const version = groups.reduce((v, g) => Math.max(v, g.version), 0);
  sendList<GroupRecord>(ctx, version, {
    objects: groups,
    keyOf: (g) => String(g.id),
    versionOf: (g) => g.version,
    render: (g) => groupJson(ctx.base, state, g),
    sorts: { title: (g) => g.name, name: (g) => g.name },
    defaultSort: 'title',
    alternate: `https://www.zotero.org/${state.users.get(userID)?.username ?? `user${userID}`}/groups`,
    ignoreStart,
  });
}
