/**
 * A loopback HTTP proxy that loses answers the way a flaky network does: it forwards the
 * request to the upstream server, waits until the server has applied it and answered, then
 * closes the client's connection without passing the answer on. Which requests it drops is a
 * list of rules (method, path pattern, how many times); everything else is passed through.
 * The attack of issue 13: a write lost after it landed must not land twice on retry.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DropRule {
  method?: string;
  /** Matched against the path and query string. */
  path?: RegExp;
  /** How many matching requests lose their answer (default 1). */
  times?: number;
  /**
   * Keep the client's connection open instead of closing it: the answer never comes, as when
   * the process waiting for it is killed meanwhile (see `held`).
   */
  hold?: boolean;
}

export interface DroppingProxy {
  /** `http://127.0.0.1:PORT`, standing in for the upstream's origin. */
  url: string;
  /** Drops the answers of the next matching requests. */
  drop(rule?: DropRule): void;
  /** Requests whose answer was dropped, as `METHOD /path?query`. */
  dropped: string[];
  /** Resolves once a request of a `hold` rule has been applied and its answer held back. */
  held(): Promise<string>;
  clear(): void;
  close(): Promise<void>;
}

interface LiveRule {
  method: string | undefined;
  path: RegExp | undefined;
  remaining: number;
  hold: boolean;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

export async function startDroppingProxy(upstream: string): Promise<DroppingProxy> {
  const target = new URL(upstream);
  let rules: LiveRule[] = [];
  const dropped: string[] = [];
  const holds: Array<(what: string) => void> = [];
  const heldBack: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const what = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
      const rule = rules.find(
        (r) =>
          r.remaining > 0 &&
          (r.method === undefined || r.method === req.method) &&
          (r.path === undefined || r.path.test(req.url ?? '/')),
      );
      const headers = { ...req.headers, host: target.host };
      const forwarded = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers,
        },
        (answer) => {
          void readBody(answer).then((answerBody) => {
            if (rule) {
              rule.remaining--;
              dropped.push(what);
              if (rule.hold) {
                // Applied, and the answer kept back: the connection stays open with nothing on it.
                const waiter = holds.shift();
                if (waiter) waiter(what);
                else heldBack.push(what);
                return;
              }
              // The server has applied the request and answered: the client never hears it.
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(answerBody);
          });
        },
      );
      forwarded.on('error', () => req.socket.destroy());
      forwarded.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dropped,
    drop(rule: DropRule = {}) {
      rules.push({
        method: rule.method?.toUpperCase(),
        path: rule.path,
        remaining: rule.times ?? 1,
        hold: rule.hold ?? false,
      });
    },
    held: () => {
      const ready = heldBack.shift();
      return ready !== undefined ? Promise.resolve(ready) : new Promise((resolve) => holds.push(resolve));
    },
    clear() {
      rules = [];
      dropped.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
