/**
 * Loopback fakes of the open-access services `attach --oa` asks, each a `node:http` server on
 * 127.0.0.1 with a random port: Unpaywall (`GET /v2/{DOI}?email=`, 422 without an e-mail, 404
 * for a DOI nobody registered), OpenAlex (`GET /works/doi:{DOI}?api_key=`, 401 for a wrong
 * key), and a file host on its own origin that serves registered bytes (`GET /files/NAME`)
 * and redirects (`GET /go/NAME` → 302 to `/files/NAME`). Every request is logged with its
 * headers; `fail` makes a service answer a status. Point the product at them with `env()`.
 * Test code only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type OaService = 'unpaywall' | 'openalex' | 'files';

export interface OaLogEntry {
  service: OaService;
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingMessage['headers'];
  status: number;
}

export interface OaLocation {
  url_for_pdf?: string | null;
  url?: string;
  url_for_landing_page?: string;
  version?: string;
  host_type?: string;
  license?: string | null;
}

export interface OpenAlexLocation {
  pdf_url?: string | null;
  landing_page_url?: string;
  version?: string;
  is_oa?: boolean;
  license?: string | null;
}

export interface OaFakes {
  urls: Record<OaService, string>;
  /** ZOTEUS_UNPAYWALL_URL, ZOTEUS_OPENALEX_URL, the e-mail and the key (each can be left out). */
  env(options?: { email?: boolean; openalex?: boolean }): Record<string, string>;
  readonly email: string;
  readonly apiKey: string;
  log: OaLogEntry[];
  /** Requests to one service. */
  requests(service: OaService): OaLogEntry[];
  /** Unpaywall's record of a DOI: `best_oa_location` is the first location. */
  addUnpaywall(doi: string, locations: OaLocation[], extra?: Record<string, unknown>): void;
  /** OpenAlex's work of a DOI: `best_oa_location` is the first location. */
  addOpenAlex(doi: string, locations: OpenAlexLocation[]): void;
  /** Bytes the file host serves at `/files/NAME` (and, through a redirect, `/go/NAME`). */
  addFile(name: string, body: Buffer | string, contentType?: string): string;
  /** The address of `/go/NAME`, which redirects to the file. */
  redirectTo(name: string): string;
  /** Every later request to `service` answers `status` (until clearFaults). */
  fail(service: OaService, status: number): void;
  clearFaults(): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return server;
}

const origin = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

export async function startOaFakes(): Promise<OaFakes> {
  const email = 'reader@example.org';
  const apiKey = 'oa-test-key-1234567890';
  const log: OaLogEntry[] = [];
  const unpaywall = new Map<string, Record<string, unknown>>();
  const openalex = new Map<string, Record<string, unknown>>();
  const files = new Map<string, { body: Buffer; type: string }>();
  const faults = new Map<OaService, number>();

  const wrap =
    (service: OaService, answer: (url: URL, res: ServerResponse) => void) =>
    (req: IncomingMessage, res: ServerResponse): void => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const entry: OaLogEntry = {
        service,
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        status: 0,
      };
      log.push(entry);
      res.on('finish', () => (entry.status = res.statusCode));
      req.resume();
      const fault = faults.get(service);
      if (fault !== undefined) {
        json(res, fault, { error: `fault ${fault}` });
        return;
      }
      answer(url, res);
    };

  const unpaywallServer = await listen(
    wrap('unpaywall', (url, res) => {
      const m = /^\/v2\/(.+)$/.exec(url.pathname);
      if (!m) return json(res, 404, { error: 'no such route' });
      const mail = url.searchParams.get('email') ?? '';
      if (!/^[^@\s]+@[^@\s]+$/.test(mail))
        return json(res, 422, { HTTP_status_code: 422, error: true, message: 'Please use a valid email.' });
      const record = unpaywall.get(decodeURIComponent(m[1] as string).toLowerCase());
      if (!record) return json(res, 404, { HTTP_status_code: 404, error: true, message: 'not in Unpaywall' });
      json(res, 200, record);
    }),
  );
  const openalexServer = await listen(
    wrap('openalex', (url, res) => {
      const m = /^\/works\/doi:(.+)$/.exec(url.pathname);
      if (!m) return json(res, 404, { error: 'no such route' });
      if (url.searchParams.get('api_key') !== apiKey) return json(res, 401, { error: 'Invalid API key' });
      const work = openalex.get(decodeURIComponent(m[1] as string).toLowerCase());
      if (!work) return json(res, 404, { error: 'NotFoundError' });
      json(res, 200, work);
    }),
  );
  const filesServer = await listen(
    wrap('files', (url, res) => {
      const go = /^\/go\/(.+)$/.exec(url.pathname);
      if (go) {
        res.writeHead(302, { Location: `/files/${go[1] as string}` });
        res.end();
        return;
      }
      const m = /^\/files\/(.+)$/.exec(url.pathname);
      const file = m ? files.get(decodeURIComponent(m[1] as string)) : undefined;
      if (!file) {
        res.writeHead(404, { 'Content-Type': 'text/html' });
        res.end('<html><body>Not here</body></html>');
        return;
      }
      res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': String(file.body.length) });
      res.end(file.body);
    }),
  );

  const urls: Record<OaService, string> = {
    unpaywall: origin(unpaywallServer),
    openalex: origin(openalexServer),
    files: origin(filesServer),
  };
  return {
    urls,
    email,
    apiKey,
    log,
    env: (options = {}) => ({
      ZOTEUS_UNPAYWALL_URL: urls.unpaywall,
      ZOTEUS_OPENALEX_URL: urls.openalex,
      ...(options.email === false ? {} : { ZOTEUS_UNPAYWALL_EMAIL: email }),
      ...(options.openalex === false ? {} : { ZOTEUS_OPENALEX_API_KEY: apiKey }),
    }),
    requests: (service) => log.filter((e) => e.service === service),
    addUnpaywall(doi, locations, extra = {}) {
      unpaywall.set(doi.toLowerCase(), {
        doi: doi.toLowerCase(),
        is_oa: locations.length > 0,
        oa_status: locations.length > 0 ? 'green' : 'closed',
        best_oa_location: locations[0] ?? null,
        oa_locations: locations,
        ...extra,
      });
    },
    addOpenAlex(doi, locations) {
      openalex.set(doi.toLowerCase(), {
        id: 'https://openalex.org/W1',
        doi: `https://doi.org/${doi.toLowerCase()}`,
        best_oa_location: locations[0] ?? null,
        locations,
        open_access: { is_oa: locations.length > 0 },
      });
    },
    addFile(name, body, contentType = 'application/pdf') {
      files.set(name, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), type: contentType });
      return `${urls.files}/files/${name}`;
    },
    redirectTo: (name) => `${urls.files}/go/${name}`,
    fail: (service, status) => void faults.set(service, status),
    clearFaults: () => faults.clear(),
    close: async () => {
      await Promise.all(
        [unpaywallServer, openalexServer, filesServer].map(
          (s) =>
            new Promise<void>((done) => {
              s.closeAllConnections();
              s.close(() => done());
            }),
        ),
      );
    },
  };
}
