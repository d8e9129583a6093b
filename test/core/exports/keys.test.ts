/**
 * Citation keys: the sources in Zotero's order (Extra, the citationKey field) then Better
 * BibTeX's, then Zotero's formula `%a_%t_%y`; clashes suffixed -1, -2 in order of date added
 * and item key; stable and unique over a 5,000-item library when 100 later items are added.
 */
import { describe, expect, it } from 'vitest';
import { createKeyAssigner, generatedKeyBase, ownKeyOf } from '../../../src/core/exports/keys.js';
import type { WebApiItem } from '../../../src/core/local/sqlite/types.js';
import { item, org, person, schema } from './helpers.js';

const base = (input: Parameters<typeof item>[1], itemType = 'journalArticle') =>
  generatedKeyBase(item(itemType, input), schema);

describe("Zotero's formula %a_%t_%y", () => {
  it.each<[string, Parameters<typeof item>[1], string]>([
    [
      'first creator, first title word, year',
      { creators: [person('Ada', 'Lovelace')], title: 'Notes on the engine', date: '1843' },
      'lovelace_notes_1843',
    ],
    [
      'articles and short prepositions left out',
      { creators: [person('C', 'Darwin')], title: 'On the Origin of Species', date: '1859-11-24' },
      'darwin_origin_1859',
    ],
    [
      'German and French articles too',
      { creators: [person('A', 'B')], title: 'Die Welt als Wille', date: '1818' },
      'b_welt_1818',
    ],
    [
      "l' and d' go with the word",
      { creators: [person('A', 'B')], title: "L'Ordre du discours", date: '1971' },
      'b_ordre_1971',
    ],
    [
      'markup is not a word',
      { creators: [person('A', 'B')], title: '<i>Homo sapiens</i> genomes', date: '2001' },
      'b_homo_2001',
    ],
    [
      'spaces in a last name become _',
      { creators: [person('Ludwig', 'van Beethoven')], title: 'Symphony', date: '1808' },
      'van_beethoven_symphony_1808',
    ],
    [
      'a single-field name',
      { creators: [org('World Health Organization')], title: 'Report', date: '2020' },
      'world_health_organization_report_2020',
    ],
    [
      'the first creator whatever the role',
      { creators: [person('E', 'Editor', 'editor'), person('A', 'Author')], title: 'X', date: '2001' },
      'editor_x_2001',
    ],
    [
      'diacritics folded',
      { creators: [person('Jörg', 'Müller')], title: 'Über Straßen', date: '2019' },
      'muller_uber_2019',
    ],
    [
      'ł, ø, æ, ß folded as Zotero does',
      { creators: [person('Ł', 'Łukasiewicz')], title: 'Æsthetik der Straße', date: '1920' },
      'lukasiewicz_aesthetik_1920',
    ],
    ['no creator, no title, no date', { title: '' }, 'noauthor_notitle_nodate'],
    [
      'an undated item',
      { creators: [person('A', 'Smith')], title: 'Letters', date: 'n.d.' },
      'smith_letters_nodate',
    ],
    [
      'a written date',
      { creators: [person('A', 'Smith')], title: 'Letters', date: 'Spring 1999' },
      'smith_letters_1999',
    ],
    [
      'a Chinese title leaves nothing of itself (added 2020 or later)',
      { creators: [person('Wei', 'Wang')], title: '中国 科学', date: '2020' },
      'wang__2020',
    ],
    [
      'items added from 2020 keep only [a-z0-9_-]',
      {
        creators: [person('A', "O'Neil")],
        title: 'C++: a primer',
        date: '2010',
        dateAdded: '2021-05-01T00:00:00Z',
      },
      'oneil_c_2010',
    ],
    [
      "items added before 2020 keep Zotero's legacy set",
      {
        creators: [person('A', "O'Neil")],
        title: 'C++: a primer',
        date: '2010',
        dateAdded: '2015-05-01T00:00:00Z',
      },
      'oneil_c++:_2010',
    ],
  ])('%s', (_name, input, expected) => {
    expect(base(input)).toBe(expected);
  });

  it("reads the type's own fields through their base fields (a case's name and decision date)", () => {
    expect(
      base(
        {
          creators: [person('A', 'Court')],
          caseName: 'Brown v. Board of Education',
          dateDecided: '1954-05-17',
        },
        'case',
      ),
    ).toBe('court_brown_1954');
  });
});

describe('where the key comes from', () => {
  const assign = (items: WebApiItem[], betterBibtex?: Map<string, string>) => {
    const assigner = createKeyAssigner({ schema, unique: 'export', betterBibtex });
    for (const i of items) assigner.add(i);
    return assigner.assign();
  };

  it('Extra first, then the citationKey field, then Better BibTeX, then the formula', () => {
    const a = item('book', {
      key: 'AAAAAAAA',
      title: 'One',
      creators: [person('A', 'Ames')],
      date: '2001',
      extra: 'Other: x\ncitation key: fromExtra',
      citationKey: 'fromField',
    });
    const b = item('book', {
      key: 'BBBBBBBB',
      title: 'Two',
      creators: [person('B', 'Bell')],
      date: '2002',
      citationKey: 'fromField',
    });
    const c = item('book', {
      key: 'CCCCCCCC',
      title: 'Three',
      creators: [person('C', 'Cole')],
      date: '2003',
    });
    const d = item('book', { key: 'DDDDDDDD', title: 'Four', creators: [person('D', 'Dale')], date: '2004' });
    const keys = assign(
      [a, b, c, d],
      new Map([
        ['CCCCCCCC', 'cole2003three'],
        ['BBBBBBBB', 'ignored'],
      ]),
    );
    expect([...keys.entries()]).toEqual([
      ['AAAAAAAA', { citationKey: 'fromExtra', source: 'extra' }],
      ['BBBBBBBB', { citationKey: 'fromField', source: 'field' }],
      ['CCCCCCCC', { citationKey: 'cole2003three', source: 'better-bibtex' }],
      ['DDDDDDDD', { citationKey: 'dale_four_2004', source: 'generated' }],
    ]);
    expect(keys.unique).toBe('export');
    expect(keys.size).toBe(4);
    expect(keys.get('ZZZZZZZZ')).toBeUndefined();
    expect(ownKeyOf(d)).toBeUndefined();
  });

  it('notes and attachments get no key', () => {
    const keys = assign([item('note', { key: 'NOTENOTE' }), item('attachment', { key: 'ATTACHME' })]);
    expect(keys.size).toBe(0);
  });

  it('two items with the same key of their own are reported, not changed', () => {
    const keys = assign([
      item('book', { key: 'AAAAAAAA', citationKey: 'same' }),
      item('book', { key: 'BBBBBBBB', extra: 'Citation Key: same' }),
    ]);
    expect(keys.get('AAAAAAAA')?.citationKey).toBe('same');
    expect(keys.get('BBBBBBBB')?.citationKey).toBe('same');
    expect(keys.duplicates).toEqual([{ citationKey: 'same', itemKeys: ['AAAAAAAA', 'BBBBBBBB'] }]);
  });

  it("a generated key never takes another item's own key", () => {
    const keys = assign([
      item('book', { key: 'AAAAAAAA', title: 'Theory', creators: [person('A', 'Smith')], date: '2020' }),
      item('book', { key: 'BBBBBBBB', citationKey: 'smith_theory_2020', dateAdded: '2030-01-01T00:00:00Z' }),
    ]);
    expect(keys.get('AAAAAAAA')?.citationKey).toBe('smith_theory_2020-1');
    expect(keys.duplicates).toEqual([]);
  });
});

describe('clashes: -1, -2 in order of date added, then item key, never export order', () => {
  const same = (key: string, dateAdded: string) =>
    item('journalArticle', {
      key,
      dateAdded,
      title: 'The Theory',
      creators: [person('Ann', 'Smith')],
      date: '2020',
    });
  const items = [
    same('ZZZZ0001', '2021-01-01T00:00:00Z'),
    same('MMMM0002', '2020-06-01T00:00:00Z'),
    same('BBBB0003', '2022-03-01T00:00:00Z'),
    // Added at the same moment as MMMM0002: the item key decides.
    same('AAAA0004', '2020-06-01T00:00:00Z'),
  ];

  it.each([
    ['as listed', [0, 1, 2, 3]],
    ['reversed', [3, 2, 1, 0]],
    ['shuffled', [2, 0, 3, 1]],
  ])('%s', (_name, order) => {
    const assigner = createKeyAssigner({ schema, unique: 'library' });
    for (const i of order) assigner.add(items[i] as WebApiItem);
    const keys = assigner.assign();
    expect(keys.get('AAAA0004')?.citationKey).toBe('smith_theory_2020');
    expect(keys.get('MMMM0002')?.citationKey).toBe('smith_theory_2020-1');
    expect(keys.get('ZZZZ0001')?.citationKey).toBe('smith_theory_2020-2');
    expect(keys.get('BBBB0003')?.citationKey).toBe('smith_theory_2020-3');
  });

  it("zotero.sqlite's date form sorts with the Web API's", () => {
    const assigner = createKeyAssigner({ schema, unique: 'library' });
    assigner.add(same('LATER001', '2020-06-01 00:00:01'));
    assigner.add(same('EARLIER1', '2020-06-01T00:00:00Z'));
    const keys = assigner.assign();
    expect(keys.get('EARLIER1')?.citationKey).toBe('smith_theory_2020');
    expect(keys.get('LATER001')?.citationKey).toBe('smith_theory_2020-1');
  });
});

describe('a 5,000-item library', () => {
  // Few names, words and years, so that thousands of items share a key base.
  const LAST = ['Smith', 'Müller', 'Nguyen', 'García', 'Øberg', 'Kowalski', 'Li', 'van Dijk'];
  const WORDS = ['Theory', 'Climate', 'Networks', 'Evolution', 'Über', 'Data', 'Ice', 'Models', 'Learning'];
  const YEARS = ['2018', '2019', '2020', '2021', 'n.d.'];
  const KEY_CHARS = '23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';

  function libraryItem(n: number, start: number): WebApiItem {
    let key = '';
    for (let v = n, i = 0; i < 8; i++, v = Math.floor(v / KEY_CHARS.length))
      key += KEY_CHARS[v % KEY_CHARS.length];
    const added = new Date(start + n * 60_000).toISOString().replace('.000Z', 'Z');
    return item('journalArticle', {
      key,
      dateAdded: added,
      title: `The ${WORDS[n % WORDS.length]} of things ${n}`,
      creators: [person('A.', LAST[(n * 7) % LAST.length] as string)],
      date: YEARS[(n * 3) % YEARS.length],
      ...(n % 97 === 0 ? { extra: `Citation Key: pinned${n}` } : {}),
    });
  }

  const START = Date.UTC(2020, 0, 1);
  const library = Array.from({ length: 5000 }, (_, n) => libraryItem(n, START));
  const later = Array.from({ length: 100 }, (_, n) => libraryItem(5000 + n, START));

  function assignAll(items: WebApiItem[]) {
    const assigner = createKeyAssigner({ schema, unique: 'library' });
    for (const i of items) assigner.add(i);
    return assigner.assign();
  }

  it('every key unique; adding 100 later items changes none of the 5,000; order does not matter', () => {
    const before = assignAll(library);
    expect(before.size).toBe(5000);
    const keys = [...before.entries()].map(([, k]) => k.citationKey);
    expect(new Set(keys).size).toBe(5000);
    expect(keys.filter((k) => /-\d+$/.test(k)).length).toBeGreaterThan(4000);

    // New items are added later; they come into the set in any order (here: first).
    const after = assignAll([...later.reverse(), ...library]);
    expect(after.size).toBe(5100);
    for (const [itemKey, key] of before.entries()) expect(after.get(itemKey)).toEqual(key);
    expect(new Set([...after.entries()].map(([, k]) => k.citationKey)).size).toBe(5100);

    // The same library in another order gives the same keys.
    const shuffled = [...library].sort((a, b) =>
      a.key.split('').reverse().join('') < b.key.split('').reverse().join('') ? -1 : 1,
    );
    const again = assignAll(shuffled);
    for (const [itemKey, key] of before.entries()) expect(again.get(itemKey)).toEqual(key);
  });

  it('sources are reported per key', () => {
    const keys = assignAll(library);
    const sources = new Map<string, number>();
    for (const [, k] of keys.entries()) sources.set(k.source, (sources.get(k.source) ?? 0) + 1);
    expect(Object.fromEntries(sources)).toEqual({ extra: 52, generated: 4948 });
  });
});
