/**
 * `compareNames` must order exactly as `Intl.Collator('en', { sensitivity: 'accent' })`,
 * whose table it carries for ASCII: checked on seeded random names (short alphabets, so
 * prefixes, case twins and equal names are frequent) with and without non-ASCII letters.
 */
import { describe, expect, it } from 'vitest';
import { byCodeUnit, byNameThenKey, compareNames } from '../../src/core/text-order.js';
import { createRng } from '../../src/demo/fixture/random.js';

const collator = new Intl.Collator('en', { sensitivity: 'accent' });
const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

function randomName(rng: () => number, alphabet: string, maxLength: number): string {
  const length = Math.floor(rng() * (maxLength + 1));
  let s = '';
  for (let i = 0; i < length; i += 1) s += alphabet[Math.floor(rng() * alphabet.length)];
  return s;
}

function agree(alphabet: string, pairs: number, seed: number): string[] {
  const r = createRng(seed);
  const rng = () => r.next();
  const wrong: string[] = [];
  for (let n = 0; n < pairs; n += 1) {
    const a = randomName(rng, alphabet, 8);
    const b =
      rng() < 0.3
        ? a.slice(0, Math.floor(rng() * (a.length + 1))) + randomName(rng, alphabet, 3)
        : randomName(rng, alphabet, 8);
    if (Math.sign(compareNames(a, b)) !== Math.sign(collator.compare(a, b)))
      wrong.push(JSON.stringify([a, b]));
  }
  return wrong;
}

describe('compareNames', () => {
  it('orders printable ASCII as the English collator does', () => {
    expect(agree(printable, 20_000, 1)).toEqual([]);
    expect(agree('aAbB -_.,0129zZ()', 20_000, 2)).toEqual([]);
  });

  it('hands names with other letters to the collator', () => {
    expect(agree('aAeé\u0301ßøÆ 1-Ωж中', 10_000, 3)).toEqual([]);
    expect(agree('abcABC é', 10_000, 4)).toEqual([]);
  });

  it('sorts a list as the collator does: case-insensitive, accents and punctuation counting', () => {
    const names = [
      'zeta',
      'Alpha',
      'alpha',
      'Émile',
      'emile',
      'Beta 2',
      'Beta-1',
      'beta',
      '_drafts',
      '2019',
      'Ω',
    ];
    expect([...names].sort(compareNames)).toEqual([...names].sort(collator.compare));
    expect(compareNames('Sea Level', 'sea level')).toBe(0);
    expect(compareNames('Émile', 'Emile')).not.toBe(0);
  });
});

describe('byCodeUnit', () => {
  it('orders keys and ISO dates by their characters', () => {
    expect(['b', 'B', 'a', '2024-01-02T00:00:00Z', '2023-12-31T23:59:59Z'].sort(byCodeUnit)).toEqual([
      '2023-12-31T23:59:59Z',
      '2024-01-02T00:00:00Z',
      'B',
      'a',
      'b',
    ]);
    expect(byCodeUnit('X', 'X')).toBe(0);
  });
});

describe('byNameThenKey', () => {
  it('orders by name as compareNames does, names equal but for case by key', () => {
    const rows = [
      { name: 'sea level', key: 'BBBB2222' },
      { name: 'Attribution', key: 'ZZZZ9999' },
      { name: 'Sea Level', key: 'AAAA2222' },
    ];
    expect([...rows].sort(byNameThenKey).map((r) => r.key)).toEqual(['ZZZZ9999', 'AAAA2222', 'BBBB2222']);
  });
});
