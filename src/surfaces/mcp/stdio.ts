/**
 * stdio, both generations on one pipe: the SDK's `serveStdio` reads the opening message. An
 * `initialize` (2025-11-25, 2025-06-18, ...) pins the connection to an instance of the older
 * revisions, which keeps the negotiated revision; a request whose `_meta` envelope names
 * 2026-07-28 (or a `server/discover` probe) pins it to a stateless instance, and every later
 * request carries its own envelope, checked by the SDK (a missing or malformed one is a
 * `-32602`, an unsupported revision a `-32022` naming the supported ones).
 *
 * The transport is the SDK's, with three differences: a `tools/call` whose arguments are no
 * object is handed to the server with them set aside (protocol.ts); a request whose envelope
 * claims another revision is answered `-32022` whenever it comes (the SDK checks the first
 * only); and the end of stdin closes the connection only once every request read before it
 * has been answered (a client may send its last request and close stdin at once).
 */
import type { Readable, Writable } from 'node:stream';
import type {
  JSONRPCMessage,
  RequestId,
  Server,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { SetAsideArguments, unsupportedRevision } from './protocol.js';
import { configureInstance } from './server.js';

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** Requests the SDK refused before any handler ran (a bad envelope, an unsupported revision). */
  log?: (line: string) => void;
}

/** The SDK's stdio transport, closing on the end of stdin only once the requests read are answered. */
class DrainingStdioTransport implements Transport {
  readonly setAside = new SetAsideArguments();
  readonly #inner: StdioServerTransport;
  readonly #pending = new Set<RequestId>();
  #ended = false;
  #closed!: () => void;
  /** Settles once the connection has closed, whoever closed it. */
  readonly closed = new Promise<void>((resolve) => (this.#closed = resolve));
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  constructor(stdin: Readable, stdout: Writable) {
    this.#inner = new StdioServerTransport(stdin, stdout);
    // The SDK closes on the end of stdin at once, aborting what is in flight; wait for it instead.
    this.#inner._onstdinclose = () => {
      this.#ended = true;
      this.#closeIfDrained();
    };
  }

  async start(): Promise<void> {
    this.#inner.onmessage = (message) => {
      const m = message as { id?: unknown; method?: unknown };
      const id =
        typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')
          ? m.id
          : undefined;
      // The SDK checks the envelope's revision on the opening request only.
      const refusal = unsupportedRevision(message);
      if (id !== undefined) this.#pending.add(id);
      if (refusal) {
        this.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
        return;
      }
      try {
        this.onmessage?.(this.setAside.inbound(message));
      } catch (error) {
        // Nothing will answer it: it must not hold the end of the connection.
        if (id !== undefined) this.#pending.delete(id);
        throw error;
      }
    };
    this.#inner.onclose = () => {
      this.#closed();
      this.onclose?.();
    };
    this.#inner.onerror = (error) => this.onerror?.(error);
    await this.#inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    void options;
    const m = message as { id?: unknown; method?: unknown };
    try {
      await this.#inner.send(message);
    } finally {
      if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number')) {
        this.#pending.delete(m.id);
        this.#closeIfDrained();
      }
    }
  }

  async close(): Promise<void> {
    await this.#inner.close();
  }

  #closeIfDrained(): void {
    if (this.#ended && this.#pending.size === 0) void this.#inner.close();
  }
}

/**
 * Serves MCP on stdin/stdout with servers from `factory` (one per connection, plus a
 * discarded one when a client probes with `server/discover` and then falls back to
 * `initialize`); resolves once the connection has closed (stdin ended and every request read
 * was answered, or `stop` was called).
 */
export function startStdio(
  factory: () => Server | Promise<Server>,
  options: StdioOptions = {},
): { closed: Promise<void>; stop(): Promise<void> } {
  const transport = new DrainingStdioTransport(
    options.stdin ?? process.stdin,
    options.stdout ?? process.stdout,
  );
  const log = options.log ?? (() => {});
  const handle = serveStdio(
    async () => {
      const server = await factory();
      configureInstance(server, { transport: 'stdio', setAside: transport.setAside });
      return server;
    },
    { transport, onerror: (error) => log(`zoteus: mcp stdio: ${error.message}`) },
  );
  return {
    closed: transport.closed,
    stop: async () => {
      await handle.close();
      await transport.close();
    },
  };
}
