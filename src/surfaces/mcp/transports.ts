/**
 * Transports: stdio (the default) and Streamable HTTP. HTTP is bound to loopback because
 * no authentication exists yet: anyone who can reach the port could use the library.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ZoteusError } from '../../core/errors.js';
import { confineToCaller } from './server.js';

export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 8765;
export const MCP_HTTP_PATH = '/mcp';

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
}

/** Connects the server to stdin/stdout; resolves once the connection has closed (stdin ended). */
export async function startStdio(server: Server, options: StdioOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose;
    server.onclose = () => {
      previous?.();
      resolve();
    };
  });
  await server.connect(transport);
  // The SDK's stdio transport does not notice the end of its input; closing the server
  // when the client hangs up is what releases services (stores, sockets).
  stdin.once('end', () => void server.close());
  return closed;
}

/** 127.0.0.0/8, ::1 and localhost: the hosts that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (isIP(bare) === 4) return bare.split('.')[0] === '127';
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

function checkListenOptions(host: string, port: number): void {
  if (!isLoopbackHost(host)) {
    throw new ZoteusError(
      'validation_error',
      `Refusing to listen on ${host}: the MCP HTTP server is bound to loopback unless authentication is configured, and Zoteus has no authentication yet.`,
      {
        field: 'host',
        hint: `Use a loopback host such as ${DEFAULT_HTTP_HOST} (the default), ::1 or localhost.`,
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
function hostHeaderAllowed(header: string | undefined): boolean {
  if (!header) return false;
  const name = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0]!;
  return isLoopbackHost(name);
}

function sendJsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export interface HttpOptions {
  port?: number;
  host?: string;
  /** Where the listening URL and transport errors are reported (stderr for the binaries). */
  log?: (line: string) => void;
}

export interface HttpHandle {
  /** `http://127.0.0.1:PORT/mcp`, with the port actually bound (useful with port 0). */
  url: string;
  port: number;
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

/**
 * Streamable HTTP with sessions: `initialize` creates a server (through the factory) and a
 * session; later requests carry `Mcp-Session-Id`; DELETE or close ends it.
 */
export async function startHttp(createServer_: () => Server, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? DEFAULT_HTTP_HOST;
  const port = options.port ?? DEFAULT_HTTP_PORT;
  const log = options.log ?? (() => {});
  checkListenOptions(host, port);

  const sessions = new Map<string, Session>();

  const openSession = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const server = createServer_();
    // Several callers share an HTTP deployment: each session writes files only in its own folder.
    const sessionId = randomUUID();
    confineToCaller(server, sessionId);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Anything but a successful `initialize` leaves no session behind.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostHeaderAllowed(req.headers.host)) {
      return sendJsonRpcError(res, 403, 'Forbidden: Host header is not a loopback name.');
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_HTTP_PATH)
      return sendJsonRpcError(res, 404, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}.`);
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) return sendJsonRpcError(res, 404, 'Session not found; initialize a new one.');
      return session.transport.handleRequest(req, res);
    }
    if (req.method === 'POST') return openSession(req, res);
    return sendJsonRpcError(res, 400, 'Bad request: no Mcp-Session-Id; send initialize first.');
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`MCP HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, 'Internal server error.');
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

  return {
    url,
    port: boundPort,
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((session) => session.server.close()));
      // Open SSE streams would keep `close` waiting forever.
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
