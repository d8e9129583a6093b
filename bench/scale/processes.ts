/**
 * Whole processes, as an agent runs them: each command a fresh process, measured in rounds
 * (every command once per round, the floor `node -e 0` among them) so that a change in the
 * machine's load falls on all of them alike; one unmeasured round first, which leaves bin/zot's
 * V8 code cache in the sandbox's cache folder. Wall time here; peak memory from
 * `/usr/bin/time -f %M` around every process (the floor's too), when the machine has it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { median } from '../support.js';

const TIME = '/usr/bin/time';
const RSS_MARK = 'zoteus-scale-max-rss-kb';

export interface ProcessCommand {
  what: string;
  /** Node's arguments: a script and its arguments (`[ZOT, 'read', KEY]`), or `['-e', '0']`. */
  args: string[];
  /** Says what the answer held (and throws when it is wrong); stdout of a measured run. */
  check?: (stdout: string) => string;
}

export interface ProcessFigure {
  what: string;
  /** Median wall time, NaN when the command failed in the unmeasured round. */
  ms: number;
  minMs: number;
  maxMs: number;
  /** Largest peak RSS of the measured runs, NaN without /usr/bin/time. */
  peakRssMb: number;
  note: string;
}

interface Run {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
  rssMb: number;
}

export function runProcess(args: string[], env: Record<string, string>): Run {
  const timed = existsSync(TIME);
  const t = performance.now();
  const r = timed
    ? spawnSync(TIME, ['-f', `${RSS_MARK} %M`, process.execPath, ...args], {
        env,
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      })
    : spawnSync(process.execPath, args, { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - t;
  const kb = new RegExp(`${RSS_MARK} (\\d+)`).exec(r.stderr ?? '')?.[1];
  return {
    ms,
    status: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    rssMb: kb === undefined ? NaN : Number(kb) / 1024,
  };
}

/** The envelope's error message, or the exit code when stdout holds none. */
function failure(r: Run): string {
  try {
    return (JSON.parse(r.stdout) as { error: { message: string } }).error.message;
  } catch {
    return `exit ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`;
  }
}

export function timeProcesses(
  commands: readonly ProcessCommand[],
  env: Record<string, string>,
  runs: number,
): ProcessFigure[] {
  const failed = new Map<string, string>();
  const times = new Map<string, number[]>(commands.map((c) => [c.what, []]));
  const rss = new Map<string, number>(commands.map((c) => [c.what, NaN]));
  const notes = new Map<string, string>();
  for (let round = 0; round <= runs; round++) {
    for (const c of commands) {
      if (failed.has(c.what)) continue;
      const r = runProcess(c.args, env);
      if (r.status !== 0) {
        failed.set(c.what, failure(r));
        continue;
      }
      const note = c.check ? c.check(r.stdout) : '';
      if (round === 0) continue;
      notes.set(c.what, note);
      times.get(c.what)!.push(r.ms);
      const peak = rss.get(c.what)!;
      rss.set(c.what, Number.isNaN(peak) ? r.rssMb : Math.max(peak, r.rssMb));
    }
  }
  return commands.map((c) => {
    const t = times.get(c.what)!;
    const why = failed.get(c.what);
    if (why !== undefined || t.length === 0)
      return { what: c.what, ms: NaN, minMs: NaN, maxMs: NaN, peakRssMb: NaN, note: `not measured: ${why}` };
    return {
      what: c.what,
      ms: median(t),
      minMs: Math.min(...t),
      maxMs: Math.max(...t),
      peakRssMb: rss.get(c.what)!,
      note: notes.get(c.what) ?? '',
    };
  });
}
