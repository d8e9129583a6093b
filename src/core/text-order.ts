/**
 * Orders of strings that cost nothing at process start.
 *
 * The first `Intl.Collator` (or `localeCompare`) of a process loads ICU's collation data:
 * about 12 ms, more than the rest of `zot collection list`'s sorting. Names made only of
 * printable ASCII (most collection names) are therefore compared with a table of the order
 * ICU's English collation gives those characters, which is the same answer (a test checks
 * it against `Intl.Collator` on random strings); any other name goes to the collator, created
 * on first use.
 */

/** Code-unit order: keys, ISO dates, anything whose order is not a language's. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Printable ASCII in the order of `new Intl.Collator('en', { sensitivity: 'accent' })`,
 * capitals folded to small letters (that collator ignores case). In that collation every one
 * of these characters has its own primary weight and no contraction, so two ASCII strings
 * compare as their sequences of ranks.
 */
const ASCII_ORDER = ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz';
const RANK = new Uint8Array(128);
for (let i = 0; i < ASCII_ORDER.length; i += 1) RANK[ASCII_ORDER.charCodeAt(i)] = i + 1;
for (let c = 65; c <= 90; c += 1) RANK[c] = RANK[c + 32]!;

let collator: Intl.Collator | undefined;

/** Names as a reader orders them: case-insensitive, accents and punctuation counting, English rules. */
export function compareNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  for (; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    const rx = x < 128 ? RANK[x]! : 0;
    const ry = y < 128 ? RANK[y]! : 0;
    if (rx === 0 || ry === 0) return slowCompare(a, b);
    if (rx !== ry) return rx - ry;
  }
  // A common prefix: the rest must be plain ASCII too for the shorter to come first.
  for (const s of [a, b]) {
    for (let j = i; j < s.length; j += 1) {
      const c = s.charCodeAt(j);
      if (c >= 128 || RANK[c] === 0) return slowCompare(a, b);
    }
  }
  return a.length - b.length;
}

/**
 * The order collection listings show: by name (compareNames), then by key, a total order so
 * that pages never overlap or skip. zotero.sqlite's reader returns its rows in it too.
 */
export function byNameThenKey(a: { name: string; key: string }, b: { name: string; key: string }): number {
  return compareNames(a.name, b.name) || byCodeUnit(a.key, b.key);
}

function slowCompare(a: string, b: string): number {
  collator ??= new Intl.Collator('en', { sensitivity: 'accent' });
  return collator.compare(a, b);
}
