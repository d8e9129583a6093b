/**
 * Dispatch of one request: key check first (an invalid key is refused on every path), then
 * `/keys`, `/users/{id}/groups`, and the library routes with their permission checks.
 */
import { authenticate, authorizeLibrary } from './auth.js';
import { HttpError, send, type Ctx } from './http.js';
import { handleKeys, handleUserGroups } from './routes-keys.js';
import { groupJson } from './render.js';
import { handleRead } from './routes-read.js';
import { handleWrite } from './routes-write.js';
import type { ServerState } from './state.js';
import type { Uploads } from './uploads.js';
import type { Downloads } from './downloads.js';

export function route(
  ctx: Ctx,
  state: ServerState,
  ignoreStart: boolean,
  uploads?: Uploads,
  downloads?: Downloads,
): void | Promise<void> {
  authenticate(ctx, state);
  let segments: string[];
  try {
    segments = ctx.path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, 'Invalid URL');
  }
  const [top, id] = segments;
  if (top === 'keys') return handleKeys(ctx, state, segments);
  if (top === 'schema' && segments.length === 1 && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
    return handleSchema(ctx, state);
  }
  if ((top !== 'users' && top !== 'groups') || !id || !/^\d+$/.test(id))
    throw new HttpError(404, 'Not found');

  const read = ctx.method === 'GET' || ctx.method === 'HEAD';
  if (top === 'users' && segments[2] === 'groups' && segments.length === 3 && read) {
    return handleUserGroups(ctx, state, Number(id), ignoreStart);
  }
  const lib = state.findLibrary(top, Number(id));
  if (!lib) throw new HttpError(404, top === 'users' ? 'User not found' : 'Group not found');
  authorizeLibrary(ctx, state, lib, !read);

  // `GET /groups/{id}`: the group's metadata (fileEditing, owner, admins).
  const group = top === 'groups' && segments.length === 2 && read ? state.groups.get(Number(id)) : undefined;
  if (group)
    return send(ctx, 200, groupJson(ctx.base, state, group), {
      'Last-Modified-Version': String(group.version),
    });
  const [head, itemKey, file] = segments.slice(2);
  if (
    uploads &&
    ctx.method === 'POST' &&
    head === 'items' &&
    itemKey &&
    file === 'file' &&
    segments.length === 5
  )
    return void uploads.handleFile(ctx, state, lib, itemKey);
  // `GET {lib}/items/{key}/file`: a 302 to the storage host (downloads.ts).
  if (downloads && read && head === 'items' && itemKey && file === 'file' && segments.length === 5)
    return downloads.redirect(ctx, lib, itemKey);
  const r = { ctx, state, lib, segments: segments.slice(2), ignoreStart };
  const handled = read ? handleRead(r) : handleWrite(r);
  if (!handled) throw new HttpError(read ? 404 : 405, read ? 'Not found' : 'Method not allowed');
}

/** `GET /schema`: Zotero's schema.json with an ETag (`If-None-Match` → 304), when one was set. */
function handleSchema(ctx: Ctx, state: ServerState): void {
  if (!state.schema) throw new HttpError(404, 'Not found');
  if (ctx.headers['if-none-match'] === state.schema.etag) {
    send(ctx, 304, undefined, { ETag: state.schema.etag });
    return;
  }
  send(ctx, 200, state.schema.json, { ETag: state.schema.etag });
}
