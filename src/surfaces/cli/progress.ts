/**
 * Progress on stderr, decided by stderr (agent-interface.md, "Progress"): NDJSON events when
 * stderr is not a TTY (an agent or a log reads them), a one-line bar when it is (a person
 * watches it), whatever stdout is. `start` and `complete` always go out; `progress` events at
 * most every 250 ms. A bar is erased when its phase completes and when the call ends (success
 * or failure), so no finished bar is left on the screen. Work that goes on in the background
 * after the call (`background: true`) is announced once, as a line of its own on a TTY.
 */
import type { Writable } from 'node:stream';
import type { ProgressEvent } from '../../core/tool.js';

export const PROGRESS_INTERVAL_MS = 250;

/** Carriage return, then erase to the end of the line: the bar's line is blank again. */
export const ERASE_LINE = '\r\u001b[K';

const BAR_CELLS = 30;

export interface ProgressWriter {
  /** deps.progress: one event. */
  emit(event: ProgressEvent): void;
  /** Erases a bar on the screen, if one is shown (before other stderr or stdout text, and at the end). */
  clear(): void;
}

export function createProgressWriter(options: {
  stderr: Writable & { isTTY?: boolean; columns?: number };
  requestId: string;
  startedAt: number;
  now: () => number;
  /** A bar instead of NDJSON events: stderr is a TTY. */
  bar: boolean;
}): ProgressWriter {
  const { stderr } = options;
  let last = -Infinity;
  let barShown = false;
  const announced = new Set<string>();
  const clear = () => {
    if (!barShown) return;
    stderr.write(ERASE_LINE);
    barShown = false;
  };
  const drawBar = (event: ProgressEvent) => {
    const done = event.done ?? 0;
    const total = event.total ?? 0;
    const ratio = total > 0 ? Math.min(1, done / total) : 0;
    const filled = Math.round(ratio * BAR_CELLS);
    let line = `[${'#'.repeat(filled)}${' '.repeat(BAR_CELLS - filled)}] ${done}/${total} ${event.phase}`;
    // A bar longer than the terminal wraps, and `\r` would then redraw only its last part.
    const columns = stderr.columns;
    if (typeof columns === 'number' && columns > 1 && [...line].length > columns - 1)
      line = [...line].slice(0, columns - 1).join('');
    stderr.write(`\r${line}`);
    barShown = true;
  };
  const ndjson = (event: ProgressEvent, t: number) => {
    const line: Record<string, unknown> = { event: event.event, phase: event.phase };
    if (event.done !== undefined) line.done = event.done;
    if (event.total !== undefined) line.total = event.total;
    if (event.succeeded !== undefined) line.succeeded = event.succeeded;
    if (event.failed !== undefined) line.failed = event.failed;
    if (event.background) line.background = true;
    if (event.message !== undefined) line.message = event.message;
    line.request_id = options.requestId;
    line.elapsed_ms = Math.max(0, Math.round(t - options.startedAt));
    stderr.write(`${JSON.stringify(line)}\n`);
  };
  return {
    clear,
    emit(event) {
      const t = options.now();
      // An announcement: a background build, or a start that says why the person waits.
      if (event.background || (event.event === 'start' && event.message !== undefined)) {
        // Announced once per call: a second search of the same library says nothing new.
        const id = `${event.phase}\u0000${event.message ?? ''}`;
        if (announced.has(id)) return;
        announced.add(id);
        if (!options.bar) return ndjson(event, t);
        clear();
        stderr.write(`${event.message ?? `Started in the background: ${event.phase}.`}\n`);
        return;
      }
      if (event.event === 'progress' && t - last < PROGRESS_INTERVAL_MS) return;
      last = t;
      if (!options.bar) return ndjson(event, t);
      if (event.event === 'complete') clear();
      else drawBar(event);
    },
  };
}
