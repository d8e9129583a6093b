/**
 * The local API of Zotero 10+, writes included (`zotero/local-api-writes.md`), over the same
 * libraries as the Web API: test code only.
 *
 * - `POST /api/local/authorize` (`{appName}`, `Zotero-Server-ID`): the modal dialog is a test
 *   hook (`answer`: `allow` gives a one-time key, `always` a remembered one, `deny` a JSON
 *   403); more than 5 prompts within 60 s answer 429 with `Retry-After`.
 * - Every `/api` answer carries `Zotero-Server-ID`; a write without it gets 428, a request with
 *   another one 412 "…does not match this server", checked before the key.
 * - Writes need a key (`Zotero-API-Key`, `Authorization: Bearer`, `?key=`): missing, unknown or
 *   used ones get 401 with `WWW-Authenticate`; a one-time key is deleted at the key check, even
 *   when the write then fails. GETs need none.
 * - A batch saves each object in its own transaction: each gets its own version.
 * - DELETE erases (the Web API test server's deletes); trash is a `deleted` PATCH or batch.
 * - A request whose `User-Agent` starts with `Mozilla/`, or with any `Origin`, is dropped
 *   without a reply unless it carries `Zotero-Allowed-Request`; `Host` must be loopback.
 * - Answers are HTTP/1.0, written to the socket and closed (as Zotero's own server does).
 * - Attachment files (`files`, uploads.ts `LocalFiles`): `POST {lib}/items/{key}/file` is a
 *   write (key, server id) checked against the synced hash; the upload receiver at
 *   `/api/local/uploads/<uploadKey>` needs neither (a wrong server id still gets 412).
 */
import { STATUS_CODES } from 'node:http';
import { requestKey } from './auth.js';
import { HttpError, send, type Ctx } from './http.js';
import { randomKey } from './keys.js';
import { routeLocal, type LocalApiConfig } from './routes-local.js';
import { handleWrite, MAX_WRITE_OBJECTS } from './routes-write.js';
import type { ServerState } from './state.js';
import { LOCAL_UPLOAD_PREFIX, LocalFiles } from './uploads.js';

export type AuthorizeAnswer = 'allow' | 'always' | 'deny';

export interface LocalWritesConfig {
  /** 12 characters; follows the database. `setServerId` changes it (another database). */
  serverId: string;
  /** Keys the "user" granted: remembered (Always Allow) or one-time (Allow). */
  keys: Map<string, { remember: boolean; appName: string }>;
  /** What the dialog answers next (default `always`). */
  answer: AuthorizeAnswer;
  /** Times of the prompts, for the 5-in-60-s limit. */
  prompts: number[];
  /** Keys used up (one-time keys after their first write), for tests to look at. */
  used: string[];
  /** Attachment files on the desktop's disk, their synced hashes, and upload keys. */
  files: LocalFiles;
}

export function newServerId(): string {
  return randomKey() + randomKey().slice(0, 4);
}

export function createLocalWrites(): LocalWritesConfig {
  return {
    serverId: newServerId(),
    keys: new Map(),
    answer: 'always',
    prompts: [],
    used: [],
    files: new LocalFiles(),
  };
}

const AUTHORIZE_PATH = '/api/local/authorize';
const PROMPT_WINDOW_MS = 60_000;
const MAX_PROMPTS = 5;

/** Answers through an HTTP/1.0 status line, then closes the connection. */
function http10(ctx: Ctx): void {
  const socket = ctx.req.socket;
  const fake = {
    writeHead(status: number, headers: Record<string, string>) {
      fake.status = status;
      fake.headers = headers;
      return fake;
    },
    end(payload?: string) {
      const body = Buffer.from(payload ?? '', 'utf8');
      const lines = [`HTTP/1.0 ${fake.status} ${STATUS_CODES[fake.status] ?? 'Status'}`];
      for (const [name, value] of Object.entries(fake.headers)) lines.push(`${name}: ${value}`);
      lines.push(`Content-Length: ${body.length}`, 'Connection: close');
      socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
    },
    status: 200,
    headers: {} as Record<string, string>,
    headersSent: false,
    destroyed: false,
  };
  ctx.res = fake as unknown as Ctx['res'];
}

/** Handles a request whose path starts with `/api`, in the local API's write mode. */
export function routeLocalWrites(
  ctx: Ctx,
  state: ServerState,
  local: LocalApiConfig | undefined,
  writes: LocalWritesConfig,
  ignoreStart: boolean,
): void | Promise<void> {
  const ua = ctx.headers['user-agent'] ?? '';
  if (
    (ctx.headers.origin !== undefined || ua.startsWith('Mozilla/')) &&
    !('zotero-allowed-request' in ctx.headers)
  ) {
    // A browser's request: no answer at all.
    ctx.entry.status = 0;
    ctx.req.socket.destroy();
    return;
  }
  http10(ctx);
  const host = (ctx.headers.host ?? '').replace(/:\d+$/, '');
  if (!['localhost', '127.0.0.1', '[::1]'].includes(host)) throw new HttpError(400, 'Invalid Host header');
  if (!local) throw new HttpError(404, 'No endpoint found');
  if (!local.enabled) throw new HttpError(403, 'Local API is not enabled');
  ctx.extraHeaders['Zotero-Server-ID'] = writes.serverId;
  const read = ctx.method === 'GET' || ctx.method === 'HEAD';
  if (ctx.path === '/api' || ctx.path === '/api/') {
    if (!read) throw new HttpError(400, 'Endpoint does not support method');
    send(ctx, 200, 'Nothing to see here.');
    return;
  }
  const sentId = ctx.headers['zotero-server-id'];
  if (sentId !== undefined && sentId !== writes.serverId) {
    throw new HttpError(412, `Zotero-Server-ID '${sentId}' does not match this server`);
  }
  // The upload receiver: no key and no server id needed (its body is not read beforehand).
  if (ctx.path.startsWith(LOCAL_UPLOAD_PREFIX)) {
    return writes.files.receive(ctx, decodeURIComponent(ctx.path.slice(LOCAL_UPLOAD_PREFIX.length)));
  }
  if (!read && sentId === undefined) throw new HttpError(428, 'Zotero-Server-ID header is required');
  if (ctx.path === AUTHORIZE_PATH) return authorize(ctx, writes);
  if (read) return routeLocal(ctx, state, local, ignoreStart);

  if (['POST', 'PUT', 'PATCH'].includes(ctx.method)) {
    if (
      /chunked/i.test(ctx.headers['transfer-encoding'] ?? '') ||
      ctx.headers['content-length'] === undefined
    ) {
      throw new HttpError(400, 'Content-Length is required');
    }
  }
  if (ctx.headers['zotero-api-version'] !== undefined && ctx.headers['zotero-api-version'] !== '3') {
    throw new HttpError(501, 'Only API version 3 is supported');
  }
  // The key check, where a one-time key is used up whatever then happens to the write.
  const key = requestKey(ctx);
  const granted = key === undefined ? undefined : writes.keys.get(key);
  if (key === undefined || !granted) {
    throw new HttpError(401, 'A valid key is required', { 'WWW-Authenticate': 'Bearer realm="Zotero"' });
  }
  if (!granted.remember) {
    writes.keys.delete(key);
    writes.used.push(key);
  }

  let segments: string[];
  try {
    segments = ctx.path.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, 'Invalid URL');
  }
  const [top, id] = segments;
  if ((top !== 'users' && top !== 'groups') || !id || !/^\d+$/.test(id)) {
    throw new HttpError(400, 'Endpoint does not support method');
  }
  if (top === 'users' && id !== '0' && Number(id) !== local.userID) {
    throw new HttpError(400, 'Only the local user may be written');
  }
  const held = (g: number) =>
    local.groups ? local.groups.includes(g) : state.isGroupMember(state.groups.get(g) as never, local.userID);
  const lib =
    top === 'users'
      ? state.library(`users/${local.userID}`)
      : state.groups.has(Number(id)) && held(Number(id))
        ? state.findLibrary('groups', Number(id))
        : undefined;
  if (!lib) throw new HttpError(404, 'Group not found');
  if (lib.type === 'group') {
    const group = state.groups.get(lib.id);
    if (
      group?.libraryEditing === 'admins' &&
      group.owner !== local.userID &&
      !group.admins.includes(local.userID)
    ) {
      throw new HttpError(403, 'Write access denied');
    }
  }
  const rest = segments.slice(2);
  if (rest.length === 3 && rest[0] === 'items' && rest[2] === 'file') {
    if (ctx.method !== 'POST') throw new HttpError(405, 'Method not allowed');
    return writes.files.handleFile(ctx, state, lib, rest[1] as string, local.userID);
  }
  const route = { ctx, state, lib, segments: rest, ignoreStart, unpaged: true };
  if (
    ctx.method === 'POST' &&
    rest.length === 1 &&
    ['items', 'collections', 'searches'].includes(rest[0] as string)
  ) {
    return perObjectBatch(route);
  }
  if (!handleWrite(route)) throw new HttpError(405, 'Method not allowed');
}

function authorize(ctx: Ctx, writes: LocalWritesConfig): void {
  if (ctx.method !== 'POST') throw new HttpError(400, 'Endpoint does not support method');
  if (!/application\/json/i.test(ctx.headers['content-type'] ?? '')) {
    throw new HttpError(400, 'Content-Type must be application/json');
  }
  const body = ctx.body as { appName?: unknown } | undefined;
  if (typeof body?.appName !== 'string' || body.appName === '')
    throw new HttpError(400, 'appName is required');
  const now = Date.now();
  writes.prompts = writes.prompts.filter((t) => now - t < PROMPT_WINDOW_MS);
  if (writes.prompts.length >= MAX_PROMPTS) {
    throw new HttpError(429, 'Too many authorization requests', { 'Retry-After': '60' });
  }
  writes.prompts.push(now);
  if (writes.answer === 'deny') return send(ctx, 403, { denied: true });
  const key = `${randomKey()}${randomKey()}${randomKey()}${randomKey()}`;
  const remember = writes.answer === 'always';
  writes.keys.set(key, { remember, appName: body.appName });
  send(ctx, 200, { key, remember });
}

/**
 * A batch POST as Zotero 10 saves it: each object in its own transaction, so each gets its
 * own version (the Web API gives one per request). The library-version precondition and the
 * write token apply to the whole request.
 */
function perObjectBatch(r: Parameters<typeof handleWrite>[0]): void {
  const { ctx, lib } = r;
  const body = ctx.body;
  if (!Array.isArray(body) || body.length === 0)
    throw new HttpError(400, 'Uploaded data must be a JSON array');
  if (body.length > MAX_WRITE_OBJECTS) {
    throw new HttpError(413, `Only ${MAX_WRITE_OBJECTS} objects can be saved in a single request`);
  }
  const token = ctx.headers['zotero-write-token'];
  if (token !== undefined && lib.writeTokens.has(token)) throw new HttpError(412, 'Write token already used');
  const since = ctx.headers['if-unmodified-since-version'];
  if (since !== undefined && lib.version > Number(since)) {
    throw new HttpError(
      412,
      `Library has been modified since specified version (expected ${since}, found ${lib.version})`,
    );
  }
  const merged = {
    successful: {} as Record<string, unknown>,
    success: {} as Record<string, string>,
    unchanged: {} as Record<string, string>,
    failed: {} as Record<string, unknown>,
  };
  const headers = { ...ctx.headers };
  delete headers['zotero-write-token'];
  delete headers['if-unmodified-since-version'];
  body.forEach((object: unknown, i) => {
    let status = 0;
    let payload = '';
    const res = {
      writeHead: (s: number) => {
        status = s;
        return res;
      },
      end: (p?: string) => {
        payload = p ?? '';
      },
    };
    const sub: Ctx = {
      ...ctx,
      res: res as unknown as Ctx['res'],
      headers,
      body: [object],
      rawBody: JSON.stringify([object]),
      extraHeaders: {},
      entry: { ...ctx.entry },
    };
    try {
      handleWrite({ ...r, ctx: sub });
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      merged.failed[i] = { key: (object as { key?: string })?.key ?? '', code: e.status, message: e.body };
      return;
    }
    const answer = JSON.parse(payload || '{}') as typeof merged;
    if (status !== 200) return;
    for (const [field, values] of Object.entries(answer)) {
      const value = (values as Record<string, unknown>)['0'];
      if (value !== undefined) (merged[field as keyof typeof merged] as Record<string, unknown>)[i] = value;
    }
  });
  if (token !== undefined) lib.writeTokens.add(token);
  send(ctx, 200, merged, { 'Last-Modified-Version': String(lib.version) });
}
