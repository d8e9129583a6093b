/**
 * The index of an addressed library as the tools use it: routed like every read (the
 * desktop's zotero.sqlite when it holds the library, else the Web API), built and updated
 * under the build lock with progress events, and described for `zot index status`.
 */
import { toolRef } from '../call/refs.js';
import { statSync } from 'node:fs';
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { BackendName, LibraryReader } from '../library/port.js';
import type { Deps, SharedState } from '../tool.js';
import { createEmbedder } from './embeddings.js';
import type { IndexFeed } from './feed.js';
import {
  acquireBuildLock,
  buildInProgress,
  indexFile,
  openIndexDb,
  readMeta,
  type IndexDb,
} from './store.js';
import { updateIndex, type FulltextLookup, type IndexProgress, type UpdateReport } from './update.js';

export interface IndexedLibrary {
  reader: LibraryReader;
  feed: IndexFeed;
  backend: BackendName;
  /** `users/1`, `groups/2`: as the router names it. */
  library: string;
  /** The index file; on a shared deployment, `postgresql:<library>` (the rows are in the database). */
  path: string;
  /** On a shared deployment whose state database is PostgreSQL: where the index rows are. */
  shared?: { state: SharedState; owner: string } | undefined;
}

export interface IndexStatus {
  /** `absent`: never built; `partial`: a build stopped half-way (the next build resumes); `complete`. */
  state: 'absent' | 'partial' | 'complete';
  /** A build is running in another process now. */
  building: boolean;
  items: number;
  topLevel: number;
  trashed: number;
  fulltextDocuments: number;
  vectors: { count: number; model: string } | null;
  bytes: number;
  libraryVersion: number | null;
  updatedAt: string | null;
  source: string | null;
  /** Whether the source is unchanged since the last update (null: only asking the Web API could tell). */
  upToDate: boolean | null;
}

/** The library's reader and index file (zotero.sqlite preferred when the desktop holds it). */
export async function indexedLibrary(deps: Deps, args: LibraryArgs): Promise<IndexedLibrary> {
  const { openLibraryReader } = await import('../library/router.js');
  const { reader, route } = await openLibraryReader(
    deps,
    { library_id: args.library_id, library_type: args.library_type },
    { prefer: 'sqlite' },
  );
  if (!reader.feed) {
    throw new ZoteusError('internal_error', `The ${route.backend} backend cannot feed a search index.`);
  }
  const state = deps.sharedState;
  if (state?.db.dialect === 'postgres') {
    const { searchOwner } = await import('./postgres.js');
    return {
      reader,
      feed: reader.feed,
      backend: route.backend,
      library: route.library,
      path: `postgresql:${route.library}`,
      shared: { state, owner: searchOwner(state.owner, route.library) },
    };
  }
  return {
    reader,
    feed: reader.feed,
    backend: route.backend,
    library: route.library,
    path: indexFile(deps.config.dataDir, route.library),
  };
}

/** Full text of an attachment for the index (ZOTEUS_INDEX_FULLTEXT), from the best source there is. */
function fulltextLookup(deps: Deps, args: LibraryArgs): FulltextLookup {
  return async (attachmentKey) => {
    const { itemFulltext } = await import('../fulltext/item-text.js');
    const found = await itemFulltext(deps, {
      itemKey: attachmentKey,
      ...(args.library_id !== undefined ? { library_id: args.library_id } : {}),
      ...(args.library_type !== undefined ? { library_type: args.library_type } : {}),
    });
    return found ? { text: found.text, source: found.source } : undefined;
  };
}

/**
 * Builds or updates the index under the build lock. `conflict` (retryable) when another
 * process is building it now.
 */
export async function runIndexUpdate(
  deps: Deps,
  args: LibraryArgs,
  lib: IndexedLibrary,
  options: { rebuild?: boolean; fulltext?: boolean; onVectorsError?: (error: unknown) => void } = {},
): Promise<UpdateReport> {
  const embedder = createEmbedder(deps.config, { clock: deps.clock, redact: deps.redact, log: deps.log });
  const shared = {
    rebuild: options.rebuild === true,
    fulltext: (options.fulltext ?? deps.config.indexFulltext) ? fulltextLookup(deps, args) : undefined,
    embedder,
    onVectorsError: options.onVectorsError,
    now: () => deps.clock.now(),
    onProgress: progressOf(deps),
  };
  if (lib.shared) {
    // Any replica may build or update it; two at once do the same work twice, rightly (row ids
    // are claimed, rows upserted by key).
    const { updatePgIndex } = await import('./postgres.js');
    return updatePgIndex(lib.shared.state.db, lib.shared.owner, lib.feed, shared);
  }
  const release = acquireBuildLock(lib.path);
  if (!release) {
    throw new ZoteusError(
      'conflict',
      `The search index of ${lib.library} is being built by another process.`,
      {
        retryable: true,
        hint: `Wait for it to finish (${toolRef('zotero_index', { action: 'status' })} shows it), then run the command again.`,
      },
    );
  }
  let db: IndexDb | undefined;
  try {
    db = await openIndexDb(lib.path, { create: true });
    return await updateIndex(db!, lib.feed, shared);
  } finally {
    db?.close();
    release();
  }
}

/** An index update's progress as progress events: start, progress, complete per phase. */
function progressOf(deps: Pick<Deps, 'progress'>): (e: IndexProgress) => void {
  const phases = new Set<string>();
  return (e) => {
    if (!phases.has(e.phase)) {
      phases.add(e.phase);
      deps.progress({ event: 'start', phase: e.phase, total: e.total });
    }
    deps.progress({ event: 'progress', phase: e.phase, done: e.done, total: e.total });
    // Fix (tests): `complete` always goes out (progress events are throttled on the CLI), so a
    // reader of the NDJSON events knows each phase finished (docs/cli.md).
    if (e.done === e.total)
      deps.progress({ event: 'complete', phase: e.phase, done: e.done, total: e.total });
  };
}

/** Top-level items not in the trash: what a library "has" for an agent. */
export function topLevelItems(db: IndexDb): number {
  return db
    .prepare('SELECT count(*) FROM items WHERE parent IS NULL AND deleted = 0')
    .pluck()
    .get() as number;
}

/** What is in the index now, without changing it. */
export async function indexStatus(lib: IndexedLibrary): Promise<IndexStatus> {
  if (lib.shared) {
    const { pgIndexStatus } = await import('./postgres.js');
    const found = await pgIndexStatus(lib.shared.state.db, lib.shared.owner);
    let upToDate: boolean | null = null;
    if (found.complete && found.source === lib.feed.source) {
      const fp = await lib.feed.fingerprint();
      if (fp !== undefined) upToDate = fp === found.fingerprint;
    } else if (found.complete) upToDate = false;
    const { complete, fingerprint: _fingerprint, ...counts } = found;
    return {
      ...counts,
      state: complete ? 'complete' : found.items > 0 ? 'partial' : 'absent',
      building: false,
      upToDate,
    };
  }
  const building = buildInProgress(lib.path);
  const db = await openIndexDb(lib.path, { create: false });
  if (!db) {
    return {
      state: 'absent',
      building,
      items: 0,
      topLevel: 0,
      trashed: 0,
      fulltextDocuments: 0,
      vectors: null,
      bytes: 0,
      libraryVersion: null,
      updatedAt: null,
      source: null,
      upToDate: null,
    };
  }
  try {
    const count = (sql: string): number => (db.prepare(sql).pluck().get() as number) ?? 0;
    const vectors = db.prepare('SELECT model, count(*) AS n FROM vectors GROUP BY model').get() as
      { model: string; n: number } | undefined;
    const complete = readMeta(db, 'complete') === '1';
    const source = readMeta(db, 'source') ?? null;
    let upToDate: boolean | null = null;
    if (complete && source === lib.feed.source) {
      const fp = await lib.feed.fingerprint();
      if (fp !== undefined) upToDate = fp === readMeta(db, 'fingerprint');
    } else if (complete) upToDate = false;
    const libraryVersion = Number(readMeta(db, 'library_version'));
    return {
      state: complete ? 'complete' : 'partial',
      building,
      items: count('SELECT count(*) FROM items'),
      topLevel: topLevelItems(db),
      trashed: count('SELECT count(*) FROM items WHERE deleted = 1'),
      fulltextDocuments: count('SELECT count(*) FROM fulltext_state WHERE source IS NOT NULL'),
      vectors: vectors ? { count: vectors.n, model: vectors.model } : null,
      bytes: fileBytes(lib.path),
      libraryVersion: Number.isSafeInteger(libraryVersion) ? libraryVersion : null,
      updatedAt: readMeta(db, 'updated_at') ?? null,
      source,
      upToDate,
    };
  } finally {
    db.close();
  }
}

function fileBytes(path: string): number {
  let total = 0;
  for (const p of [path, `${path}-wal`]) {
    try {
      total += statSync(p).size;
    } catch {
      // no such file
    }
  }
  return total;
}
