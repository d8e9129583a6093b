/** ISBNs (isbn.ts), catalogue records (books.ts) and a page's embedded metadata (page-metadata.ts). */
import { describe, expect, it } from 'vitest';
import { modsBook, openLibraryBook } from '../../../src/core/items/books.js';
import { detectIdentifier, identitiesOf, identitiesOfItem } from '../../../src/core/items/identifiers.js';
import { isbn10to13, isbn13to10, isbnsIn, parseIsbn } from '../../../src/core/items/isbn.js';
import { readPageMetadata, scanHtml } from '../../../src/core/items/page-metadata.js';
import { entriesOf } from '../../../src/core/items/records.js';

describe('ISBNs', () => {
  it('reads ISBN-10 and -13 with hyphens, spaces, an X and a prefix, normalised to ISBN-13', () => {
    expect(parseIsbn('0-306-40615-2')).toEqual({
      isbn: { isbn13: '9780306406157', isbn10: '0306406152', compact: '0306406152' },
    });
    expect(parseIsbn('ISBN 978-0-306-40615-7')).toEqual({
      isbn: { isbn13: '9780306406157', isbn10: '0306406152', compact: '9780306406157' },
    });
    expect(parseIsbn('isbn-10: 0 8044 2957 x')).toMatchObject({ isbn: { isbn10: '080442957X' } });
    expect(parseIsbn('979-10-90636-07-1')).toEqual({
      isbn: { isbn13: '9791090636071', compact: '9791090636071' },
    });
    expect(isbn10to13('0306406152')).toBe('9780306406157');
    expect(isbn13to10('9780306406157')).toBe('0306406152');
    expect(isbn13to10('9791090636071')).toBeUndefined();
  });

  it('a wrong check digit names the digit the others call for; other numbers are no ISBN', () => {
    expect(parseIsbn('0-306-40615-3')).toEqual({
      error: "its check digit is 3, but the ISBN-10's digits call for 2",
    });
    expect(parseIsbn('978-0-306-40615-8')).toEqual({
      error: "its check digit is 8, but the ISBN-13's digits call for 7",
    });
    expect(parseIsbn('1234567890128')).toEqual({ error: 'an ISBN-13 starts with 978 or 979' });
    expect(parseIsbn('12345')).toBeUndefined();
    expect(parseIsbn('10.1000/xyz')).toBeUndefined();
  });

  it('one book under either number: identities of entries and of items agree', () => {
    expect(identitiesOf({ kind: 'isbn', value: '9780306406157' })).toEqual(['isbn:9780306406157']);
    expect(identitiesOfItem({ ISBN: '0-306-40615-2 (pbk.)' })).toEqual(['isbn:9780306406157']);
    expect(identitiesOfItem({ ISBN: '9780306406157 1402894627' }).sort()).toEqual([
      'isbn:9780306406157',
      'isbn:9781402894626',
    ]);
    expect(isbnsIn('0306406153 0-306-40615-2')).toEqual(['9780306406157']);
  });

  it('identifier lines take ISBNs and URLs; a bad ISBN fails on its own naming the check digit', () => {
    expect(detectIdentifier('978-0-306-40615-7')).toEqual({ kind: 'isbn', value: '9780306406157' });
    expect(detectIdentifier('https://example.org/a#top')).toEqual({
      kind: 'url',
      value: 'https://example.org/a',
    });
    expect(detectIdentifier('https://doi.org/10.1/x')).toEqual({ kind: 'doi', value: '10.1/x' });
    const { entries } = entriesOf({ records: '0-306-40615-3\nhttps://user:pw@example.org/\nfoo' });
    expect(entries.map((e) => e.error?.message)).toEqual([
      "'0-306-40615-3' is not a valid ISBN: its check digit is 3, but the ISBN-10's digits call for 2.",
      "'https://user:pw@example.org/' is not a DOI, an arXiv id, an ISBN or a web page's URL.",
      "'foo' is not a DOI, an arXiv id, an ISBN or a web page's URL.",
    ]);
    const urls = entriesOf({ url: ['https://arxiv.org/abs/2101.00001', 'ftp://x.org/a', 'https://x.org/p'] });
    expect(urls.entries.map((e) => e.identifier ?? e.error?.message)).toEqual([
      { kind: 'arxiv', value: '2101.00001' },
      "'ftp://x.org/a' is not an http(s) URL.",
      { kind: 'url', value: 'https://x.org/p' },
    ]);
  });
});

describe('catalogue records', () => {
  it('an Open Library record: title and subtitle, authors, publisher, place, pages, ISBNs', () => {
    expect(
      openLibraryBook({
        title: 'Sawyer',
        subtitle: 'A novel',
        authors: [{ name: 'Mark Twain' }],
        publishers: [{ name: 'Signet' }],
        publish_places: [{ name: 'New York' }],
        publish_date: '1997',
        pagination: 'xii, 216 p.',
        identifiers: { isbn_10: ['0306406152'], isbn_13: ['9780306406157'] },
        url: 'javascript:alert(1)',
      }),
    ).toEqual({
      title: 'Sawyer: A novel',
      authors: [{ name: 'Mark Twain' }],
      publisher: 'Signet',
      place: 'New York',
      date: '1997',
      numPages: '216',
      isbns: ['9780306406157'],
    });
    expect(openLibraryBook({ authors: [{ name: 'X' }] })).toBeUndefined();
  });

  it('a MODS record of the Library of Congress, its catalogue punctuation trimmed', () => {
    const book =
      modsBook(`<titleInfo><nonSort>The </nonSort><title>adventures of Tom Sawyer /</title></titleInfo>
      <name type="personal"><namePart>Twain, Mark,</namePart><namePart type="date">1835-1910</namePart>
      <role><roleTerm type="text">author</roleTerm></role></name>
      <name type="personal"><namePart>Doe, Jane</namePart><role><roleTerm type="text">editor.</roleTerm></role></name>
      <originInfo><place><placeTerm type="text">New York :</placeTerm></place><publisher>Signet &amp; Co.,</publisher>
      <dateIssued>c1997.</dateIssued></originInfo><physicalDescription><extent>xii, 216 p. ; 18 cm.</extent></physicalDescription>
      <identifier type="isbn">0306406152 (pbk.)</identifier><identifier type="isbn" invalid="yes">0306406153</identifier>
      <identifier type="lccn">  97012345</identifier>`);
    expect(book).toEqual({
      title: 'The adventures of Tom Sawyer',
      authors: [{ name: 'Twain, Mark,' }, { name: 'Doe, Jane', role: 'editor' }],
      place: 'New York',
      publisher: 'Signet & Co',
      date: '1997',
      numPages: '216',
      isbns: ['9780306406157'],
      url: 'https://lccn.loc.gov/97012345',
    });
  });
});

const PAGE = 'https://journal.example.org/article/7';

describe('page metadata', () => {
  it('Highwire citation_* tags: a journal article with its authors, pages and date', () => {
    const html = `<html><head><title>Ignored</title>
      <meta name="citation_title" content="Deep &amp; Wide">
      <meta name="citation_author" content="Lovelace, Ada"><meta name="citation_author" content="Grace Hopper">
      <meta name="citation_journal_title" content="Journal of Tests"><meta name="citation_volume" content="12">
      <meta name="citation_issue" content="3"><meta name="citation_firstpage" content="101">
      <meta name="citation_lastpage" content="109"><meta name="citation_publication_date" content="2021/05/03">
      <meta name="citation_issn" content="1234-5678"><meta name=citation_language content=en>
      </head><body></body></html>`;
    expect(readPageMetadata(html, PAGE, '2026-12-01')).toEqual({
      sources: ['highwire'],
      csl: {
        type: 'article-journal',
        title: 'Deep & Wide',
        author: [
          { family: 'Lovelace', given: 'Ada' },
          { family: 'Hopper', given: 'Grace' },
        ],
        'container-title': 'Journal of Tests',
        volume: '12',
        issue: '3',
        page: '101-109',
        issued: '2021-05-03',
        ISSN: '1234-5678',
        language: 'en',
        URL: PAGE,
        accessed: '2026-12-01',
      },
    });
  });

  it('JSON-LD: a ScholarlyArticle inside @graph, its issue, volume and periodical; a DOI in identifier', () => {
    const ld = {
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'WebSite', name: 'Site' },
        {
          '@type': ['ScholarlyArticle'],
          headline: 'Graph <i>Article</i>',
          author: [
            { '@type': 'Person', givenName: 'Ada', familyName: 'Lovelace' },
            { '@type': 'Organization', name: 'CERN' },
          ],
          datePublished: '2020-02-01T00:00:00Z',
          isPartOf: {
            '@type': 'PublicationIssue',
            issueNumber: 4,
            isPartOf: {
              '@type': 'PublicationVolume',
              volumeNumber: '9',
              isPartOf: { '@type': 'Periodical', name: 'Periodica', issn: '1111-2222' },
            },
          },
          pageStart: '5',
          pageEnd: '9',
          identifier: { '@type': 'PropertyValue', propertyID: 'DOI', value: '10.1234/graph.1' },
        },
      ],
    };
    const html = `<script type="application/ld+json">${JSON.stringify(ld)}</script>`;
    const meta = readPageMetadata(html, PAGE);
    expect(meta.doi).toBe('10.1234/graph.1');
    expect(meta.csl).toMatchObject({
      type: 'article-journal',
      title: 'Graph Article',
      author: [{ family: 'Lovelace', given: 'Ada' }, { literal: 'CERN' }],
      issued: '2020-02-01',
      'container-title': 'Periodica',
      volume: '9',
      issue: '4',
      page: '5-9',
      ISSN: '1111-2222',
      DOI: '10.1234/graph.1',
    });
  });

  it('Dublin Core, and a DOI from dc.identifier; a lone doi.org anchor counts, several do not', () => {
    const dc = `<meta name="DC.title" content="Core"><meta name="dc.creator" content="Roe, Rick">
      <meta name="DCTERMS.issued" content="1999"><meta name="DC.identifier" content="doi:10.5/dc">`;
    expect(readPageMetadata(dc, PAGE)).toMatchObject({
      sources: ['dublincore'],
      doi: '10.5/dc',
      csl: { type: 'webpage', title: 'Core', author: [{ family: 'Roe', given: 'Rick' }], issued: '1999' },
    });
    expect(readPageMetadata('<a href="https://doi.org/10.9/one">x</a>', PAGE)).toEqual({
      sources: [],
      doi: '10.9/one',
    });
    expect(
      readPageMetadata(
        '<a href="https://doi.org/10.9/one">x</a><a href="https://doi.org/10.9/two">y</a>',
        PAGE,
      ),
    ).toEqual({ sources: [] });
    expect(readPageMetadata('<meta name="citation_doi" content="10.48550/arXiv.2101.00001">', PAGE)).toEqual({
      sources: ['highwire'],
      arxiv: '2101.00001',
    });
  });

  it('hostile markup: tags in scripts, comments and attribute values are data, not metadata', () => {
    const html = `<!-- <meta name="citation_title" content="In a comment"> -->
      <script>document.write('<meta name="citation_title" content="In a script">')</script>
      <style>/* <meta name="citation_doi" content="10.1/style"> */</style>
      <meta name="citation_author" content='">&lt;script&gt;alert(1)&lt;/script&gt;<b>Eve</b>'>
      <meta name="citation_title" content="Real &#x3C;img src=x onerror=alert(1)&#x3E; title&#1;">
      <textarea><meta name="citation_journal_title" content="In a textarea"></textarea>`;
    const meta = readPageMetadata(html, PAGE);
    expect(meta.doi).toBeUndefined();
    expect(meta.csl?.title).toBe('Real title');
    expect(meta.csl?.['container-title']).toBeUndefined();
    expect(JSON.stringify(meta.csl)).not.toMatch(/[<>]|script/i);
  });

  it('hostile size: a huge page, an unterminated tag, deep JSON-LD and many metas scan in linear time', () => {
    const many = '<a<a<a'.repeat(300_000);
    let started = performance.now();
    expect(scanHtml(`<meta name="citation_title" content="T">${many}`).meta.get('citation_title')).toEqual([
      'T',
    ]);
    const quote = `<meta name="citation_title" content="T"><meta content="${'x<'.repeat(500_000)}`;
    expect(scanHtml(quote).meta.get('citation_title')).toEqual(['T']);
    const deep = `<script type="application/ld+json">${'['.repeat(100_000)}${']'.repeat(100_000)}</script>`;
    expect(readPageMetadata(deep, PAGE)).toEqual({ sources: [] });
    const metas = '<meta name="citation_author" content="A B">'.repeat(50_000);
    const wide = readPageMetadata(`<meta name="citation_title" content="W">${metas}`, PAGE);
    expect(wide.csl?.author).toHaveLength(500);
    expect(performance.now() - started).toBeLessThan(5000);
    started = performance.now();
    const unclosedScript = `<meta name="citation_title" content="S"><script>${'<meta name="x" content="y">'.repeat(100_000)}`;
    expect(readPageMetadata(unclosedScript, PAGE).csl?.title).toBe('S');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('a page with only a <title> and Open Graph has nothing usable', () => {
    expect(readPageMetadata('<title>Home</title><meta property="og:title" content="Home">', PAGE)).toEqual({
      sources: [],
    });
  });
});
