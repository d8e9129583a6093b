/**
 * Local fakes of the metadata resolvers `zotero_import` uses, each a `node:http` server on
 * 127.0.0.1 with a random port: Crossref (`GET /works/{doi}`), DataCite (`GET /dois/{doi}`)
 * and the arXiv API (`GET /query?id_list=…`). They answer from what a test registered, log
 * every request, and can be told to fail for given identifiers. Point the product at them with
 * `fakes.env()` (ZOTEUS_CROSSREF_URL, ZOTEUS_DATACITE_URL, ZOTEUS_ARXIV_URL). Test code only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Service = 'crossref' | 'datacite' | 'arxiv';

export interface ResolverLogEntry {
  service: Service;
  method: string;
  path: string;
  /** The identifiers the request asked for (one DOI, or the arXiv id list). */
  ids: string[];
  status: number;
}

export interface ArxivFakeEntry {
  /** With version, as the feed's `<id>` shows it: `2101.00001v1`. */
  id: string;
  title: string;
  summary?: string;
  authors: string[];
  published: string;
  primaryCategory?: string;
  journalRef?: string;
}

interface Fault {
  status: number;
  remaining: number;
  retryAfter?: number;
  body?: string;
}

export interface FakeResolvers {
  urls: Record<Service, string>;
  /** The environment that points Zoteus at these fakes. */
  env(): Record<string, string>;
  log: ResolverLogEntry[];
  clearLog(): void;
  addCrossref(work: Record<string, unknown> & { DOI: string }): void;
  addDataCite(doi: string, attributes: Record<string, unknown>): void;
  addArxiv(entry: ArxivFakeEntry): void;
  /** The next `times` (default: always) requests for this identifier answer `status`. */
  fail(
    service: Service,
    id: string,
    o: { status: number; times?: number; retryAfter?: number; body?: string },
  ): void;
  clearFaults(): void;
  close(): Promise<void>;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': type, ...headers });
  res.end(body);
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function feed(entries: ArxivFakeEntry[], base: string): string {
  const body = entries
    .map(
      (e) => `  <entry>
    <id>http://arxiv.org/abs/${e.id}</id>
    <updated>${e.published}</updated>
    <published>${e.published}</published>
    <title>${xml(e.title)}</title>
    <summary>${xml(e.summary ?? '')}</summary>
${e.authors.map((a) => `    <author>\n      <name>${xml(a)}</name>\n    </author>`).join('\n')}
${e.journalRef ? `    <arxiv:journal_ref xmlns:arxiv="http://arxiv.org/schemas/atom">${xml(e.journalRef)}</arxiv:journal_ref>\n` : ''}    <link href="http://arxiv.org/abs/${e.id}" rel="alternate" type="text/html"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="${e.primaryCategory ?? 'cs.CL'}" scheme="http://arxiv.org/schemas/atom"/>
  </entry>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="${base}/query" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query</title>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">${entries.length}</opensearch:totalResults>
${body}
</feed>
`;
}

const base = (id: string): string => id.replace(/v\d+$/i, '').toLowerCase();

export async function startResolverFakes(): Promise<FakeResolvers> {
  const crossref = new Map<string, Record<string, unknown>>();
  const datacite = new Map<string, Record<string, unknown>>();
  const arxiv: ArxivFakeEntry[] = [];
  const faults = new Map<string, Fault>();
  const log: ResolverLogEntry[] = [];
  const servers: Server[] = [];
  const urls = {} as Record<Service, string>;

  const faultFor = (service: Service, ids: string[]): Fault | undefined => {
    for (const id of ids) {
      const f =
        faults.get(`${service}\u0000${id.toLowerCase()}`) ?? faults.get(`${service}\u0000${base(id)}`);
      if (f && f.remaining > 0) {
        f.remaining--;
        return f;
      }
    }
    return undefined;
  };

  const handlers: Record<Service, (req: IncomingMessage, res: ServerResponse, url: URL) => number> = {
    crossref: (_req, res, url) => {
      const doi = decodeURIComponent(url.pathname.replace(/^\/works\//, ''));
      const work = crossref.get(doi.toLowerCase());
      if (!work) {
        send(res, 404, 'Resource not found.', 'text/plain');
        return 404;
      }
      send(
        res,
        200,
        JSON.stringify({ status: 'ok', 'message-type': 'work', 'message-version': '1.0.0', message: work }),
        'application/json',
      );
      return 200;
    },
    datacite: (_req, res, url) => {
      const doi = decodeURIComponent(url.pathname.replace(/^\/dois\//, ''));
      const attributes = datacite.get(doi.toLowerCase());
      if (!attributes) {
        send(
          res,
          404,
          JSON.stringify({
            errors: [{ status: '404', title: "The resource you are looking for doesn't exist." }],
          }),
          'application/vnd.api+json',
        );
        return 404;
      }
      send(
        res,
        200,
        JSON.stringify({ data: { id: doi.toLowerCase(), type: 'dois', attributes } }),
        'application/vnd.api+json',
      );
      return 200;
    },
    arxiv: (_req, res, url) => {
      const ids = (url.searchParams.get('id_list') ?? '').split(',').filter(Boolean);
      const found = ids.flatMap((id) => {
        const exact = arxiv.find((e) => e.id.toLowerCase() === id.toLowerCase());
        if (exact) return [exact];
        if (/v\d+$/i.test(id)) return [];
        const latest = arxiv
          .filter((e) => base(e.id) === base(id))
          .sort((a, b) => b.id.localeCompare(a.id))[0];
        return latest ? [latest] : [];
      });
      send(res, 200, feed(found, urls.arxiv), 'application/atom+xml; charset=utf-8');
      return 200;
    },
  };

  const idsOf = (service: Service, url: URL): string[] => {
    if (service === 'arxiv') return (url.searchParams.get('id_list') ?? '').split(',').filter(Boolean);
    const prefix = service === 'crossref' ? /^\/works\// : /^\/dois\//;
    return [decodeURIComponent(url.pathname.replace(prefix, ''))];
  };

  for (const service of ['crossref', 'datacite', 'arxiv'] as const) {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const ids = idsOf(service, url);
      const entry: ResolverLogEntry = {
        service,
        method: req.method ?? 'GET',
        path: url.pathname,
        ids,
        status: 0,
      };
      log.push(entry);
      const expected =
        service === 'crossref' ? /^\/works\/.+/ : service === 'datacite' ? /^\/dois\/.+/ : /^\/query$/;
      if (req.method !== 'GET' || !expected.test(url.pathname)) {
        send(res, 404, 'Not found', 'text/plain');
        entry.status = 404;
        return;
      }
      const fault = faultFor(service, ids);
      if (fault) {
        send(
          res,
          fault.status,
          fault.body ?? `Injected ${fault.status}`,
          'text/plain',
          fault.retryAfter !== undefined ? { 'Retry-After': String(fault.retryAfter) } : {},
        );
        entry.status = fault.status;
        return;
      }
      entry.status = handlers[service](req, res, url);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    servers.push(server);
    const port = (server.address() as AddressInfo).port;
    urls[service] = service === 'arxiv' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}`;
  }

  return {
    urls,
    env: () => ({
      ZOTEUS_CROSSREF_URL: urls.crossref,
      ZOTEUS_DATACITE_URL: urls.datacite,
      ZOTEUS_ARXIV_URL: urls.arxiv,
    }),
    log,
    clearLog: () => {
      log.length = 0;
    },
    addCrossref: (work) => {
      crossref.set(work.DOI.toLowerCase(), work);
    },
    addDataCite: (doi, attributes) => {
      datacite.set(doi.toLowerCase(), { doi: doi.toLowerCase(), ...attributes });
    },
    addArxiv: (entry) => {
      arxiv.push(entry);
    },
    fail: (service, id, o) => {
      faults.set(`${service}\u0000${id.toLowerCase()}`, {
        status: o.status,
        remaining: o.times ?? Number.POSITIVE_INFINITY,
        ...(o.retryAfter !== undefined ? { retryAfter: o.retryAfter } : {}),
        ...(o.body !== undefined ? { body: o.body } : {}),
      });
    },
    clearFaults: () => faults.clear(),
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}

/** A Crossref work as `/works/{doi}` serves it (the fields Zoteus reads), for `addCrossref`. */
export function crossrefWork(o: {
  doi: string;
  title: string;
  type?: string;
  authors?: Array<{ given?: string; family?: string; name?: string }>;
  container?: string;
  year?: number;
  month?: number;
  volume?: string;
  issue?: string;
  page?: string;
  publisher?: string;
  abstract?: string;
  ISSN?: string[];
  ISBN?: string[];
  subtitle?: string;
}): Record<string, unknown> & { DOI: string } {
  return {
    DOI: o.doi,
    type: o.type ?? 'journal-article',
    title: [o.title],
    ...(o.subtitle ? { subtitle: [o.subtitle] } : {}),
    author: (o.authors ?? [{ given: 'Ada', family: 'Lovelace' }]).map((a, i) => ({
      ...a,
      sequence: i === 0 ? 'first' : 'additional',
      affiliation: [],
    })),
    'container-title': o.container ? [o.container] : [],
    publisher: o.publisher ?? 'Test Publisher',
    issued: { 'date-parts': [[o.year ?? 2020, ...(o.month ? [o.month] : [])]] },
    ...(o.volume ? { volume: o.volume } : {}),
    ...(o.issue ? { issue: o.issue } : {}),
    ...(o.page ? { page: o.page } : {}),
    ...(o.abstract ? { abstract: o.abstract } : {}),
    ...(o.ISSN ? { ISSN: o.ISSN } : {}),
    ...(o.ISBN ? { ISBN: o.ISBN } : {}),
    URL: `https://doi.org/${o.doi}`,
  };
}
