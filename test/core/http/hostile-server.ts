/**
 * A careless or hostile server on loopback (node:http on 127.0.0.1, port 0), for the secret
 * tests: it quotes a key in its error bodies just past where a message cuts them, echoes the
 * request's headers back, and redirects to a second loopback server (another port, so another
 * origin) that records the headers it receives. Test code only.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `cut`: `status` with a body of 177 characters followed by `secret` (a message that keeps 200
 * characters would print all but its last characters); `echo`: `status` with the request's
 * headers as the body; `redirect`: `redirectStatus` to the same path on the other server;
 * `redirect-same`: the same, to another path of this server (same origin), which answers `body`;
 * `loop`: a redirect to the same URL, forever; `ok`: `status` with `body`. `location` replaces
 * the Location of a redirect.
 */
export type Mode = 'cut' | 'echo' | 'redirect' | 'redirect-same' | 'loop' | 'ok';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HostileServer {
  url: string;
  /** The second server's base URL: it answers 404 and records every request. */
  otherUrl: string;
  /** Requests to the main server and to the other one, in order. */
  received: Received[];
  otherReceived: Received[];
  set(o: {
    mode: Mode;
    status?: number;
    redirectStatus?: number;
    secret?: string;
    body?: string;
    contentType?: string;
    location?: string;
    /**
     * Answer `GET …/keys/current` as zotero.org does (key info that quotes the key itself) so
     * a client gets past its key check to the request under test.
     */
    keyCheck?: { key: string; userID: number };
  }): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startHostileServer(): Promise<HostileServer> {
  const received: Received[] = [];
  const otherReceived: Received[] = [];
  let state: Parameters<HostileServer['set']>[0] = { mode: 'ok', status: 200, body: '{}' };
  let otherUrl = '';

  const other = createServer(async (req, res) => {
    const body = await readBody(req);
    otherReceived.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    // Echoes what it got: were a credential forwarded, a message quoting this would show it.
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end(`nothing here; you sent ${JSON.stringify(req.headers)}`);
  });
  const main = createServer(async (req, res) => {
    const body = await readBody(req);
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    if (state.keyCheck && req.url?.endsWith('/keys/current')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          key: state.keyCheck.key,
          userID: state.keyCheck.userID,
          username: 'mallory',
          displayName: 'Mallory',
          access: { user: { library: true, write: true }, groups: { all: { library: true, write: true } } },
        }),
      );
      return;
    }
    const status = state.status ?? 400;
    const type = { 'Content-Type': state.contentType ?? 'text/plain' };
    switch (state.mode) {
      case 'cut':
        res.writeHead(status, type);
        res.end(`${'x'.repeat(177)}${state.secret ?? ''}`);
        return;
      case 'echo':
        res.writeHead(status, type);
        res.end(
          `You sent: ${Object.entries(req.headers)
            .map(([name, value]) => `${name}: ${String(value)}`)
            .join('\n')}`,
        );
        return;
      case 'loop':
        res.writeHead(state.redirectStatus ?? 302, { Location: req.url ?? '/' });
        res.end();
        return;
      case 'redirect':
      case 'redirect-same': {
        if (state.mode === 'redirect-same' && req.url?.startsWith('/landed')) {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(state.body ?? '{}');
          return;
        }
        const to = state.mode === 'redirect' ? `${otherUrl}${req.url ?? '/'}` : `/landed${req.url ?? '/'}`;
        res.writeHead(state.redirectStatus ?? 302, { Location: state.location ?? to });
        res.end();
        return;
      }
      case 'ok':
        res.writeHead(status, { 'Content-Type': state.contentType ?? 'application/json' });
        res.end(state.body ?? '{}');
        return;
    }
  });
  const url = await listen(main);
  otherUrl = await listen(other);
  return {
    url,
    otherUrl,
    received,
    otherReceived,
    set(o) {
      state = o;
    },
    async close() {
      main.closeAllConnections();
      other.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => main.close(resolve)),
        new Promise((resolve) => other.close(resolve)),
      ]);
    },
  };
}

/** Every 8-character window of `secret` found in `text` (empty when none leaked). */
export function leakedRuns(text: string, secret: string, run = 8): string[] {
  const found: string[] = [];
  for (let i = 0; i + run <= secret.length; i++) {
    const window = secret.slice(i, i + run);
    if (text.includes(window)) found.push(window);
  }
  return found;
}

/** Header names that carry credentials, as node lower-cases them. */
export const CREDENTIAL_HEADER_NAMES = ['authorization', 'zotero-api-key', 'proxy-authorization', 'cookie'];
