/**
 * In-process fake of Better BibTeX's JSON-RPC endpoint (`node:http` on 127.0.0.1, a random
 * port), as the Zotero desktop app serves it with Better BibTeX installed:
 * `POST /better-bibtex/json-rpc`, JSON-RPC 2.0, methods `item.citationkey(item_keys)` (a list of
 * `"<libraryID>:<itemKey>"` or bare item keys, which mean My Library, libraryID 1; the answer
 * maps each to its key or null) and `api.ready()`. Any other path answers 404, as Zotero does
 * without Better BibTeX (`withoutBetterBibtex` makes the endpoint itself answer 404). Test code only.
 *
 * It logs every request and injects faults, each for the next `times` requests (default 1).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BetterBibtexRequestLog {
  method: string;
  path: string;
  /** The JSON-RPC method called, when the body was JSON-RPC. */
  rpcMethod?: string;
  /** How many item keys `item.citationkey` was asked for. */
  itemKeys?: number;
  status: number;
}

export interface BetterBibtexServerOptions {
  /** Keys by `"<libraryID>:<itemKey>"`. */
  keys?: Record<string, string>;
  /** Answer 404 on the endpoint too: Zotero runs, Better BibTeX is not installed. */
  withoutBetterBibtex?: boolean;
}

export interface BetterBibtexServer {
  /** `http://127.0.0.1:PORT` (the local API would be `${origin}/api`). */
  origin: string;
  /** `${origin}/better-bibtex/json-rpc`. */
  url: string;
  log: BetterBibtexRequestLog[];
  /** Keys by `"<libraryID>:<itemKey>"`; change them between calls. */
  keys: Map<string, string>;
  faults: {
    /** Answers with this HTTP status and body. */
    status(o: { status: number; body?: string; times?: number }): void;
    /** A JSON-RPC error object instead of a result. */
    rpcError(o: { code: number; message: string; times?: number }): void;
    /** A TCP reset instead of an answer. */
    reset(o?: { times?: number }): void;
    clear(): void;
  };
  close(): Promise<void>;
}

type Fault =
  | { kind: 'status'; status: number; body: string; remaining: number }
  | { kind: 'rpcError'; code: number; message: string; remaining: number }
  | { kind: 'reset'; remaining: number };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startBetterBibtexServer(
  options: BetterBibtexServerOptions = {},
): Promise<BetterBibtexServer> {
  const log: BetterBibtexRequestLog[] = [];
  const keys = new Map(Object.entries(options.keys ?? {}));
  const faults: Fault[] = [];

  const nextFault = (): Fault | undefined => {
    const f = faults[0];
    if (!f) return undefined;
    f.remaining -= 1;
    if (f.remaining <= 0) faults.shift();
    return f;
  };

  const send = (res: ServerResponse, entry: BetterBibtexRequestLog, status: number, body: string): void => {
    entry.status = status;
    log.push(entry);
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(body);
  };

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      const entry: BetterBibtexRequestLog = { method: req.method ?? '', path, status: 0 };
      const text = await readBody(req);
      let body: { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown } | undefined;
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        body = undefined;
      }
      if (body && typeof body.method === 'string') entry.rpcMethod = body.method;
      if (path !== '/better-bibtex/json-rpc' || options.withoutBetterBibtex) {
        return send(res, entry, 404, 'No endpoint found');
      }
      if (req.method !== 'POST') return send(res, entry, 400, 'Endpoint does not support method');
      const fault = nextFault();
      if (fault?.kind === 'reset') {
        entry.status = -1;
        log.push(entry);
        req.socket.destroy();
        return;
      }
      if (fault?.kind === 'status') return send(res, entry, fault.status, fault.body);
      const id = body?.id ?? null;
      const reply = (payload: Record<string, unknown>) =>
        send(res, entry, 200, JSON.stringify({ jsonrpc: '2.0', id, ...payload }));
      if (fault?.kind === 'rpcError') return reply({ error: { code: fault.code, message: fault.message } });
      if (!body || body.jsonrpc !== '2.0')
        return reply({ error: { code: -32600, message: 'Invalid Request' } });
      if (body.method === 'api.ready') return reply({ result: { zotero: '7.0.11', betterbibtex: '7.0.5' } });
      if (body.method === 'item.citationkey') {
        const params = body.params;
        const list: unknown = Array.isArray(params)
          ? params[0]
          : (params as { item_keys?: unknown } | undefined)?.item_keys;
        if (!Array.isArray(list)) return reply({ error: { code: -32602, message: 'unsupported argument' } });
        entry.itemKeys = list.length;
        const result: Record<string, string | null> = {};
        for (const raw of list) {
          const key = String(raw);
          const full = key.includes(':') ? key : `1:${key}`;
          result[key] = keys.get(full) ?? null;
        }
        return reply({ result });
      }
      return reply({ error: { code: -32601, message: `Method not found: ${String(body.method)}` } });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: `${origin}/better-bibtex/json-rpc`,
    log,
    keys,
    faults: {
      status: ({ status, body = '', times = 1 }) =>
        faults.push({ kind: 'status', status, body, remaining: times }),
      rpcError: ({ code, message, times = 1 }) =>
        faults.push({ kind: 'rpcError', code, message, remaining: times }),
      reset: ({ times = 1 } = {}) => faults.push({ kind: 'reset', remaining: times }),
      clear: () => void faults.splice(0),
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
