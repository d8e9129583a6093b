/** The fixture writers read back by the product's readers: ZIP, EPUB, PDF; and the passage model. */
import { describe, expect, it } from 'vitest';
import { chunks, isHeadingLine, locate, searchPassages } from '../../../src/core/fulltext/document.js';
import { extractEpub } from '../../../src/core/fulltext/epub.js';
import { fromIndexText } from '../../../src/core/fulltext/get.js';
import { extractPdf } from '../../../src/core/fulltext/pdf.js';
import { openZip } from '../../../src/core/fulltext/zip.js';
import { makeEpub, makePdf, makeZip, paperPages } from '../../support/documents/index.js';

describe('zip', () => {
  it('reads stored and deflated entries through the central directory', () => {
    const zip = openZip(
      makeZip([
        { name: 'a.txt', data: 'stored text' },
        { name: 'dir/b.txt', data: 'deflated '.repeat(100), deflate: true },
      ]),
    );
    expect([...zip.entries.keys()]).toEqual(['a.txt', 'dir/b.txt']);
    expect(zip.read('a.txt')!.toString()).toBe('stored text');
    expect(zip.read('dir/b.txt')!.toString()).toBe('deflated '.repeat(100));
    expect(zip.read('missing')).toBeUndefined();
    expect(() => openZip(Buffer.from('not a zip at all, not at all'))).toThrow(/not a readable ZIP/);
  });
});

describe('epub', () => {
  it('follows the spine, strips XHTML, decodes entities and records headings', () => {
    for (const deflate of [false, true]) {
      const doc = extractEpub(
        makeEpub({
          title: 'T',
          deflate,
          chapters: [
            { title: 'One', paragraphs: ['A & B < C.'] },
            {
              title: 'Two',
              paragraphs: ['Last.'],
              sections: [{ heading: 'Two point one', paragraphs: ['Deep.'] }],
            },
          ],
        }),
      );
      expect(doc.text).toBe('One\nA & B < C.\n\nTwo\nLast.\nTwo point one\nDeep.');
      expect(doc.headings).toEqual([
        { offset: 0, text: 'One', level: 1 },
        { offset: 16, text: 'Two', level: 1 },
        { offset: 26, text: 'Two point one', level: 2 },
      ]);
    }
  });
});

describe('pdf', () => {
  it('text per page with exact page starts; the outline with pages and levels', async () => {
    const pages = paperPages(3);
    const doc = await extractPdf(
      new Uint8Array(
        makePdf({ pages, outline: [{ title: 'Start', page: 1, children: [{ title: 'Deeper', page: 3 }] }] }),
      ),
      { outline: true },
    );
    expect(doc.text).toBe(pages.map((p) => p.join('\n')).join('\n\n'));
    expect(doc.pageStarts).toEqual([0, doc.text.indexOf('2 Section 2'), doc.text.indexOf('3 Section 3')]);
    expect(doc.totalPages).toBe(3);
    expect(doc.outline).toEqual([
      { title: 'Start', page: 1, level: 1 },
      { title: 'Deeper', page: 3, level: 2 },
    ]);
  });

  it('a file that is not a PDF is a validation_error', async () => {
    await expect(extractPdf(new Uint8Array(Buffer.from('hello')))).rejects.toMatchObject({
      code: 'validation_error',
    });
  });
});

describe('passages', () => {
  it('never cross a page or a heading; offsets slice the text', () => {
    const text = '1 Intro\naaa bbb\n\n2 Next\nccc ddd aaa';
    const doc = { text, pageStarts: [0, text.indexOf('2 Next')] };
    const pieces = chunks(doc);
    expect(pieces.map((c) => text.slice(c.start, c.end))).toEqual([
      '1 Intro\naaa bbb',
      '2 Next\nccc ddd aaa',
    ]);
    const { passages } = searchPassages(doc, 'ddd aaa', 5);
    expect(passages.map((p) => [p.page, p.heading])).toEqual([
      [2, '2 Next'],
      [1, '1 Intro'],
    ]);
  });

  it('pageApprox scales the position; form feeds are exact pages', () => {
    expect(locate({ text: 'x'.repeat(1000), totalPages: 10 }, 0)).toEqual({ pageApprox: 1 });
    expect(locate({ text: 'x'.repeat(1000), totalPages: 10 }, 999)).toEqual({ pageApprox: 10 });
    expect(locate({ text: 'x'.repeat(1000), totalPages: 10 }, 455)).toEqual({ pageApprox: 5 });
    expect(locate({ text: 'x' }, 0)).toEqual({});
    const doc = fromIndexText('one\ftwo\fthree\f', 3);
    expect(doc).toEqual({ text: 'one\ntwo\nthree\n', pageStarts: [0, 4, 8], totalPages: 3 });
  });

  it('heading-like lines', () => {
    for (const h of ['1 Introduction', '2.3 Sea ice', 'ABSTRACT', 'Chapter 4', 'References'])
      expect(isHeadingLine(h)).toBe(true);
    for (const l of [
      'This is a sentence.',
      'the lowercase line',
      '1',
      'A line that goes on, and on, and on with many many many words in it',
    ]) {
      expect(isHeadingLine(l)).toBe(false);
    }
  });
});
