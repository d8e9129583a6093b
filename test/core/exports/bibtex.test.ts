/**
 * BibTeX and BibLaTeX entries: a dozen item types exported and read back by an independent
 * parser (@retorquere/bibtex-parser, the parser of Better BibTeX's imports) with the fields
 * Zotero's translators give them; the exact bytes of one entry in each format; names, month
 * macros, pages, Extra, notes, files, e-prints, BibLaTeX's own types and dates.
 */
import { parse } from '@retorquere/bibtex-parser';
import { describe, expect, it } from 'vitest';
import {
  BIBTEX_ENTRY_SEPARATOR,
  bibtexEntry,
  bibtexEntryType,
  defaultCharset,
  isExportable,
  type BibtexOptions,
} from '../../../src/core/exports/bibtex.js';
import type { WebApiItem } from '../../../src/core/local/sqlite/types.js';
import { CASES } from './fixtures.js';
import { item, org, person, schema } from './helpers.js';

const BIBTEX: BibtexOptions = { biblatex: false, charset: 'ascii', schema };
const BIBLATEX: BibtexOptions = { biblatex: true, charset: 'utf8', schema };

/** The entries an independent parser reads, failing on any parse error; text NFC-normalised. */
function read(bib: string) {
  const lib = parse(bib, { english: false });
  expect(lib.errors).toEqual([]);
  return lib.entries.map((e) => ({
    type: e.type,
    key: e.key,
    fields: JSON.parse(JSON.stringify(e.fields).normalize('NFC')) as Record<string, unknown>,
  }));
}

const byName = (name: string): WebApiItem => {
  const found = CASES.find((c) => c.name === name);
  if (!found) throw new Error(name);
  return found.item;
};

describe('BibTeX round trip: what an independent parser reads back', () => {
  const expected: Record<string, Record<string, unknown>> = {
    'journal article': {
      title: 'Sea-level rise from the late 19th to the early 21st century',
      author: [
        { lastName: 'Church', firstName: 'John A.' },
        { lastName: 'White', firstName: 'Neil J.' },
      ],
      journal: 'Surveys in Geophysics',
      volume: '32',
      number: '4',
      pages: '585–602',
      month: '9',
      year: '2011',
      doi: '10.1007/s10712-011-9119-1',
      issn: '0169-3298',
      language: 'en',
      url: 'https://doi.org/10.1007/s10712-011-9119-1',
      urldate: '2024-02-03',
      pmid: '21234567',
      keywords: ['sea level', 'tide gauges'],
    },
    book: {
      title: 'Deep Learning',
      author: [
        { lastName: 'Goodfellow', firstName: 'Ian' },
        { lastName: 'Bengio', firstName: 'Yoshua' },
        { lastName: 'Courville', firstName: 'Aaron' },
      ],
      publisher: ['MIT Press'],
      address: 'Cambridge, MA',
      series: 'Adaptive Computation and Machine Learning',
      isbn: '978-0-262-03561-3',
      year: '2016',
    },
    'book section': {
      title: 'Ice sheets and sea level',
      author: [{ lastName: 'Levermann', firstName: 'Anders' }],
      editor: [{ lastName: 'Bamber', firstName: 'Jonathan' }],
      booktitle: 'The Cryosphere in a Changing Climate',
      publisher: ['Cambridge University Press'],
      address: 'Cambridge',
      pages: '120–145',
      isbn: '978-1-108-00000-1',
      month: '3',
      year: '2020',
    },
    'conference paper': {
      title: 'Attention is all you need',
      author: [
        { lastName: 'Vaswani', firstName: 'Ashish' },
        { lastName: 'Shazeer', firstName: 'Noam' },
        { lastName: 'Parmar', firstName: 'Niki' },
      ],
      booktitle: 'Advances in Neural Information Processing Systems 30',
      publisher: ['Curran Associates'],
      volume: '30',
      pages: '5998–6008',
      month: '12',
      year: '2017',
    },
    'PhD thesis': {
      title: 'Eisschilde und Meeresspiegel im Holozän',
      author: [{ lastName: 'Müller', firstName: 'Jörg' }],
      school: 'ETH Zürich',
      address: 'Zürich',
      type: 'PhD Thesis',
      language: 'de',
      year: '2019',
    },
    "master's thesis": {
      title: 'Glacier mass balance in Svalbard',
      author: [{ lastName: 'Ødegaard', firstName: 'Søren' }],
      school: 'University of Oslo',
      month: '6',
      year: '2018',
    },
    report: {
      title: 'Climate Change 2021: The Physical Science Basis',
      author: [{ name: 'IPCC' }],
      institution: ['Intergovernmental Panel on Climate Change'],
      address: 'Geneva',
      number: 'AR6 WG1',
      type: 'Assessment report',
      month: '8',
      year: '2021',
    },
    manuscript: {
      title: 'Notes on 50% of the #1 problems & their solutions',
      author: [{ lastName: 'Wróbel', firstName: 'Łukasz' }],
      year: '2022',
      doi: '10.5555/draft.1',
      note: 'Unpublished draft',
    },
    'web page': {
      title: 'Global temperature anomalies',
      author: [{ name: 'NASA Goddard Institute for Space Studies' }],
      journal: 'GISS Surface Temperature Analysis',
      url: 'https://data.giss.nasa.gov/gistemp/?a=1&b=2_3',
      urldate: '2024-05-06',
      month: '1',
      year: '2024',
    },
    'preprint on arXiv': {
      title: 'Scaling laws for neural language models',
      author: [
        { lastName: 'Kaplan', firstName: 'Jared' },
        { lastName: 'McCandlish', firstName: 'Sam' },
      ],
      publisher: ['arXiv'],
      doi: '10.48550/arXiv.2001.08361',
      month: '1',
      year: '2020',
    },
    software: {
      title: 'NumPy',
      author: [{ lastName: 'Harris', firstName: 'Charles R.' }],
      publisher: ['NumFOCUS'],
      url: 'https://numpy.org',
      year: '2023',
    },
    dataset: {
      title: 'ERA5 hourly data on single levels',
      author: [{ lastName: 'Hersbach', firstName: 'Hans' }],
      publisher: ['Copernicus Climate Change Service'],
      doi: '10.24381/cds.adbb2d47',
      year: '2018',
    },
    'newspaper article': {
      title: 'Greenland ice melt speeds up',
      author: [{ lastName: 'Doe', firstName: 'Jane' }, { name: 'Reuters and Associated Press' }],
      journal: 'The Guardian',
      pages: 'A1',
      month: '7',
      year: '2023',
      keywords: ['greenland'],
    },
  };

  it('covers a dozen item types', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(12);
    expect(Object.keys(expected).sort()).toEqual(CASES.map((c) => c.name).sort());
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s (ASCII)', (name, c) => {
    const bib = bibtexEntry(c.item, `key_${c.item.key}`, BIBTEX);
    // eslint-disable-next-line no-control-regex
    expect(bib).toMatch(/^[\u0000-\u007f]*$/);
    const [entry] = read(bib);
    expect(entry?.type).toBe(c.bibtexType);
    expect(entry?.key).toBe(`key_${c.item.key}`);
    expect(entry?.fields).toEqual(expected[name]);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s (UTF-8 reads back the same)', (name, c) => {
    const [entry] = read(bibtexEntry(c.item, 'k', { ...BIBTEX, charset: 'utf8' }));
    expect(entry?.fields).toEqual(expected[name]);
  });

  it('a whole file of them parses, every key once, in order', () => {
    const bib = CASES.map((c) => bibtexEntry(c.item, `key_${c.item.key}`, BIBTEX)).join(
      BIBTEX_ENTRY_SEPARATOR,
    );
    expect(read(bib).map((e) => e.key)).toEqual(CASES.map((c) => `key_${c.item.key}`));
  });
});

describe('BibLaTeX round trip', () => {
  const expected: Record<string, Record<string, unknown>> = {
    'journal article': {
      journaltitle: 'Surveys in Geophysics',
      shortjournal: 'Surv Geophys',
      date: '2011-09',
      langid: 'english',
      urldate: '2024-02-03',
      number: '4',
      pages: '585–602',
    },
    book: { location: ['Cambridge, MA'], pagetotal: '775', date: '2016', publisher: ['MIT Press'] },
    'book section': { booktitle: 'The Cryosphere in a Changing Climate', date: '2020-03' },
    'conference paper': { eventtitle: 'NeurIPS 2017', date: '2017-12-04' },
    'PhD thesis': { institution: ['ETH Zürich'], type: 'phdthesis', langid: 'german', date: '2019' },
    "master's thesis": { institution: ['University of Oslo'], type: "Master's thesis", date: '2018-06-30' },
    report: {
      institution: ['Intergovernmental Panel on Climate Change'],
      type: 'Assessment report',
      number: 'AR6 WG1',
    },
    manuscript: { doi: '10.5555/draft.1', note: 'Unpublished draft', date: '2022' },
    'web page': {
      titleaddon: 'GISS Surface Temperature Analysis',
      urldate: '2024-05-06',
      date: '2024-01-12',
    },
    'preprint on arXiv': { eprinttype: 'arxiv', eprint: '2001.08361', date: '2020-01-23' },
    software: { version: '1.26.0', date: '2023' },
    dataset: { doi: '10.24381/cds.adbb2d47', date: '2018' },
    'newspaper article': { journaltitle: 'The Guardian', date: '2023-07-05' },
  };

  it.each(CASES.map((c) => [c.name, c] as const))('%s', (name, c) => {
    const bib = bibtexEntry(c.item, 'k', BIBLATEX);
    const [entry] = read(bib);
    expect(entry?.type).toBe(c.biblatexType);
    expect(entry?.fields).toMatchObject(expected[name] as object);
    expect(entry?.fields.title).toBe(c.item.data.title);
    // BibLaTeX never has BibTeX's year/month/journal/address/school.
    for (const field of ['year', 'month', 'journal', 'address', 'school'])
      expect(entry?.fields).not.toHaveProperty(field);
  });
});

describe('the exact bytes', () => {
  const article = byName('journal article');

  it('BibTeX: Zotero translator layout, tab-indented fields, month macro, no trailing comma', () => {
    expect(bibtexEntry(article, 'church2011', BIBTEX)).toBe(
      [
        '@article{church2011,',
        '\ttitle = {Sea-level rise from the late 19th to the early 21st century},',
        '\tvolume = {32},',
        '\tissn = {0169-3298},',
        '\turl = {https://doi.org/10.1007/s10712-011-9119-1},',
        '\tdoi = {10.1007/s10712-011-9119-1},',
        '\tlanguage = {en},',
        '\tnumber = {4},',
        '\turldate = {2024-02-03},',
        '\tjournal = {Surveys in Geophysics},',
        '\tauthor = {Church, John A. and White, Neil J.},',
        '\tmonth = sep,',
        '\tyear = {2011},',
        '\tpmid = {21234567},',
        '\tkeywords = {sea level, tide gauges},',
        '\tpages = {585--602}',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('BibLaTeX: ISO date, journaltitle, langid, a comma after the last field', () => {
    expect(bibtexEntry(article, 'church2011', BIBLATEX)).toBe(
      [
        '@article{church2011,',
        '\ttitle = {Sea-level rise from the late 19th to the early 21st century},',
        '\tvolume = {32},',
        '\tissn = {0169-3298},',
        '\turl = {https://doi.org/10.1007/s10712-011-9119-1},',
        '\tdoi = {10.1007/s10712-011-9119-1},',
        '\tpages = {585--602},',
        '\tnumber = {4},',
        '\tjournaltitle = {Surveys in Geophysics},',
        '\tshortjournal = {Surv Geophys},',
        '\tauthor = {Church, John A. and White, Neil J.},',
        '\turldate = {2024-02-03},',
        '\tdate = {2011-09},',
        '\tlangid = {english},',
        '\tpmid = {21234567},',
        '\tkeywords = {sea level, tide gauges},',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('the charset each format uses by default', () => {
    expect(defaultCharset(false)).toBe('ascii');
    expect(defaultCharset(true)).toBe('utf8');
  });
});

describe('names', () => {
  const names = (creators: WebApiItem['data']['creators']) =>
    bibtexEntry(item('book', { title: 'T', creators }), 'k', BIBTEX).match(
      /\n\t(author|editor|translator|collaborator) = \{.*\}/g,
    );

  it('Last, First joined by and; a suffix after the last name; single-field names braced; "and" braced', () => {
    expect(
      names([
        person('Martin Luther, Jr.', 'King'),
        org('Smith and Jones Ltd'),
        person('', 'Plato'),
        person('Anna', 'Black and White'),
        person('Jörg', 'Müller', 'editor'),
        person('Ann', 'Tran', 'translator'),
        person('Carl', 'Contributor', 'contributor'),
      ]),
    ).toEqual([
      '\n\tauthor = {King, Jr., Martin Luther and {Smith and Jones Ltd} and Plato and Black {and} White, Anna}',
      '\n\teditor = {M{\\"u}ller, J{\\"o}rg}',
      '\n\ttranslator = {Tran, Ann}',
      '\n\tcollaborator = {Contributor, Carl}',
    ]);
  });

  it('the parser reads every name apart', () => {
    const bib = bibtexEntry(
      item('book', {
        title: 'T',
        creators: [
          person('Martin Luther, Jr.', 'King'),
          org('Smith and Jones Ltd'),
          person('Anna', 'Black and White'),
        ],
      }),
      'k',
      BIBTEX,
    );
    expect(read(bib)[0]?.fields.author).toEqual([
      { lastName: 'King', firstName: 'Martin Luther', suffix: 'Jr.' },
      { name: 'Smith and Jones Ltd' },
      { lastName: 'Black and White', firstName: 'Anna' },
    ]);
  });

  it("BibLaTeX roles: a book's editor only makes a collection, a book author an inbook, series editors editorb", () => {
    const edited = item('book', { title: 'T', creators: [person('E', 'Ed', 'editor')] });
    expect(bibtexEntryType(edited, schema, true)).toBe('collection');
    expect(bibtexEntryType(edited, schema, false)).toBe('book');
    const chapter = item('bookSection', {
      title: 'T',
      creators: [person('A', 'Au'), person('B', 'Bo', 'bookAuthor')],
    });
    expect(bibtexEntryType(chapter, schema, true)).toBe('inbook');
    expect(bibtexEntryType(item('book', { title: 'T', numberOfVolumes: '3' }), schema, true)).toBe('mvbook');
    const bib = bibtexEntry(
      item('book', {
        title: 'T',
        creators: [person('A', 'Au'), person('S', 'Se', 'seriesEditor'), person('C', 'Co', 'contributor')],
      }),
      'k',
      BIBLATEX,
    );
    expect(bib).toContain(
      '\tauthor = {Au, A},\n\teditora = {Co, C},\n\teditoratype = {collaborator},\n\teditorb = {Se, S},\n\teditorbtype = {redactor},',
    );
  });
});

describe('fields', () => {
  it('month is a macro, pages use --, urldate is the day', () => {
    const bib = bibtexEntry(
      item('journalArticle', {
        title: 'T',
        date: '4 March 2019',
        pages: '10–12, 15—17',
        accessDate: '2020-01-02T23:59:59Z',
      }),
      'k',
      BIBTEX,
    );
    expect(bib).toContain('\tmonth = mar,\n\tyear = {2019}');
    expect(bib).toContain('\tpages = {10--12, 15--17}');
    expect(bib).toContain('\turldate = {2020-01-02}');
  });

  it('doi and url raw (no escaping), braces in a URL percent-encoded, non-ASCII percent-encoded in ASCII mode', () => {
    const bib = bibtexEntry(
      item('journalArticle', { title: 'T', DOI: '10.1000/a_b%c', url: 'https://x.org/ü_{1}?q=50%' }),
      'k',
      BIBTEX,
    );
    expect(bib).toContain('\tdoi = {10.1000/a_b%c}');
    expect(bib).toContain('\turl = {https://x.org/%C3%BC_%7B1%7D?q=50%}');
    expect(bibtexEntry(item('journalArticle', { url: 'https://x.org/ü' }), 'k', BIBLATEX)).toContain(
      '\turl = {https://x.org/ü}',
    );
  });

  it('Extra: identifiers become fields unless the item has them, the Citation Key line goes, the rest is the note', () => {
    const extra =
      'Citation Key: mykey\nPMID: 123\nPMCID: PMC456\nDOI: 10.1/other\narXiv: 1234.5678\noriginal-date: 1900\nRead twice';
    const withDoi = item('journalArticle', { title: 'T', DOI: '10.1/own', extra });
    const bib = bibtexEntry(withDoi, 'k', BIBTEX);
    expect(bib).toContain('\tnote = {DOI: 10.1/other\narXiv: 1234.5678\noriginal-date: 1900\nRead twice}');
    // BibTeX reads a line break as a space.
    expect(read(bib)[0]?.fields).toMatchObject({
      doi: '10.1/own',
      pmid: '123',
      pmcid: 'PMC456',
      note: 'DOI: 10.1/other arXiv: 1234.5678 original-date: 1900 Read twice',
    });
    expect(bib).not.toContain('mykey');
    const biblatex = read(bibtexEntry(withDoi, 'k', BIBLATEX))[0]?.fields;
    expect(biblatex).toMatchObject({
      eprinttype: 'arxiv',
      eprint: '1234.5678',
      note: 'DOI: 10.1/other original-date: 1900 Read twice',
    });
  });

  it('BibLaTeX: arXiv in the archive fields becomes the eprint, with its class', () => {
    const bib = bibtexEntry(
      item('journalArticle', {
        title: 'T',
        archive: 'arXiv',
        archiveLocation: '1706.03762',
        callNumber: 'cs.CL',
      }),
      'k',
      BIBLATEX,
    );
    expect(bib).toContain('\teprinttype = {arxiv},\n\teprint = {1706.03762},\n\teprintclass = {cs.CL},');
  });

  it('BibLaTeX dates: ranges and circa in EDTF', () => {
    const date = (d: string) =>
      read(bibtexEntry(item('book', { title: 'T', date: d }), 'k', BIBLATEX))[0]?.fields.date;
    expect(date('2019-2020')).toBe('2019/2020');
    expect(date('circa 1850')).toBe('1850~');
    expect(date('May 3, 2019')).toBe('2019-05-03');
  });

  it('child notes become annote (BibTeX) or annotation (BibLaTeX) as text; files title:path:mime, specials escaped', () => {
    const children = {
      notes: ['<p>Read <b>this</b> &amp; that</p>', '<p>Second note</p>'],
      attachments: [
        { title: 'Full Text {PDF}', path: 'C:\\Users\\me\\a;b:c$.pdf', contentType: 'application/pdf' },
        { title: 'Snapshot', path: '/home/me/Zotero/storage/ABCD2345/page.html', contentType: 'text/html' },
      ],
    };
    const bib = bibtexEntry(item('book', { title: 'T' }), 'k', BIBTEX, children);
    expect(bib).toContain('\tannote = {Read this \\& that\n\nSecond note},\n\tfile = {');
    expect(bib).toContain(
      '\tfile = {Full Text PDF:C\\:\\\\Users\\\\me\\\\a\\;b\\:c\\$.pdf:application/pdf;Snapshot:/home/me/Zotero/storage/ABCD2345/page.html:text/html}',
    );
    expect(bibtexEntry(item('book', { title: 'T' }), 'k', BIBLATEX, children)).toContain(
      '\tannotation = {Read this \\& that\n\nSecond note},',
    );
  });

  it('titles keep their capitals and acronyms in braces; other fields are not braced', () => {
    const bib = bibtexEntry(
      item('journalArticle', {
        title: 'The Role of NASA in Europe',
        publicationTitle: 'Journal of NASA Studies',
      }),
      'k',
      BIBTEX,
    );
    expect(bib).toContain('\ttitle = {The {Role} of {NASA} in {Europe}}');
    expect(bib).toContain('\tjournal = {Journal of NASA Studies}');
  });

  it('notes, attachments and annotations have no entry', () => {
    expect(isExportable(item('note'))).toBe(false);
    expect(isExportable(item('attachment'))).toBe(false);
    expect(isExportable(item('journalArticle'))).toBe(true);
    expect(() => bibtexEntry(item('note'), 'k', BIBTEX)).toThrow(/note item/);
  });
});
