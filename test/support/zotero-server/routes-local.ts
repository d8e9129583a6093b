/**
 * The desktop app's local API (`zotero/desktop.md`, "The local API"), served from the same
 * libraries as the Web API so a test can compare the two: paths under `/api`, the user library
 * as `users/0` (or its real id), the groups the desktop holds as `groups/{id}`, no key, no
 * writes (Zotero 7–9), results unpaginated unless `limit` is given, and `403` on every request
 * while the local API is disabled in Zotero's settings.
 */
import { HttpError, type Ctx } from './http.js';
import { sendList } from './listing.js';
import { groupJson } from './render.js';
import { handleRead } from './routes-read.js';
import type { GroupRecord, ServerState } from './state.js';

export interface LocalApiConfig {
  /** The user whose library `users/0` is. */
  userID: number;
  /** The groups the desktop holds; default: every group the user belongs to. */
  groups: number[] | undefined;
  enabled: boolean;
}

/** The answer of a disabled local API, as Zotero gives it. */
export const LOCAL_API_DISABLED = 'Local API is not enabled';

function desktopGroups(state: ServerState, local: LocalApiConfig): GroupRecord[] {
  return [...state.groups.values()].filter((g) =>
    local.groups ? local.groups.includes(g.id) : state.isGroupMember(g, local.userID),
  );
}

/** Handles a request whose path starts with `/api`. */
export function routeLocal(
  ctx: Ctx,
  state: ServerState,
  local: LocalApiConfig | undefined,
  ignoreStart: boolean,
): void {
  // Zotero 6 (no local API) answers the connector server's 404 here.
  if (!local) throw new HttpError(404, 'No endpoint found');
  if (!local.enabled) throw new HttpError(403, LOCAL_API_DISABLED);
  let segments: string[];
  try {
    segments = ctx.path.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, 'Invalid URL');
  }
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new HttpError(405, 'Method not allowed');
  const [top, id] = segments;
  if ((top !== 'users' && top !== 'groups') || !id || !/^\d+$/.test(id)) {
    throw new HttpError(404, 'No endpoint found');
  }
  if (top === 'users') {
    if (id !== '0' && Number(id) !== local.userID) throw new HttpError(404, 'User not found');
    if (segments[2] === 'groups' && segments.length === 3) {
      const groups = desktopGroups(state, local);
      sendList<GroupRecord>(
        ctx,
        groups.reduce((v, g) => Math.max(v, g.version), 0),
        {
          objects: groups,
          keyOf: (g) => String(g.id),
          versionOf: (g) => g.version,
          render: (g) => groupJson(ctx.base, state, g),
          sorts: { title: (g) => g.name, name: (g) => g.name },
          defaultSort: 'title',
          alternate: 'zotero://select/library',
          ignoreStart,
          unpaged: true,
        },
      );
      return;
    }
  }
  const lib =
    top === 'users'
      ? state.library(`users/${local.userID}`)
      : desktopGroups(state, local).some((g) => g.id === Number(id))
        ? state.findLibrary('groups', Number(id))
        : undefined;
  if (!lib) throw new HttpError(404, 'Group not found');
  const handled = handleRead({ ctx, state, lib, segments: segments.slice(2), ignoreStart, unpaged: true });
  if (!handled) throw new HttpError(404, 'No endpoint found');
}
