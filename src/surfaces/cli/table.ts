/**
 * Human rendering (table mode). Deterministic: the same output object gives the same
 * bytes. Nested data is shown by its shape, never as JSON: an object inside a row spreads
 * into dotted columns, a list of objects inside a row reads as `key: value` pairs, and a
 * list of objects inside an object is a sub-table under its key.
 */

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\s*[\r\n]+\s*/g, ' ');
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return '';
}

/** One line of readable text for any value: lists joined, objects as `key: value` pairs. */
function cell(value: unknown): string {
  if (Array.isArray(value)) {
    const nested = value.some((v) => v !== null && typeof v === 'object');
    return value
      .map(cell)
      .filter((t) => t !== '')
      .join(nested ? '; ' : ', ');
  }
  if (isPlainObject(value)) {
    return Object.entries(value)
      .map(([k, v]) => [k, cell(v)] as const)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
  }
  return scalar(value);
}

/** A row with nested objects spread into dotted keys (`ranks.keyword`). */
function flattenRow(row: Plain): Plain {
  const out: Plain = {};
  const walk = (prefix: string, v: unknown) => {
    if (isPlainObject(v) && Object.keys(v).length > 0) {
      for (const [k, inner] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, inner);
    } else out[prefix] = v;
  };
  walk('', isPlainObject(row) ? row : { value: row });
  return out;
}

/** Display width: counts code points, which is right for the scripts library titles mostly use. */
function width(text: string): number {
  return [...text].length;
}

function pad(text: string, to: number): string {
  return text + ' '.repeat(Math.max(0, to - width(text)));
}

export interface TableStyle {
  bold(text: string): string;
}

export const plainStyle: TableStyle = { bold: (t) => t };
export const ansiStyle: TableStyle = { bold: (t) => `\u001b[1m${t}\u001b[22m` };

/** A table of rows: a header, a rule, one line per row; trailing spaces trimmed. */
export function renderRows(rows: readonly Record<string, unknown>[], style: TableStyle = plainStyle): string {
  if (rows.length === 0) return '(no rows)\n';
  const flat = rows.map(flattenRow);
  const columns: string[] = [];
  for (const row of flat) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = flat.map((row) => columns.map((c) => cell(row[c])));
  const widths = columns.map((c, i) => Math.max(width(c), ...cells.map((r) => width(r[i] as string))));
  const line = (values: string[]) =>
    values
      .map((v, i) => pad(v, widths[i] as number))
      .join('  ')
      .trimEnd();
  const out = [
    style.bold(line(columns)),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.map((r) => line(r)),
  ];
  return `${out.join('\n')}\n`;
}

function isTableLike(value: unknown): value is Plain[] {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject);
}

/**
 * `key  value` lines for an object, nested keys dotted; a list of objects is a sub-table
 * (indented) under its key.
 */
export function renderObject(value: Record<string, unknown>, style: TableStyle = plainStyle): string {
  type Entry = { key: string; value: string } | { key: string; table: Plain[] };
  const entries: Entry[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (isPlainObject(v) && Object.keys(v).length > 0) {
      for (const [k, inner] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, inner);
    } else if (isTableLike(v)) {
      entries.push({ key: prefix, table: v });
    } else {
      entries.push({ key: prefix, value: cell(v) });
    }
  };
  walk('', value);
  const w = Math.max(0, ...entries.filter((e) => 'value' in e).map((e) => width(e.key)));
  const lines: string[] = [];
  for (const e of entries) {
    if ('value' in e) {
      lines.push(`${style.bold(pad(e.key, w))}  ${e.value}`.trimEnd());
      continue;
    }
    lines.push(style.bold(e.key));
    for (const l of renderRows(e.table, style).trimEnd().split('\n')) lines.push(`  ${l}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
