/**
 * RIS records: the exact bytes of one record (tags in the translator's order, CRLF, ER), the
 * TY of each item type, and a round trip through an independent parser (@citation-js/plugin-ris)
 * with the same titles, authors, years and DOIs.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { RIS_RECORD_SEPARATOR, risRecord } from '../../../src/core/exports/ris.js';
import { CASES } from './fixtures.js';
import { item, org, person, schema } from './helpers.js';

const require = createRequire(import.meta.url);
require('@citation-js/plugin-ris');
const { Cite } = require('@citation-js/core') as {
  Cite: new (input: string) => { data: Array<Record<string, unknown>> };
};

const options = { schema };

/**
 * The names the parser read as the main creators, as "Family, Given" or the name itself. Per the
 * RIS specification a newspaper article's AU are its reporters (the parser keeps them as text).
 */
function namesOf(csl: Record<string, unknown>): string[] {
  if (Array.isArray(csl.reporter)) return csl.reporter as string[];
  return ((csl.author ?? []) as Array<{ family?: string; given?: string; literal?: string }>).map(
    (n) => n.literal ?? (n.given ? `${n.family}, ${n.given}` : (n.family as string)),
  );
}

describe('one record', () => {
  it('the exact bytes: TY first, tags in order, one line per creator, tag, note and PDF, CRLF, ER last', () => {
    const article = CASES.find((c) => c.name === 'journal article')?.item;
    if (!article) throw new Error('fixture');
    const ris = risRecord(article, options, {
      notes: ['<p>Checked the tide\ngauge data</p>'],
      attachments: [
        {
          title: 'Full Text PDF',
          path: '/home/me/Zotero/storage/ABCD2345/church.pdf',
          contentType: 'application/pdf',
        },
        { title: 'Snapshot', path: '/home/me/Zotero/storage/EFGH2345/page.html', contentType: 'text/html' },
      ],
    });
    expect(ris).toBe(
      [
        'TY  - JOUR',
        'TI  - Sea-level rise from the late 19th to the early 21st century',
        'AU  - Church, John A.',
        'AU  - White, Neil J.',
        'T2  - Surveys in Geophysics',
        'DA  - 2011/09//',
        'PY  - 2011',
        'DO  - 10.1007/s10712-011-9119-1',
        'VL  - 32',
        'IS  - 4',
        'SP  - 585',
        'EP  - 602',
        'J2  - Surv Geophys',
        'LA  - en',
        'SN  - 0169-3298',
        'UR  - https://doi.org/10.1007/s10712-011-9119-1',
        'Y2  - 2024/02/03/',
        'L1  - /home/me/Zotero/storage/ABCD2345/church.pdf',
        'N1  - <p>Checked the tide',
        'gauge data</p>',
        'KW  - sea level',
        'KW  - tide gauges',
        'ER  - ',
        '',
      ].join('\r\n'),
    );
  });

  it('roles and fields by item type: a chapter, a thesis, a report', () => {
    const chapter = risRecord(CASES.find((c) => c.name === 'book section')?.item ?? item('note'), options);
    expect(chapter).toContain(
      'AU  - Levermann, Anders\r\nT2  - The Cryosphere in a Changing Climate\r\nA2  - Bamber, Jonathan\r\n',
    );
    expect(chapter).toContain('PB  - Cambridge University Press\r\n');
    const thesis = risRecord(CASES.find((c) => c.name === 'PhD thesis')?.item ?? item('note'), options);
    expect(thesis).toContain('SP  - 212\r\n');
    expect(thesis).toContain('M3  - PhD Thesis\r\nPB  - ETH Zürich\r\n');
    const report = risRecord(CASES.find((c) => c.name === 'report')?.item ?? item('note'), options);
    expect(report).toContain('AU  - IPCC\r\n');
    expect(report).toContain('SN  - AR6 WG1\r\n');
  });

  it('a DOI only in Extra is still the DO', () => {
    expect(risRecord(item('manuscript', { title: 'T', extra: 'DOI: 10.5555/draft.1' }), options)).toContain(
      'DO  - 10.5555/draft.1\r\n',
    );
  });

  it('a date without a year is written as it is; a single page has no EP', () => {
    const ris = risRecord(item('journalArticle', { title: 'T', date: 'forthcoming', pages: '17' }), options);
    expect(ris).toContain('DA  - forthcoming\r\nPY  - forthcoming\r\n');
    expect(ris).toContain('SP  - 17\r\n');
    expect(ris).not.toContain('EP  - ');
  });

  it('notes, attachments and annotations have no record', () => {
    expect(() => risRecord(item('note'), options)).toThrow(/note item/);
  });
});

describe('TY per item type', () => {
  it.each(CASES.map((c) => [c.name, c.risType, c] as const))('%s → %s', (_name, ty, c) => {
    expect(risRecord(c.item, options).startsWith(`TY  - ${ty}\r\n`)).toBe(true);
  });
});

describe('round trip through an independent parser', () => {
  const file = CASES.map((c) => risRecord(c.item, options)).join(RIS_RECORD_SEPARATOR);
  const parsed = new Cite(file).data;

  it('one item per record', () => {
    expect(parsed).toHaveLength(CASES.length);
  });

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s: title, authors, year, DOI', (_name, i) => {
    const source = CASES[i]?.item.data;
    const got = parsed[i] as Record<string, unknown>;
    if (!source) throw new Error('fixture');
    expect(got.title).toBe(source.title);
    const mainRole = i === CASES.findIndex((c) => c.name === 'software') ? 'programmer' : 'author';
    const expectedNames = (source.creators ?? [])
      .filter((c) => c.creatorType === mainRole)
      .map((c) => ('name' in c ? c.name : `${c.lastName}, ${c.firstName}`));
    expect(namesOf(got)).toEqual(expectedNames);
    const year = /\d{4}/.exec(String(source.date))?.[0];
    expect((got.issued as { 'date-parts': number[][] })['date-parts'][0]?.[0]).toBe(Number(year));
    const doi =
      typeof source.DOI === 'string' ? source.DOI : /^DOI: (.+)$/m.exec(String(source.extra ?? ''))?.[1];
    expect(got.DOI).toBe(doi);
  });

  it('a name with a comma in it and a single-field name come back apart', () => {
    const ris = risRecord(
      item('book', {
        title: 'T',
        creators: [person('Martin Luther', 'King'), org('Acme Corp')],
        date: '1999',
      }),
      options,
    );
    expect(new Cite(ris).data[0]?.author).toEqual([
      { family: 'King', given: 'Martin Luther' },
      { literal: 'Acme Corp' },
    ]);
  });
});
