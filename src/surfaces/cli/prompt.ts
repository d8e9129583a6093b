/** Interactive questions, only ever asked on a TTY (agent-interface.md, "Non-interactive operation"). */
import { createInterface } from 'node:readline';
import type { CliIO } from './io.js';

export function canAsk(io: CliIO, noInteraction: boolean): boolean {
  return !noInteraction && Boolean(io.stdin.isTTY);
}

export async function ask(io: CliIO, question: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: Boolean(io.stdin.isTTY) });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, (answer) => resolve(answer));
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
  }
}

/** y/N: only an explicit yes proceeds. */
export async function confirm(io: CliIO, question: string): Promise<boolean> {
  const answer = (await ask(io, `${question} [y/N] `)).trim().toLowerCase();
  return answer === 'y' || answer === 'yes';
}
