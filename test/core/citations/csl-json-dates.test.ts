/**
 * Dates of the CSL mapping: Zotero's reading of free-text dates (year only, month and year,
 * US order, day and month swapped, CJK, seasons, BC, two-digit years), what 2026's Zotero adds
 * (quoted literals, EDTF circa, seasons and intervals, written ranges, circa words), literals
 * when there is no year, and access dates in local time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { toCslJson } from '../../../src/core/citations/csl-json.js';
import { accessDateToCsl, dateToCsl, strToDate } from '../../../src/core/citations/dates.js';
import { buildSchema, readBundledSchema } from '../../../src/core/items/schema.js';

const schema = buildSchema(readBundledSchema(), 'bundled');

describe("Zotero's reading of a date", () => {
  it.each<[string, ReturnType<typeof strToDate>]>([
    ['2019', { year: 2019 }],
    ['May 2019', { year: 2019, month: 5 }],
    ['May 4, 2019', { year: 2019, month: 5, day: 4 }],
    ['4th of September 2019', { year: 2019, month: 9, day: 4, part: 'of' }],
    ['05/04/2019', { year: 2019, month: 5, day: 4 }],
    ['13/04/2019', { year: 2019, month: 4, day: 13 }],
    ['2019-05-04', { year: 2019, month: 5, day: 4 }],
    ['2019.05.04', { year: 2019, month: 5, day: 4 }],
    ['2019年5月4日', { year: 2019, month: 5, day: 4 }],
    ['Summer 2019', { year: 2019, part: 'Summer' }],
    ['Dec. 1999', { year: 1999, month: 12 }],
    ['500 BC', { year: -500 }],
    ['c. 300 BC', { year: -300, circa: true }],
    // Zotero reads a circa word only before a year with an era; dateToCsl reads it first.
    ['c. 1900', { year: 1900, part: 'c' }],
    ['no date', { part: 'no date' }],
  ])('%s', (input, expected) => {
    expect(strToDate(input)).toEqual(expected);
  });

  it('reads two-digit years against the reference year, as Zotero does', () => {
    expect(strToDate('5/4/19', { referenceYear: 2026 })).toEqual({ year: 2019, month: 5, day: 4 });
    expect(strToDate('5/4/48', { referenceYear: 2026 })).toEqual({ year: 1948, month: 5, day: 4 });
    expect(strToDate('5/4/0019', { referenceYear: 2026 })).toEqual({ year: 19, month: 5, day: 4 });
  });
});

describe('CSL dates', () => {
  it.each<[string, unknown]>([
    ['2019', { 'date-parts': [[2019]] }],
    ['  May   2019 ', { 'date-parts': [[2019, 5]] }],
    ['March 5, 2020', { 'date-parts': [[2020, 3, 5]] }],
    ['2019-03-15T10:00:00Z', { 'date-parts': [[2019, 3, 15]] }],
    ['Summer 2019', { 'date-parts': [[2019]], season: 'Summer' }],
    ['Winter 2020', { 'date-parts': [[2020]], season: 'Winter' }],
    // A season is only kept when there is no month.
    ['Early May 2019', { 'date-parts': [[2019, 5]] }],
    // EDTF seasons, approximate dates and intervals.
    ['2019-21', { 'date-parts': [[2019]], season: 1 }],
    ['2019-24', { 'date-parts': [[2019]], season: 4 }],
    ['1900~', { 'date-parts': [[1900]], circa: true }],
    ['1900-05%', { 'date-parts': [[1900, 5]], circa: true }],
    ['2019/2020', { 'date-parts': [[2019], [2020]] }],
    [
      '2019-05/2019-06-10',
      {
        'date-parts': [
          [2019, 5],
          [2019, 6, 10],
        ],
      },
    ],
    ['2019~/2020', { 'date-parts': [[2019], [2020]], circa: true }],
    // Written ranges.
    ['2019-2020', { 'date-parts': [[2019], [2020]] }],
    ['1998–2001', { 'date-parts': [[1998], [2001]] }],
    ['1998 - 2001', { 'date-parts': [[1998], [2001]] }],
    [
      'May–June 2020',
      {
        'date-parts': [
          [2020, 5],
          [2020, 6],
        ],
      },
    ],
    [
      '3 May 2019 - 5 June 2020',
      {
        'date-parts': [
          [2019, 5, 3],
          [2020, 6, 5],
        ],
      },
    ],
    // Circa words.
    ['circa 1900', { 'date-parts': [[1900]], circa: true }],
    ['ca. 1900', { 'date-parts': [[1900]], circa: true }],
    ['ca 1900', { 'date-parts': [[1900]], circa: true }],
    ['c.1900', { 'date-parts': [[1900]], circa: true }],
    ['about May 1900', { 'date-parts': [[1900, 5]], circa: true }],
    ['ca. 1900–1910', { 'date-parts': [[1900], [1910]], circa: true }],
    // Literals: quoted, or no year.
    ['"In the year of the flood, 1900"', { literal: 'In the year of the flood, 1900' }],
    ['n.d.', { literal: 'n.d.' }],
    ['forthcoming', { literal: 'forthcoming' }],
    ['Canada Day', { literal: 'Canada Day' }],
    ['500 BC', { 'date-parts': [[-500]] }],
  ])('%s', (input, expected) => {
    expect(dateToCsl(input)).toEqual(expected);
  });

  it('an empty date is no date', () => {
    expect(dateToCsl('')).toBeUndefined();
    expect(dateToCsl('   ')).toBeUndefined();
  });

  it('a range whose end comes before its start is not a range', () => {
    expect(dateToCsl('2020–2019')).not.toHaveProperty('date-parts', [[2020], [2019]]);
  });
});

describe('access dates, in local time as Zotero cites them', () => {
  const tz = process.env.TZ;
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it('a UTC timestamp is read in the local time zone', () => {
    process.env.TZ = 'America/New_York';
    expect(accessDateToCsl('2023-01-10T03:30:00Z')).toEqual({ 'date-parts': [[2023, 1, 9]] });
    expect(accessDateToCsl('2023-01-10 03:30:00')).toEqual({ 'date-parts': [[2023, 1, 9]] });
    process.env.TZ = 'Asia/Tokyo';
    expect(accessDateToCsl('2023-01-10T20:30:00Z')).toEqual({ 'date-parts': [[2023, 1, 11]] });
  });

  it('a plain date, or a date without a time, is read as written', () => {
    process.env.TZ = 'America/New_York';
    expect(accessDateToCsl('2024-02-29')).toEqual({ 'date-parts': [[2024, 2, 29]] });
    expect(accessDateToCsl('2024-02')).toEqual({ 'date-parts': [[2024, 2]] });
    expect(accessDateToCsl('yesterday')).toEqual({ literal: 'yesterday' });
  });

  it('toCslJson maps accessDate to accessed that way, and the other dates as written', () => {
    process.env.TZ = 'America/New_York';
    const csl = toCslJson(
      {
        key: 'ACCE2345',
        version: 1,
        library: { type: 'user', id: 1, name: '' },
        meta: {},
        data: {
          key: 'ACCE2345',
          version: 1,
          itemType: 'webpage',
          title: 'Page',
          date: '2023-01-10T03:30:00Z',
          accessDate: '2023-01-10T03:30:00Z',
          tags: [],
          relations: {},
          dateAdded: '2024-01-01T00:00:00Z',
          dateModified: '2024-01-01T00:00:00Z',
        },
      },
      schema,
    );
    expect(csl.issued).toEqual({ 'date-parts': [[2023, 1, 10]] });
    expect(csl.accessed).toEqual({ 'date-parts': [[2023, 1, 9]] });
  });
});
