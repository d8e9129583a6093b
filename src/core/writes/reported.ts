/**
 * A set-like change with progress events (start, progress, complete) under one phase: the
 * form every batched membership, tag and trash change reports in (agent-interface.md,
 * "Progress"). `report: false` keeps a small change silent.
 */
import type { ProgressEvent } from '../tool.js';
import type { ZoteroClient } from '../zotero/index.js';
import { applySetChange, type ObjectData, type SetChangeInput, type SetChangeResult } from './engine.js';

export interface Reporting {
  progress(event: ProgressEvent): void;
  phase: string;
  /** Default true. */
  report?: boolean;
}

export async function applySetChangeReported<D extends ObjectData>(
  client: ZoteroClient,
  input: Omit<SetChangeInput<D>, 'progress'>,
  reporting: Reporting,
): Promise<SetChangeResult> {
  const { progress, phase, report = true } = reporting;
  const total = new Set(input.keys).size;
  if (report) progress({ event: 'start', phase, done: 0, total });
  const result = await applySetChange(client, {
    ...input,
    progress: report ? (done, all) => progress({ event: 'progress', phase, done, total: all }) : undefined,
  });
  if (report) {
    progress({
      event: 'complete',
      phase,
      done: total,
      total,
      succeeded: result.succeeded.length,
      failed: result.failed.length,
    });
  }
  return result;
}
