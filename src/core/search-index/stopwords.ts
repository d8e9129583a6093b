/**
 * Words too common to rank by (English function words: articles, prepositions, pronouns,
 * auxiliaries), and the check of a ranked search's query. The keyword ranking leaves them out
 * of a query that has other words (`the effect of warming` ranks by `effect` and `warming`); a
 * query of nothing else says so instead of ranking every item that holds "the". A module of its
 * own, light enough for the tool's declaration to check a query offline.
 */
import { paramRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import { ftsWords } from './terms.js';

export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'about',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'been',
  'being',
  'but',
  'by',
  'can',
  'could',
  'did',
  'do',
  'does',
  'for',
  'from',
  'had',
  'has',
  'have',
  'he',
  'her',
  'his',
  'how',
  'i',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'me',
  'my',
  'no',
  'not',
  'of',
  'on',
  'or',
  'our',
  's',
  'she',
  'should',
  'so',
  'such',
  't',
  'than',
  'that',
  'the',
  'their',
  'them',
  'then',
  'there',
  'these',
  'they',
  'this',
  'those',
  'to',
  'was',
  'we',
  'were',
  'what',
  'when',
  'where',
  'which',
  'who',
  'whom',
  'why',
  'will',
  'with',
  'would',
  'you',
  'your',
]);

/** The query's words the keyword ranking scores: its words (folded like the index) that are not stop words. */
export function keywordWords(query: string): string[] {
  return ftsWords(query).filter((w) => !STOP_WORDS.has(w));
}

/**
 * Refuses a query a ranked search cannot rank: one with no word at all (punctuation, emoji),
 * and, unless the ranking is by vectors alone, one of stop words only. `vectorsOn`: whether
 * embeddings are configured (the hint then offers ranking by meaning).
 */
export function checkRankedQuery(
  query: string,
  mode: 'hybrid' | 'keyword' | 'vector',
  vectorsOn: boolean,
): void {
  const words = ftsWords(query);
  if (words.length === 0) {
    throw new ZoteusError(
      'validation_error',
      `The query ${JSON.stringify(query)} has no words to search for: it holds no letters or digits.`,
      {
        field: 'q',
        hint: 'Give a word or two that name what you look for (a topic, an author, a title word).',
      },
    );
  }
  if (mode === 'vector' || words.some((w) => !STOP_WORDS.has(w))) return;
  throw new ZoteusError(
    'validation_error',
    `The query ${JSON.stringify(query)} has only words too common to rank by (${words.join(', ')}).`,
    {
      field: 'q',
      hint: `Add a word that names what you look for (a topic, an author, a title word)${
        vectorsOn ? `, or rank by meaning alone with ${paramRef('mode', 'vector')}` : ''
      }.`,
    },
  );
}
