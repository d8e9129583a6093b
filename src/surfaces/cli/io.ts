/**
 * The CLI's streams, injectable so tests can switch TTYs on and off (as gh does), and
 * the output format decision of agent-interface.md: --json, else ZOT_FORMAT, else JSON
 * when stdout is not a TTY.
 */
import type { Readable, Writable } from 'node:stream';

export interface CliIO {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  stdin: Readable & { isTTY?: boolean };
}

export type Format = 'json' | 'table';

/** Whether a person can be asked (agent-interface.md, "Non-interactive operation"): a TTY, no --no-interaction. */
export function canAsk(io: Pick<CliIO, 'stdin'>, noInteraction: boolean): boolean {
  return !noInteraction && Boolean(io.stdin.isTTY);
}

export function chooseFormat(json: boolean, envFormat: string | undefined, stdoutIsTTY: boolean): Format {
  if (json) return 'json';
  const f = envFormat?.trim().toLowerCase();
  if (f === 'json' || f === 'table') return f;
  return stdoutIsTTY ? 'table' : 'json';
}

export function useColour(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return Boolean(stream.isTTY) && !(env.NO_COLOR !== undefined && env.NO_COLOR !== '');
}

export function writeLine(stream: Writable, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * The width table mode fits its lines to: `COLUMNS` when set (tests and scripts set it), else
 * the terminal's; undefined when neither says (no fitting).
 */
export function terminalWidth(
  stdout: { isTTY?: boolean; columns?: number },
  env: Readonly<Record<string, string | undefined>>,
): number | undefined {
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv >= 20) return fromEnv;
  if (stdout.isTTY && typeof stdout.columns === 'number' && stdout.columns >= 20) return stdout.columns;
  return undefined;
}
