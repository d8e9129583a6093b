/** Note HTML, and the pure retry/merge helpers behind idempotent re-runs. */
import { describe, expect, it } from 'vitest';
import {
  htmlToText,
  jatsToText,
  looksLikeHtml,
  noteHtml,
  textToNoteHtml,
} from '../../../src/core/items/html.js';
import {
  mergeCreate,
  mergeImport,
  remapFailed,
  retryCreateInput,
  retryImportInput,
} from '../../../src/core/items/retry.js';
import { renameTag } from '../../../src/core/items/tags.js';
import { fromTrash, toTrash } from '../../../src/core/items/trash.js';

describe('note HTML', () => {
  it('escapes every character of plain text and keeps its shape', () => {
    expect(textToNoteHtml(`a<b>&"c'\r\nd\n\n\ne`)).toBe('<p>a&lt;b&gt;&amp;&quot;c&#39;<br>d</p>\n<p>e</p>');
    expect(textToNoteHtml('   ')).toBe('<p></p>');
  });

  it('HTML is kept; a body without tags is text', () => {
    expect(noteHtml({ html: '<p>x</p>' })).toBe('<p>x</p>');
    expect(noteHtml({ html: 'a < b' })).toBe('<p>a &lt; b</p>');
    expect(() => noteHtml({})).toThrow(/empty/);
    expect(() => noteHtml({ text: 'a', html: '<p>b</p>' })).toThrow(/not both/);
    expect(looksLikeHtml('x <br/> y')).toBe(true);
    expect(looksLikeHtml('1 < 2 > 0')).toBe(false);
  });

  it('HTML and JATS to text', () => {
    expect(
      htmlToText('<h1>T</h1><p>a&nbsp;&amp; <em>b</em><br>c</p><ul><li>x</li></ul><script>evil()</script>'),
    ).toBe('T\na\u00a0& b\nc\n- x'.replace('\u00a0', ' '));
    expect(
      jatsToText('<jats:title>Abstract</jats:title><jats:p>One.</jats:p><jats:p>Two &#233;.</jats:p>'),
    ).toBe('One.\nTwo é.');
  });
});

describe('set-like changes', () => {
  it('rename keeps the type and merges into an existing tag; trash flags are set only when needed', () => {
    expect(renameTag('a', 'b')({ tags: [{ tag: 'a', type: 1 }, { tag: 'c' }] })).toEqual({
      tags: [{ tag: 'b', type: 1 }, { tag: 'c' }],
    });
    expect(renameTag('a', 'b')({ tags: [{ tag: 'a' }, { tag: 'b' }] })).toEqual({ tags: [{ tag: 'b' }] });
    expect(renameTag('a', 'b')({ tags: [{ tag: 'c' }] })).toBeNull();
    expect(toTrash({ deleted: true })).toBeNull();
    expect(toTrash({})).toEqual({ deleted: true });
    expect(fromTrash({})).toBeNull();
    expect(fromTrash({ deleted: 1 })).toEqual({ deleted: false });
  });
});

describe('retries', () => {
  it('create: a retry runs the whole input again (keys follow the index, landed ones are read back)', () => {
    const input = { items: [{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }] };
    const previous = {
      created: [
        { index: 0, key: 'AAAA2222', itemType: 'book' },
        { index: 2, key: 'CCCC2222', itemType: 'book' },
      ],
      failed: [
        { index: 3, code: 409, message: 'x', reason: 'conflict', retryable: false },
        { index: 1, code: 409, message: 'y', reason: 'conflict', retryable: false },
      ],
    };
    expect(retryCreateInput(input, previous)).toBe(input);
    const retry = {
      created: [
        { index: 0, key: 'AAAA2222', itemType: 'book' },
        { index: 2, key: 'CCCC2222', itemType: 'book' },
        { index: 3, key: 'DDDD2222', itemType: 'book' },
      ],
      failed: [{ index: 1, code: 409, message: 'still', reason: 'conflict', retryable: false }],
      libraryVersion: 9,
    };
    expect(mergeCreate(previous, retry)).toEqual(retry);
    expect(retryCreateInput(input, { created: [], failed: [] })).toBeNull();
  });

  it('import: only failed entries, in the file’s own format', () => {
    const previous = {
      succeeded: [{ entry: '10.1/a', key: 'AAAA2222' }],
      unchanged: [],
      failed: [{ entry: '10.1/b', error: { code: 'not_found', message: 'x', retryable: false } }],
      total: 2,
    };
    expect(retryImportInput({ records: '10.1/a\n10.1/b\n' }, previous)).toEqual({
      records: '10.1/b',
      format: 'identifiers',
    });
    expect(retryImportInput({ identifiers: ['10.1/a', '10.1/b'] }, previous)).toEqual({
      identifiers: ['10.1/b'],
    });
    const bib = '@article{a, title={A}, doi={10.1/a}}\n@article{b, title={B}, doi={10.1/b}}';
    expect(retryImportInput({ records: bib }, previous)).toEqual({
      records: '@article{b, title={B}, doi={10.1/b}}',
      format: 'bibtex',
    });
    const merged = mergeImport(previous, {
      succeeded: [{ entry: '10.1/b', key: 'BBBB2222' }],
      unchanged: [],
      failed: [],
      total: 1,
    });
    expect(merged).toMatchObject({
      succeeded: [{ entry: '10.1/a' }, { entry: '10.1/b' }],
      failed: [],
      total: 2,
    });
  });

  it('object batches: failed entries back at their original indexes', () => {
    const previous = [
      { index: 4, key: 'AAAA2222', code: 412, message: '', reason: 'conflict', retryable: true },
      { index: 9, key: 'BBBB2222', code: 500, message: '', reason: 'api_error', retryable: true },
    ];
    expect(
      remapFailed(previous, [
        { index: 1, key: 'BBBB2222', code: 500, message: '', reason: 'api_error', retryable: true },
      ]),
    ).toEqual([{ index: 9, key: 'BBBB2222', code: 500, message: '', reason: 'api_error', retryable: true }]);
  });
});
