/**
 * Finding the Crossref record of an item that has no DOI: one `query.bibliographic` search per
 * item (its title, first author and year), asking only for the top hit, at Crossref's pace
 * (metadata/service.ts), cached a day like the DOI records. A hit is accepted only when it is
 * plainly the same work: a title similarity (versions/similarity.ts) of at least
 * TITLE_THRESHOLD, the same year (±1, for online-first and print dates), and the same family
 * name for the first author. The evidence says each of these, with Crossref's own score.
 */
import { ZoteusError } from '../errors.js';
import { metadataCache } from '../metadata/cache.js';
import { CROSSREF_FIELDS, toCrossrefWork, type CrossrefWork } from '../metadata/crossref.js';
import {
  eachBatch,
  obj,
  paceOf,
  parseObject,
  serviceCall,
  serviceClient,
  serviceFailed,
  str,
} from '../metadata/service.js';
import type { Deps } from '../tool.js';
import { TITLE_THRESHOLD, titleSimilarity } from '../versions/similarity.js';

/** What an item offers to search by. */
export interface SearchQuery {
  key: string;
  title: string;
  /** The first author's family name (or an institution's name). */
  family: string;
  year: string;
}

/** The top hit of a search, as kept in the cache. */
export interface SearchHit {
  /** The DOI as Crossref spells it. */
  doi: string;
  work: CrossrefWork;
  /** The first author's family name (or name), when the record has one. */
  firstAuthor: string | undefined;
  /** Crossref's relevance score. */
  score: number | undefined;
}

export interface SearchEvidence {
  source: 'crossref';
  via: 'search';
  doi: string;
  title: string;
  year?: string | undefined;
  firstAuthor?: string | undefined;
  /** Title similarity with the item, 0 to 1. */
  similarity: number;
  yearMatches: boolean;
  authorMatches: boolean;
  /** Crossref's relevance score of the hit. */
  score?: number | undefined;
}

/** Per item key: the top hit, null when Crossref found nothing, or the error of the request. */
export type SearchResults = Map<string, SearchHit | null | ZoteusError>;

function isHit(value: unknown): value is SearchHit {
  const v = obj(value);
  return typeof v.doi === 'string' && typeof obj(v.work).doi === 'string';
}

/** The words of a search: title, first author, year (what `query.bibliographic` ranks by). */
export function queryText(q: SearchQuery): string {
  return `${q.title} ${q.family} ${q.year}`.replace(/\s+/g, ' ').trim();
}

function firstAuthorOf(raw: Record<string, unknown>): string | undefined {
  const authors = Array.isArray(raw.author) ? raw.author.map(obj) : [];
  const first = authors.find((a) => a.sequence === 'first') ?? authors[0];
  return first ? (str(first.family) ?? str(first.name)) : undefined;
}

/** One search per query (cached ones cost nothing), at most the pace's requests in flight. */
export async function searchCrossref(
  deps: Deps,
  queries: readonly SearchQuery[],
  onProgress?: (done: number) => void,
): Promise<SearchResults> {
  const out: SearchResults = new Map();
  if (queries.length === 0) return out;
  const cache = metadataCache(deps, 'crossref', isHit);
  const client = await serviceClient(deps, 'crossref');
  const call = serviceCall(deps);
  const base = deps.config.resolvers.crossref;
  const mailto = deps.config.resolvers.mailto;
  const polite = mailto ? `&mailto=${encodeURIComponent(mailto)}` : '';
  const select = `select=${[...CROSSREF_FIELDS, 'author', 'score'].join(',')}`;
  let done = 0;
  await eachBatch(queries, paceOf('crossref', deps).inFlight, async (q) => {
    const text = queryText(q);
    const id = `query.bibliographic:${text.toLowerCase()}`;
    const cached = cache.get(id);
    if (cached !== undefined) {
      out.set(q.key, cached);
    } else {
      try {
        const answer = await client.request(call, {
          url: `${base}/works?query.bibliographic=${encodeURIComponent(text)}&rows=1&${select}${polite}`,
          label: `${base}/works?query.bibliographic=… (${q.key})`,
          headers: { Accept: 'application/json' },
        });
        if (answer.status !== 200) throw serviceFailed(client.name, answer.status);
        const items = obj(parseObject(client, answer.text).message).items;
        if (!Array.isArray(items))
          throw new ZoteusError('api_error', `${client.name} answered a search without its list of works.`, {
            retryable: true,
            hint: 'Retry in a moment; if it persists, check ZOTEUS_CROSSREF_URL.',
          });
        const raw = obj(items[0]);
        const work = toCrossrefWork(raw);
        const hit: SearchHit | null = work
          ? {
              doi: str(raw.DOI) as string,
              work,
              firstAuthor: firstAuthorOf(raw),
              score: typeof raw.score === 'number' ? raw.score : undefined,
            }
          : null;
        out.set(q.key, hit);
        await cache.put(id, hit);
      } catch (error) {
        if (!(error instanceof ZoteusError)) throw error;
        out.set(q.key, error);
      }
    }
    done += 1;
    onProgress?.(done);
  });
  return out;
}

/** Letters that no accent stripping takes apart, as they are usually transliterated. */
const LETTERS: Record<string, string> = {
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  ß: 'ss',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
};

/** A family name folded for comparing: no accents, case, spaces or punctuation (Ødegård is Odegard). */
function fold(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[øæœßłđðþı]/g, (c) => LETTERS[c] ?? c)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The same family name: equal once folded, or the same last word ("van der Berg", "Berg"). */
export function sameFamily(a: string, b: string): boolean {
  const x = fold(a);
  const y = fold(b);
  if (!x || !y) return false;
  if (x.replace(/ /g, '') === y.replace(/ /g, '')) return true;
  return x.split(' ').at(-1) === y.split(' ').at(-1);
}

/** The evidence of a hit for the item that asked, and whether it is accepted. */
export function judge(q: SearchQuery, hit: SearchHit): { evidence: SearchEvidence; accepted: boolean } {
  const year = hit.work.issued?.slice(0, 4);
  const similarity = titleSimilarity(q.title, hit.work.title ?? '');
  const yearMatches = year !== undefined && Math.abs(Number(year) - Number(q.year)) <= 1;
  const authorMatches = hit.firstAuthor !== undefined && sameFamily(q.family, hit.firstAuthor);
  return {
    evidence: {
      source: 'crossref',
      via: 'search',
      doi: hit.doi,
      title: hit.work.title ?? '',
      ...(year ? { year } : {}),
      ...(hit.firstAuthor ? { firstAuthor: hit.firstAuthor } : {}),
      similarity,
      yearMatches,
      authorMatches,
      ...(hit.score !== undefined ? { score: hit.score } : {}),
    },
    accepted: similarity >= TITLE_THRESHOLD && yearMatches && authorMatches,
  };
}

/** Why a hit was not accepted, in the user's terms. */
export function nearMiss(q: SearchQuery, e: SearchEvidence): string {
  const why = [
    e.similarity < TITLE_THRESHOLD
      ? `title similarity ${e.similarity} < ${TITLE_THRESHOLD} ("${e.title}")`
      : undefined,
    e.yearMatches ? undefined : `year ${e.year ?? 'unknown'}, not ${q.year} (±1)`,
    e.authorMatches ? undefined : `first author ${e.firstAuthor ?? 'unknown'}, not ${q.family}`,
  ].filter(Boolean);
  return `Crossref's best match for the title, first author and year is not this item (${why.join('; ')}): no DOI taken from it.`;
}
