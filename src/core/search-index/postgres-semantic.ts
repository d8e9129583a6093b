/**
 * A ranked search of one library for a tenant of a shared deployment whose state database is
 * PostgreSQL (`Deps.sharedState`): the library's index lives in the database (`postgres.ts`),
 * so whichever replica answers sees the same rows. It is brought up to date from the library's
 * feed first (what changed since the last update: two requests on the Web API), or built when
 * the tenant has none yet (then in this request: there is no background build on a replica),
 * and ranked as the local index ranks (`postgres-rank.ts`).
 */
import type { Deps, SharedState } from '../tool.js';
import { rankPgIndex } from './postgres-rank.js';
import { readPgMeta, searchOwner, updatePgIndex } from './postgres.js';
import type { RankOptions, ScoredHit } from './rank.js';
import type { LibraryAnswer } from './semantic.js';
import type { IndexedLibrary } from './service.js';

export async function rankSharedLibrary(
  deps: Pick<Deps, 'progress' | 'log' | 'clock'>,
  state: SharedState,
  lib: IndexedLibrary,
  query: string,
  options: RankOptions,
): Promise<{ answer: LibraryAnswer; hits: ScoredHit[] }> {
  const owner = searchOwner(state.owner, lib.library);
  const existed = (await readPgMeta(state.db, owner, 'complete')) === '1';
  let vectorsError: string | undefined;
  const phases = new Set<string>();
  const report = await updatePgIndex(state.db, owner, lib.feed, {
    embedder: options.embedder,
    now: () => deps.clock.now(),
    onVectorsError: (error) => {
      vectorsError = error instanceof Error ? error.message : String(error);
      deps.log.warn(`Embedding the changed items of ${lib.library} failed: ${vectorsError}`);
    },
    onProgress: (e) => {
      if (!phases.has(e.phase)) {
        phases.add(e.phase);
        deps.progress({ event: 'start', phase: e.phase, total: e.total });
      }
      deps.progress({ event: 'progress', phase: e.phase, done: e.done, total: e.total });
      if (e.done === e.total)
        deps.progress({ event: 'complete', phase: e.phase, done: e.done, total: e.total });
    },
  });
  const ranked = await rankPgIndex(state.db, owner, query, options);
  const [count] = await state.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM search_items WHERE owner = ? AND parent IS NULL AND deleted = 0',
    [owner],
  );
  return {
    answer: {
      library: lib.library,
      backend: lib.backend,
      index: !existed ? 'built' : report.upToDate ? 'ready' : 'updated',
      items: Number(count?.n ?? 0),
      vectors:
        !ranked.vectors.used && vectorsError !== undefined
          ? { ...ranked.vectors, reason: `Embedding the library failed: ${vectorsError}` }
          : ranked.vectors,
      ...(ranked.notice ? { message: ranked.notice } : {}),
    },
    hits: ranked.hits,
  };
}
