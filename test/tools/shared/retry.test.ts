/**
 * The partial retry of the previewed metadata batches (update-status, enrich), shared by both
 * declarations: which input a retry under the same idempotency key runs, and how its answer is
 * merged into the first one.
 */
import { describe, expect, it } from 'vitest';
import { mergeRetry, retryFailedKeys } from '../../../src/tools/shared/retry.js';

const answer = (o: Partial<Out>): Out => ({
  checked: 0,
  candidates: 0,
  updates: [],
  unmatched: [],
  failed: [],
  succeeded: [],
  unchanged: [],
  ...o,
});
interface Out {
  checked: number;
  candidates: number;
  updates: Array<{ key: string; status: string }>;
  unmatched: Array<{ key: string }>;
  failed: Array<{ key?: string }>;
  succeeded: string[];
  unchanged: string[];
}

describe('retryFailedKeys', () => {
  it('nothing failed: no retry', () => {
    expect(retryFailedKeys({ all: true }, answer({ failed: [{}] }))).toBeNull();
  });
  it('a scope becomes the failed keys alone; a plan is retried whole', () => {
    const previous = answer({ failed: [{ key: 'BBBB2222' }, {}, { key: 'CCCC3333' }] });
    expect(retryFailedKeys({ collection_key: 'COLL2345', all: false }, previous)).toEqual({
      item_keys: ['BBBB2222', 'CCCC3333'],
      collection_key: undefined,
      all: undefined,
    });
    const plan = { plan_id: 'p_1', item_keys: ['AAAA2222'] };
    expect(retryFailedKeys(plan, previous)).toBe(plan);
  });
});

describe('mergeRetry', () => {
  it('the retry replaces the rows of its keys, keeps the first counts, unions what landed', () => {
    const previous = answer({
      checked: 10,
      candidates: 3,
      updates: [
        { key: 'AAAA2222', status: 'applied' },
        { key: 'BBBB2222', status: 'failed' },
      ],
      unmatched: [{ key: 'DDDD4444' }],
      failed: [{ key: 'BBBB2222' }],
      succeeded: ['AAAA2222'],
      unchanged: ['EEEE5555'],
    });
    const retry = answer({
      checked: 1,
      candidates: 1,
      updates: [{ key: 'BBBB2222', status: 'applied' }],
      succeeded: ['BBBB2222'],
      unchanged: ['AAAA2222', 'FFFF6666'],
    });
    expect(mergeRetry(previous, retry, ['updates', 'unmatched'], ['checked', 'candidates'])).toEqual({
      checked: 10,
      candidates: 3,
      updates: [
        { key: 'AAAA2222', status: 'applied' },
        { key: 'BBBB2222', status: 'applied' },
      ],
      unmatched: [{ key: 'DDDD4444' }],
      failed: [],
      succeeded: ['AAAA2222', 'BBBB2222'],
      // What the first call wrote reads as unchanged on the retry: it is not "unchanged".
      unchanged: ['EEEE5555', 'FFFF6666'],
    });
  });
});
