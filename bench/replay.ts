/**
 * A replay of recorded Web API answers on a real `node:http` server with a fixed latency and
 * (next to) no CPU cost per request, with the client's `If-Modified-Since-Version` honoured. It
 * shows what the client costs once the test server's own work (it sorts the whole library for
 * every page it serves) is taken out of the measurement.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FetchLike } from '../src/core/zotero/index.js';

interface Recorded {
  status: number;
  headers: Record<string, string>;
  body: string;
  version: number | undefined;
}

const KEPT_HEADERS = ['content-type', 'total-results', 'last-modified-version', 'link'];

export interface Recorder {
  /** A fetch that passes through and records each answer by path and query. */
  fetch: FetchLike;
  answers: Map<string, Recorded>;
}

export function createRecorder(): Recorder {
  const answers = new Map<string, Recorded>();
  // The fetch of the moment of creation: the recorder may be installed as the global one.
  const passThrough = globalThis.fetch;
  return {
    answers,
    fetch: async (input, init) => {
      const response = await passThrough(input, init);
      const body = await response.text();
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = response.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      const url = new URL(input);
      const version = headers['last-modified-version'];
      answers.set(url.pathname + url.search, {
        status: response.status,
        headers,
        body,
        version: version === undefined ? undefined : Number(version),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    },
  };
}

export interface ReplayServer {
  url: string;
  requests: number;
  maxInFlight: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startReplay(
  answers: Map<string, Recorded>,
  latencyMs: number,
  recordedBase: string,
): Promise<ReplayServer> {
  let inFlight = 0;
  const stats = { requests: 0, maxInFlight: 0 };
  let base = '';
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    stats.requests++;
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    setTimeout(() => {
      const found = answers.get(req.url ?? '');
      if (!found) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not recorded');
        return;
      }
      const since = Number(req.headers['if-modified-since-version']);
      if (found.version !== undefined && Number.isFinite(since) && since >= found.version) {
        res.writeHead(304, { 'last-modified-version': String(found.version) }).end();
        return;
      }
      const headers = { ...found.headers };
      if (headers.link) headers.link = headers.link.split(recordedBase).join(base);
      res.writeHead(found.status, headers).end(found.body);
    }, latencyMs);
  };
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    get requests() {
      return stats.requests;
    },
    get maxInFlight() {
      return stats.maxInFlight;
    },
    reset() {
      stats.requests = 0;
      stats.maxInFlight = inFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
