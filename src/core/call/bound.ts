/**
 * The last bound of every answer (conventions.md, "Bounded size"): tools page their rows and
 * cut their long text themselves, saying how to go on; but one field can still be huge (a
 * 3 MB title, a 2 MB creator name), and a message over the client's limit (10 MB on the SDK's
 * stdio client) ends the connection. So the pipeline cuts the longest strings of an output
 * that is still too large, each with a note of what was cut, keeping every other value and
 * the output's shape.
 */

/** Characters of JSON an output may take: its text copy and structuredContent stay under ~100 KB. */
export const OUTPUT_BUDGET = 45_000;
/** A string is never cut below this. */
const KEEP_AT_LEAST = 200;

interface Leaf {
  holder: Record<string, unknown> | unknown[];
  at: string | number;
  length: number;
}

/** The output itself when it fits; else a copy with its longest strings cut until it does. */
export function boundOutput<T extends Record<string, unknown>>(output: T, budget = OUTPUT_BUDGET): T {
  let size = JSON.stringify(output).length;
  if (size <= budget) return output;
  const copy = structuredClone(output);
  const leaves: Leaf[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) =>
        typeof v === 'string' ? leaves.push({ holder: value, at: i, length: v.length }) : walk(v),
      );
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (typeof v === 'string')
          leaves.push({ holder: value as Record<string, unknown>, at: k, length: v.length });
        else walk(v);
      }
    }
  };
  walk(copy);
  leaves.sort((a, b) => b.length - a.length);
  for (const leaf of leaves) {
    if (size <= budget || leaf.length <= KEEP_AT_LEAST) break;
    const text = (leaf.holder as Record<string | number, string>)[leaf.at] as string;
    const keep = Math.max(KEEP_AT_LEAST, text.length - (size - budget) - 100);
    if (keep >= text.length) continue;
    const cut = `${text.slice(0, keep)}… [${(text.length - keep).toLocaleString('en-US')} more characters cut: the answer must stay under 100 KB]`;
    (leaf.holder as Record<string | number, string>)[leaf.at] = cut;
    size -= text.length - cut.length;
  }
  return copy;
}
