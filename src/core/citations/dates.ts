/**
 * Zotero's reading of a date field, and its CSL form.
 *
 * {@link strToDate} reads a free-text date the way Zotero's `Zotero.Date.strToDate` does with an
 * English (en-US) locale: an all-numeric date first (`2019-05-04`, `5/4/2019` month first, a
 * month over 12 swapped with the day, `2019年5月4日`), else a year (3–4 digits, or 1–4 with
 * BC/AD), an English month name (short or long, from the start of a word), a day (1–31, with
 * `st`/`nd`/`rd`/`th`), and the rest of the text as `part` ("Summer", "Spring/Summer").
 *
 * {@link dateToCsl} is what Zotero's CSL mapping makes of it: `date-parts` when there is a year
 * (month and day when found; `part` as `season` when there is no month), else `literal`. It
 * also reads what Zotero's mapping reads since 2026: a date in double quotes is a `literal`;
 * EDTF dates with `~` or `%` (approximate) are `circa`, EDTF seasons (`2019-21` … `-24`) a
 * season 1–4, EDTF intervals (`2019/2020`, `2019-05/2019-06-10`) ranges; written ranges
 * (`2019-2020`, `1998–2001`, `May – June 2020`, `3 May 2019 - 5 June 2020`) ranges too, and
 * `circa`, `ca.`, `c.`, `approx.`, `around`, `about` before a date make it `circa`.
 *
 * Pure: the only outside input is the clock's year for two-digit years (as Zotero: 19 is 2019
 * until the year 2020 … 2099 passes it), which a caller may fix with `referenceYear`.
 */
import type { CslDate } from './csl-types.js';

/** A date as Zotero reads it. `month` is 1–12. */
export interface ParsedDate {
  year?: number;
  month?: number;
  day?: number;
  /** Text that is neither year, month nor day ("Summer"); Zotero's `part`. */
  part?: string;
  /** The year was written with "circa", "around", "about" or "c." in front of it. */
  circa?: boolean;
}

export interface DateOptions {
  /** The year two-digit years are read against (default: the current year). */
  referenceYear?: number;
}

const MONTHS_SHORT = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTHS_LONG = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH_NAMES = [...MONTHS_SHORT, ...MONTHS_LONG];

/**
 * An all-numeric date somewhere in the text: `[before, first, sep1, second, sep2, third, after]`.
 * The first number is 1–4 digits, the second 1–2, the third 1–4; separators `-` `/` `.` or
 * 年/月.
 */
const NUMERIC_DATE = /^(.*?)\b(\d{1,4})(?:([-/.\u5e74])(\d{1,2}))?(?:([-/.\u6708])(\d{1,4}))?((?:\b|\D).*?)$/;
/** A year: 3–4 digits, or 1–4 with an era; optionally after circa/around/about/c. */
const YEAR =
  /^(.*?)\b((?:circa |around |about |c\.? ?)?\d{1,4}(?: ?B\.? ?C\.?(?: ?E\.?)?| ?C\.? ?E\.?| ?A\.? ?D\.?)|\d{3,4})\b(.*?)$/i;
/** An English month name at the start of a word (the last one in the text). */
const MONTH = new RegExp(`(.*)(?:^|[^\\p{L}])(${MONTH_NAMES.join('|')})[^ ]*(?: (.*)$|$)`, 'iu');
const DAY = /\b(\d{1,2})(?:st|nd|rd|th)?\b(.*)/i;

interface Piece {
  text: string;
}

/** Zotero's `Zotero.Date.strToDate` for an en-US locale (see the module comment). */
export function strToDate(input: string, options: DateOptions = {}): ParsedDate {
  const text = input.replace(/\s+/g, ' ').trim();
  if (text === '') return {};
  const out: ParsedDate = {};
  let pieces: Piece[] = [];

  const m = NUMERIC_DATE.exec(text);
  const [, before = '', first, sep1, second, sep2, third, after = ''] = m ?? [];
  const saneSeparators = !sep1 || !sep2 || sep1 === sep2 || (sep1 === '\u5e74' && sep2 === '\u6708');
  const wholeOrComplete = (first && second && third) || (!before && !after);
  if (m && first !== undefined && saneSeparators && wholeOrComplete) {
    let year: string | undefined;
    let month: string | undefined;
    let day: string | undefined;
    if (first.length >= 3 || sep1 === '\u5e74') {
      [year, month, day] = [first, second, third];
    } else if (!second && third) {
      [month, year] = [first, third];
    } else {
      // Middle endian, as in the United States: month/day/year.
      [month, day, year] = [first, second, third];
    }
    const longYear = year !== undefined && year.length > 2;
    let y = year ? Number.parseInt(year, 10) : undefined;
    let mo = month ? Number.parseInt(month, 10) : undefined;
    let d = day ? Number.parseInt(day, 10) : undefined;
    if (mo !== undefined && mo > 12) [mo, d] = [d, mo];
    if ((mo === undefined || mo <= 12) && (d === undefined || d <= 31)) {
      if (y !== undefined && y < 100 && !longYear) {
        const now = options.referenceYear ?? new Date().getFullYear();
        const twoDigit = now % 100;
        const century = now - twoDigit;
        y = y <= twoDigit ? century + y : century - 100 + y;
      }
      if (y !== undefined && !Number.isNaN(y)) out.year = y;
      if (mo) out.month = mo;
      if (d) out.day = d;
      pieces = [{ text: before }, { text: after }];
    } else {
      pieces = [{ text }];
    }
  } else {
    pieces = [{ text }];
  }

  if (out.year === undefined) {
    for (let i = 0; i < pieces.length; i++) {
      const ym = YEAR.exec((pieces[i] as Piece).text);
      if (!ym) continue;
      const yearText = ym[2] as string;
      out.year = yearNumber(yearText);
      if (/^(?:circa|around|about|c\.?) ?/i.test(yearText)) out.circa = true;
      pieces.splice(i, 1, { text: ym[1] ?? '' }, { text: ym[3] ?? '' });
      break;
    }
  }

  if (out.month === undefined) {
    for (let i = 0; i < pieces.length; i++) {
      const mm = MONTH.exec((pieces[i] as Piece).text);
      if (!mm) continue;
      out.month = (MONTH_NAMES.indexOf((mm[2] as string).toLowerCase()) % 12) + 1;
      pieces.splice(i, 1, { text: mm[1] ?? '' }, { text: mm[3] ?? '' });
      break;
    }
  }

  if (out.day === undefined) {
    for (let i = 0; i < pieces.length; i++) {
      const piece = (pieces[i] as Piece).text;
      const dm = DAY.exec(piece);
      if (!dm) continue;
      const day = Number.parseInt(dm[1] as string, 10);
      if (day > 31) continue;
      out.day = day;
      const rest = dm[2] ?? '';
      const left = dm.index > 0 ? piece.slice(0, dm.index) + (rest ? ` ${rest}` : '') : rest;
      pieces.splice(i, 1, { text: left });
      break;
    }
  }

  const part = pieces
    .map((p) => `${p.text} `)
    .join('')
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  if (part) out.part = part;
  return out;
}

/** `500 BC` → -500, `44 B.C.E.` → -44, `300 AD` → 300, `circa 1900` → 1900. */
function yearNumber(text: string): number {
  const digits = /\d{1,4}/.exec(text)?.[0] ?? '0';
  const n = Number.parseInt(digits, 10);
  return /B\.? ?C/i.test(text) ? -n : n;
}

type Parts = [number, number?, number?];

function partsOf(d: ParsedDate): Parts | undefined {
  if (d.year === undefined) return undefined;
  const parts: Parts = [d.year];
  if (d.month !== undefined) {
    parts.push(d.month);
    if (d.day) parts.push(d.day);
  }
  return parts;
}

/** Zotero's CSL date for one parsed date: date-parts (+ season when there is no month), else literal. */
function cslOf(d: ParsedDate, raw: string): CslDate {
  const parts = partsOf(d);
  if (!parts) return { literal: raw };
  const out: CslDate = { 'date-parts': [parts] };
  if (d.part && d.month === undefined) out.season = d.part;
  if (d.circa) out.circa = true;
  return out;
}

const EDTF_DATE = /^(-?\d{4})(?:-(\d{2})(?:-(\d{2}))?)?([~?%])?$/;

interface EdtfDate {
  parts: Parts;
  season?: number;
  approximate: boolean;
}

function edtfDate(text: string): EdtfDate | undefined {
  const m = EDTF_DATE.exec(text);
  if (!m) return undefined;
  const year = Number.parseInt(m[1] as string, 10);
  const month = m[2] === undefined ? undefined : Number.parseInt(m[2], 10);
  const day = m[3] === undefined ? undefined : Number.parseInt(m[3], 10);
  const approximate = m[4] === '~' || m[4] === '%';
  if (month !== undefined && month >= 21 && month <= 24 && day === undefined) {
    return { parts: [year], season: month - 20, approximate };
  }
  if (month !== undefined && (month < 1 || month > 12)) return undefined;
  if (day !== undefined && (day < 1 || day > 31)) return undefined;
  const parts: Parts = [year];
  if (month !== undefined) parts.push(month);
  if (day !== undefined) parts.push(day);
  return { parts, approximate };
}

/** EDTF: one date with a qualifier or a season, or an interval of two dates without seasons. */
function fromEdtf(text: string): CslDate | undefined {
  const halves = text.split('/');
  if (halves.length === 1) {
    const d = edtfDate(text);
    // A plain `2019-05-04` reads the same either way: only approximate dates and seasons here.
    if (!d || (!d.approximate && d.season === undefined)) return undefined;
    const out: CslDate = { 'date-parts': [d.parts] };
    if (d.season !== undefined) out.season = d.season;
    if (d.approximate) out.circa = true;
    return out;
  }
  if (halves.length !== 2) return undefined;
  const start = edtfDate(halves[0] as string);
  const end = edtfDate(halves[1] as string);
  if (!start || !end || start.season !== undefined || end.season !== undefined) return undefined;
  const out: CslDate = { 'date-parts': [start.parts, end.parts] };
  if (start.approximate || end.approximate) out.circa = true;
  return out;
}

function compareParts(a: Parts, b: Parts): number {
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x - y;
  }
  return 0;
}

/** A written range: two dates around a dash (or `YYYY-YYYY`, `YYYY/YYYY`), the start no later than the end. */
function fromWrittenRange(text: string, options: DateOptions): CslDate | undefined {
  let sides: [string, string] | undefined;
  const years = /^(\d{4})\s*[-/]\s*(\d{4})$/.exec(text);
  if (years) sides = [years[1] as string, years[2] as string];
  else {
    const byDash = text.split(/\s*[\u2013\u2014]\s*|\s+-\s+/);
    if (byDash.length === 2) sides = [byDash[0] as string, byDash[1] as string];
  }
  if (!sides) return undefined;
  const start = strToDate(sides[0], options);
  const end = strToDate(sides[1], options);
  if (end.year === undefined || start.part || end.part) return undefined;
  if (start.year === undefined) {
    if (start.month === undefined) return undefined;
    start.year = end.year;
  }
  const a = partsOf(start) as Parts;
  const b = partsOf(end) as Parts;
  if (compareParts(a, b) > 0) return undefined;
  const out: CslDate = { 'date-parts': [a, b] };
  if (start.circa || end.circa) out.circa = true;
  return out;
}

const CIRCA = /^(?:circa|ca\.?|c\.|approx(?:\.|imately)?|around|about)(?:\s+|(?<=\.))(?=\S)/i;

function withoutCirca(text: string, options: DateOptions): CslDate | undefined {
  const m = CIRCA.exec(text);
  if (!m) return undefined;
  const rest = text.slice(m[0].length);
  const inner = fromEdtf(rest) ?? fromWrittenRange(rest, options) ?? cslOf(strToDate(rest, options), rest);
  if (!inner['date-parts']) return undefined;
  return { ...inner, circa: true };
}

/**
 * A Zotero date field as a CSL date (see the module comment); undefined for an empty field.
 * `"…"` is a literal; EDTF and written ranges, circa; else Zotero's reading.
 */
export function dateToCsl(raw: string, options: DateOptions = {}): CslDate | undefined {
  const text = raw.replace(/\s+/g, ' ').trim();
  if (text === '') return undefined;
  const quoted = /^"(.+)"$/.exec(text);
  if (quoted) return { literal: quoted[1] as string };
  return (
    fromEdtf(text) ??
    fromWrittenRange(text, options) ??
    withoutCirca(text, options) ??
    cslOf(strToDate(text, options), raw)
  );
}

const SQL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const SQL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2}))?$/;
/** An ISO 8601 timestamp (Zotero also shifts a bare `2020` or `2020-01`; those are read as written). */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[-+]\d{2}:\d{2})?$/;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function localSql(d: Date): string {
  return (
    `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/**
 * An access date as Zotero cites it: a stored UTC timestamp (`2020-01-02T03:04:05Z`, or SQL
 * `2020-01-02 03:04:05`) in local time, then read as a date; a plain `YYYY-MM-DD` as it is.
 */
export function accessDateToCsl(raw: string, options: DateOptions = {}): CslDate | undefined {
  const text = raw.trim();
  if (text === '' || SQL_DATE.test(text)) return dateToCsl(text, options);
  let utc: Date | undefined;
  if (ISO_TIMESTAMP.test(text)) utc = new Date(text);
  else {
    const m = SQL_DATE_TIME.exec(text);
    if (m) {
      const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number.parseInt(v ?? '0', 10)) as number[];
      utc = new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
    }
  }
  if (utc && !Number.isNaN(utc.getTime())) return dateToCsl(localSql(utc), options);
  return dateToCsl(text, options);
}
