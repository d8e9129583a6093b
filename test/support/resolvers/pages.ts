/**
 * A local web server of pages for `zot add --url`: a `node:http` server on 127.0.0.1 serving
 * what a test registered at a path (HTML with a content type and status, a redirect, or a body
 * streamed in chunks until the client stops reading), logging every request with its headers
 * and, for streamed bodies, how many bytes were written before the client hung up. Test code only.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PageLogEntry {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  status: number;
}

type Served =
  | { kind: 'page'; status: number; type: string; body: string | Buffer }
  | { kind: 'redirect'; status: number; to: string }
  | { kind: 'stream'; type: string; head: string; chunk: string; chunks: number };

export interface FakePages {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** The absolute URL of a path. */
  at(path: string): string;
  log: PageLogEntry[];
  /** Bytes written of streamed bodies, by path. */
  written: Map<string, number>;
  page(path: string, body: string | Buffer, o?: { status?: number; type?: string }): void;
  redirect(path: string, to: string, status?: number): void;
  /** `head`, then `chunks` times `chunk`, written as the client reads. */
  stream(path: string, head: string, chunk: string, chunks: number, type?: string): void;
  close(): Promise<void>;
}

export async function startPages(): Promise<FakePages> {
  const served = new Map<string, Served>();
  const log: PageLogEntry[] = [];
  const written = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = `${u.pathname}${u.search}`;
    const entry: PageLogEntry = { method: req.method ?? 'GET', path, headers: req.headers, status: 0 };
    log.push(entry);
    const s = served.get(path) ?? served.get(u.pathname);
    if (!s) {
      entry.status = 404;
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<html><head><title>Not found</title></head></html>');
      return;
    }
    entry.status = s.kind === 'stream' ? 200 : s.status;
    if (s.kind === 'redirect') {
      res.writeHead(s.status, { Location: s.to });
      res.end();
      return;
    }
    if (s.kind === 'page') {
      res.writeHead(s.status, { 'Content-Type': s.type });
      res.end(s.body);
      return;
    }
    entry.status = 200;
    res.writeHead(200, { 'Content-Type': s.type });
    let n = 0;
    let bytes = 0;
    const write = (text: string): boolean => {
      bytes += Buffer.byteLength(text);
      written.set(u.pathname, bytes);
      return res.write(text);
    };
    const pump = (): void => {
      while (n < s.chunks) {
        n++;
        if (!write(s.chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end('</body></html>');
    };
    res.on('close', () => written.set(u.pathname, bytes));
    write(s.head);
    pump();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    at: (path) => `${origin}${path}`,
    log,
    written,
    page: (path, body, o = {}) =>
      void served.set(path, {
        kind: 'page',
        status: o.status ?? 200,
        type: o.type ?? 'text/html; charset=utf-8',
        body,
      }),
    redirect: (path, to, status = 301) => void served.set(path, { kind: 'redirect', status, to }),
    stream: (path, head, chunk, chunks, type = 'text/html') =>
      void served.set(path, { kind: 'stream', type, head, chunk, chunks }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
