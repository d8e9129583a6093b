/** The digest and citation lines (`core/items/digest.ts`): pure functions over Web API item JSON. */
import { describe, expect, it } from 'vitest';
import {
  authorLine,
  citationLine,
  creatorList,
  digestOf,
  digestText,
  excerpt,
  initials,
  itemYear,
  resultLine,
} from '../../../../src/core/items/digest.js';
import type { WebApiItem } from '../../../../src/core/library/port.js';

const LIB = { type: 'user' as const, id: 1, name: 'alice' };

function item(key: string, data: Record<string, unknown>, meta: WebApiItem['meta'] = {}): WebApiItem {
  return {
    key,
    version: 1,
    library: LIB,
    meta,
    data: {
      key,
      version: 1,
      itemType: 'journalArticle',
      tags: [],
      relations: {},
      dateAdded: '2024-01-01T00:00:00Z',
      dateModified: '2024-01-01T00:00:00Z',
      ...data,
    } as WebApiItem['data'],
  };
}

const person = (firstName: string, lastName: string, creatorType = 'author') => ({
  creatorType,
  firstName,
  lastName,
});

const church = item(
  'CHURCH22',
  {
    title: 'Sea-level rise from the late 19th to the early 21st century',
    creators: [person('John A.', 'Church'), person('Neil J.', 'White')],
    publicationTitle: 'Surveys in Geophysics',
    volume: '32',
    issue: '4-5',
    pages: '585-602',
    date: '2011-09-01',
    DOI: '10.1007/s10712-011-9119-1',
    abstractNote: 'We estimate global mean sea-level rise. '.repeat(20),
    tags: [{ tag: 'sea level' }, { tag: 'Oceanography', type: 1 }],
    collections: ['SEALEVE2', 'GONE2345'],
  },
  { parsedDate: '2011-09-01', creatorSummary: 'Church and White', numChildren: 3 },
);

describe('citation lines', () => {
  it('journal article: authors (year). Title. Journal, volume(issue), pages. DOI link', () => {
    expect(citationLine(church)).toBe(
      'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32(4-5), 585-602. https://doi.org/10.1007/s10712-011-9119-1',
    );
  });

  it('initials of hyphenated and accented given names; more than three authors is "et al."', () => {
    expect(initials('Anna-Lena')).toBe('A.-L.');
    expect(initials('Åsa  maria')).toBe('Å. M.');
    const many = item('VASWANI7', {
      itemType: 'conferencePaper',
      title: 'Attention Is All You Need',
      creators: ['Ashish Vaswani', 'Noam Shazeer', 'Niki Parmar', 'Jakob Uszkoreit'].map((n) =>
        person(n.split(' ')[0]!, n.split(' ')[1]!),
      ),
      proceedingsTitle: 'NeurIPS',
      date: 'December 2017',
    });
    expect(authorLine(many)).toBe('Vaswani, A., et al.');
    expect(itemYear(many)).toBe('2017');
    expect(citationLine(many)).toBe('Vaswani, A., et al. (2017). Attention Is All You Need. NeurIPS.');
  });

  it('books, theses, editors, organisations, no date; notes and attachments are titled', () => {
    const book = item('BOOKBOOK', {
      itemType: 'book',
      title: 'Deep Learning',
      creators: [person('Ian', 'Goodfellow'), { creatorType: 'editor', name: 'Some Board' }],
      publisher: 'MIT Press',
      seriesTitle: 'Adaptive Computation',
      date: '2016',
    });
    expect(citationLine(book)).toBe('Goodfellow, I. (2016). Deep Learning. MIT Press.');
    expect(creatorList(book)).toEqual(['Goodfellow, Ian', 'Some Board (editor)']);
    const edited = item('EDITED22', {
      itemType: 'book',
      title: 'Collected Papers?',
      creators: [person('Ann', 'Editor', 'editor')],
    });
    expect(citationLine(edited)).toBe('Editor, A. (Ed.) (n.d.). Collected Papers?');
    const thesis = item('THESIS22', {
      itemType: 'thesis',
      title: 'Meeresspiegelanstieg',
      creators: [person('Anna-Lena', 'Müller')],
      thesisType: 'Dissertation',
      university: 'Universität Hamburg',
      date: '2019',
    });
    expect(citationLine(thesis)).toBe(
      'Müller, A.-L. (2019). Meeresspiegelanstieg. [Dissertation, Universität Hamburg].',
    );
    const note = item('NOTENOTE', { itemType: 'note', note: '<h1>Plan</h1><p>Chapter 1</p>' });
    expect(citationLine(note)).toBe('Plan [note]');
    const pdf = item('PDFPDF22', { itemType: 'attachment', title: '', filename: 'paper.pdf' });
    expect(citationLine(pdf)).toBe('paper.pdf [attachment]');
  });
});

describe('digests', () => {
  const children = [
    item('NOTE2222', {
      itemType: 'note',
      parentItem: 'CHURCH22',
      note: '<h1>Reading notes</h1><p>Acceleration &amp; altimetry.</p>',
      dateAdded: '2024-02-01T00:00:00Z',
    }),
    item('NOTE3333', {
      itemType: 'note',
      parentItem: 'CHURCH22',
      note: '<p>Earlier note</p>',
      dateAdded: '2023-02-01T00:00:00Z',
    }),
    item('PDF22222', {
      itemType: 'attachment',
      parentItem: 'CHURCH22',
      title: 'Full Text PDF',
      contentType: 'application/pdf',
      filename: 'church.pdf',
      linkMode: 'imported_file',
    }),
    item('LINK2222', {
      itemType: 'attachment',
      parentItem: 'CHURCH22',
      title: 'Publisher page',
      contentType: 'text/html',
      linkMode: 'linked_url',
      url: 'https://example.org',
    }),
  ];
  const names = new Map([['SEALEVE2', 'Sea Level']]);

  it('citation, creators, year, abstract excerpt, tags, collections, notes oldest first, full text', () => {
    const d = digestOf(church, children, names);
    expect(d).toMatchObject({
      key: 'CHURCH22',
      itemType: 'journalArticle',
      creators: ['Church, John A.', 'White, Neil J.'],
      year: '2011',
      abstractTruncated: true,
      DOI: '10.1007/s10712-011-9119-1',
      tags: ['sea level', 'Oceanography'],
      collections: [
        { key: 'SEALEVE2', name: 'Sea Level' },
        { key: 'GONE2345', name: '' },
      ],
      notes: [
        { key: 'NOTE3333', title: 'Earlier note', excerpt: 'Earlier note' },
        { key: 'NOTE2222', title: 'Reading notes', excerpt: 'Reading notes Acceleration & altimetry.' },
      ],
      attachments: [
        { key: 'PDF22222', contentType: 'application/pdf', filename: 'church.pdf', fulltext: true },
        { key: 'LINK2222', contentType: 'text/html', linkMode: 'linked_url', fulltext: false },
      ],
      fulltext: true,
    });
    expect(d.abstract!.length).toBeLessThanOrEqual(401);
    expect(d.abstract!.endsWith('…')).toBe(true);
    expect(d.inTrash).toBeUndefined();
    const text = digestText(d);
    expect(text.split('\n')[0]).toBe(`CHURCH22  ${d.citation}`);
    expect(text).toContain('Collections: Sea Level, GONE2345');
    expect(text).toContain('Full text: yes');
  });

  it('known full-text keys override the file-type guess; trashed items say so', () => {
    const trashed = { ...church, data: { ...church.data, deleted: 1 as const } };
    const d = digestOf(trashed, children, names, new Set());
    expect(d.fulltext).toBe(false);
    expect(d.inTrash).toBe(true);
    expect(digestText(d)).toContain('IN TRASH');
  });

  it('excerpts cut at a word boundary', () => {
    expect(excerpt('short', 10)).toEqual({ text: 'short', truncated: false });
    expect(excerpt('one two three four five', 12)).toEqual({ text: 'one two…', truncated: true });
  });

  it('result lines: key, type, year, creator summary, title', () => {
    expect(resultLine(church)).toBe(
      'CHURCH22  journalArticle    2011  Church and White — Sea-level rise from the late 19th to the early 21st century',
    );
  });
});
