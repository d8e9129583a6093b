/**
 * A ranked search of one library for a tenant of a shared deployment whose state database is
 * PostgreSQL (`Deps.sharedState`): the library's index lives in the database (`postgres.ts`),
 * so whichever replica answers sees the same rows. It is brought up to date from the library's
 * feed first (what changed since the last update: two requests on the Web API), or built when
 * the tenant has none yet (then in this request: there is no background build on a replica),
 * and ranked as the local index ranks (`postgres-rank.ts`).
 */
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import { rankPgIndex } from './postgres-rank.js';
import type { RankOptions, ScoredHit } from './rank.js';
import type { LibraryAnswer } from './semantic.js';
import { readPgMeta } from './postgres.js';
import { runIndexUpdate, type IndexedLibrary } from './service.js';

export async function rankSharedLibrary(
  deps: Deps,
  args: LibraryArgs,
  lib: IndexedLibrary & { shared: NonNullable<IndexedLibrary['shared']> },
  query: string,
  options: RankOptions,
): Promise<{ answer: LibraryAnswer; hits: ScoredHit[] }> {
  const { state, owner } = lib.shared;
  const existed = (await readPgMeta(state.db, owner, 'complete')) === '1';
  let vectorsError: string | undefined;
  const report = await runIndexUpdate(deps, args, lib, {
    onVectorsError: (error) => {
      vectorsError = error instanceof Error ? error.message : String(error);
      deps.log.warn(`Embedding the changed items of ${lib.library} failed: ${vectorsError}`);
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
