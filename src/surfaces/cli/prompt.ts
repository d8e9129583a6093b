/** Interactive questions, only ever asked on a TTY (agent-interface.md, "Non-interactive operation"). */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { CliIO } from './io.js';

export { canAsk } from './io.js';

export interface Prompter {
  /** Asks one question on stderr; a secret is read without echoing it. */
  ask(question: string, secret?: boolean): Promise<string>;
  close(): void;
}

/**
 * One readline for a whole dialogue, with its lines queued: answers typed ahead or pasted
 * in one go arrive as several lines at once, and readline drops a line no question awaits.
 */
export function createPrompter(io: CliIO): Prompter {
  let muted = false;
  // readline echoes what is typed through its output; muting it hides a secret.
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) io.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: io.stdin, output, terminal: Boolean(io.stdin.isTTY) });
  const queued: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let closed = false;
  rl.on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queued.push(line);
  });
  rl.once('close', () => {
    closed = true;
    for (const waiter of waiting.splice(0)) waiter('');
  });
  return {
    async ask(question, secret = false) {
      if (secret) {
        io.stderr.write(question);
        rl.setPrompt('');
      } else rl.setPrompt(question);
      muted = secret;
      rl.prompt();
      const line = queued.length
        ? (queued.shift() as string)
        : closed
          ? ''
          : await new Promise<string>((r) => waiting.push(r));
      muted = false;
      if (secret) io.stderr.write('\n');
      return line;
    },
    close() {
      rl.close();
    },
  };
}

/** y/N: only an explicit yes proceeds. */
export async function confirm(io: CliIO, question: string): Promise<boolean> {
  const prompter = createPrompter(io);
  try {
    const answer = (await prompter.ask(`${question} [y/N] `)).trim().toLowerCase();
    return answer === 'y' || answer === 'yes';
  } finally {
    prompter.close();
  }
}
