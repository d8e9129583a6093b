/**
 * The CLI run in-process with its streams injected, so a test decides which of stdin, stdout
 * and stderr are terminals (as `script` cannot: it makes all three one pseudo-terminal), and
 * reads stdout and stderr apart, byte for byte. A terminal's screen is replayed from the bytes
 * (`\r`, erase-line, colours) to see what a person is left looking at.
 */
import { PassThrough, Writable } from 'node:stream';
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import type { AnyTool, Clock } from '../../../src/core/tool.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
// @ts-expect-error: a JS fixture module without types
import { makeFixtureTools } from '../../support/fixture-tools.mjs';

class Sink extends Writable {
  text = '';
  isTTY?: boolean;
  columns?: number;
  override _write(chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

export interface TerminalRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as the one JSON document it must be when piped (throws otherwise). */
  json(): Record<string, unknown>;
}

export interface TerminalOptions {
  env: Record<string, string | undefined>;
  stdoutTTY?: boolean;
  stderrTTY?: boolean;
  stdinTTY?: boolean;
  /** What is typed on stdin. */
  stdin?: string;
  /** The terminal's width (stdout's and stderr's `columns`). */
  columns?: number;
  /** Declarations added to the product's and the fixtures' (a tool a test needs). */
  extraTools?: readonly AnyTool[];
  clock?: Clock;
}

const fixtureTools = (makeFixtureTools as (classes: unknown) => readonly AnyTool[])({ z, ZoteusError });

export async function zotAt(argv: string[], options: TerminalOptions): Promise<TerminalRun> {
  const stdout = new Sink();
  const stderr = new Sink();
  if (options.stdoutTTY) stdout.isTTY = true;
  if (options.stderrTTY) stderr.isTTY = true;
  if (options.columns !== undefined) stdout.columns = stderr.columns = options.columns;
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (options.stdinTTY) stdin.isTTY = true;
  if (options.stdin !== undefined) stdin.end(options.stdin);
  else stdin.end();
  const code = await runCli({
    argv,
    env: options.env,
    io: { stdout, stderr, stdin },
    tools: [...tools, ...fixtureTools, ...(options.extraTools ?? [])],
    groups,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return {
    code,
    stdout: stdout.text,
    stderr: stderr.text,
    json: () => {
      const lines = stdout.text.split('\n').filter((l) => l !== '');
      if (lines.length !== 1) throw new Error(`expected one JSON line on stdout, got: ${stdout.text}`);
      return JSON.parse(lines[0] as string) as Record<string, unknown>;
    },
  };
}

/**
 * What a terminal shows after these bytes: `\r` returns to the line's start, `ESC[K` erases
 * to its end, colours (`ESC[…m`) take no room, `\n` starts a new line. Trailing spaces trimmed;
 * a blank last line dropped.
 */
export function screen(bytes: string): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    const ch = bytes[i] as string;
    if (ch === '\u001b') {
      // eslint-disable-next-line no-control-regex -- the escape sequences are what it replays
      const m = /^\u001b\[([0-9;]*)([A-Za-z])/.exec(bytes.slice(i));
      if (!m)
        throw new Error(`an escape the screen does not know at ${i}: ${JSON.stringify(bytes.slice(i))}`);
      if (m[2] === 'K') (lines[row] as string[]).length = col;
      else if (m[2] !== 'm') throw new Error(`an escape the screen does not know: ${JSON.stringify(m[0])}`);
      i += m[0].length - 1;
    } else if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row += 1;
      col = 0;
      lines[row] ??= [];
    } else {
      const line = lines[row] as string[];
      while (line.length < col) line.push(' ');
      line[col] = ch;
      col += 1;
    }
  }
  const text = lines.map((l) => l.join('').trimEnd());
  if (text.at(-1) === '') text.pop();
  return text;
}

/** A clock that moves only when the code under test sleeps (or a test moves it). */
export function manualClock(): Clock & { advance(ms: number): void } {
  let t = 1_000_000;
  return {
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}
