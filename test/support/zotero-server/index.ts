/**
 * In-process Zotero Web API v3 test server (`node:http` on 127.0.0.1, random port).
 * Implements the documented semantics of docs `zotero/web-api.md` (versions, 412/428, 50-object
 * batches, paging, write tokens, key permissions, group libraries, cascade deletes, full text),
 * logs every request and injects faults. `serveLocalApi` also serves the same libraries under
 * `/api` as the desktop app's local API (`routes-local.ts`). Test code only: never a product
 * backend.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Downloads } from './downloads.js';
import { Faults, LIBRARY_LOCKED } from './faults.js';
import { headerRecord, HttpError, parseBody, queryRecord, readBody, send, type Ctx } from './http.js';
import { route } from './router.js';
import { routeLocal, type LocalApiConfig } from './routes-local.js';
import { createLocalWrites, routeLocalWrites, type LocalWritesConfig } from './local-writes.js';
import { ServerState } from './state.js';
import type { RequestLogEntry, StartOptions, ZoteroTestServer } from './types.js';
import { LOCAL_UPLOAD_PREFIX, STORAGE_PREFIX, Uploads } from './uploads.js';

export { randomKey, isValidKey, KEY_CHARS } from './keys.js';
export { LIBRARY_LOCKED } from './faults.js';
export type * from './types.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startZoteroServer(opts: StartOptions = {}): Promise<ZoteroTestServer> {
  const state = new ServerState();
  const faults = new Faults();
  const uploads = new Uploads();
  const log: RequestLogEntry[] = [];
  const downloads = new Downloads(state, uploads, log, faults);
  await downloads.start();
  let latency = opts.latencyMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let base = '';
  let local: LocalApiConfig | undefined;
  /** Writes in progress (arrived, not yet answered) per library prefix, for the `lock` fault. */
  const writing = new Map<string, number>();
  let localWrites: LocalWritesConfig | undefined;

  const httpServer = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryRecord(url.searchParams),
      headers: headerRecord(req),
      status: 0,
      startedAt: Date.now(),
      endedAt: 0,
    };
    log.push(entry);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (opts.maxConcurrentLog) entry.inFlight = inFlight;
    // 'finish' (answer handed to the socket) comes before the client can see the answer, so the
    // count never includes a request the client already considers done; 'close' covers resets.
    let counted = true;
    const leave = (): void => {
      if (!counted) return;
      counted = false;
      inFlight--;
      entry.endedAt ||= Date.now();
    };
    res.on('finish', leave);
    res.on('close', leave);

    const storage = url.pathname.startsWith(STORAGE_PREFIX);
    // Upload bodies are bytes, read by their receivers (the storage host, the desktop's).
    const rawBody =
      storage || url.pathname.startsWith(LOCAL_UPLOAD_PREFIX) ? '' : await readBody(req).catch(() => '');
    const body = parseBody(rawBody);
    if (body !== undefined) entry.body = body;
    const ctx: Ctx = {
      req,
      res,
      method: entry.method.toUpperCase(),
      base,
      path: url.pathname,
      params: url.searchParams,
      headers: entry.headers,
      body,
      rawBody,
      extraHeaders: {},
      entry,
    };
    try {
      const plan = faults.take(ctx.method, url.pathname + url.search);
      if (plan.kind) entry.fault = plan.kind;
      const library = writeTarget(ctx.method, url.pathname);
      let locked = false;
      if (library !== undefined && !plan.replace) {
        locked = (writing.get(library) ?? 0) > 0 && faults.takeLock(ctx.method, url.pathname + url.search);
        if (locked) entry.fault = 'lock';
        else {
          // In progress until answered (or reset): a write arriving meanwhile finds it locked.
          writing.set(library, (writing.get(library) ?? 0) + 1);
          let holding = true;
          const unlock = (): void => {
            if (!holding) return;
            holding = false;
            writing.set(library, (writing.get(library) ?? 1) - 1);
          };
          res.on('finish', unlock);
          res.on('close', unlock);
        }
      }
      const wait = latency + plan.slowMs;
      if (wait > 0) await sleep(wait);
      if (res.destroyed) return; // the server closed meanwhile
      if (plan.backoff !== undefined) ctx.extraHeaders.Backoff = String(plan.backoff);
      const fault = plan.replace;
      if (fault?.kind === 'reset') {
        entry.status = 0;
        entry.endedAt = Date.now();
        // A TCP RST, so the client sees ECONNRESET rather than a clean close.
        req.socket.resetAndDestroy();
        return;
      }
      if (locked) return send(ctx, 409, LIBRARY_LOCKED);
      if (fault) {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
        send(ctx, fault.status, fault.body ?? STATUS_CODES[fault.status] ?? 'Error', headers);
        return;
      }
      for (const edit of plan.edits) edit(server);
      if (storage) downloads.capture(req);
      if (storage) return await uploads.receive(ctx, req, url.pathname.slice(STORAGE_PREFIX.length));
      if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
        if (localWrites) await routeLocalWrites(ctx, state, local, localWrites, faults.ignoringStart);
        else routeLocal(ctx, state, local, faults.ignoringStart);
      } else await route(ctx, state, faults.ignoringStart, uploads, downloads);
    } catch (e) {
      if (res.headersSent || res.destroyed) return;
      if (e instanceof HttpError) send(ctx, e.status, e.body, e.headers);
      else send(ctx, 500, `Test server error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;

  const server: ZoteroTestServer = {
    url: base,
    log,
    faults,
    files: uploads,
    downloads,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // The storage host goes with the API (its sockets closed, its files removed).
        void downloads.close().catch(() => undefined);
        // Keep-alive sockets would otherwise hold close() open.
        httpServer.closeAllConnections();
        httpServer.close((err) => (err ? reject(err) : resolve()));
      }),
    clearLog: () => {
      // In place, so a test holding `server.log` sees the cleared array.
      log.length = 0;
      maxInFlight = inFlight;
    },
    maxInFlight: () => maxInFlight,
    addUser: (u) => state.addUser(u),
    addKey: (k) => state.addKey(k),
    addGroup: (g) => state.addGroup(g),
    library: (prefix) => state.library(prefix),
    setSchema: (json) => {
      state.schema =
        json === undefined
          ? undefined
          : { json, etag: `"schema-${(json as { version?: unknown }).version ?? 0}"` };
    },
    setLatency: (ms) => {
      latency = ms;
    },
    serveLocalApi: (o) => {
      local = { userID: o.userID, groups: o.groups, enabled: o.enabled ?? true };
      state.library(`users/${o.userID}`);
      return `${base}/api`;
    },
    serveLocalWrites: () => {
      if (!local) throw new Error('Call serveLocalApi first');
      localWrites ??= createLocalWrites();
      return localWrites;
    },
    setLocalApiEnabled: (enabled) => {
      if (!local) throw new Error('Call serveLocalApi first');
      local.enabled = enabled;
    },
  };
  return server;
}

/** The library a write (POST, PATCH, PUT, DELETE) of the Web API changes, e.g. `users/1`. */
function writeTarget(method: string, path: string): string | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined;
  return /^\/((?:users|groups)\/\d+)\//.exec(path)?.[1];
}
