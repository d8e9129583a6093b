import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from '../../src/core/did-you-mean.js';

describe('did you mean', () => {
  it('edit distance counts swaps as one edit', () => {
    expect(editDistance('serch', 'search')).toBe(1);
    expect(editDistance('saerch', 'search')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('the closest choices, best first; nothing when nothing is close', () => {
    expect(closest('serch', ['search', 'semantic-search', 'read'])).toEqual(['search']);
    expect(closest('frobnicate', ['search', 'read'])).toEqual([]);
    expect(closest('LIMIT', ['limit', 'start'])).toEqual(['limit']);
  });

  it('says the choices in the caller’s quoting', () => {
    expect(didYouMean('lst', ['list', 'move'], (c) => `\`zot collection ${c}\``)).toBe(
      'did you mean `zot collection list`?',
    );
    expect(didYouMean('tagz', ['tags', 'tag'])).toBe("did you mean 'tag' or 'tags'?");
    expect(didYouMean('zzz', ['tags'])).toBe('');
  });
});
