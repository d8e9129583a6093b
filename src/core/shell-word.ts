/**
 * A word as a POSIX shell reads it back unchanged, quoted where needed; undefined when no
 * simple quoting can carry it (a leading dash would be read as a flag).
 */
export function shellWord(value: string): string | undefined {
  if (value.startsWith('-') || value.length === 0) return undefined;
  if (/^[\w.:/@+,=-]+$/u.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  if (!/["$`\\!]/.test(value)) return `"${value}"`;
  return undefined;
}
