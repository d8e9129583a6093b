/**
 * A lookup in a table keyed by outside text (a CSL, RIS or BibTeX type from an imported file,
 * a type from a server): only the table's own entries count, so `constructor`, `__proto__` or
 * `toString` read as unknown instead of reaching Object.prototype.
 */
export function own<V>(table: Readonly<Record<string, V>>, key: string | undefined): V | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}
