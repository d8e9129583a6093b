import { describe, expect, it } from 'vitest';
import {
  fold,
  htmlToText,
  isoToSql,
  parsedDate,
  queryWords,
  splitMultipartDate,
  sqlToIso,
  toMultipartDate,
} from '../../../src/core/local/sqlite/text.js';

describe('folding and query words', () => {
  it('case- and accent-insensitive, including letters NFKD does not decompose', () => {
    expect(fold('Gödel, Müller & Østergaard')).toBe('godel, muller & ostergaard');
    expect(fold('Łukasz Straße ﬁnal Æsir')).toBe('lukasz strasse final aesir');
    expect(fold('Plain ASCII')).toBe('plain ascii');
  });

  it('splits on whitespace and punctuation, folds, drops repeats', () => {
    expect(queryWords('Sea-level  rise, "Sea" (2011)')).toEqual(['sea', 'level', 'rise', '2011']);
    expect(queryWords('  ')).toEqual([]);
    expect(queryWords('Zhāng’s')).toEqual(['zhang', 's']);
  });
});

describe('notes', () => {
  it('HTML as text: tags out, entities decoded', () => {
    expect(
      htmlToText('<h1>Title</h1><p>A &amp; B&nbsp;&lt;c&gt; &#233;t&#xE9;</p><script>x()</script>'),
    ).toBe('Title A & B <c> été');
  });
});

describe('dates', () => {
  it('multipart dates as Zotero stores them', () => {
    expect(toMultipartDate('2011-09-01')).toBe('2011-09-01 2011-09-01');
    expect(toMultipartDate('March 2020')).toBe('2020-03-00 March 2020');
    expect(toMultipartDate('15 Mar 2020')).toBe('2020-03-15 15 Mar 2020');
    expect(toMultipartDate('June 5th, 2019')).toBe('2019-06-05 June 5th, 2019');
    expect(toMultipartDate('3/15/2020')).toBe('2020-03-15 3/15/2020');
    expect(toMultipartDate('2016')).toBe('2016-00-00 2016');
    expect(toMultipartDate('n.d.')).toBe('0000-00-00 n.d.');
    expect(splitMultipartDate('2020-03-00 March 2020')).toEqual({ sql: '2020-03-00', text: 'March 2020' });
    expect(splitMultipartDate('just text')).toEqual({ sql: undefined, text: 'just text' });
    expect(parsedDate('2020-03-00')).toBe('2020-03');
    expect(parsedDate('2020-00-00')).toBe('2020');
    expect(parsedDate('2020-03-15')).toBe('2020-03-15');
    expect(parsedDate('0000-00-00')).toBeUndefined();
  });

  it('timestamps: SQL UTC in the database, ISO 8601 in the Web API', () => {
    expect(sqlToIso('2023-05-04 10:11:12')).toBe('2023-05-04T10:11:12Z');
    expect(isoToSql('2023-05-04T10:11:12Z')).toBe('2023-05-04 10:11:12');
    expect(isoToSql('2023-05-04')).toBe('2023-05-04 00:00:00');
    expect(isoToSql('2023-05-04T12:11:12+02:00')).toBe('2023-05-04 10:11:12');
  });
});
