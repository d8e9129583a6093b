/**
 * The Extra field: Zotero's renaming of `Label: value` lines to CSL variables, the BibTeX
 * translators' reading of its lines and the citation key, and the CSL variables of Extra
 * applied to the CSL item as citeproc-js reads them (dates override, names add to an empty
 * role, `type:` overrides, other variables only fill gaps; what is read leaves the note).
 */
import { describe, expect, it } from 'vitest';
import { toCslJson } from '../../../src/core/citations/csl-json.js';
import { citationKeyOf, extraToCsl, parseExtraFields } from '../../../src/core/citations/extra.js';
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';
import type { WebApiCreator, WebApiItem } from '../../../src/core/local/sqlite/types.js';

const schema = buildSchema(readBundledSchema(), 'bundled');

function item(itemType: string, fields: Record<string, string>, creators: WebApiCreator[] = []): WebApiItem {
  return {
    key: 'XTRA2345',
    version: 1,
    library: { type: 'user', id: 5, name: '' },
    meta: {},
    data: {
      key: 'XTRA2345',
      version: 1,
      itemType,
      creators,
      tags: [],
      relations: {},
      dateAdded: '2024-01-01T00:00:00Z',
      dateModified: '2024-01-01T00:00:00Z',
      ...fields,
    },
  };
}

describe('extraToCsl: labels renamed as Zotero renames them', () => {
  it.each<[string, string]>([
    ['Original Date: 1900', 'original-date: 1900'],
    ['original-date: 1900', 'original-date: 1900'],
    ['Citation Key: smith2020', 'citation-key: smith2020'],
    ['doi: 10.1000/xyz', 'DOI: 10.1000/xyz'],
    ['DOI: 10.1000/xyz', 'DOI: 10.1000/xyz'],
    ['Isbn: 978-3-16-148410-0', 'ISBN: 978-3-16-148410-0'],
    ['PMCID: PMC123', 'PMCID: PMC123'],
    ['URL: https://example.org/a', 'URL: https://example.org/a'],
    ['Archive Location: Box 4', 'archive_location: Box 4'],
    ['Publication Title: Nature', 'container-title: Nature'],
    ['Library Catalog: WorldCat', 'source: WorldCat'],
    ['Place: Paris', 'publisher-place: Paris'],
    ['Date: 1999', 'issued: 1999'],
    ['Number Of Pages: 12', 'number-of-pages: 12'],
    ['Container Author: Major || Mary', 'container-author: Major || Mary'],
    ['tex.howpublished: online', 'tex.howpublished: online'],
    ['arXiv: 2101.00001', 'arXiv: 2101.00001'],
    ['Some free text', 'Some free text'],
    ['Unknown Label: value', 'Unknown Label: value'],
  ])('%s', (line, expected) => {
    expect(extraToCsl(line, schema.csl)).toBe(expected);
  });

  it('renames every line, keeping the others and their order', () => {
    expect(extraToCsl('Read twice\nOriginal Date: 1900\n\nPublisher: Penguin', schema.csl)).toBe(
      'Read twice\noriginal-date: 1900\n\npublisher: Penguin',
    );
  });
});

describe('parseExtraFields and citationKeyOf: as the BibTeX translators read Extra', () => {
  it('splits each line at its first colon', () => {
    expect(parseExtraFields('Citation Key: k1\nfree text\n\nPMID:  123 \nx:y')).toEqual([
      { raw: 'Citation Key: k1', field: 'Citation Key', value: 'k1' },
      { raw: 'free text' },
      { raw: 'PMID:  123 ', field: 'PMID', value: '123' },
      { raw: 'x:y' },
    ]);
  });

  it("takes Extra's first Citation Key line (any case), then the citationKey field", () => {
    expect(citationKeyOf(item('book', { extra: 'note\ncitation key: first\nCitation Key: second' }))).toBe(
      'first',
    );
    expect(citationKeyOf(item('book', { extra: 'Citation Key: fromExtra', citationKey: 'fromField' }))).toBe(
      'fromExtra',
    );
    expect(citationKeyOf(item('book', { extra: 'Citation Key:', citationKey: 'fromField' }))).toBe(
      'fromField',
    );
    expect(citationKeyOf(item('book', { citationKey: 'fromField' }).data)).toBe('fromField');
    expect(citationKeyOf(item('book', { extra: 'nothing here' }))).toBeUndefined();
  });
});

describe('CSL variables in Extra, applied to the CSL item', () => {
  it('original-date (either spelling) sets the date; the line leaves the note', () => {
    for (const extra of ['original-date: 1900', 'Original Date: 1900']) {
      const csl = toCslJson(item('book', { title: 'T', date: '1905', extra }), schema);
      expect(csl['original-date']).toEqual({ 'date-parts': [[1900]] });
      expect(csl.issued).toEqual({ 'date-parts': [[1905]] });
      expect(csl).not.toHaveProperty('note');
    }
  });

  it('a date in Extra replaces the item’s own', () => {
    const csl = toCslJson(item('book', { date: '2019', extra: 'issued: 2001-02' }), schema);
    expect(csl.issued).toEqual({ 'date-parts': [[2001, 2]] });
  });

  it('type: overrides the type (a CSL type or a Zotero item type); an unknown type stays in the note', () => {
    expect(toCslJson(item('journalArticle', { extra: 'type: book' }), schema).type).toBe('book');
    expect(toCslJson(item('journalArticle', { extra: 'type: preprint' }), schema).type).toBe('article');
    const odd = toCslJson(item('journalArticle', { extra: 'type: nonsense' }), schema);
    expect(odd.type).toBe('article-journal');
    expect(odd.note).toBe('type: nonsense');
  });

  it("Citation Key becomes citation-key, Extra's first one before the field's", () => {
    const csl = toCslJson(
      item('book', { citationKey: 'field2020', extra: 'Citation Key: smith2020\nCitation Key: other' }),
      schema,
    );
    expect(csl['citation-key']).toBe('smith2020');
    expect(csl.note).toBe('citation-key: other');
    expect(toCslJson(item('book', { citationKey: 'field2020' }), schema)['citation-key']).toBe('field2020');
  });

  it('names add to a role the item lacks (Family || Given, or a literal), never to one it has', () => {
    const csl = toCslJson(
      item(
        'book',
        {
          extra:
            'editor: van Dijk || Anna\neditor: Editorial Board\ncontainer-author: Major || Mary\nauthor: Ghost || Writer',
        },
        [{ creatorType: 'author', firstName: 'Real', lastName: 'Author' }],
      ),
      schema,
    );
    expect(csl.editor).toEqual([
      { family: 'Dijk', given: 'Anna', 'non-dropping-particle': 'van' },
      { literal: 'Editorial Board' },
    ]);
    expect(csl['container-author']).toEqual([{ family: 'Major', given: 'Mary' }]);
    expect(csl.author).toEqual([{ family: 'Author', given: 'Real' }]);
    expect(csl.note).toBe('author: Ghost || Writer');
  });

  it('other variables fill gaps only; identifiers are upper-cased', () => {
    const csl = toCslJson(
      item('journalArticle', {
        publisher: 'Own Publisher',
        DOI: '10.1/own',
        extra: 'Publisher: Extra Publisher\ndoi: 10.1/extra\npmid: 123\nISSN: 1234-5678',
      }),
      schema,
    );
    expect(csl.publisher).toBe('Own Publisher');
    expect(csl.DOI).toBe('10.1/own');
    expect(csl.PMID).toBe('123');
    expect(csl.ISSN).toBe('1234-5678');
    expect(csl.note).toBe('publisher: Extra Publisher\nDOI: 10.1/extra');
  });

  it('reads from the top of the note: a first line of free text is passed over, the next one stops it', () => {
    const first = toCslJson(item('book', { extra: 'Read for chapter 2\nDOI: 10.1/abc' }), schema);
    expect(first.DOI).toBe('10.1/abc');
    expect(first.note).toBe('Read for chapter 2');

    const stop = toCslJson(item('book', { extra: 'original-date: 1900\nSome notes\nPMID: 123' }), schema);
    expect(stop['original-date']).toEqual({ 'date-parts': [[1900]] });
    expect(stop).not.toHaveProperty('PMID');
    expect(stop.note).toBe('Some notes\nPMID: 123');
  });

  it('reads the legacy {:var:value} form', () => {
    const csl = toCslJson(item('book', { extra: '{:original-date:1900}{:publisher-place:Leiden}' }), schema);
    expect(csl['original-date']).toEqual({ 'date-parts': [[1900]] });
    expect(csl['publisher-place']).toBe('Leiden');
    expect(csl).not.toHaveProperty('note');
  });

  it('leaves lines that name no CSL variable in the note, and reads on past them', () => {
    const csl = toCslJson(item('book', { extra: 'tex.x: 1\nfoo-bar: baz\nPMID: 42' }), schema);
    expect(csl).not.toHaveProperty('foo-bar');
    expect(csl.PMID).toBe('42');
    expect(csl.note).toBe('tex.x: 1\nfoo-bar: baz');
  });
});
