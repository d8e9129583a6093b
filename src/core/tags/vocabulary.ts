/**
 * The controlled vocabulary of `zotero_tag_audit`: preferred terms with their synonyms and
 * tiers, and the folding that finds near-duplicate tags (case, accents, hyphens and spaces,
 * simple English plurals). Pure functions; no library access.
 */
import { ZoteusError } from '../errors.js';
import { fold } from '../local/sqlite/text.js';

/** One vocabulary entry as given: a plain term, or a term with synonyms and a tier. */
export type VocabularyEntry =
  string | { term: string; synonyms?: string[] | undefined; tier?: string | undefined };

export interface Term {
  term: string;
  synonyms: string[];
  tier: string | undefined;
}

export interface Vocabulary {
  terms: Map<string, Term>;
  /** Exact synonym → its preferred term. */
  synonyms: Map<string, Term>;
  /** Near-duplicate key of every term and synonym → the preferred term. */
  byKey: Map<string, Term>;
  tiers: Set<string>;
}

const SEPARATORS = /[\s\-_‐‑‒–—/.]+/u;

/** One word made singular by simple English rules (`policies` → `policy`, `boxes` → `box`, `models` → `model`). */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(ss|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !/[siu]s$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * Tags equal after folding case and accents, dropping hyphens, spaces and similar separators,
 * and making each word singular share this key (`Neural-Networks`, `neural network`, `Neural Network`).
 */
export function nearKey(tag: string): string {
  return fold(tag)
    .split(SEPARATORS)
    .filter((w) => w.length > 0)
    .map(singular)
    .join('');
}

/** Edit distance, for the closest vocabulary term of an unknown tag. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

function invalid(message: string, hint?: string): ZoteusError {
  return new ZoteusError('validation_error', message, { field: 'vocabulary', ...(hint ? { hint } : {}) });
}

/** Reads the vocabulary; refuses a term or synonym given twice (or as both). */
export function buildVocabulary(entries: readonly VocabularyEntry[]): Vocabulary {
  const terms = new Map<string, Term>();
  const synonyms = new Map<string, Term>();
  const byKey = new Map<string, Term>();
  const tiers = new Set<string>();
  const seen = (word: string): boolean => terms.has(word) || synonyms.has(word);
  const list: Term[] = entries.map((e) =>
    typeof e === 'string'
      ? { term: e.trim(), synonyms: [], tier: undefined }
      : {
          term: e.term.trim(),
          synonyms: (e.synonyms ?? []).map((s) => s.trim()),
          tier: e.tier?.trim() || undefined,
        },
  );
  for (const t of list) {
    if (!t.term) throw invalid('A vocabulary term is empty.');
    if (seen(t.term))
      throw invalid(
        `"${t.term}" appears twice in the vocabulary.`,
        'Give each term once, with all its synonyms.',
      );
    terms.set(t.term, t);
    if (t.tier) tiers.add(t.tier);
  }
  for (const t of list) {
    for (const s of t.synonyms) {
      if (!s || s === t.term) continue;
      if (seen(s)) {
        const other = terms.get(s) ?? synonyms.get(s);
        throw invalid(
          `"${s}" is a synonym of "${t.term}" but also ${terms.has(s) ? 'a term' : `a synonym of "${other?.term}"`} of the vocabulary.`,
          'A word may be a preferred term or the synonym of one term, not both.',
        );
      }
      synonyms.set(s, t);
    }
  }
  // Keys of terms first, so a term's own spelling wins over another term's synonym.
  for (const t of list) if (!byKey.has(nearKey(t.term))) byKey.set(nearKey(t.term), t);
  for (const t of list) for (const s of t.synonyms) if (s && !byKey.has(nearKey(s))) byKey.set(nearKey(s), t);
  return { terms, synonyms, byKey, tiers };
}

/** The vocabulary term closest to an unknown tag: a near-duplicate, else one a few edits away. */
export function closestTerm(
  vocabulary: Vocabulary,
  tag: string,
): { term: string; match: 'variant' | 'similar' } | undefined {
  const key = nearKey(tag);
  const variant = vocabulary.byKey.get(key);
  if (variant) return { term: variant.term, match: 'variant' };
  if (key.length < 4) return undefined;
  const max = Math.max(1, Math.floor(key.length / 5));
  let best: { term: string; d: number } | undefined;
  for (const [k, t] of vocabulary.byKey) {
    if (Math.abs(k.length - key.length) > max) continue;
    const d = editDistance(key, k);
    if (d <= max && (!best || d < best.d || (d === best.d && t.term < best.term))) best = { term: t.term, d };
  }
  return best ? { term: best.term, match: 'similar' } : undefined;
}
