/**
 * A local fake of Open Library's books API (`GET /api/books?bibkeys=ISBN:a,ISBN:b&format=json&
 * jscmd=data`), a `node:http` server on 127.0.0.1: it answers the records a test registered,
 * keyed by the bibkey as asked (an ISBN-10 finds a book registered by its ISBN-13 and the other
 * way round, as Open Library does), leaves out the ones it does not know, logs every request
 * and can be told to fail. Point Zoteus at it with ZOTEUS_OPENLIBRARY_URL=`url`. Test code only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OpenLibraryRecord {
  title: string;
  subtitle?: string;
  authors?: string[];
  publishers?: string[];
  publish_places?: string[];
  publish_date?: string;
  number_of_pages?: number;
  isbn_10?: string[];
  isbn_13?: string[];
  /** e.g. /books/OL1017798M */
  key?: string;
}

export interface OpenLibraryLogEntry {
  path: string;
  /** The ISBNs of `bibkeys`, as asked. */
  isbns: string[];
  query: Record<string, string>;
  status: number;
}

export interface FakeOpenLibrary {
  url: string;
  log: OpenLibraryLogEntry[];
  add(record: OpenLibraryRecord): void;
  /** The next `times` (default: always) requests answer `status` with `body`. */
  fail(o: { status: number; times?: number; body?: string; type?: string }): void;
  clearFaults(): void;
  close(): Promise<void>;
}

/** ISBN-13 of a compact ISBN-10 or -13 (no check of the digits: the fake trusts its tests). */
export function toIsbn13(isbn: string): string {
  const compact = isbn.replace(/[^\dXx]/g, '').toUpperCase();
  if (compact.length === 13) return compact;
  const first12 = `978${compact.slice(0, 9)}`;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(first12[i]);
  return first12 + String((10 - (sum % 10)) % 10);
}

export async function startOpenLibrary(): Promise<FakeOpenLibrary> {
  const books: OpenLibraryRecord[] = [];
  const log: OpenLibraryLogEntry[] = [];
  let fault: { status: number; remaining: number; body?: string; type?: string } | undefined;
  let url = '';
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const bibkeys = (u.searchParams.get('bibkeys') ?? '').split(',').filter(Boolean);
    const entry: OpenLibraryLogEntry = {
      path: u.pathname,
      isbns: bibkeys.map((k) => k.replace(/^ISBN:/, '')),
      query: Object.fromEntries(u.searchParams),
      status: 0,
    };
    log.push(entry);
    const send = (status: number, body: string, type = 'application/json') => {
      entry.status = status;
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    if (req.method !== 'GET' || u.pathname !== '/api/books') return send(404, '{"error": "notfound"}');
    if (fault && fault.remaining > 0) {
      fault.remaining--;
      return send(fault.status, fault.body ?? `Injected ${fault.status}`, fault.type ?? 'text/plain');
    }
    const out: Record<string, unknown> = {};
    for (const key of bibkeys) {
      const wanted = toIsbn13(key.replace(/^ISBN:/, ''));
      const book = books.find((b) =>
        [...(b.isbn_13 ?? []), ...(b.isbn_10 ?? [])].map(toIsbn13).includes(wanted),
      );
      if (!book) continue;
      const olid = book.key ?? `/books/OL${books.indexOf(book) + 1}M`;
      out[key] = {
        url: `https://openlibrary.org${olid}/${encodeURIComponent(book.title.replace(/\s+/g, '_'))}`,
        key: olid,
        title: book.title,
        ...(book.subtitle ? { subtitle: book.subtitle } : {}),
        authors: (book.authors ?? []).map((name, i) => ({
          url: `https://openlibrary.org/authors/OL${i}A`,
          name,
        })),
        ...(book.number_of_pages !== undefined ? { number_of_pages: book.number_of_pages } : {}),
        identifiers: {
          ...(book.isbn_10 ? { isbn_10: book.isbn_10 } : {}),
          ...(book.isbn_13 ? { isbn_13: book.isbn_13 } : {}),
          openlibrary: [olid.replace('/books/', '')],
        },
        publishers: (book.publishers ?? []).map((name) => ({ name })),
        publish_places: (book.publish_places ?? []).map((name) => ({ name })),
        ...(book.publish_date ? { publish_date: book.publish_date } : {}),
      };
    }
    send(200, JSON.stringify(out));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    log,
    add: (record) => void books.push(record),
    fail: (o) => {
      fault = {
        status: o.status,
        remaining: o.times ?? Number.POSITIVE_INFINITY,
        ...(o.body !== undefined ? { body: o.body } : {}),
        ...(o.type !== undefined ? { type: o.type } : {}),
      };
    },
    clearFaults: () => {
      fault = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
