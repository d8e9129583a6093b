/** A RIS reader: `TY` … `ER` records of `XX  - value` lines, each read into a CSL-JSON item. */
import type { CslItem } from './csl.js';
import { own } from '../own.js';

export interface RisRecord {
  /** Tag → values in order (repeatable tags such as AU and KW keep every value). */
  tags: Map<string, string[]>;
  raw: string;
}

const LINE = /^([A-Z][A-Z0-9]) {2}-(?: (.*))?$/;

export function parseRis(text: string): RisRecord[] {
  const records: RisRecord[] = [];
  let current: RisRecord | undefined;
  let rawLines: string[] = [];
  let lastTag: string | undefined;
  for (const rawLine of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const m = LINE.exec(rawLine.trimEnd());
    if (!m) {
      // A continuation line of the previous value.
      if (current && lastTag && rawLine.trim() !== '') {
        const values = current.tags.get(lastTag) as string[];
        values[values.length - 1] = `${values[values.length - 1]} ${rawLine.trim()}`;
        rawLines.push(rawLine);
      }
      continue;
    }
    const tag = m[1] as string;
    const value = (m[2] ?? '').trim();
    if (tag === 'TY') {
      current = { tags: new Map(), raw: '' };
      rawLines = [];
    }
    if (!current) continue;
    rawLines.push(rawLine);
    if (tag === 'ER') {
      current.raw = rawLines.join('\n');
      records.push(current);
      current = undefined;
      lastTag = undefined;
      continue;
    }
    const list = current.tags.get(tag) ?? [];
    list.push(value);
    current.tags.set(tag, list);
    lastTag = tag;
  }
  if (current) {
    current.raw = rawLines.join('\n');
    records.push(current);
  }
  return records;
}

const RIS_TYPES: Record<string, string> = {
  JOUR: 'article-journal',
  JFULL: 'article-journal',
  EJOUR: 'article-journal',
  MGZN: 'article-magazine',
  NEWS: 'article-newspaper',
  BOOK: 'book',
  EBOOK: 'book',
  EDBOOK: 'book',
  CHAP: 'chapter',
  ECHAP: 'chapter',
  CONF: 'paper-conference',
  CPAPER: 'paper-conference',
  THES: 'thesis',
  RPRT: 'report',
  DATA: 'dataset',
  COMP: 'software',
  ELEC: 'webpage',
  WEB: 'webpage',
  BLOG: 'post-weblog',
  UNPB: 'manuscript',
  MANSCPT: 'manuscript',
  PAT: 'patent',
  STAND: 'standard',
  ENCYC: 'entry-encyclopedia',
  DICT: 'entry-dictionary',
  MAP: 'map',
  GEN: 'document',
};

/** `2020/05/03/`, `2020///`, `2020-05-03`, `2020` → ISO-ish date text. */
function risDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const m = /^(\d{4})(?:[/-](\d{1,2})?(?:[/-](\d{1,2})?)?)?/.exec(value.trim());
  if (!m) return value.trim() || undefined;
  const [, y, mo, d] = m;
  if (mo && d) return `${y}-${mo.padStart(2, '0')}-${d.padStart(2, '0')}`;
  if (mo) return `${y}-${mo.padStart(2, '0')}`;
  return y;
}

function risName(value: string): { family?: string; given?: string; literal?: string } {
  const parts = value.split(/\s*,\s*/);
  if (parts.length >= 2) return { family: parts[0], given: parts.slice(1).join(' ') };
  return { literal: value };
}

export function risToCsl(record: RisRecord): CslItem {
  const one = (...tags: string[]): string | undefined => {
    for (const t of tags) {
      const v = record.tags.get(t)?.find((x) => x !== '');
      if (v) return v;
    }
    return undefined;
  };
  const all = (...tags: string[]): string[] => tags.flatMap((t) => record.tags.get(t) ?? []).filter(Boolean);
  const risType = one('TY') ?? 'GEN';
  const type = own(RIS_TYPES, risType) ?? 'document';
  const bookish = type === 'book' || type === 'chapter';
  const start = one('SP');
  const end = one('EP');
  const names = (...tags: string[]) => {
    const list = all(...tags).map(risName);
    return list.length ? list : undefined;
  };
  return {
    type,
    title: one('TI', 'T1', 'CT'),
    'container-title': one('T2', 'JO', 'JF', 'BT'),
    'container-title-short': one('J2', 'JA'),
    'collection-title': one('T3'),
    volume: one('VL'),
    issue: one('IS'),
    number: one('M1', 'CN'),
    page: start ? (end ? `${start}-${end}` : start) : undefined,
    publisher: one('PB'),
    'publisher-place': one('CY', 'PP'),
    edition: one('ET'),
    DOI: one('DO'),
    URL: one('UR', 'L2'),
    ISBN: bookish ? one('SN') : undefined,
    ISSN: bookish ? undefined : one('SN'),
    abstract: one('AB', 'N2'),
    note: one('N1'),
    language: one('LA'),
    keyword: all('KW').join(', ') || undefined,
    issued: risDate(one('PY', 'DA', 'Y1')),
    accessed: risDate(one('Y2')),
    author: names('AU', 'A1'),
    editor: names('ED', 'A2'),
    translator: names('A4'),
  };
}
