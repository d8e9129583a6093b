/**
 * "Did you mean …": the closest choices to a word that matched none, for messages about
 * commands, flags, parameters and values from a known list (conventions.md, "Errors").
 */

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i += 1) {
    const row: number[] = [i];
    for (let j = 1; j <= t.length; j += 1) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] as number[];
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[s.length] as number[])[t.length] as number;
}

/**
 * The choices closest to `given`, best first (at most `max`): those within a third of the
 * longer word's length (at least 1, at most 3 edits), or that start with it or it with them.
 */
export function closest(given: string, choices: Iterable<string>, max = 3): string[] {
  const word = given.toLowerCase();
  if (word === '') return [];
  const scored: { choice: string; score: number }[] = [];
  for (const choice of new Set(choices)) {
    const lower = choice.toLowerCase();
    if (lower === word) return [choice];
    const distance = editDistance(word, lower);
    const limit = Math.min(3, Math.max(1, Math.floor(Math.max(word.length, lower.length) / 3)));
    const prefix = word.length >= 3 && (lower.startsWith(word) || word.startsWith(lower));
    if (distance <= limit || prefix)
      scored.push({ choice, score: prefix ? Math.min(distance, limit) : distance });
  }
  scored.sort((x, y) => x.score - y.score || x.choice.localeCompare(y.choice));
  return scored.slice(0, max).map((s) => s.choice);
}

/** ` (did you mean 'a' or 'b'?)`-style text, or '' when nothing is close; `show` quotes a choice. */
export function didYouMean(
  given: string,
  choices: Iterable<string>,
  show: (choice: string) => string = (c) => `'${c}'`,
): string {
  const found = closest(given, choices);
  if (found.length === 0) return '';
  const shown = found.map(show);
  const list = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
  return `did you mean ${list}?`;
}
