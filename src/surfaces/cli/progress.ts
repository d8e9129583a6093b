/**
 * Progress on stderr: NDJSON events for agents, or a one-line bar on a TTY in table mode.
 * `start` and `complete` always go out; `progress` events at most every 250 ms.
 */
import type { Writable } from 'node:stream';
import type { ProgressEvent } from '../../core/tool.js';

export const PROGRESS_INTERVAL_MS = 250;

export function createProgressWriter(options: {
  stderr: Writable;
  requestId: string;
  startedAt: number;
  now: () => number;
  bar: boolean;
}): (event: ProgressEvent) => void {
  let last = -Infinity;
  let barShown = false;
  return (event) => {
    const t = options.now();
    if (event.event === 'progress' && t - last < PROGRESS_INTERVAL_MS) return;
    last = t;
    const elapsed_ms = Math.max(0, Math.round(t - options.startedAt));
    if (options.bar) {
      const done = event.done ?? 0;
      const total = event.total ?? 0;
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * 30);
      const bar = `[${'#'.repeat(filled)}${' '.repeat(30 - filled)}] ${done}/${total} ${event.phase}`;
      options.stderr.write(`\r${bar}`);
      barShown = true;
      if (event.event === 'complete' && barShown) options.stderr.write('\n');
      return;
    }
    const line: Record<string, unknown> = { event: event.event, phase: event.phase };
    if (event.done !== undefined) line.done = event.done;
    if (event.total !== undefined) line.total = event.total;
    if (event.succeeded !== undefined) line.succeeded = event.succeeded;
    if (event.failed !== undefined) line.failed = event.failed;
    line.request_id = options.requestId;
    line.elapsed_ms = elapsed_ms;
    options.stderr.write(`${JSON.stringify(line)}\n`);
  };
}
