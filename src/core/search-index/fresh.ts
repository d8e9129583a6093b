/**
 * The index a read may answer from: only one built from the same source and up to date with
 * it. For zotero.sqlite "up to date" is cheap to know (the file's size and mtime) and cheap to
 * reach (one query of signatures, then only the changed items), so a stale index is brought up
 * to date before answering. An index being built by another process is not used until done.
 *
 * With no index yet, a large enough library gets one built in the background by a detached
 * `zot index build`, so the next searches are fast; the caller says so.
 */
import type * as ChildProcess from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtin } from '../builtin.js';
import { packageRoot } from '../package-root.js';
import type { ProgressEvent } from '../tool.js';
import type { IndexFeed } from './feed.js';
import {
  acquireBuildLock,
  buildInProgress,
  indexFile,
  openIndexDb,
  readMeta,
  type IndexDb,
} from './store.js';
import { updateIndex } from './update.js';

export type FreshIndex =
  | { db: IndexDb; state: 'fresh' | 'updated'; path: string }
  | { db?: undefined; state: 'absent' | 'building' | 'other-source'; path: string };

/** Opens the library's index when it can answer now; the caller closes `db`. */
export async function freshIndex(dataDir: string, library: string, feed: IndexFeed): Promise<FreshIndex> {
  const path = indexFile(dataDir, library);
  if (!existsSync(path)) return { state: buildInProgress(path) ? 'building' : 'absent', path };
  const db = await openIndexDb(path, { create: false });
  if (!db) return { state: 'absent', path };
  try {
    if (readMeta(db, 'source') !== feed.source) {
      db.close();
      return { state: 'other-source', path };
    }
    if (readMeta(db, 'complete') !== '1') {
      db.close();
      return { state: buildInProgress(path) ? 'building' : 'absent', path };
    }
    const fingerprint = await feed.fingerprint();
    if (fingerprint !== undefined && fingerprint === readMeta(db, 'fingerprint'))
      return { db, state: 'fresh', path };
    const release = acquireBuildLock(path);
    if (!release) {
      db.close();
      return { state: 'building', path };
    }
    try {
      await updateIndex(db, feed);
    } finally {
      release();
    }
    return { db, state: 'updated', path };
  } catch (error) {
    if (db.open) db.close();
    throw error;
  }
}

/**
 * Starts `zot index build` for a library as a detached process (it outlives a one-shot CLI
 * call; in an MCP server it keeps the event loop free), unless a build of this index is
 * running already. The child gets this process's environment, so it routes the library the
 * same way. Returns whether a build was started.
 */
export function startBackgroundBuild(
  dataDir: string,
  library: string,
  args: { library_id?: number; library_type?: 'user' | 'group' },
  // Fix (tests): the environment of the caller's deps (in a test or an embedding host it is not
  // process.env); by default this process's.
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  const path = indexFile(dataDir, library);
  if (buildInProgress(path)) return false;
  const zot = join(packageRoot(), 'bin', 'zot');
  if (!existsSync(zot)) return false;
  const argv = [zot, 'index', 'build', '--json', '--no-interaction'];
  if (args.library_type !== undefined) argv.push('--library-type', args.library_type);
  if (args.library_id !== undefined) argv.push('--library-id', String(args.library_id));
  // node:child_process (with dgram and net: about 5 ms) loads only for a background build.
  const child = builtin<typeof ChildProcess>('node:child_process').spawn(process.execPath, argv, {
    detached: true,
    stdio: 'ignore',
    // On Windows a detached node.exe gets a console window of its own: a build in the
    // background must not open one on the researcher's screen.
    windowsHide: true,
    env: { ...env },
  });
  child.unref();
  return true;
}

/**
 * The progress event of a background build this call started (deps.progress): the surface
 * announces it once, on the CLI as a line on a terminal or an NDJSON event otherwise.
 */
export function backgroundBuildStarted(library: string): ProgressEvent {
  return {
    event: 'start',
    phase: 'index_build',
    background: true,
    message: `Building the search index of ${library} in the background; later searches will be faster.`,
  };
}

/**
 * The announcement of an index build this call runs before answering (a small library without
 * an index): the build's own phases show as bars, this says why a search waits. It goes out as
 * the background build's does (`background: true`: announced once, a line of its own on a
 * terminal), and the build's `start`/`progress`/`complete` events follow it in this call.
 */
export function foregroundBuildStarted(library: string): ProgressEvent {
  return {
    event: 'start',
    phase: 'index_build',
    message: `Building the search index of ${library} before searching (once); later searches will be faster.`,
  };
}
