/**
 * Human rendering (table mode). Deterministic: the same output object gives the same
 * bytes. Nested data is shown by its shape, never as JSON: an object inside a row spreads
 * into dotted columns, a list of objects inside a row reads as `key: value` pairs, and a
 * list of objects inside an object is a sub-table under its key, or, when its rows hold lists
 * of objects themselves or it would not fit, one entry after another. Given a width (the
 * terminal's), a listing narrows its widest text columns (cut with "…"), keys and numbers
 * whole, and prose wraps at word boundaries; text laid out over several lines is kept as is.
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
export function renderRows(
  rows: readonly Record<string, unknown>[],
  style: TableStyle = plainStyle,
  maxWidth?: number,
): string {
  if (rows.length === 0) return '(no rows)\n';
  const flat = rows.map(flattenRow);
  const columns: string[] = [];
  for (const row of flat) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = flat.map((row) => columns.map((c) => cell(row[c])));
  const widths = columns.map((c, i) => Math.max(width(c), ...cells.map((r) => width(r[i] as string))));
  if (maxWidth !== undefined) fitColumns(columns, cells, widths, maxWidth);
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

/** Keys, numbers and other short codes stay whole: only text columns give up width. */
function isTextColumn(values: readonly string[]): boolean {
  return values.some((v) => v.includes(' ') || width(v) > 24) && !values.every((v) => /^[\d.,-]*$/.test(v));
}

function truncate(text: string, to: number): string {
  const chars = [...text];
  return chars.length <= to ? text : `${chars.slice(0, Math.max(0, to - 1)).join('')}…`;
}

/** Zotero keys and numbers: never cut. */
function isKeyColumn(values: readonly string[]): boolean {
  return values.every((v) => /^[\d.,-]*$/.test(v) || /^[23456789A-Z]{8}$/.test(v));
}

/**
 * Narrows the widest text columns (cells cut with "…") until a line fits in `maxWidth`; when
 * they are all down to a few characters, other columns too, but never keys and numbers.
 */
function fitColumns(columns: string[], cells: string[][], widths: number[], maxWidth: number): void {
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * Math.max(0, widths.length - 1);
  const values = columns.map((_, i) => cells.map((r) => r[i] as string));
  const passes = [
    columns.map((_, i) => isTextColumn(values[i] as string[])),
    columns.map((_, i) => !isKeyColumn(values[i] as string[])),
  ];
  for (const shrinkable of passes) {
    while (total() > maxWidth) {
      let widest = -1;
      for (let i = 0; i < columns.length; i += 1)
        if (shrinkable[i] && (widest === -1 || (widths[i] as number) > (widths[widest] as number)))
          widest = i;
      const floor = 6;
      if (widest === -1 || (widths[widest] as number) <= floor) break;
      widths[widest] = Math.max(floor, (widths[widest] as number) - (total() - maxWidth));
      const w = widths[widest] as number;
      columns[widest] = truncate(columns[widest] as string, w);
      for (const row of cells) row[widest] = truncate(row[widest] as string, w);
    }
  }
}

/**
 * Wraps a line at word boundaries to `maxWidth`; continuation lines are indented to `indent`
 * columns. A word longer than the line is left whole.
 */
export function wrapLine(line: string, maxWidth: number, indent = 0): string[] {
  if (width(line) <= maxWidth) return [line];
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  let current = '';
  // Words with the spaces before them, so that runs of spaces (columns) survive.
  for (const [, spaces = '', word = ''] of line.matchAll(/( *)(\S+)/g)) {
    const next = `${current}${spaces}${word}`;
    if (current.trim() !== '' && width(next) > maxWidth) {
      out.push(current);
      current = `${pad}${word}`;
    } else current = next;
  }
  if (current !== '') out.push(current);
  return out;
}

/**
 * A line of a tool's own text fitted to `maxWidth`: wrapped at word boundaries, continuation
 * lines indented to where its last column starts (after a run of two spaces, within 70% of the width).
 */
export function fitLine(line: string, maxWidth: number): string[] {
  if (width(line) <= maxWidth) return [line];
  let indent = 0;
  const gap = / {2,}/g;
  for (let m = gap.exec(line); m; m = gap.exec(line)) {
    const at = m.index + m[0].length;
    if (at > maxWidth * 0.7) break;
    indent = at;
  }
  return wrapLine(line, maxWidth, indent);
}

function isTableLike(value: unknown): value is Plain[] {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject);
}

/** Nothing to show: null, an empty string, an empty list, an object with nothing in it. */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.every(isEmpty);
  if (isPlainObject(value)) return Object.values(value).every(isEmpty);
  return false;
}

/**
 * Rows that read well as a table: once nested objects are spread into dotted columns, every
 * cell is one line of scalars (no list of objects, no text laid out over several lines).
 */
function isFlat(rows: readonly Plain[]): boolean {
  return rows.every((row) =>
    Object.values(flattenRow(row)).every((v) =>
      Array.isArray(v)
        ? v.every((x) => x === null || typeof x !== 'object')
        : !(typeof v === 'string' && /[\r\n]/.test(v.trim())),
    ),
  );
}

/** The longest line of a text, in display width. */
function widest(text: string): number {
  return Math.max(0, ...text.split('\n').map(width));
}

/**
 * `key  value` lines for an object, nested keys dotted. Fields with nothing in them
 * (`failed: []`, `children: []`, `""`, null) are left out: a detail view shows what there is.
 * A value laid out over several lines (a Markdown or CSV document, a note) is printed under
 * its key as it is, never re-wrapped. A list of objects under a key is a sub-table when its
 * rows are flat and it fits the width whole; otherwise one entry after another, each entry's
 * fields as `key  value` lines after a "- " (nothing in a detail view is cut).
 */
export function renderObject(
  value: Record<string, unknown>,
  style: TableStyle = plainStyle,
  maxWidth?: number,
): string {
  type Entry =
    { key: string; value: string } | { key: string; block: string } | { key: string; table: Plain[] };
  const entries: Entry[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (isEmpty(v)) return;
    if (isPlainObject(v)) {
      for (const [k, inner] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, inner);
    } else if (isTableLike(v)) {
      entries.push({ key: prefix, table: v });
    } else if (typeof v === 'string' && /[\r\n]/.test(v.trim())) {
      entries.push({ key: prefix, block: v.replace(/\r\n?/g, '\n').replace(/\n+$/, '') });
    } else {
      entries.push({ key: prefix, value: cell(v) });
    }
  };
  walk('', value);
  const w = Math.max(0, ...entries.filter((e) => 'value' in e).map((e) => width(e.key)));
  const lines: string[] = [];
  for (const e of entries) {
    if ('value' in e) {
      const [first = '', ...rest] =
        maxWidth === undefined ? [e.value] : wrapLine(e.value, Math.max(20, maxWidth - w - 2));
      lines.push(`${style.bold(pad(e.key, w))}  ${first}`.trimEnd());
      for (const more of rest) lines.push(`${' '.repeat(w + 2)}${more.trimStart()}`);
      continue;
    }
    lines.push(style.bold(e.key));
    if ('block' in e) {
      lines.push(...e.block.split('\n'));
      continue;
    }
    const inner = maxWidth === undefined ? undefined : maxWidth - 2;
    if (isFlat(e.table) && (inner === undefined || widest(renderRows(e.table)) <= inner)) {
      for (const l of renderRows(e.table, style).trimEnd().split('\n')) lines.push(`  ${l}`.trimEnd());
      continue;
    }
    for (const entry of e.table) {
      const text = renderObject(entry, style, maxWidth === undefined ? undefined : maxWidth - 4);
      if (text === '') continue;
      text
        .trimEnd()
        .split('\n')
        .forEach((l, i) => lines.push(`${i === 0 ? '  - ' : '    '}${l}`.trimEnd()));
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
