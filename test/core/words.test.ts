/**
 * Counts as texts give them (words.ts count): grouped as en-US numbers are, without setting up
 * Intl's number formatting for whole numbers.
 */
import { describe, expect, it } from 'vitest';
import { count, plural } from '../../src/core/words.js';

describe('count', () => {
  it('groups whole numbers by thousands, as en-US does', () => {
    expect([0, 7, 999, 1000, 12_345, 1_000_000, -1234, -999_999, Number.MAX_SAFE_INTEGER].map(count)).toEqual(
      ['0', '7', '999', '1,000', '12,345', '1,000,000', '-1,234', '-999,999', '9,007,199,254,740,991'],
    );
    expect(plural(2500, 'item')).toBe('2,500 items');
    expect(plural(1, 'item')).toBe('1 item');
  });

  it('gives every other number as en-US formatting does', () => {
    for (const n of [-0, 1234.5678, 0.5, -2.25, 1e21, Number.MAX_SAFE_INTEGER + 2, NaN, Infinity])
      expect(count(n)).toBe(n.toLocaleString('en-US'));
  });
});
