/** Options that name a file (or `-` for stdin) whose content fills an input field. */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { promises as fsp } from 'node:fs';
import type { Readable } from 'node:stream';
import { ZoteusError } from '../../core/errors.js';
import {
  MAX_INPUT_TEXT,
  textNestsTooDeep,
  textTooDeepError,
  textTooLargeError,
} from '../../core/input-bounds.js';
import type { Param } from './params.js';

/** Thrown by the readers below when the text passes MAX_INPUT_TEXT bytes. */
class TooLarge extends Error {}

/**
 * Every chunk of a stream, up to MAX_INPUT_TEXT bytes: stdin (or a device or a pipe named as
 * a file) may never end, so the read stops as soon as the bound is passed.
 */
async function readAll(stream: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_INPUT_TEXT) throw new TooLarge();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readFileBounded(path: string): Promise<string> {
  const handle = await fsp.open(path, 'r');
  try {
    return await readAll(handle.createReadStream({ autoClose: false }));
  } finally {
    await handle.close();
  }
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
    const source = value === '-' ? 'stdin' : value;
    let text: string;
    try {
      if (value === '-') {
        if (stdinUsed)
          throw new ZoteusError('validation_error', `Only one option can read stdin (${flag} -).`, {
            field: p.name,
          });
        stdinUsed = true;
        text = await readAll(stdin);
      } else {
        text = await readFileBounded(value);
      }
    } catch (error) {
      if (error instanceof ZoteusError) throw error;
      if (error instanceof TooLarge) throw textTooLargeError(`${flag} (${source})`, p.name);
      const code = (error as NodeJS.ErrnoException).code;
      throw new ZoteusError('validation_error', `${flag}: cannot read ${value} (${code ?? 'error'}).`, {
        field: p.name,
      });
    }
    if (p.file === 'text') {
      out[p.name] = text;
      continue;
    }
    // Refused on the text, before JSON.parse builds the structure that later walks would overflow on.
    if (textNestsTooDeep(text, 'json')) throw textTooDeepError(`${flag} (${source})`, p.name);
    try {
      out[p.name] = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ZoteusError(
        'validation_error',
        `${flag}: ${source} is not valid JSON (${(error as Error).message}).`,
        {
          field: p.name,
        },
      );
    }
  }
  return out;
}
