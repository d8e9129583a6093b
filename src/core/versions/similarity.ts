/**
 * How alike two titles are, for accepting a published version as the same work: the
 * Sørensen–Dice coefficient of the character bigrams of both titles, after folding case,
 * accents, punctuation, markup and spacing. 1 is the same title; a published version whose
 * wording moved on scores lower. The threshold is stated in the result so it can be judged.
 */
export const TITLE_THRESHOLD = 0.85;

export function normaliseTitle(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/<[^>]{0,200}>/g, ' ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const compact = text.replace(/ /g, '');
  for (let i = 0; i < compact.length - 1; i++) {
    const gram = compact.slice(i, i + 2);
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

/** Similarity in [0, 1], rounded to 3 decimals so it reads the same everywhere. */
export function titleSimilarity(a: string, b: string): number {
  const x = normaliseTitle(a);
  const y = normaliseTitle(b);
  if (x === y) return x ? 1 : 0;
  const gx = bigrams(x);
  const gy = bigrams(y);
  let total = 0;
  for (const n of gx.values()) total += n;
  for (const n of gy.values()) total += n;
  if (total === 0) return 0;
  let shared = 0;
  for (const [gram, n] of gx) shared += Math.min(n, gy.get(gram) ?? 0);
  return Math.round(((2 * shared) / total) * 1000) / 1000;
}
