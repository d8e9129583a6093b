/**
 * The journal of one call: what the pipeline hands a mutating call in `deps.journal`. The
 * store (and better-sqlite3) is opened on the first write only, so a call that writes nothing
 * leaves no trace, and the request's row is written with the first batch's entries.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { SharedState } from '../tool.js';
import type { EntryRecord, Journal, NewEntry, RequestStatus, Settlement } from './store.js';

/** What a declaration says undo can restore for it (ToolDeclaration.undo). */
export interface UndoDeclaration {
  /** What undo brings back ("the tags as they were"). */
  restores: string;
  /** What it cannot ("the file's bytes"); absent when everything is. */
  cannot?: string | undefined;
}

export interface JournalRecorder {
  readonly requestId: string;
  /** Records a batch's entries as pending (one transaction), before the batch is sent. */
  record(entries: readonly NewEntry[]): Promise<number[]>;
  /** Settles a batch's entries (one transaction). */
  settle(settlements: readonly Settlement[]): Promise<void>;
  /** This call undoes `requestId` (its row says so, for history and the undo of an undo). */
  undoing(requestId: string): void;
  /** The end of the call: the request's row, when it wrote anything, gets its status. */
  finish(status: RequestStatus): Promise<void>;
  /** The store (opened on demand), for history and undo. */
  open(): Promise<Journal>;
}

/** `journal.db` in the caller's folder on a shared deployment, else the data directory. */
export function journalPath(deps: {
  config: Pick<Config, 'dataDir'>;
  fileRoot?: string | undefined;
}): string {
  return join(deps.fileRoot ?? deps.config.dataDir, 'journal.db');
}

/** Where the journal of these deps is: the shared state database, or `journal.db` (journalPath). */
export function journalWhere(deps: {
  config: Pick<Config, 'dataDir'>;
  fileRoot?: string | undefined;
  sharedState?: SharedState | undefined;
}): string {
  return deps.sharedState ? 'the shared state database' : journalPath(deps);
}

/**
 * Opens the journal of these deps: the caller's rows of the shared state database on a
 * deployment that has one, else the file; undefined when there is no file yet (nothing was
 * ever journaled here) and `existing` asks only for one that exists.
 */
export async function openJournalOf(
  deps: {
    config: Pick<Config, 'dataDir'>;
    env: Readonly<Record<string, string | undefined>>;
    fileRoot?: string | undefined;
    sharedState?: SharedState | undefined;
  },
  now: () => number,
  options: { existing?: boolean } = {},
): Promise<Journal | undefined> {
  const m = await import('./store.js');
  const days = m.journalDays(deps.env);
  if (deps.sharedState) {
    const { openSqlJournal } = await import('./store-sql.js');
    return openSqlJournal(deps.sharedState.db, deps.sharedState.owner, { now, days });
  }
  const path = journalPath(deps);
  if (options.existing) {
    if (!existsSync(path)) return undefined;
  }
  return m.openJournal(path, { now, days });
}

/** Argument names whose values are never journaled. */
const SECRET_ARG = /(^|_)(api_key|key_secret|password|secret|token|authorization)$/i;

/** The call's arguments as journaled: secrets dropped, then the redactor over the rest. */
export function journaledArgs(
  input: Record<string, unknown>,
  redact: (text: string) => string,
): Record<string, unknown> {
  const kept = Object.fromEntries(Object.entries(input).filter(([name]) => !SECRET_ARG.test(name)));
  return JSON.parse(redact(JSON.stringify(kept))) as Record<string, unknown>;
}

export interface RecorderOptions {
  /** Opens the store, on the first write only (openJournalOf). */
  open: () => Promise<Journal>;
  now: () => number;
  requestId: string;
  tool: string;
  args: Record<string, unknown>;
  library: string | undefined;
  undo: UndoDeclaration | undefined;
}

export function createRecorder(options: RecorderOptions): JournalRecorder {
  let journal: Promise<Journal> | undefined;
  let begun = false;
  let undoOf: string | undefined;
  const open = (): Promise<Journal> => (journal ??= options.open());
  return {
    requestId: options.requestId,
    open,
    undoing(requestId) {
      undoOf = requestId;
    },
    async record(entries) {
      const store = await open();
      if (!begun) {
        await store.beginRequest({
          requestId: options.requestId,
          tool: options.tool,
          args: options.args,
          library: options.library ?? entries[0]?.library,
          createdAt: options.now(),
          undoOf,
          undo: options.undo,
        });
        begun = true;
      }
      return store.record(options.requestId, entries);
    },
    async settle(settlements) {
      if (settlements.length === 0) return;
      await (await open()).settle(settlements);
    },
    async finish(status) {
      if (!journal) return;
      const store = await journal;
      if (begun) await store.finishRequest(options.requestId, status);
      await store.close();
      journal = undefined;
    },
  };
}

export type { EntryRecord, NewEntry, Settlement };
