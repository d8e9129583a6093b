/**
 * A loopback CSL repository (`node:http` on 127.0.0.1, random port) for style and locale
 * resolution: `GET /styles/<id>` answers like https://www.zotero.org/styles/<id> (the style's
 * XML, 404 for an unknown id) and `GET /locales/locales-<tag>.xml` like the official locales'
 * raw files. Files come from Debian's packaged copies of the official styles and locales
 * (`/usr/share/citation-style-language`, root and `dependent/`), or from `files` given by the
 * test. It logs every request, so tests assert how many reached it. Test code only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const DEBIAN_CSL = '/usr/share/citation-style-language';
export const DEBIAN_STYLES = join(DEBIAN_CSL, 'styles');
export const DEBIAN_LOCALES = join(DEBIAN_CSL, 'locales');

/** A Debian style file by id: the independent styles' folder, else `dependent/`. */
export function debianStyle(id: string): string | undefined {
  for (const path of [join(DEBIAN_STYLES, `${id}.csl`), join(DEBIAN_STYLES, 'dependent', `${id}.csl`)])
    if (existsSync(path)) return path;
  return undefined;
}

export interface StyleServerRequest {
  method: string;
  path: string;
  status: number;
}

export interface StyleServer {
  /** `http://127.0.0.1:PORT/styles`: ZOTEUS_STYLES_URL. */
  stylesUrl: string;
  /** `http://127.0.0.1:PORT/locales`: ZOTEUS_LOCALES_URL. */
  localesUrl: string;
  log: StyleServerRequest[];
  /** The next `times` requests get `status` (with `body`). */
  fail(status: number, times?: number, body?: string): void;
  close(): Promise<void>;
}

export interface StyleServerOptions {
  /** Path under the server (`/styles/apa`) → body, answered before Debian's files. */
  files?: Record<string, string>;
}

export async function startStyleServer(options: StyleServerOptions = {}): Promise<StyleServer> {
  const log: StyleServerRequest[] = [];
  const faults: Array<{ status: number; remaining: number; body: string }> = [];
  const answer = (req: IncomingMessage, res: ServerResponse, status: number, body: string, type: string) => {
    log.push({ method: req.method ?? 'GET', path: req.url ?? '', status });
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const fault = faults[0];
    if (fault) {
      if (--fault.remaining <= 0) faults.shift();
      answer(req, res, fault.status, fault.body, 'text/plain');
      return;
    }
    const given = options.files?.[path];
    if (given !== undefined) {
      answer(req, res, 200, given, 'application/vnd.citationstyles.style+xml');
      return;
    }
    const style = /^\/styles\/([a-z0-9._-]+)$/.exec(path);
    const locale = /^\/locales\/(locales-[A-Za-z0-9-]+\.xml)$/.exec(path);
    const file = style
      ? debianStyle(style[1] as string)
      : locale && existsSync(join(DEBIAN_LOCALES, locale[1] as string))
        ? join(DEBIAN_LOCALES, locale[1] as string)
        : undefined;
    if (req.method !== 'GET' || file === undefined) {
      answer(req, res, 404, 'Style not found', 'text/plain');
      return;
    }
    answer(
      req,
      res,
      200,
      readFileSync(file, 'utf8'),
      style ? 'application/vnd.citationstyles.style+xml' : 'text/xml',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    stylesUrl: `${base}/styles`,
    localesUrl: `${base}/locales`,
    log,
    fail(status, times = 1, body = '') {
      faults.push({ status, remaining: times, body });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
