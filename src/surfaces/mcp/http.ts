/**
 * Streamable HTTP, both generations on one endpoint (`/mcp`), bound to loopback unless
 * authentication is configured (auth/: an OAuth 2.1 authorization server and the bearer check
 * of every `/mcp` request, whose principal is handed to the factory); without it anyone who
 * can reach the port could use the library.
 *
 * Every request is checked before anything is parsed: `Host` must be a loopback name (or,
 * with authentication, the public URL's host) and
 * `Origin`, when a browser sends one, a loopback origin or one listed in
 * ZOTEUS_HTTP_ALLOWED_ORIGINS (a web page cannot reach the server through DNS rebinding);
 * else 403. A body over 4 MiB is a 413. Then the SDK's classification decides the generation:
 *
 *   - a request that claims 2026-07-28 (the `_meta` envelope, or the `MCP-Protocol-Version`
 *     header) goes to the SDK's stateless handler, which checks the envelope against the
 *     headers (`-32602`, `-32020` on a mismatch, `-32022` for a revision it does not serve)
 *     and answers with a server instance made for that one request;
 *   - anything else is of the older revisions: `initialize` opens a session (sessions.ts: at
 *     most ZOTEUS_HTTP_MAX_SESSIONS, closed after ZOTEUS_HTTP_SESSION_IDLE_S idle), whose id
 *     every later request carries in `Mcp-Session-Id`; an unknown or expired id is a 404.
 *     With a state database (`sessionStore`: a shared deployment), the session is also a row
 *     there: a replica given an id it does not hold, but the table does for the same tenant,
 *     rebuilds the session (a server instance for the tenant, a transport for that id, sent
 *     the `initialize` the client sent, so it knows the same client, capabilities and
 *     revision) and serves the request; DELETE and idleness remove the row, and every request
 *     checks it is still there (a session closed on one replica is closed on all).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type McpRequestContext,
  type Server,
} from '@modelcontextprotocol/server';
import { ZoteusError } from '../../core/errors.js';
import type { SessionStore, StoredSession } from '../../core/store/sessions-sql.js';
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_TENANT,
  DEFAULT_SESSION_IDLE_S,
  type HttpSettings,
} from './http-settings.js';
import type { Principal } from './auth/principal.js';
import { createAuthServer, type AuthServer, type AuthServerOptions } from './auth/routes.js';
import { AUTH_ENABLING_SETTINGS } from './auth/settings.js';
import { isLoopbackHost } from './loopback.js';
import { SetAsideArguments } from './protocol.js';
import { ERROR_META_KEY } from './results.js';
import { configureInstance } from './server.js';
import { SessionTable, type LegacySession } from './sessions.js';
import { serveOps, type LogFields, type Readiness, type ServerMetrics } from './ops.js';

export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 8765;
export const MCP_HTTP_PATH = '/mcp';
/** Largest request body read (the SDK's default): a larger one is answered 413 unread. */
export const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;
/**
 * Whom the stateless (2026-07-28) requests write files as: they carry no session to tell
 * callers apart, so they share one confined folder, `<ZOTEUS_DATA_DIR>/callers/stateless`.
 */
export const STATELESS_CALLER = 'stateless';

/** Builds a server instance for one session of the older revisions, or one stateless request. */
export type ServerFactory = (context: {
  era: McpRequestContext['era'];
  /** Who the request comes from, when authentication is configured (its bearer token checked out). */
  principal?: Principal;
}) => Server | Promise<Server>;

export interface HttpOptions {
  port?: number;
  host?: string;
  /** Where the listening URL, refused requests and transport errors are reported (stderr for the binaries). */
  log?: (line: string, fields?: LogFields) => void;
  /** Served at /metrics (ops.ts), with this server's gauges. */
  metrics?: ServerMetrics;
  /** The bearer token /metrics asks for (ZOTEUS_METRICS_TOKEN). */
  metricsToken?: string;
  /** What /readyz reports (the state database: Deployment.ready); absent: ready. */
  ready?: () => Promise<Readiness>;
  /** Sessions and origins; default: the defaults of http-settings.ts. */
  settings?: Partial<HttpSettings>;
  /** For tests: the clock of session idleness. */
  now?: () => number;
  /**
   * OAuth 2.1 (auth/): the built-in authorization server, and every `/mcp` request checked for
   * a bearer token of this server's resource. Only with it may the server listen beyond loopback.
   */
  auth?: AuthServerOptions;
  /**
   * Where the sessions of the older revisions are kept for every replica (the state database
   * of a shared deployment); absent: in this process only.
   */
  sessionStore?: SessionStore;
}

export interface HttpHandle {
  /** `http://127.0.0.1:PORT/mcp`, with the port actually bound (useful with port 0). */
  url: string;
  port: number;
  /** Sessions of the older revisions open now. */
  sessions(): number;
  /** Closes idle sessions now rather than at the next sweep (tests). */
  sweep(): Promise<void>;
  /** Closes every session and the listener. */
  close(): Promise<void>;
  /**
   * A graceful stop: the listener closes (new connections are refused), a request on an open
   * connection is answered 503, /readyz says not ready; the requests in flight are waited for,
   * at most `graceMs`, then everything is closed.
   */
  shutdown(graceMs: number): Promise<void>;
}

function checkListenOptions(host: string, port: number, authenticated: boolean): void {
  if (!isLoopbackHost(host) && !authenticated) {
    throw new ZoteusError(
      'validation_error',
      `Refusing to listen on ${host}: the MCP HTTP server is bound to loopback unless authentication is configured, and none is.`,
      {
        field: 'host',
        hint: `Use a loopback host such as ${DEFAULT_HTTP_HOST} (the default), ::1 or localhost, or configure authentication: ${AUTH_ENABLING_SETTINGS}.`,
      },
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ZoteusError('validation_error', `Port must be an integer from 0 to 65535; got ${port}.`, {
      field: 'port',
    });
  }
}

/**
 * DNS-rebinding guard: a web page can make a browser send requests to 127.0.0.1 under its
 * own host name, so only loopback names are accepted in the Host header.
 */
function hostHeaderAllowed(header: string | undefined, auth: AuthServer | undefined): boolean {
  if (!header) return false;
  if (auth) return auth.hostAllowed(header);
  const name = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0]!;
  return isLoopbackHost(name);
}

/**
 * The other half of the guard (the specification's MUST): a browser names the page that sends
 * a request in `Origin`. Absent (a program, not a page): allowed. Present: a loopback origin,
 * or one listed exactly; `null` (a sandboxed or file page) and anything else are refused.
 */
export function originAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  if (header === undefined) return true;
  if (!URL.canParse(header)) return false;
  const url = new URL(header);
  if (!/^https?:$/.test(url.protocol)) return false;
  return isLoopbackHost(url.hostname) || allowed.includes(url.origin);
}

function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  options: { id?: string | number | null; data?: unknown; headers?: Record<string, string> } = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...options.headers });
  res.end(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code, message, ...(options.data !== undefined ? { data: options.data } : {}) },
      id: options.id ?? null,
    }),
  );
}

/** The body, or `tooLarge` once more than `limit` bytes have come (the rest is not read). */
async function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ tooLarge: true } | { tooLarge: false; text: string }> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return { tooLarge: true };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return { tooLarge: true };
    chunks.push(chunk);
  }
  return { tooLarge: false, text: Buffer.concat(chunks).toString('utf8') };
}

/** The Node request as a web `Request` (what the SDK's handlers take); aborted when the client goes. */
function webRequest(req: IncomingMessage, res: ServerResponse, body: string | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  return new Request(`http://${req.headers.host}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal: aborted.signal,
    ...(body !== undefined && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
  });
}

/** Writes a web `Response` to Node, streaming an SSE body as it comes. */
async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } catch {
    // The client went away, or the stream was cancelled: nothing more to write.
  } finally {
    res.off('close', cancel);
    res.end();
  }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The row of a session being opened: what its `initialize` says of the client. */
function storedSession(id: string, principal: Principal, body: unknown, at: number): StoredSession {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find((m) => isInitializeRequest(m)) as
    { params?: { protocolVersion?: unknown; capabilities?: unknown; clientInfo?: unknown } } | undefined;
  const params = init?.params ?? {};
  return {
    id,
    tenantId: principal.tenantId,
    protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '',
    clientInfo: params.clientInfo ?? null,
    capabilities: params.capabilities ?? {},
    createdAt: at,
    lastActive: at,
  };
}

/** The id of the `initialize` request in a body (or the first of a batch), for a refusal's answer. */
function initializeId(body: unknown): string | number | null | undefined {
  const messages = Array.isArray(body) ? body : [body];
  const init = messages.find((m) => isInitializeRequest(m)) as { id?: string | number } | undefined;
  return init === undefined ? undefined : (init.id ?? null);
}

export async function startHttp(factory: ServerFactory, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? DEFAULT_HTTP_HOST;
  const port = options.port ?? DEFAULT_HTTP_PORT;
  const log = options.log ?? (() => {});
  const now = options.now ?? Date.now;
  const allowedOrigins = [...(options.settings?.allowedOrigins ?? [])];
  checkListenOptions(host, port, options.auth !== undefined);
  const auth = options.auth ? createAuthServer(options.auth, { mcpPath: MCP_HTTP_PATH, log }) : undefined;
  if (auth) allowedOrigins.push(auth.publicUrl);
  // The sign-in a session of the older revisions was opened with: later requests must carry a token of the same.
  const sessionPrincipals = new Map<string, Principal>();
  const principalByRequest = new WeakMap<Request, Principal>();

  const sessions = new SessionTable({
    max: options.settings?.maxSessions ?? DEFAULT_MAX_SESSIONS,
    idleMs: options.settings?.sessionIdleMs ?? DEFAULT_SESSION_IDLE_S * 1000,
    now,
    ...(options.sessionStore
      ? {
          store: options.sessionStore,
          onStoreError: (error: unknown) =>
            log(`zoteus: mcp http sessions: the state database failed: ${messageOf(error)}`, {
              level: 'error',
            }),
        }
      : {}),
    onExpire: (session) =>
      log(
        `zoteus: mcp http session ${session.id.slice(0, 8)}… closed after ${Math.round(sessions.idleMs / 1000)} s idle`,
      ),
  });
  sessions.start();

  // Arguments set aside for one stateless request, found again by the server made for it.
  const setAsideByRequest = new WeakMap<Request, SetAsideArguments>();
  const stateless = createMcpHandler(
    async (context) => {
      const principal = context.requestInfo ? principalByRequest.get(context.requestInfo) : undefined;
      const server = await factory({ era: context.era, ...(principal ? { principal } : {}) });
      const setAside = context.requestInfo ? setAsideByRequest.get(context.requestInfo) : undefined;
      configureInstance(server, {
        transport: 'http',
        caller: STATELESS_CALLER,
        ...(setAside ? { setAside } : {}),
      });
      return server;
    },
    {
      // Older revisions get sessions below, not the SDK's per-request fallback.
      legacy: 'reject',
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => log(`zoteus: mcp http: ${error.message}`),
    },
  );

  const refuseSession = (res: ServerResponse, id: string | number | null) => {
    log(`zoteus: mcp http refused a session: ${sessions.size} of ${sessions.max} are open`, {
      level: 'warn',
    });
    const message =
      `Too many sessions: ${sessions.size} are open, the most this server keeps (ZOTEUS_HTTP_MAX_SESSIONS). ` +
      'Close one (DELETE with its Mcp-Session-Id), wait until one has been idle for ZOTEUS_HTTP_SESSION_IDLE_S ' +
      'seconds, or send 2026-07-28 requests, which need no session.';
    sendJsonRpcError(res, 503, -32000, message, {
      id,
      headers: { 'retry-after': '60' },
      data: {
        [ERROR_META_KEY]: new ZoteusError('rate_limited', message, {
          retryAfterSeconds: 60,
          hint: 'Close sessions you no longer use, or raise ZOTEUS_HTTP_MAX_SESSIONS.',
        }).toJSON(),
      },
    });
  };

  /** With sign-in, one person's sessions are capped too, so no one takes the whole server's. */
  const perTenant = options.settings?.maxSessionsPerTenant ?? DEFAULT_MAX_SESSIONS_PER_TENANT;
  const tenantSessions = (tenantId: string): number => {
    let n = 0;
    for (const p of sessionPrincipals.values()) if (p.tenantId === tenantId) n++;
    return n;
  };
  const refuseTenant = (res: ServerResponse, id: string | number | null) => {
    log(`zoteus: mcp http refused a session: a tenant holds ${perTenant}, its most`, { level: 'warn' });
    const message =
      `Too many sessions of yours: you have ${perTenant} open, the most one person may keep on this server ` +
      '(ZOTEUS_HTTP_MAX_SESSIONS_PER_TENANT). Close one (DELETE with its Mcp-Session-Id), wait until one has ' +
      'been idle for ZOTEUS_HTTP_SESSION_IDLE_S seconds, or send 2026-07-28 requests, which need no session.';
    sendJsonRpcError(res, 429, -32000, message, {
      id,
      headers: { 'retry-after': '60' },
      data: {
        [ERROR_META_KEY]: new ZoteusError('rate_limited', message, {
          retryAfterSeconds: 60,
          hint: 'Close sessions you no longer use.',
        }).toJSON(),
      },
    });
  };

  /** Serves one exchange of a session, counting it as activity while it is open. */
  const serveInSession = async (
    session: LegacySession,
    request: Request,
    res: ServerResponse,
    body: unknown,
  ) => {
    const done = sessions.begin(session);
    res.once('close', done);
    try {
      const parsed = body === undefined ? undefined : session.setAside.inbound(body);
      const response = await session.transport.handleRequest(
        request,
        parsed === undefined ? {} : { parsedBody: parsed },
      );
      await sendResponse(res, response);
    } finally {
      done();
    }
  };

  const store = options.sessionStore;

  /**
   * A server instance and a transport for the session `sessionId`, connected; the session is
   * in the table once the transport has taken an `initialize`.
   */
  const makeSession = async (sessionId: string, principal: Principal | undefined) => {
    const server = await factory({ era: 'legacy', ...(principal ? { principal } : {}) });
    const setAside = new SetAsideArguments();
    // Several callers share an HTTP deployment: each session writes files only in its own folder.
    configureInstance(server, { transport: 'http', caller: sessionId, setAside });
    let session: LegacySession | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (initialized) => {
        session = { id: initialized, server, transport, setAside, busy: 0, lastActive: now() };
        sessions.add(session);
        if (principal) sessionPrincipals.set(initialized, principal);
      },
      // DELETE: forget the session (on every replica), and release its server once the answer is out.
      onsessionclosed: async (closed) => {
        sessions.remove(closed);
        sessionPrincipals.delete(closed);
        setImmediate(() => void server.close());
        if (store && principal) await store.remove(closed);
      },
    });
    transport.onclose = () => {
      sessionPrincipals.delete(sessionId);
      void sessions.remove(sessionId);
    };
    await server.connect(transport);
    return { server, transport, setAside, session: () => session };
  };

  const openSession = async (
    request: Request,
    res: ServerResponse,
    body: unknown,
    principal: Principal | undefined,
  ) => {
    const id = initializeId(body);
    if (!(await sessions.hasRoom())) return refuseSession(res, id ?? null);
    if (principal && tenantSessions(principal.tenantId) >= perTenant) return refuseTenant(res, id ?? null);
    const sessionId = randomUUID();
    // Recorded before the answer, so that the client's next request may reach any replica.
    const stored = store && principal ? storedSession(sessionId, principal, body, now()) : undefined;
    if (stored) await store!.put(stored);
    const made = await makeSession(sessionId, principal);
    const response = await made.transport.handleRequest(request, {
      parsedBody: made.setAside.inbound(body),
    });
    const session = made.session();
    // Anything but a successful `initialize` leaves no session behind.
    if (session === undefined) {
      if (stored) await store!.remove(sessionId);
      await sendResponse(res, response);
      await made.server.close();
      return;
    }
    const done = sessions.begin(session);
    try {
      await sendResponse(res, response);
    } finally {
      done();
    }
  };

  /**
   * A session another replica opened, made here: the transport is sent the client's
   * `initialize` (and `notifications/initialized`) again, through its ordinary entry, so the
   * server instance knows the same client, capabilities and revision and the transport
   * answers for that id. Undefined if it would not initialize.
   */
  const rebuild = async (stored: StoredSession, principal: Principal): Promise<LegacySession | undefined> => {
    const made = await makeSession(stored.id, principal);
    const post = (message: unknown) =>
      made.transport.handleRequest(
        new Request(`http://localhost${MCP_HTTP_PATH}`, {
          method: 'POST',
          headers: {
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-session-id': stored.id,
          },
        }),
        { parsedBody: message },
      );
    const init = await post({
      jsonrpc: '2.0',
      id: `zoteus-rebuild-${stored.id}`,
      method: 'initialize',
      params: {
        protocolVersion: stored.protocolVersion,
        capabilities: stored.capabilities ?? {},
        clientInfo: stored.clientInfo,
      },
    });
    // The answer, which the client had from the first replica, is read and dropped.
    await init.text();
    const session = made.session();
    if (init.status !== 200 || session === undefined) {
      await made.server.close();
      return undefined;
    }
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    log(`zoteus: mcp http session ${stored.id.slice(0, 8)}… continued here (opened on another replica)`);
    return session;
  };
  // Requests of one session that reach this replica together rebuild it once.
  const rebuilding = new Map<string, Promise<LegacySession | undefined>>();

  /** The session an `Mcp-Session-Id` names for this principal, here or (with a store) rebuilt from its row. */
  const findSession = async (
    sessionId: string,
    principal: Principal | undefined,
    res: ServerResponse,
  ): Promise<LegacySession | 'refused' | undefined> => {
    const session = sessions.get(sessionId);
    if (session) {
      // A session is its opener's: another user's token finds no such session.
      if (principal && sessionPrincipals.get(sessionId)?.tenantId !== principal.tenantId) return undefined;
      if (!store || !principal) return session;
      if (await store.touch(sessionId, now(), sessions.idleMs)) return session;
      // Closed on another replica (DELETE), or idle on all of them: over here too.
      sessions.remove(sessionId);
      sessionPrincipals.delete(sessionId);
      void session.server.close();
      return undefined;
    }
    if (!store || !principal) return undefined;
    const pending = rebuilding.get(sessionId);
    if (pending) {
      const rebuilt = await pending;
      return rebuilt && sessionPrincipals.get(sessionId)?.tenantId === principal.tenantId
        ? rebuilt
        : undefined;
    }
    // Claimed before the first await: two requests arriving together rebuild the session once.
    let refused = false;
    const made = (async () => {
      const stored = await store.find(sessionId, now(), sessions.idleMs);
      if (!stored || stored.tenantId !== principal.tenantId) return undefined;
      if (!(await sessions.hasRoom())) {
        refused = true;
        return undefined;
      }
      const rebuilt = await rebuild(stored, principal);
      // This request is the session's activity on this replica too.
      if (rebuilt) await store.touch(sessionId, now(), sessions.idleMs);
      return rebuilt;
    })().finally(() => rebuilding.delete(sessionId));
    rebuilding.set(sessionId, made);
    const rebuilt = await made;
    if (refused) {
      refuseSession(res, null);
      return 'refused';
    }
    return rebuilt;
  };

  let draining = false;
  let inFlight = 0;
  const idle: Array<() => void> = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const hostAllowed = hostHeaderAllowed(req.headers.host, auth);
    const opsPath = new URL(req.url ?? '/', 'http://localhost').pathname;
    // Health, readiness and metrics: before any sign-in, and (probes) whatever the Host.
    const ops = {
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
      ...(options.ready ? { ready: options.ready } : {}),
      authenticated: auth !== undefined,
      draining: () => draining,
      gauges: () => ({ sessions: sessions.size, inFlight }),
      log,
    };
    if (await serveOps(req, res, opsPath, ops, { hostAllowed, loopback: isLoopbackHost })) return;
    if (draining) {
      log(`zoteus: mcp http refused ${req.method ?? 'a request'} ${opsPath}: shutting down (503)`, {
        level: 'warn',
      });
      return sendJsonRpcError(res, 503, -32000, 'Service Unavailable: the server is shutting down.', {
        headers: { connection: 'close', 'retry-after': '5' },
      });
    }
    if (!hostAllowed) {
      log(`zoteus: mcp http refused Host ${JSON.stringify(req.headers.host ?? '')} (403)`, { level: 'warn' });
      return sendJsonRpcError(
        res,
        403,
        -32000,
        auth
          ? `Forbidden: the Host header is neither ${new URL(auth.publicUrl).host} (ZOTEUS_PUBLIC_URL) nor a loopback name.`
          : 'Forbidden: the Host header is not a loopback name.',
      );
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    // The OAuth endpoints answer any origin (CORS); the Origin check guards /mcp.
    if (auth && (await auth.handle(req, res, path))) return;
    const origin = req.headers.origin;
    if (!originAllowed(origin, allowedOrigins)) {
      log(`zoteus: mcp http refused Origin ${JSON.stringify(origin)} (403)`, { level: 'warn' });
      return sendJsonRpcError(
        res,
        403,
        -32000,
        'Forbidden: this Origin may not use the server; ZOTEUS_HTTP_ALLOWED_ORIGINS lists the origins allowed besides loopback ones.',
      );
    }
    if (path !== MCP_HTTP_PATH) {
      return sendJsonRpcError(res, 404, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}.`);
    }
    let principal: Principal | undefined;
    if (auth) {
      const check = await auth.authenticate(req);
      if (!check.ok) {
        return sendJsonRpcError(res, check.status, -32000, check.message, {
          headers: {
            'www-authenticate': check.wwwAuthenticate,
            ...(check.status === 503 ? { 'retry-after': '5' } : {}),
          },
        });
      }
      principal = check.principal;
    }

    let text: string | undefined;
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req, MAX_BODY_BYTES);
      if (read.tooLarge) {
        log('zoteus: mcp http refused a body over 4 MiB (413)', { level: 'warn' });
        return sendJsonRpcError(
          res,
          413,
          -32000,
          `Payload Too Large: a request body may hold at most ${MAX_BODY_BYTES} bytes.`,
          {
            headers: { connection: 'close' },
          },
        );
      }
      text = read.text;
      const parsed = parseJson(text);
      if (parsed.ok) body = parsed.value;
    }
    const request = webRequest(req, res, text);

    if (!(await isLegacyRequest(request, body, { maxRequestBodySize: MAX_BODY_BYTES }))) {
      const setAside = new SetAsideArguments();
      setAsideByRequest.set(request, setAside);
      if (principal) principalByRequest.set(request, principal);
      const parsedBody = body === undefined ? undefined : setAside.inbound(body);
      const response = await stateless.fetch(request, parsedBody === undefined ? {} : { parsedBody });
      return sendResponse(res, response);
    }

    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = await findSession(sessionId, principal, res);
      if (session === 'refused') return;
      if (!session) {
        return sendJsonRpcError(
          res,
          404,
          -32001,
          'Session not found: it was closed, expired after ZOTEUS_HTTP_SESSION_IDLE_S seconds idle, or never existed. Send initialize for a new one.',
        );
      }
      return serveInSession(session, request, res, body);
    }
    if (req.method === 'POST' && text !== undefined && body === undefined) {
      return sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON.');
    }
    if (req.method === 'POST' && initializeId(body) !== undefined)
      return openSession(request, res, body, principal);
    return sendJsonRpcError(
      res,
      400,
      -32000,
      'Bad Request: no Mcp-Session-Id. Send initialize first (2025-11-25 and older revisions), or give every request the 2026-07-28 _meta envelope and MCP-Protocol-Version header.',
    );
  };

  const http = createServer((req, res) => {
    // A POST is a request being answered (a GET is a session's stream, open for as long as it lives).
    if (req.method === 'POST') {
      inFlight++;
      res.once('close', () => {
        inFlight--;
        if (!draining) return;
        http.closeIdleConnections();
        if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
      });
    }
    handle(req, res).catch((error: unknown) => {
      log(`zoteus: mcp http request failed: ${error instanceof Error ? error.message : String(error)}`, {
        level: 'error',
      });
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal server error.');
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        new ZoteusError(
          'validation_error',
          `Cannot listen on ${host}:${port} (${error.code ?? error.message}).`,
          {
            field: error.code === 'EADDRINUSE' ? 'port' : 'host',
            hint:
              error.code === 'EADDRINUSE'
                ? 'Another process uses this port; pick another with --port.'
                : undefined,
          },
        ),
      );
    http.once('error', failed);
    http.listen(port, host, () => {
      http.off('error', failed);
      resolve();
    });
  });
  const address = http.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;
  const url = `http://${urlHost}:${boundPort}${MCP_HTTP_PATH}`;
  log(`Zoteus MCP server listening on ${url}`);
  if (auth)
    log(`Zoteus MCP server: clients reach it at ${auth.resource}, signing in through ${auth.publicUrl}`);

  /** `cutOff`: the grace is over, the servers' closes (which wait for their calls) are not awaited. */
  const close = async (cutOff = false) => {
    const closing = (async () => {
      await sessions.closeAll();
      await stateless.close();
    })();
    if (cutOff) void closing.catch(() => {});
    else await closing;
    // Open SSE streams would keep `close` waiting forever.
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return {
    url,
    port: boundPort,
    sessions: () => sessions.size,
    sweep: () => sessions.sweep(),
    close: () => close(),
    async shutdown(graceMs) {
      draining = true;
      // No new connections; idle keep-alive ones go now, busy ones once their answer is out.
      http.close();
      http.closeIdleConnections();
      if (inFlight > 0) {
        log(
          `zoteus: mcp http shutting down: waiting up to ${Math.round(graceMs / 1000)} s for ${inFlight} request(s) in flight`,
        );
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          new Promise<boolean>((resolve) => idle.push(() => resolve(true))),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
        ]);
        clearTimeout(timer);
        if (!finished)
          log(
            `zoteus: mcp http shutting down with ${inFlight} request(s) still in flight after the grace period`,
            {
              level: 'warn',
            },
          );
      }
      await close(inFlight > 0);
      log('zoteus: mcp http stopped');
    },
  };
}
