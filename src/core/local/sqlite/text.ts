/**
 * Text helpers of the zotero.sqlite reader: accent- and case-insensitive folding, query
 * words, HTML notes as text, and Zotero's stored date formats.
 */

/** Letters that NFKD does not decompose into a base letter and a mark. */
const EXTRA_FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};
const EXTRA_RE = new RegExp(`[${Object.keys(EXTRA_FOLDS).join('')}]`, 'g');
const MARKS_RE = /\p{M}+/gu;
const NON_WORD_RE = /[^\p{L}\p{N}]+/gu;

/** Lower case, compatibility-decomposed, marks stripped: `Gödel` → `godel`, `ﬁ` → `fi`. */
export function fold(text: string): string {
  // ASCII fast path: most of a library is ASCII.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKD')
    .replace(MARKS_RE, '')
    .toLowerCase()
    .replace(EXTRA_RE, (c) => EXTRA_FOLDS[c]!);
}

/** Folded text with every run of punctuation and spaces made one space: what queries are matched in. */
export function foldForSearch(text: string): string {
  return fold(text).replace(NON_WORD_RE, ' ');
}

/** The words of a query: split on whitespace and punctuation, folded (`Sea-Level` → `sea`, `level`). */
export function queryWords(q: string): string[] {
  const words = foldForSearch(q)
    .split(' ')
    .filter((w) => w.length > 0);
  return [...new Set(words)];
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** A note's HTML as plain text: tags dropped (block tags become spaces), entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Zotero keeps a date field as "multipart": `YYYY-MM-DD original`, with 00 for unknown parts
 * (`2020-03-00 March 2020`). Returns the two parts; a value not in that form is all original.
 */
export function splitMultipartDate(value: string): { sql: string | undefined; text: string } {
  const m = /^(\d{4}-\d{2}-\d{2}) (.*)$/s.exec(value);
  if (m) return { sql: m[1], text: m[2]! };
  return { sql: undefined, text: value };
}

/** `2020-03-00` → `2020-03`, `2020-00-00` → `2020`, `0000-00-00` → undefined (the Web API's meta.parsedDate). */
export function parsedDate(sql: string | undefined): string | undefined {
  if (!sql) return undefined;
  const [y, m, d] = sql.split('-');
  if (!y || y === '0000') return undefined;
  if (!m || m === '00') return y;
  if (!d || d === '00') return `${y}-${m}`;
  return `${y}-${m}-${d}`;
}

/** SQL UTC timestamp `YYYY-MM-DD HH:MM:SS` → ISO 8601 `YYYY-MM-DDTHH:MM:SSZ` (the Web API's form). */
export function sqlToIso(value: string | null | undefined): string {
  if (!value) return '';
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})/.exec(value);
  return m ? `${m[1]}T${m[2]}Z` : value;
}

/** ISO 8601 (or already SQL) → SQL UTC `YYYY-MM-DD HH:MM:SS`. */
export function isoToSql(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  // No zone (SQL form) or Z: already UTC. An offset: let Date convert.
  if (m && (m[3] === undefined || m[3] === 'Z')) return `${m[1]} ${m[2]}`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value} 00:00:00`;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`Not a date: ${value}`);
  return new Date(t).toISOString().slice(0, 19).replace('T', ' ');
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;

/**
 * A date as Zotero stores it (`strToMultipart`): the SQL part parsed from common forms
 * (`2020`, `2020-03-15`, `March 15, 2020`, `15 Mar 2020`, `3/15/2020`), then the text as given.
 */
export function toMultipartDate(text: string): string {
  const t = text.trim();
  let y = 0;
  let mo = 0;
  let d = 0;
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?\b/.exec(t))) {
    y = +m[1]!;
    mo = m[2] ? +m[2] : 0;
    d = m[3] ? +m[3] : 0;
  } else if ((m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})\b/.exec(t))) {
    mo = +m[1]!;
    d = +m[2]!;
    y = +m[3]!;
  } else {
    const year = /\b(\d{4})\b/.exec(t);
    if (year) y = +year[1]!;
    const lower = t.toLowerCase();
    const mi = MONTHS.findIndex((name) => new RegExp(`\\b${name}`).test(lower));
    if (mi >= 0) {
      mo = mi + 1;
      const day = /\b(\d{1,2})(?:st|nd|rd|th)?\b/.exec(t.replace(/\b\d{4}\b/, ''));
      if (day) d = +day[1]!;
    }
  }
  if (mo > 12) mo = 0;
  if (d > 31) d = 0;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)} ${text}`;
}

/** The entries of a Web API `tag`/`itemType` filter (one expression or several, and-ed). */
export function filterList(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}

/** One Web API filter expression: `a || b` (either), a leading `-` (neither). */
export function filterExpr(expr: string): { negate: boolean; values: string[] } {
  const negate = expr.startsWith('-');
  const body = negate ? expr.slice(1) : expr;
  return { negate, values: body.split(/\s*\|\|\s*/).map((s) => s.trim()) };
}
