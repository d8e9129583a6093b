/** Reading import input: identifiers, BibTeX, RIS and CSL-JSON, mapped to Zotero items by the schema. */
import { describe, expect, it } from 'vitest';
import { latexToText } from '../../../src/core/items/bibtex.js';
import { cslDate, cslToZotero } from '../../../src/core/items/csl.js';
import {
  detectIdentifier,
  identitiesOf,
  identitiesOfItem,
  parseArxiv,
  parseDoi,
} from '../../../src/core/items/identifiers.js';
import { detectFormat, entriesOf, parseRecords, serializeEntries } from '../../../src/core/items/records.js';
import { localSchema } from '../../../src/core/items/schema.js';
import { validateItem } from '../../../src/core/items/validate.js';

const schema = localSchema({ cacheDir: '/nonexistent', apiUrl: 'http://127.0.0.1:9' });

describe('identifiers', () => {
  it.each([
    ['10.1038/nature12373', '10.1038/nature12373'],
    ['doi:10.1000/XYZ.1', '10.1000/XYZ.1'],
    ['https://doi.org/10.1000/a%2Fb', '10.1000/a/b'],
    ['http://dx.doi.org/10.1/x', '10.1/x'],
    ['10.1/x.', '10.1/x'],
  ])('parseDoi(%s)', (text, doi) => {
    expect(parseDoi(text)).toBe(doi);
  });

  it.each([
    ['2101.00001', '2101.00001'],
    ['arXiv:2101.00001v2', '2101.00001v2'],
    ['https://arxiv.org/abs/1706.03762', '1706.03762'],
    ['https://arxiv.org/pdf/1706.03762v5.pdf', '1706.03762v5'],
    ['hep-th/9901001', 'hep-th/9901001'],
    ['math.GT/0309136v1', 'math.GT/0309136v1'],
    ['10.48550/arXiv.2101.00001', '2101.00001'],
  ])('parseArxiv(%s)', (text, id) => {
    expect(parseArxiv(text)).toBe(id);
  });

  it('detects the kind, and an arXiv id and its DOI are the same paper', () => {
    expect(detectIdentifier('10.48550/arXiv.2101.00001')).toEqual({
      kind: 'doi',
      value: '10.48550/arXiv.2101.00001',
    });
    expect(detectIdentifier('2101.00001')).toEqual({ kind: 'arxiv', value: '2101.00001' });
    expect(detectIdentifier('not an id')).toBeUndefined();
    const a = identitiesOf({ kind: 'arxiv', value: '2101.00001v3' });
    const d = identitiesOf({ kind: 'doi', value: '10.48550/ARXIV.2101.00001' });
    expect(a.some((i) => d.includes(i))).toBe(true);
  });

  it('finds identifiers in existing items: DOI field, Extra, archive id, URL', () => {
    expect(identitiesOfItem({ DOI: '10.1/ABC' })).toEqual(['doi:10.1/abc']);
    expect(identitiesOfItem({ extra: 'foo\nDOI: 10.2/x' })).toEqual(['doi:10.2/x']);
    expect(identitiesOfItem({ archiveID: 'arXiv:2101.00001' })).toContain('arxiv:2101.00001');
    expect(identitiesOfItem({ url: 'https://arxiv.org/abs/2101.00001v2' })).toContain('arxiv:2101.00001');
  });
});

describe('formats', () => {
  it('detects the format', () => {
    expect(detectFormat('10.1/a\n10.1/b')).toBe('identifiers');
    expect(detectFormat('@article{x, title={T}}')).toBe('bibtex');
    expect(detectFormat('TY  - JOUR\nTI  - T\nER  - ')).toBe('ris');
    expect(detectFormat(' [{"type":"book"}]')).toBe('csljson');
  });

  it('identifier lists skip blank lines and comments; unrecognised lines fail on their own', () => {
    const { entries } = parseRecords('# papers\n10.1/a\n\n arXiv:2101.00001 \nnonsense\n');
    expect(entries.map((e) => [e.entry, e.identifier?.kind, e.error?.code])).toEqual([
      ['10.1/a', 'doi', undefined],
      ['arXiv:2101.00001', 'arxiv', undefined],
      ['nonsense', undefined, 'validation_error'],
    ]);
  });

  it('BibTeX: braces, quotes, macros, accents, names, arXiv eprints', () => {
    const bib = `@string{jn = "Journal of Tests"}
@comment{ignored}
@Article{smith2020,
  author = {Smith, John and Jane van der Berg and {The Consortium}},
  title = {On {BERT} and M\\"{o}bius --- a study},
  journal = jn,
  year = 2020, month = mar,
  volume = {12}, number = {3}, pages = {1--10},
  doi = {10.1000/smith},
  keywords = {nlp, transformers},
}
@misc{vaswani2017,
  title = "Attention Is All You Need",
  author = "Ashish Vaswani and Noam Shazeer",
  eprint = {1706.03762}, archivePrefix = {arXiv}, year = {2017}
}
@incollection{ch1, title={A Chapter}, booktitle={The Book}, author={Doe, J.}, publisher={P}, year={1999}}`;
    const { format, entries } = parseRecords(bib);
    expect(format).toBe('bibtex');
    expect(entries.map((e) => e.entry)).toEqual(['10.1000/smith', 'arXiv:1706.03762', 'bibtex:ch1']);
    const [article, preprint, chapter] = entries.map((e) => cslToZotero(schema, e.csl ?? {}));
    expect(article).toMatchObject({
      itemType: 'journalArticle',
      title: 'On BERT and Möbius — a study',
      publicationTitle: 'Journal of Tests',
      date: '2020-03',
      volume: '12',
      issue: '3',
      pages: '1-10',
      DOI: '10.1000/smith',
      tags: [{ tag: 'nlp' }, { tag: 'transformers' }],
    });
    expect(article?.creators).toEqual([
      { creatorType: 'author', firstName: 'John', lastName: 'Smith' },
      { creatorType: 'author', firstName: 'Jane', lastName: 'van der Berg' },
      { creatorType: 'author', name: 'The Consortium' },
    ]);
    expect(preprint).toMatchObject({
      itemType: 'preprint',
      repository: 'arXiv',
      archiveID: 'arXiv:1706.03762',
      url: 'https://arxiv.org/abs/1706.03762',
    });
    expect(chapter).toMatchObject({
      itemType: 'bookSection',
      bookTitle: 'The Book',
      publisher: 'P',
      date: '1999',
    });
    for (const item of [article, preprint, chapter]) expect(validateItem(schema, item, 0)).toEqual([]);
    // The retry text is the failed entries' own source, which reads back the same.
    const again = parseRecords(serializeEntries('bibtex', [entries[1]!]), 'bibtex').entries;
    expect(again.map((e) => e.entry)).toEqual(['arXiv:1706.03762']);
  });

  it('RIS: types, names, pages, dates, ISBN vs ISSN', () => {
    const ris = `TY  - JOUR
AU  - Curie, Marie
AU  - Curie, Pierre
TI  - Radioactive substances
T2  - Comptes rendus
PY  - 1898/07/18/
VL  - 127
SP  - 175
EP  - 178
SN  - 0001-4036
DO  - 10.9999/curie
KW  - physics
ER  - 

TY  - BOOK
ID  - b1
AU  - Darwin, Charles
TI  - On the Origin of Species
PB  - John Murray
CY  - London
PY  - 1859
SN  - 978-0-00-000000-0
ER  - 
`;
    const { format, entries } = parseRecords(ris);
    expect(format).toBe('ris');
    expect(entries.map((e) => e.entry)).toEqual(['10.9999/curie', 'ris:b1']);
    const [article, book] = entries.map((e) => cslToZotero(schema, e.csl ?? {}));
    expect(article).toMatchObject({
      itemType: 'journalArticle',
      title: 'Radioactive substances',
      publicationTitle: 'Comptes rendus',
      date: '1898-07-18',
      pages: '175-178',
      ISSN: '0001-4036',
      DOI: '10.9999/curie',
    });
    expect(book).toMatchObject({
      itemType: 'book',
      publisher: 'John Murray',
      place: 'London',
      ISBN: '978-0-00-000000-0',
    });
    for (const item of [article, book]) expect(validateItem(schema, item, 0)).toEqual([]);
  });

  it('CSL-JSON: an array of items; one without a title but with a DOI is resolved instead', () => {
    const json = JSON.stringify([
      {
        id: 'a',
        type: 'paper-conference',
        title: 'A Talk',
        'container-title': 'Proc. X',
        author: [{ family: 'Hopper', given: 'Grace' }],
        issued: { 'date-parts': [[1952, 5]] },
        'event-title': 'ACM',
      },
      { id: 'b', DOI: '10.1/resolve-me' },
      { id: 'c', type: 'book' },
    ]);
    const { entries } = parseRecords(json);
    expect(entries.map((e) => [e.entry, Boolean(e.csl), e.identifier?.value, e.error?.code])).toEqual([
      ['csljson:a', true, undefined, undefined],
      ['10.1/resolve-me', false, '10.1/resolve-me', undefined],
      ['csljson:c', false, undefined, 'validation_error'],
    ]);
    const paper = cslToZotero(schema, entries[0]?.csl ?? {});
    expect(paper).toMatchObject({
      itemType: 'conferencePaper',
      proceedingsTitle: 'Proc. X',
      conferenceName: 'ACM',
      date: '1952-05',
    });
    expect(validateItem(schema, paper, 0)).toEqual([]);
    expect(JSON.parse(serializeEntries('csljson', entries.slice(1)))).toEqual([
      { id: 'b', DOI: '10.1/resolve-me' },
      { id: 'c', type: 'book' },
    ]);
  });

  it('maps creator roles to the type’s creator types (programmer for software)', () => {
    const item = cslToZotero(schema, {
      type: 'software',
      title: 'Tool',
      author: [{ family: 'Torvalds', given: 'Linus' }],
    });
    expect(item).toMatchObject({
      itemType: 'computerProgram',
      creators: [{ creatorType: 'programmer', lastName: 'Torvalds' }],
    });
    // A type without a DOI field keeps the DOI in Extra, as Zotero does (every regular type of
    // schema 41 has one, so this is checked on a schema without it).
    const noDoi = { ...schema, types: new Map(schema.types) };
    const letter = schema.types.get('letter')!;
    const fields = new Map(letter.fields);
    fields.delete('DOI');
    noDoi.types.set('letter', { ...letter, fields });
    expect(
      cslToZotero(noDoi, { type: 'personal_communication', title: 'Dear', DOI: '10.1/letter' }),
    ).toMatchObject({
      itemType: 'letter',
      extra: 'DOI: 10.1/letter',
    });
  });

  it('dates and LaTeX', () => {
    expect(cslDate({ 'date-parts': [[2020, 5, 3]] })).toBe('2020-05-03');
    expect(cslDate({ 'date-parts': [[2020]] })).toBe('2020');
    expect(cslDate({ raw: 'Spring 2020' })).toBe('Spring 2020');
    expect(latexToText("{\\\"U}ber {\\'e}t{\\'e} \\& co")).toBe('Über été & co');
  });
});

describe('entriesOf', () => {
  it('validates single identifiers and refuses empty input', () => {
    expect(entriesOf({ doi: 'https://doi.org/10.1/x' }).entries[0]?.identifier).toEqual({
      kind: 'doi',
      value: '10.1/x',
    });
    expect(() => entriesOf({ doi: 'nope' })).toThrow(/not a DOI/);
    expect(() => entriesOf({ arxiv: '1234' })).toThrow(/not an arXiv id/);
    expect(() => entriesOf({ records: '# only a comment\n' })).toThrow(/No identifiers or records/);
  });
});
