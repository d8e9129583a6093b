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
