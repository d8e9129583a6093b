/**
 * Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): merges ranked lists whose
 * scores are not comparable (BM25 against cosine similarity) by rank alone. An id scores
 *
 *     score(id) = Σ over the lists that hold it of 1 / (k + rank)
 *
 * with `rank` 1-based. The constant `k` (60 in the paper) damps the head of each list, so an id
 * ranked well by both lists beats one ranked first by a single list. Only ranks matter: a list
 * needs no scores, and a list that is missing (vectors off) simply contributes nothing.
 */

export interface FusedResult {
  id: string;
  score: number;
  /** The id's 1-based rank in each input list (same order as the lists), null where absent. */
  ranks: Array<number | null>;
}

/**
 * Fuses ranked lists of ids, best first. Ties (equal scores) keep the order in which the ids
 * first appear reading the lists in order, each from the top, so the result is deterministic.
 * An id repeated within one list counts once, at its best rank.
 */
export function reciprocalRankFusion(lists: ReadonlyArray<ReadonlyArray<string>>, k = 60): FusedResult[] {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`The fusion constant k must be >= 0; got ${k}.`);
  // A Map keeps insertion order: that is the "first appearance" order ties fall back to.
  const fused = new Map<string, FusedResult>();
  lists.forEach((list, which) => {
    list.forEach((id, position) => {
      let entry = fused.get(id);
      if (!entry) {
        entry = { id, score: 0, ranks: lists.map(() => null) };
        fused.set(id, entry);
      }
      if (entry.ranks[which] !== null) return; // repeated in this list: its best rank counts
      entry.ranks[which] = position + 1;
      entry.score += 1 / (k + position + 1);
    });
  });
  // Array.prototype.sort is stable, so equal scores stay in first-appearance order.
  return [...fused.values()].sort((a, b) => b.score - a.score);
}
