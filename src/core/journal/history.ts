/**
 * The history of journaled writes, newest first, paged: per request its id, time, tool,
 * library, object counts, and whether undo can still restore it (and why not).
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import { journalWhere, openJournalOf } from './recorder.js';
import type { RequestSummary } from './store.js';

export const HISTORY_DEFAULT_LIMIT = 20;
/** As the tool's paging parameters allow. */
export const HISTORY_MAX_LIMIT = 50;

export interface HistoryInput {
  limit?: number | undefined;
  start?: number | undefined;
  since?: string | undefined;
  tool?: string | undefined;
}

export interface HistoryRow {
  requestId: string;
  time: string;
  tool: string;
  library: string | null;
  /** `interrupted`: the process ended between the journal and the end of its writes. */
  status: 'done' | 'partial' | 'failed' | 'interrupted';
  objects: {
    changed: number;
    created: number;
    deleted: number;
    other: number;
    notLanded: number;
    unknown: number;
  };
  undoable: boolean;
  reason?: string;
  /** What the tool's declaration says undo restores, and what it cannot. */
  restores?: string;
  cannot?: string;
  undoOf?: string;
  undoneBy?: string[];
}

export interface HistoryOutput {
  requests: HistoryRow[];
  total: number;
  nextStart?: number;
  truncated: boolean;
  journal: string;
}

function since(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const t = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(t)) {
    throw new ZoteusError(
      'validation_error',
      `since must be a date (2026-05-01) or a time (2026-05-01T12:00:00Z), not '${text}'.`,
      {
        field: 'since',
      },
    );
  }
  return t;
}

/**
 * Whether undo can still restore a request, and the reason when not. A request that wrote
 * nothing per object (a file upload alone) is asked of its entries: what undo would do with them.
 */
export async function undoability(
  r: RequestSummary,
  plan: () => Promise<{ plans: readonly unknown[]; notUndoable: ReadonlyArray<{ reason: string }> }>,
): Promise<{ undoable: boolean; reason?: string }> {
  const landed = r.counts.done + r.counts.unknown + r.counts.pending;
  if (!r.undo) return { undoable: false, reason: `${r.tool} declares nothing that undo can restore` };
  if (landed === 0) return { undoable: false, reason: 'nothing it sent landed' };
  if (r.ops.other > 0 && r.ops.other === r.ops.update + r.ops.create + r.ops.delete + r.ops.other) {
    const { plans, notUndoable } = await plan();
    if (plans.length === 0) {
      return {
        undoable: false,
        reason:
          notUndoable[0]?.reason ??
          'its change was made across the library at once (not recorded per object)',
      };
    }
  }
  if (r.undoneBy.length > 0) return { undoable: false, reason: `already undone by ${r.undoneBy.join(', ')}` };
  return { undoable: true };
}

export async function listHistory(deps: Deps, input: HistoryInput): Promise<HistoryOutput> {
  const path = journalWhere(deps);
  const limit = Math.min(input.limit ?? HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT);
  const start = input.start ?? 0;
  const from = since(input.since);
  const journal = await openJournalOf(deps, () => deps.clock.now(), { existing: true });
  if (!journal) return { requests: [], total: 0, truncated: false, journal: path };
  const { planUndo } = await import('./undo.js');
  try {
    const { requests, total } = await journal.history({ start, limit, since: from, tool: input.tool });
    const rows: HistoryRow[] = [];
    for (const r of requests) {
      const verdict = await undoability(r, async () => planUndo(await journal.entries(r.requestId)));
      rows.push({
        requestId: r.requestId,
        time: new Date(r.createdAt).toISOString(),
        tool: r.tool,
        library: r.library ?? null,
        status: r.status === 'pending' ? 'interrupted' : r.status,
        objects: {
          changed: r.ops.update,
          created: r.ops.create,
          deleted: r.ops.delete,
          other: r.ops.other,
          notLanded: r.counts.failed + r.counts.unchanged,
          unknown: r.counts.unknown + r.counts.pending,
        },
        ...verdict,
        ...(r.undo ? { restores: r.undo.restores, ...(r.undo.cannot ? { cannot: r.undo.cannot } : {}) } : {}),
        ...(r.undoOf ? { undoOf: r.undoOf } : {}),
        ...(r.undoneBy.length ? { undoneBy: r.undoneBy } : {}),
      });
    }
    const next = start + rows.length;
    return {
      requests: rows,
      total,
      ...(next < total ? { nextStart: next } : {}),
      truncated: next < total,
      journal: path,
    };
  } finally {
    await journal.close();
  }
}
