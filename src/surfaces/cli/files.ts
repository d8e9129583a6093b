/** Options that name a file (or `-` for stdin) whose content fills an input field. */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { promises as fsp } from 'node:fs';
import type { Readable } from 'node:stream';
import { ZoteusError } from '../../core/errors.js';
import type { Param } from './params.js';

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export async function resolveFileParams(
  params: readonly Param[],
  input: Record<string, unknown>,
  stdin: Readable,
): Promise<Record<string, unknown>> {
  const out = { ...input };
  let stdinUsed = false;
  for (const p of params) {
    const value = out[p.name];
    if (!p.file || typeof value !== 'string') continue;
    const flag = p.flags?.[0] ?? p.name;
    let text: string;
    if (value === '-') {
      if (stdinUsed)
        throw new ZoteusError('validation_error', `Only one option can read stdin (${flag} -).`, {
          field: p.name,
        });
      stdinUsed = true;
      text = await readAll(stdin);
    } else {
      try {
        text = await fsp.readFile(value, 'utf8');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new ZoteusError('validation_error', `${flag}: cannot read ${value} (${code ?? 'error'}).`, {
          field: p.name,
        });
      }
    }
    if (p.file === 'text') {
      out[p.name] = text;
      continue;
    }
    try {
      out[p.name] = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ZoteusError(
        'validation_error',
        `${flag}: ${value === '-' ? 'stdin' : value} is not valid JSON (${(error as Error).message}).`,
        {
          field: p.name,
        },
      );
    }
  }
  return out;
}
