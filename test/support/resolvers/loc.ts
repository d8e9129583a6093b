/**
 * A local fake of the Library of Congress catalogue's SRU server (`GET /lcdb?version=1.1&
 * operation=searchRetrieve&recordSchema=mods&query=bath.isbn=a or bath.isbn=b`), a `node:http`
 * server on 127.0.0.1: it answers a `searchRetrieveResponse` with the MODS records a test
 * registered whose ISBNs the query names, logs every request and can be told to fail. Point
 * Zoteus at it with ZOTEUS_LOC_URL=`url`. Test code only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toIsbn13 } from './openlibrary.js';

export interface LocRecord {
  title: string;
  nonSort?: string;
  subTitle?: string;
  /** As the catalogue writes them: "Twain, Mark, 1835-1910". */
  names?: Array<{ name: string; role?: string; corporate?: boolean }>;
  place?: string;
  publisher?: string;
  dateIssued?: string;
  extent?: string;
  /** As the catalogue writes them: "0451526538 (pbk.)". */
  isbns: string[];
  lccn?: string;
}

export interface LocLogEntry {
  path: string;
  /** The ISBNs the CQL query names. */
  isbns: string[];
  query: Record<string, string>;
  status: number;
}

export interface FakeLoc {
  url: string;
  log: LocLogEntry[];
  add(record: LocRecord): void;
  fail(o: { status: number; times?: number; body?: string; type?: string }): void;
  close(): Promise<void>;
}

const x = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function mods(r: LocRecord): string {
  const names = (r.names ?? [])
    .map(
      (n) =>
        `<name type="${n.corporate ? 'corporate' : 'personal'}"><namePart>${x(n.name)}</namePart>${
          n.corporate ? '' : '<namePart type="date">1900-2000</namePart>'
        }<role><roleTerm authority="marcrelator" type="text">${x(n.role ?? 'author')}</roleTerm></role></name>`,
    )
    .join('');
  return `<mods xmlns="http://www.loc.gov/mods/v3" version="3.8">
<titleInfo>${r.nonSort ? `<nonSort xml:space="preserve">${x(r.nonSort)} </nonSort>` : ''}<title>${x(r.title)}</title>${r.subTitle ? `<subTitle>${x(r.subTitle)}</subTitle>` : ''}</titleInfo>
<titleInfo type="alternative"><title>Not this one</title></titleInfo>
${names}
<typeOfResource>text</typeOfResource>
<originInfo><place><placeTerm type="code" authority="marccountry">nyu</placeTerm></place>${r.place ? `<place><placeTerm type="text">${x(r.place)} :</placeTerm></place>` : ''}${r.publisher ? `<publisher>${x(r.publisher)},</publisher>` : ''}${r.dateIssued ? `<dateIssued>${x(r.dateIssued)}</dateIssued><dateIssued encoding="marc">${x(r.dateIssued.replace(/\D/g, '').slice(0, 4))}</dateIssued>` : ''}<issuance>monographic</issuance></originInfo>
${r.extent ? `<physicalDescription><extent>${x(r.extent)}</extent></physicalDescription>` : ''}
${r.isbns.map((i) => `<identifier type="isbn">${x(i)}</identifier>`).join('')}
${r.lccn ? `<identifier type="lccn">${x(r.lccn)}</identifier>` : ''}
</mods>`;
}

export async function startLoc(): Promise<FakeLoc> {
  const records: LocRecord[] = [];
  const log: LocLogEntry[] = [];
  let fault: { status: number; remaining: number; body?: string; type?: string } | undefined;
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query = u.searchParams.get('query') ?? '';
    const isbns = [...query.matchAll(/bath\.isbn\s*=\s*"?([\dXx-]+)"?/gi)].map((m) => m[1] as string);
    const entry: LocLogEntry = {
      path: u.pathname,
      isbns,
      query: Object.fromEntries(u.searchParams),
      status: 0,
    };
    log.push(entry);
    const send = (status: number, body: string, type = 'text/xml;charset=UTF-8') => {
      entry.status = status;
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    if (
      req.method !== 'GET' ||
      u.pathname !== '/lcdb' ||
      u.searchParams.get('operation') !== 'searchRetrieve'
    )
      return send(404, 'Not found', 'text/plain');
    if (fault && fault.remaining > 0) {
      fault.remaining--;
      return send(fault.status, fault.body ?? `Injected ${fault.status}`, fault.type ?? 'text/plain');
    }
    const wanted = new Set(isbns.map(toIsbn13));
    const found = records.filter((r) =>
      r.isbns.some((i) => wanted.has(toIsbn13(/[\dXx]{10,13}/.exec(i.replace(/-/g, ''))?.[0] ?? ''))),
    );
    send(
      200,
      `<?xml version="1.0" encoding="UTF-8"?>
<zs:searchRetrieveResponse xmlns:zs="http://www.loc.gov/zing/srw/"><zs:version>1.1</zs:version><zs:numberOfRecords>${found.length}</zs:numberOfRecords><zs:records>${found
        .map(
          (r, i) =>
            `<zs:record><zs:recordSchema>mods</zs:recordSchema><zs:recordPacking>xml</zs:recordPacking><zs:recordData>${mods(r)}</zs:recordData><zs:recordPosition>${i + 1}</zs:recordPosition></zs:record>`,
        )
        .join('')}</zs:records></zs:searchRetrieveResponse>`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/lcdb`;
  return {
    url,
    log,
    add: (r) => void records.push(r),
    fail: (o) => {
      fault = {
        status: o.status,
        remaining: o.times ?? Number.POSITIVE_INFINITY,
        ...(o.body !== undefined ? { body: o.body } : {}),
        ...(o.type !== undefined ? { type: o.type } : {}),
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
