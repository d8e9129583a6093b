/**
 * Loopback fakes of the metadata services the checks use, each a `node:http` server on
 * 127.0.0.1 answering the way the real one does (metadata-services.md):
 *
 * - Crossref: `GET /works?filter=doi:A,doi:B,…&rows=&select=&mailto=` (a work list; `select`
 *   honoured), `GET /works?query.bibliographic=…&rows=` (search.ts) and `GET /works/{doi}`;
 * - OpenAlex: `GET /works/doi:{doi}?api_key=…&select=…` (401 without a key, 404 unknown);
 * - arXiv: `GET /query?id_list=…` (an Atom feed);
 * - Semantic Scholar: `POST /paper/batch?fields=…` with `{"ids": […]}` (input order, null unknown).
 *
 * Every request is logged (service, method, path, the ids it asked for, status, the query),
 * and the most requests in flight at once is kept per service. `latencyMs` delays every answer;
 * `fault` injects, for requests asking for given ids (or any), a status (429 with Retry-After),
 * an HTML page, a cut-off JSON body or a reset connection, for a number of times or always.
 * Point Zoteus at them with `fakes.env()`. Test code only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bibliographicSearch } from './search.js';

export type MetaService = 'crossref' | 'openalex' | 'arxiv' | 'semantic-scholar';

export interface MetaLogEntry {
  service: MetaService;
  method: string;
  path: string;
  /** The full query string, as received. */
  query: string;
  /** The ids the request asked for (DOIs lower-cased, arXiv ids, S2 ids). */
  ids: string[];
  status: number;
  /** Ms since the fakes started, when the request arrived. */
  at: number;
}

export interface FaultSpec {
  /** Only requests asking for one of these ids (default: every request). */
  ids?: string[];
  /** How many matching requests it hits (default: every one). */
  times?: number;
  kind: 'status' | 'html' | 'truncated' | 'reset';
  status?: number;
  retryAfter?: number;
}

interface Fault extends FaultSpec {
  remaining: number;
  idSet?: Set<string>;
}

export interface ArxivFake {
  id: string;
  title: string;
  published?: string;
  doi?: string;
  journalRef?: string;
}

export interface MetadataFakes {
  urls: Record<MetaService, string>;
  env(): Record<string, string>;
  log: MetaLogEntry[];
  clearLog(): void;
  count(service: MetaService): number;
  /** The most requests of a service that were in flight at once. */
  maxInFlight(service: MetaService): number;
  /** Delay of every answer, in ms. */
  latencyMs: number;
  addCrossref(work: Record<string, unknown> & { DOI: string }): void;
  addOpenAlex(work: Record<string, unknown> & { doi: string }): void;
  addArxiv(entry: ArxivFake): void;
  addSemanticScholar(id: string, paper: Record<string, unknown>): void;
  fault(service: MetaService, spec: FaultSpec): void;
  clearFaults(): void;
  close(): Promise<void>;
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  type: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'Content-Type': type, ...headers });
  res.end(body);
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => resolve(text));
  });
}

function idsOf(service: MetaService, url: URL, body: string): string[] {
  switch (service) {
    case 'crossref': {
      const filter = url.searchParams.get('filter');
      if (filter !== null)
        return filter
          .split(',')
          .filter((f) => f.startsWith('doi:') || f.startsWith('relation.object:'))
          .map((f) => f.slice(f.indexOf(':') + 1).toLowerCase());
      return [decodeURIComponent(url.pathname.replace(/^\/works\//, '')).toLowerCase()];
    }
    case 'openalex':
      return [decodeURIComponent(url.pathname.replace(/^\/works\/doi:/, '')).toLowerCase()];
    case 'arxiv':
      return (url.searchParams.get('id_list') ?? '').split(',').filter(Boolean);
    case 'semantic-scholar':
      try {
        const ids = (JSON.parse(body) as { ids?: unknown }).ids;
        return Array.isArray(ids) ? ids.map(String) : [];
      } catch {
        return [];
      }
  }
}

function pick(work: Record<string, unknown>, select: string | null): Record<string, unknown> {
  if (!select) return work;
  const fields = new Set(select.split(','));
  return Object.fromEntries(Object.entries(work).filter(([k]) => fields.has(k)));
}

export async function startMetadataFakes(options: { latencyMs?: number } = {}): Promise<MetadataFakes> {
  const crossref = new Map<string, Record<string, unknown>>();
  const openalex = new Map<string, Record<string, unknown>>();
  const arxiv: ArxivFake[] = [];
  const s2 = new Map<string, Record<string, unknown>>();
  const faults: Array<Fault & { service: MetaService }> = [];
  const log: MetaLogEntry[] = [];
  const inFlight: Record<MetaService, number> = { crossref: 0, openalex: 0, arxiv: 0, 'semantic-scholar': 0 };
  const peak: Record<MetaService, number> = { crossref: 0, openalex: 0, arxiv: 0, 'semantic-scholar': 0 };
  const servers: Server[] = [];
  const urls = {} as Record<MetaService, string>;
  const started = performance.now();
  const fakes = { latencyMs: options.latencyMs ?? 0 };

  const faultFor = (service: MetaService, ids: string[]): Fault | undefined => {
    for (const f of faults) {
      if (f.service !== service || f.remaining <= 0) continue;
      if (f.idSet && !ids.some((id) => f.idSet?.has(id.toLowerCase()))) continue;
      f.remaining -= 1;
      return f;
    }
    return undefined;
  };

  const answer = (
    service: MetaService,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
  ): number => {
    switch (service) {
      case 'crossref': {
        if (req.method !== 'GET') break;
        const query = url.searchParams.get('query.bibliographic');
        if (url.pathname === '/works' && query !== null) {
          const rows = Number(url.searchParams.get('rows') ?? '20');
          const items = bibliographicSearch(crossref.values(), query, rows).map((w) =>
            pick(w, url.searchParams.get('select')),
          );
          send(
            res,
            200,
            JSON.stringify({
              status: 'ok',
              'message-type': 'work-list',
              message: { 'total-results': items.length, items, 'items-per-page': rows, query: {} },
            }),
            'application/json',
          );
          return 200;
        }
        if (url.pathname === '/works' && url.searchParams.get('filter') !== null) {
          const ids = idsOf('crossref', url, body);
          const rows = Number(url.searchParams.get('rows') ?? '20');
          // `relation.object:ID` (repeated: OR) with `relation.type:T`: works naming ID in a relation.
          const filters = (url.searchParams.get('filter') ?? '').split(',');
          const objects = new Set(
            filters.filter((f) => f.startsWith('relation.object:')).map((f) => f.slice(16).toLowerCase()),
          );
          const relationType = filters.find((f) => f.startsWith('relation.type:'))?.slice(14);
          const related = [...crossref.values()].filter((w) =>
            Object.entries((w.relation ?? {}) as Record<string, Array<{ id: string }>>).some(
              ([type, list]) =>
                (relationType === undefined || type === relationType) &&
                list.some((r) => objects.has(r.id.toLowerCase())),
            ),
          );
          const items = (objects.size ? related : ids.map((d) => crossref.get(d)))
            .filter((w): w is Record<string, unknown> => w !== undefined)
            .slice(0, rows)
            .map((w) => pick(w, url.searchParams.get('select')));
          send(
            res,
            200,
            JSON.stringify({
              status: 'ok',
              'message-type': 'work-list',
              'message-version': '1.0.0',
              message: { 'total-results': items.length, items, 'items-per-page': rows, query: {} },
            }),
            'application/json',
          );
          return 200;
        }
        const m = /^\/works\/(.+)$/.exec(url.pathname);
        if (m?.[1]) {
          const work = crossref.get(decodeURIComponent(m[1]).toLowerCase());
          if (!work) {
            send(res, 404, 'Resource not found.', 'text/plain');
            return 404;
          }
          send(
            res,
            200,
            JSON.stringify({ status: 'ok', 'message-type': 'work', message: work }),
            'application/json',
          );
          return 200;
        }
        break;
      }
      case 'openalex': {
        const m = /^\/works\/doi:(.+)$/.exec(url.pathname);
        if (req.method !== 'GET' || !m?.[1]) break;
        if (!url.searchParams.get('api_key')) {
          send(res, 401, JSON.stringify({ error: 'API key required' }), 'application/json');
          return 401;
        }
        const work = openalex.get(decodeURIComponent(m[1]).toLowerCase());
        if (!work) {
          send(res, 404, JSON.stringify({ error: 'Not Found' }), 'application/json');
          return 404;
        }
        send(res, 200, JSON.stringify(pick(work, url.searchParams.get('select'))), 'application/json');
        return 200;
      }
      case 'arxiv': {
        if (req.method !== 'GET' || url.pathname !== '/query') break;
        const ids = idsOf('arxiv', url, body);
        const found = ids.flatMap((id) => {
          const base = id.replace(/v\d+$/i, '').toLowerCase();
          return arxiv.filter((e) => e.id.replace(/v\d+$/i, '').toLowerCase() === base).slice(-1);
        });
        const entries = found
          .map(
            (e) => `  <entry>
    <id>http://arxiv.org/abs/${e.id}</id>
    <published>${e.published ?? '2024-01-01T00:00:00Z'}</published>
    <updated>${e.published ?? '2024-01-01T00:00:00Z'}</updated>
    <title>${xml(e.title)}</title>
${e.doi ? `    <arxiv:doi xmlns:arxiv="http://arxiv.org/schemas/atom">${xml(e.doi)}</arxiv:doi>\n` : ''}${e.journalRef ? `    <arxiv:journal_ref xmlns:arxiv="http://arxiv.org/schemas/atom">${xml(e.journalRef)}</arxiv:journal_ref>\n` : ''}  </entry>`,
          )
          .join('\n');
        send(
          res,
          200,
          `<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n  <title>arXiv Query</title>\n${entries}\n</feed>\n`,
          'application/atom+xml; charset=utf-8',
        );
        return 200;
      }
      case 'semantic-scholar': {
        if (req.method !== 'POST' || url.pathname !== '/paper/batch') break;
        const ids = idsOf('semantic-scholar', url, body);
        send(res, 200, JSON.stringify(ids.map((id) => s2.get(id.toLowerCase()) ?? null)), 'application/json');
        return 200;
      }
    }
    send(res, 404, 'Not found', 'text/plain');
    return 404;
  };

  for (const service of ['crossref', 'openalex', 'arxiv', 'semantic-scholar'] as const) {
    const server = createServer((req, res) => {
      void (async () => {
        const body = await readBody(req);
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const ids = idsOf(service, url, body);
        const entry: MetaLogEntry = {
          service,
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.search,
          ids,
          status: 0,
          at: Math.round(performance.now() - started),
        };
        log.push(entry);
        inFlight[service] += 1;
        peak[service] = Math.max(peak[service], inFlight[service]);
        try {
          if (fakes.latencyMs > 0) await new Promise((r) => setTimeout(r, fakes.latencyMs));
          const fault = faultFor(service, ids);
          if (fault?.kind === 'reset') {
            entry.status = -1;
            req.socket.destroy();
            return;
          }
          if (fault?.kind === 'html') {
            send(res, 200, '<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>', 'text/html');
            entry.status = 200;
            return;
          }
          if (fault?.kind === 'truncated') {
            send(
              res,
              200,
              '{"status":"ok","message-type":"work-list","message":{"items":[{"DOI":"10.',
              'application/json',
            );
            entry.status = 200;
            return;
          }
          if (fault?.kind === 'status') {
            const status = fault.status ?? 500;
            send(
              res,
              status,
              status === 429 ? 'Too Many Requests' : `Injected ${status}`,
              'text/plain',
              fault.retryAfter !== undefined ? { 'Retry-After': String(fault.retryAfter) } : {},
            );
            entry.status = status;
            return;
          }
          entry.status = answer(service, req, res, url, body);
        } finally {
          inFlight[service] -= 1;
        }
      })();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    servers.push(server);
    urls[service] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  return Object.assign(fakes, {
    urls,
    env: () => ({
      ZOTEUS_CROSSREF_URL: urls.crossref,
      ZOTEUS_OPENALEX_URL: urls.openalex,
      ZOTEUS_ARXIV_URL: urls.arxiv,
      ZOTEUS_SEMANTIC_SCHOLAR_URL: urls['semantic-scholar'],
    }),
    log,
    clearLog: () => {
      log.length = 0;
      for (const s of Object.keys(peak) as MetaService[]) peak[s] = 0;
    },
    count: (service: MetaService) => log.filter((e) => e.service === service).length,
    maxInFlight: (service: MetaService) => peak[service],
    addCrossref: (work: Record<string, unknown> & { DOI: string }) => {
      crossref.set(work.DOI.toLowerCase(), work);
    },
    addOpenAlex: (work: Record<string, unknown> & { doi: string }) => {
      openalex.set(work.doi.replace(/^https:\/\/doi\.org\//, '').toLowerCase(), {
        ...work,
        doi: `https://doi.org/${work.doi.replace(/^https:\/\/doi\.org\//, '')}`,
      });
    },
    addArxiv: (entry: ArxivFake) => {
      arxiv.push(entry);
    },
    addSemanticScholar: (id: string, paper: Record<string, unknown>) => {
      s2.set(id.toLowerCase(), paper);
    },
    fault: (service: MetaService, spec: FaultSpec) => {
      faults.push({
        ...spec,
        service,
        remaining: spec.times ?? Number.POSITIVE_INFINITY,
        ...(spec.ids ? { idSet: new Set(spec.ids.map((i) => i.toLowerCase())) } : {}),
      });
    },
    clearFaults: () => {
      faults.length = 0;
    },
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
  });
}

/** A Crossref work as the list serves it, with its update notices (`updated-by`). */
export function crossrefWork(o: {
  doi: string;
  title: string;
  type?: string;
  updatedBy?: Array<{
    DOI?: string;
    type: string;
    label?: string;
    date?: [number, number?, number?];
    source?: 'publisher' | 'retraction-watch';
    recordId?: number;
  }>;
  relation?: Record<string, Array<{ 'id-type': string; id: string; 'asserted-by': string }>>;
}): Record<string, unknown> & { DOI: string } {
  return {
    DOI: o.doi,
    type: o.type ?? 'journal-article',
    title: [o.title],
    'container-title': ['Journal of Tests'],
    publisher: 'Test Publisher',
    issued: { 'date-parts': [[2020]] },
    ...(o.relation ? { relation: o.relation } : {}),
    ...(o.updatedBy
      ? {
          'updated-by': o.updatedBy.map((u) => ({
            ...(u.DOI ? { DOI: u.DOI } : {}),
            type: u.type,
            label: u.label ?? u.type,
            source: u.source ?? 'publisher',
            ...(u.recordId !== undefined ? { 'record-id': u.recordId } : {}),
            updated: { 'date-parts': [(u.date ?? [2023, 5, 2]).filter((n) => n !== undefined)] },
          })),
        }
      : {}),
    URL: `https://doi.org/${o.doi}`,
  };
}

/** An OpenAlex work as `/works/doi:…` serves it. */
export function openAlexWork(o: { doi: string; title: string; isRetracted?: boolean }): Record<
  string,
  unknown
> & {
  doi: string;
} {
  return {
    id: `https://openalex.org/W${Math.abs(hash(o.doi))}`,
    doi: o.doi,
    title: o.title,
    display_name: o.title,
    type: 'article',
    is_retracted: o.isRetracted ?? false,
    publication_date: '2020-01-01',
    biblio: { volume: '1', issue: '1', first_page: '1', last_page: '10' },
    locations: [],
  };
}

function hash(text: string): number {
  let h = 0;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}
