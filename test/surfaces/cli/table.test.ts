/** Table mode renders the same bytes for the same output, and never breaks or cuts a row. */
import { describe, expect, it } from 'vitest';
import { ansiStyle, renderObject, renderRows } from '../../../src/surfaces/cli/table.js';

describe('renderRows', () => {
  it('aligns columns, rules the header, and keeps every character of every cell', () => {
    const text = renderRows([
      { key: 'ABCD2345', name: 'Ökologie – Übersicht', parentCollection: false, numItems: 12 },
      { key: 'WXYZ6789', name: 'A', parentCollection: 'ABCD2345', numItems: 0 },
    ]);
    expect(text).toBe(
      [
        'key       name                  parentCollection  numItems',
        '--------  --------------------  ----------------  --------',
        'ABCD2345  Ökologie – Übersicht  false             12',
        'WXYZ6789  A                     ABCD2345          0',
        '',
      ].join('\n'),
    );
  });

  it('folds line breaks so a cell cannot break its row, and shows absent values as empty', () => {
    const text = renderRows([
      { a: 'two\nlines', b: null },
      { a: 'x', c: ['p', 'q'] },
    ]);
    expect(text.split('\n')).toEqual([
      'a          b  c',
      '---------  -  ----',
      'two lines',
      'x             p, q',
      '',
    ]);
  });

  it('says so when there are no rows', () => {
    expect(renderRows([])).toBe('(no rows)\n');
  });

  it('bolds only the header with the ANSI style', () => {
    expect(renderRows([{ a: 1 }], ansiStyle)).toBe('\u001b[1ma\u001b[22m\n-\n1\n');
  });
});

describe('renderObject', () => {
  it('flattens nested objects into dotted keys', () => {
    expect(renderObject({ version: '1', backends: { web: { configured: true } }, tags: ['a'] })).toBe(
      'version                  1\nbackends.web.configured  true\ntags                     a\n',
    );
  });

  it('leaves out rows with nothing in them: empty lists, empty objects, empty strings, null', () => {
    const text = renderObject({
      deleted: ['ABCD2345'],
      children: [],
      failed: [],
      note: '',
      parent: null,
      extra: {},
      nested: { empty: [], gone: { deeper: null }, kept: 0 },
      flag: false,
    });
    expect(text).toBe('deleted      ABCD2345\nnested.kept  0\nflag         false\n');
    expect(renderObject({ failed: [], children: [] })).toBe('');
  });

  it('shows a list of objects as an indented sub-table under its key, never as JSON', () => {
    const text = renderObject({
      version: '1.2.0',
      library: { type: 'user', id: 8675309 },
      libraries: [
        { library: 'users/8675309', name: 'My Library', items: 12 },
        { library: 'groups/42', name: 'Lab', items: 3 },
      ],
      tags: ['a', 'b'],
    });
    expect(text).toBe(
      [
        'version       1.2.0',
        'library.type  user',
        'library.id    8675309',
        'libraries',
        '  library        name        items',
        '  -------------  ----------  -----',
        '  users/8675309  My Library  12',
        '  groups/42      Lab         3',
        'tags          a, b',
        '',
      ].join('\n'),
    );
    expect(text).not.toMatch(/[{}[\]]/);
  });
});

describe('nested values in rows', () => {
  it('spreads an object into dotted columns and reads a list of objects as key: value pairs', () => {
    const text = renderRows([
      { key: 'ABCD2345', ranks: { keyword: 1, vector: null }, matched: [{ field: 'title', child: null }] },
      { key: 'WXYZ6789', ranks: { keyword: 2, vector: 1 }, matched: [] },
    ]);
    expect(text.split('\n')).toEqual([
      'key       ranks.keyword  ranks.vector  matched',
      '--------  -------------  ------------  ------------',
      'ABCD2345  1                            field: title',
      'WXYZ6789  2              1',
      '',
    ]);
  });
});

describe('nested lists of objects in a detail view', () => {
  it('rows that hold lists of objects read one entry after another, each after a "- "', () => {
    const text = renderObject({
      name: 'zot',
      subcommands: [
        { name: 'read', params: [{ name: 'item_key', type: 'string' }] },
        { name: 'list', params: [] },
      ],
    });
    expect(text.split('\n')).toEqual([
      'name  zot',
      'subcommands',
      '  - name  read',
      '    params',
      '      name      type',
      '      --------  ------',
      '      item_key  string',
      '  - name  list',
      '',
    ]);
  });

  it('a sub-table that fits the width stays a table; one that does not becomes entries, nothing cut', () => {
    const libraries = [
      { library: 'users/1', reason: 'the desktop app is signed in as user 1, so reads go to zotero.sqlite' },
      { library: 'groups/2', reason: 'the desktop app holds group 2' },
    ];
    expect(renderObject({ libraries }, undefined, 120).split('\n').slice(0, 3)).toEqual([
      'libraries',
      '  library   reason',
      '  --------  --------------------------------------------------------------------',
    ]);
    const narrow = renderObject({ libraries }, undefined, 50);
    expect(narrow.split('\n')).toEqual([
      'libraries',
      '  - library  users/1',
      '    reason   the desktop app is signed in as user',
      '             1, so reads go to zotero.sqlite',
      '  - library  groups/2',
      '    reason   the desktop app holds group 2',
      '',
    ]);
    expect(narrow).not.toContain('…');
  });

  it('a value laid out over several lines is printed under its key as it is', () => {
    const table = '| a | b |\n| --- | --- |\n| a long cell that is wider than the terminal | x |\n';
    expect(renderObject({ format: 'markdown', table }, undefined, 30)).toBe(
      `format  markdown\ntable\n${table}`,
    );
  });
});
