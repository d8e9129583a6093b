/**
 * What a ranked search asks of a library's index, whatever holds it: the local SQLite file
 * (`rank.ts`, one file per library) or a shared deployment's PostgreSQL (`postgres-rank.ts`,
 * one set of tables, a row per tenant's library). Both answer the same shape, ranked the same
 * way (BM25 with the same field weights, vectors, reciprocal-rank fusion).
 */
import { rankIndex, type RankOptions, type ScoredHit, type VectorState } from './rank.js';
import type { IndexDb } from './store.js';

export interface RankAnswer {
  hits: ScoredHit[];
  vectors: VectorState;
  /** Said when keyword ranking scored only part of the matches (a very common word). */
  notice?: string;
}

export interface RankedIndex {
  readonly engine: 'sqlite' | 'postgres';
  rank(query: string, options: RankOptions): Promise<RankAnswer>;
}

/** The local index file as a RankedIndex: `rankIndex`, unchanged. */
export function sqliteRankedIndex(db: IndexDb): RankedIndex {
  return { engine: 'sqlite', rank: (query, options) => rankIndex(db, query, options) };
}
