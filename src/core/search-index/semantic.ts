/**
 * `zotero_semantic_search`: ranked retrieval over the index of one library or several. Each
 * index is brought up to date first (cheap: what changed since the last update); a library
 * without one gets it built (now when it is a small zotero.sqlite library, else in the
 * background, and the answer says so). Hits from several libraries are merged by score and
 * labelled with their library.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import { createEmbedder } from './embeddings.js';
import { backgroundBuildStarted, foregroundBuildStarted, startBackgroundBuild } from './fresh.js';
import { rankIndex, type RankedHit, type ScoredHit, type VectorState } from './rank.js';
import {
  indexedLibrary,
  indexStatus,
  runIndexUpdate,
  topLevelItems,
  type IndexedLibrary,
} from './service.js';
import { openIndexDb } from './store.js';
import { toolRef } from '../call/refs.js';
import type { LibraryReader } from '../library/port.js';

export interface SemanticInput extends LibraryArgs {
  q: string;
  limit?: number | undefined;
  mode?: 'hybrid' | 'keyword' | 'vector' | undefined;
  libraries?: LibraryArgs[] | undefined;
  item_type?: string | undefined;
  collection_key?: string | undefined;
}

export interface LibraryAnswer {
  library: string;
  backend: string;
  /** ready: used as it was; updated: brought up to date first; built: built for this search; building: not searched. */
  index: 'ready' | 'updated' | 'built' | 'building';
  items: number;
  vectors: VectorState;
  message?: string;
}

export interface SemanticOutput {
  q: string;
  /** What ran: `keyword` when no library's vectors were used, whatever was asked (scoreOf). */
  mode: 'hybrid' | 'keyword' | 'vector';
  hits: Array<RankedHit & { library: string }>;
  libraries: LibraryAnswer[];
}

export const DEFAULT_SEMANTIC_LIMIT = 10;

export async function semanticSearch(deps: Deps, input: SemanticInput): Promise<SemanticOutput> {
  const mode = input.mode ?? 'hybrid';
  const limit = input.limit ?? DEFAULT_SEMANTIC_LIMIT;
  const targets: LibraryArgs[] = input.libraries?.length
    ? input.libraries
    : [{ library_id: input.library_id, library_type: input.library_type }];
  const embedder =
    mode === 'keyword'
      ? undefined
      : createEmbedder(deps.config, { clock: deps.clock, redact: deps.redact, log: deps.log });
  if (mode === 'vector' && !embedder) {
    throw new ZoteusError(
      'validation_error',
      'mode "vector" needs embeddings, and ZOTEUS_EMBEDDINGS is off.',
      {
        field: 'mode',
        hint: 'Set ZOTEUS_EMBEDDINGS=openai or ollama (docs/search.md), or use mode "hybrid" or "keyword".',
      },
    );
  }
  const answers: LibraryAnswer[] = [];
  const hits: Array<ScoredHit & { library: string }> = [];
  const seen = new Set<string>();
  for (const args of targets) {
    const lib = await indexedLibrary(deps, args);
    if (seen.has(lib.library)) continue;
    seen.add(lib.library);
    // A tenant of a shared deployment on PostgreSQL: the library's index is in the database.
    if (lib.shared) {
      const { rankSharedLibrary } = await import('./postgres-semantic.js');
      const shared = await rankSharedLibrary(deps, args, { ...lib, shared: lib.shared }, input.q, {
        limit,
        mode,
        embedder,
        itemType: input.item_type,
        collectionKey: input.collection_key,
      });
      if (input.collection_key !== undefined && shared.hits.length === 0)
        await mustHaveCollection(lib.reader, input.collection_key, lib.library);
      answers.push(shared.answer);
      for (const h of shared.hits) hits.push({ ...h, library: lib.library });
      continue;
    }
    // Fix (tests): the index update before the search is best effort for vectors: an embeddings
    // server that fails leaves the keyword ranking, and the answer says why vectors are missing.
    let vectorsError: string | undefined;
    const state = await prepare(deps, args, lib, (error) => {
      vectorsError = error instanceof Error ? error.message : String(error);
      deps.log.warn(`Embedding the changed items of ${lib.library} failed: ${vectorsError}`);
    });
    if (state === 'building') {
      answers.push({
        library: lib.library,
        backend: lib.backend,
        index: 'building',
        items: 0,
        vectors: { used: false, reason: 'The index is being built.' },
        message: `The search index of ${lib.library} is being built in the background (${lib.path}); search again when ${toolRef('zotero_index', { action: 'status' })} says complete.`,
      });
      continue;
    }
    const db = await openIndexDb(lib.path, { create: false });
    if (!db) throw new ZoteusError('internal_error', `The search index ${lib.path} went missing.`);
    try {
      const ranked = await rankIndex(db, input.q, {
        limit,
        mode,
        embedder,
        itemType: input.item_type,
        collectionKey: input.collection_key,
      });
      // A collection filter that matched nothing may name no collection: an error, not 0 hits
      // (checked only then, so a search that finds something costs nothing more).
      if (input.collection_key !== undefined && ranked.hits.length === 0)
        await mustHaveCollection(lib.reader, input.collection_key, lib.library);
      const topLevel = topLevelItems(db);
      answers.push({
        library: lib.library,
        backend: lib.backend,
        index: state,
        items: topLevel,
        vectors:
          !ranked.vectors.used && vectorsError !== undefined
            ? { ...ranked.vectors, reason: `Embedding the library failed: ${vectorsError}` }
            : ranked.vectors,
        ...(ranked.notice ? { message: ranked.notice } : {}),
      });
      for (const h of ranked.hits) hits.push({ ...h, library: lib.library });
    } finally {
      db.close();
    }
  }
  if (answers.every((a) => a.index === 'building')) {
    throw new ZoteusError(
      'not_found',
      `No search index is ready yet: ${answers.map((a) => a.library).join(', ')} ${answers.length === 1 ? 'is' : 'are'} being indexed in the background.`,
      {
        retryable: true,
        hint: `Search again in a minute (${toolRef('zotero_index', { action: 'status' })} shows progress), or use ${toolRef('zotero_search_items', { q: 'TEXT' })} meanwhile.`,
      },
    );
  }
  if (mode === 'vector' && answers.every((a) => !a.vectors.used)) {
    throw new ZoteusError(
      'api_error',
      `Vector ranking is unavailable: ${answers.map((a) => a.vectors.reason).join(' ')}`,
      {
        hint: `Use mode "hybrid" or "keyword", or run ${toolRef('zotero_index', { action: 'update' })} to embed the library.`,
      },
    );
  }
  // What ran decides the score every hit shows, so that scores of one answer compare.
  const ran = mode === 'hybrid' && !answers.some((a) => a.vectors.used) ? 'keyword' : mode;
  const scored = hits.map(({ scores, ...hit }) => ({ ...hit, score: scoreOf(scores, ran) }));
  // Stable: hits of equal score keep their library's order.
  scored.sort((a, b) => b.score - a.score);
  return { q: input.q, mode: ran, hits: scored.slice(0, limit), libraries: answers };
}

/**
 * The score a hit shows, by what ran: keyword, the BM25 score (FTS5's bm25() with the field
 * weights, negated: higher is better); vector, the cosine similarity with the query (-1 to 1);
 * hybrid, the reciprocal-rank fusion Σ 1/(60 + rank). Six significant digits.
 */
function scoreOf(scores: ScoredHit['scores'], ran: SemanticOutput['mode']): number {
  const value = ran === 'keyword' ? scores.keyword : ran === 'vector' ? scores.vector : scores.fusion;
  // A hit is in the ranking that ran (keyword: only keyword hits; vector: only vector hits).
  return Number((value ?? 0).toPrecision(6));
}

/** Makes the library's index ready to search, or starts building it in the background. */
async function prepare(
  deps: Deps,
  args: LibraryArgs,
  lib: IndexedLibrary,
  onVectorsError: (error: unknown) => void,
): Promise<LibraryAnswer['index']> {
  const status = await indexStatus(lib);
  if (status.building) return status.state === 'complete' ? 'ready' : 'building';
  if (status.state === 'complete' && status.source === lib.feed.source) {
    if (status.upToDate === true) return 'ready';
    try {
      const report = await runIndexUpdate(deps, args, lib, { onVectorsError });
      return report.upToDate ? 'ready' : 'updated';
    } catch (error) {
      // Someone else started updating it meanwhile: search what is there.
      if (error instanceof ZoteusError && error.code === 'conflict') return 'ready';
      throw error;
    }
  }
  // No usable index: small zotero.sqlite libraries are indexed now, the rest in the background
  // (ZOTEUS_INDEX_AUTO_MIN_ITEMS=0 turns background builds off: then every index is built now).
  const min = deps.config.indexAutoMinItems;
  const size = lib.feed.size ? await lib.feed.size() : undefined;
  if (min === 0 || (size !== undefined && size < min)) {
    // Said before the build's bars, so that a person knows why the search waits.
    deps.progress(foregroundBuildStarted(lib.library));
    await runIndexUpdate(deps, args, lib, { onVectorsError });
    return 'built';
  }
  const started = startBackgroundBuild(
    deps.config.dataDir,
    lib.library,
    {
      ...(args.library_id !== undefined ? { library_id: args.library_id } : {}),
      ...(args.library_type !== undefined ? { library_type: args.library_type } : {}),
    },
    // Fix (tests): the build runs with the caller's environment, so it writes the index where
    // this search looks for it (ZOTEUS_DATA_DIR) and reads the same library.
    deps.env,
  );
  if (started) deps.progress(backgroundBuildStarted(lib.library));
  return 'building';
}

async function mustHaveCollection(reader: LibraryReader, key: string, library: string): Promise<void> {
  const { collections } = await reader.collections({ keys: [key], counts: false });
  if (collections.some((c) => c.key === key)) return;
  throw new ZoteusError('not_found', `No collection ${JSON.stringify(key)} in ${library}.`, {
    field: 'collection_key',
    hint: `${toolRef('zotero_list_collections', { q: 'NAME' })} finds collection keys.`,
  });
}
