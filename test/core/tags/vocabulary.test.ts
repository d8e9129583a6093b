/** The vocabulary and the folding of the tag audit: near-duplicate keys, closest terms, refusals. */
import { describe, expect, it } from 'vitest';
import { buildVocabulary, closestTerm, editDistance, nearKey } from '../../../src/core/tags/vocabulary.js';
import { shellWord } from '../../../src/core/tags/audit.js';

describe('nearKey', () => {
  it('folds case, accents, hyphens and spaces, and simple plurals', () => {
    expect(nearKey('Neural-Networks')).toBe(nearKey('neural network'));
    expect(nearKey('Océan')).toBe(nearKey('ocean'));
    expect(nearKey('e-learning')).toBe(nearKey('elearning'));
    expect(nearKey('Policies')).toBe(nearKey('policy'));
    expect(nearKey('boxes')).toBe(nearKey('box'));
    expect(nearKey('processes')).toBe(nearKey('process'));
    // Words ending in s that are not plurals stay as they are.
    expect(nearKey('analysis')).toBe('analysis');
    expect(nearKey('gas')).toBe('gas');
    expect(nearKey('Sea Level')).not.toBe(nearKey('Sea Levee'));
  });
});

describe('buildVocabulary and closestTerm', () => {
  const v = buildVocabulary([
    { term: 'Deep Learning', synonyms: ['DL'], tier: 'method' },
    'Sea Level',
    'Transformer',
  ]);

  it('knows terms, synonyms and tiers', () => {
    expect([...v.terms.keys()]).toEqual(['Deep Learning', 'Sea Level', 'Transformer']);
    expect(v.synonyms.get('DL')?.term).toBe('Deep Learning');
    expect([...v.tiers]).toEqual(['method']);
  });

  it('a variant after folding, else a term a few edits away, else nothing', () => {
    expect(closestTerm(v, 'sea-levels')).toEqual({ term: 'Sea Level', match: 'variant' });
    expect(closestTerm(v, 'dl')).toEqual({ term: 'Deep Learning', match: 'variant' });
    expect(closestTerm(v, 'Transfomer')).toEqual({ term: 'Transformer', match: 'similar' });
    expect(closestTerm(v, 'Botany')).toBeUndefined();
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('refuses a term given twice or a synonym that is also a term', () => {
    expect(() => buildVocabulary(['A', 'A'])).toThrow(/appears twice/);
    expect(() => buildVocabulary(['B', { term: 'A', synonyms: ['B'] }])).toThrow(/also a term/);
    expect(() =>
      buildVocabulary([
        { term: 'A', synonyms: ['X'] },
        { term: 'B', synonyms: ['X'] },
      ]),
    ).toThrow(/synonym of "A"/);
  });
});

describe('shellWord', () => {
  it('leaves safe words bare, quotes others, refuses what cannot be quoted or looks like a flag', () => {
    expect(shellWord('to-read')).toBe('to-read');
    expect(shellWord('Sea Level')).toBe("'Sea Level'");
    expect(shellWord("Children's")).toBe('"Children\'s"');
    expect(shellWord('it\'s "x"')).toBeUndefined();
    expect(shellWord('-x')).toBeUndefined();
  });
});
