/**
 * What the benchmarks share: rows of figures, the two ways of measuring them (requests and
 * wall time of one call; median of warm runs) and the table they print, rendered with the
 * CLI's own table renderer.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { renderRows } from '../src/surfaces/cli/table.js';

export function printTable(title: string, rows: ReadonlyArray<Record<string, unknown>>): void {
  process.stdout.write(`\n${title}\n\n${renderRows(rows)}\n`);
}

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The `p` quantile (0–1) of `xs`, nearest rank: `percentile(xs, 0.95)` is the p95. */
export const percentile = (xs: readonly number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil(p * xs.length) - 1))]!;

/**
 * The machine's load when the figures were taken (`uptime`'s three averages and the core
 * count): wall times on a shared machine mean little without it.
 */
export function loadNote(): string {
  const [one, five, fifteen] = loadavg().map((n) => n.toFixed(2));
  return `load average ${one}, ${five}, ${fifteen} on ${cpus().length} cores`;
}

// ---------------------------------------------------------------------------------------------
// Request-counting benches (against the test server)

export interface RequestRow {
  what: string;
  requests: number;
  wallMs: number;
  maxInFlight: number;
  note: string;
}

export interface RequestCounter {
  reset(): void;
  requests(): number;
  maxInFlight(): number;
}

/** `measure(what, counter, note, work)`: one call's requests, wall time and concurrency, as a row. */
export function requestMeasurer(rows: RequestRow[]) {
  return async function measure<T>(
    what: string,
    counter: RequestCounter,
    note: (result: T) => string,
    work: () => Promise<T>,
  ): Promise<{ result: T; row: RequestRow }> {
    counter.reset();
    const started = performance.now();
    const result = await work();
    const row = {
      what,
      requests: counter.requests(),
      wallMs: Math.round(performance.now() - started),
      maxInFlight: counter.maxInFlight(),
      note: note(result),
    };
    rows.push(row);
    return { result, row };
  };
}

export function printRequestRows(title: string, rows: readonly RequestRow[]): void {
  printTable(
    title,
    rows.map((r) => ({
      what: r.what,
      requests: r.requests,
      'wall ms': r.wallMs,
      'max in flight': r.maxInFlight,
      note: r.note,
    })),
  );
}

// ---------------------------------------------------------------------------------------------
// In-process timing benches

export interface TimingRow {
  what: string;
  ms: number;
  note: string;
}

/** `once` times one call; `warm` reports the median of `runs` runs after an unmeasured first one. */
export function timers(rows: TimingRow[], runs: number) {
  return {
    async once<T>(what: string, fn: () => Promise<T>, note: (r: T) => string = () => ''): Promise<T> {
      const t = performance.now();
      const r = await fn();
      rows.push({ what, ms: performance.now() - t, note: note(r) });
      return r;
    },
    async warm<T>(what: string, fn: () => Promise<T>, note: (r: T) => string = () => ''): Promise<T> {
      let last = await fn();
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        last = await fn();
        times.push(performance.now() - t);
      }
      const sorted = [...times].sort((a, b) => a - b);
      const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))]!;
      rows.push({ what, ms: median(times), note: `${note(last)}; p90 ${p90.toFixed(1)} ms` });
      return last;
    },
  };
}

export function printTimingRows(title: string, rows: readonly TimingRow[]): void {
  printTable(
    title,
    rows.map((r) => ({ what: r.what, ms: r.ms.toFixed(1), note: r.note })),
  );
}
