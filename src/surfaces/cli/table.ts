/**
 * Human rendering (table mode). Deterministic: the same output object gives the same
 * bytes. Rows are never truncated: a wide table wraps in the terminal, a cut one lies.
 */

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\s*[\r\n]+\s*/g, ' ');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null))
    return value.map(cell).join(', ');
  return JSON.stringify(value);
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
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = rows.map((row) => columns.map((c) => cell(row[c])));
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

/** `key  value` lines for an object, nested keys dotted. */
export function renderObject(value: Record<string, unknown>, style: TableStyle = plainStyle): string {
  const entries: Array<[string, string]> = [];
  const walk = (prefix: string, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) {
      for (const [k, inner] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, inner);
    } else {
      entries.push([prefix, cell(v)]);
    }
  };
  walk('', value);
  const w = Math.max(0, ...entries.map(([k]) => width(k)));
  return entries.map(([k, v]) => `${style.bold(pad(k, w))}  ${v}`.trimEnd()).join('\n') + '\n';
}
