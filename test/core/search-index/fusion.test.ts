import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from '../../../src/core/search-index/fusion.js';

describe('reciprocalRankFusion', () => {
  it('sums 1/(k + rank) over the lists, ranks 1-based, null where absent', () => {
    const keyword = ['a', 'b', 'c'];
    const vector = ['c', 'a', 'd'];
    expect(reciprocalRankFusion([keyword, vector])).toEqual([
      { id: 'a', score: 1 / 61 + 1 / 62, ranks: [1, 2] },
      { id: 'c', score: 1 / 63 + 1 / 61, ranks: [3, 1] },
      { id: 'b', score: 1 / 62, ranks: [2, null] },
      { id: 'd', score: 1 / 63, ranks: [null, 3] },
    ]);
  });

  it('an id found by both lists beats one ranked first by a single list', () => {
    const fused = reciprocalRankFusion([
      ['solo', 'both'],
      ['other', 'both'],
    ]);
    expect(fused.map((f) => f.id)).toEqual(['both', 'solo', 'other']);
  });

  it('takes another k', () => {
    const [top] = reciprocalRankFusion([['x'], ['y', 'x']], 1);
    expect(top).toEqual({ id: 'x', score: 1 / 2 + 1 / 3, ranks: [1, 2] });
  });

  it('breaks ties by first appearance: list order, then rank', () => {
    expect(reciprocalRankFusion([['x'], ['y']]).map((f) => f.id)).toEqual(['x', 'y']);
    expect(reciprocalRankFusion([['y'], ['x']]).map((f) => f.id)).toEqual(['y', 'x']);
    // p and q both score 1/61 + 1/62; p appears first (list 0, rank 1).
    expect(
      reciprocalRankFusion([
        ['p', 'q'],
        ['q', 'p'],
      ]).map((f) => f.id),
    ).toEqual(['p', 'q']);
  });

  it('counts an id repeated within a list once, at its best rank', () => {
    expect(reciprocalRankFusion([['a', 'b', 'a']])).toEqual([
      { id: 'a', score: 1 / 61, ranks: [1] },
      { id: 'b', score: 1 / 62, ranks: [2] },
    ]);
  });

  it('a single list keeps its order; empty input gives nothing', () => {
    expect(reciprocalRankFusion([['c', 'a', 'b']]).map((f) => f.id)).toEqual(['c', 'a', 'b']);
    expect(reciprocalRankFusion([[], ['z']])).toEqual([{ id: 'z', score: 1 / 61, ranks: [null, 1] }]);
    expect(reciprocalRankFusion([])).toEqual([]);
  });

  it('refuses a negative or non-finite k', () => {
    expect(() => reciprocalRankFusion([['a']], -1)).toThrow(RangeError);
    expect(() => reciprocalRankFusion([['a']], Number.NaN)).toThrow(RangeError);
  });
});
