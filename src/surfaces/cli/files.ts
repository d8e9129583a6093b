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

/** How the command line names a file input: `ITEMS` for a positional, `--rows` for an option. */
function labelOf(p: Param): string {
  return p.kind === 'argument' ? p.name.toUpperCase() : (p.flags?.[0] ?? `--${p.name}`);
}

/** The two ways to give a file input, as the hint of every refusal to read one shows them. */
function howToPass(p: Param): string {
  const label = labelOf(p);
  const what = p.file === 'json' ? 'a JSON file' : 'a file';
  return p.kind === 'argument'
    ? `Give ${label} as the path of ${what} you can read, or as - to read it from stdin (\`- < FILE\`).`
    : `Give ${label} the path of ${what} you can read (\`${label} FILE\`), or - to read it from stdin (\`${label} - < FILE\`).`;
}

/** Why a file could not be read, in the user's words (the path, what is wrong with it). */
function unreadable(p: Param, path: string, error: unknown): ZoteusError {
  const label = labelOf(p);
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? `file not found: ${path}`
      : code === 'EACCES' || code === 'EPERM'
        ? `no permission to read ${path}`
        : code === 'EISDIR'
          ? `${path} is a directory, not a file`
          : code === 'ENOTDIR'
            ? `file not found: ${path} (a part of the path is not a directory)`
            : `cannot read ${path} (${code ?? 'error'})`;
  return new ZoteusError('validation_error', `${label}: ${why}.`, { field: p.name, hint: howToPass(p) });
}

export async function resolveFileParams(
  params: readonly Param[],
  input: Record<string, unknown>,
  io: { readonly stdin: Readable },
): Promise<Record<string, unknown>> {
  const out = { ...input };
  let stdinUsed: string | undefined;
  for (const p of params) {
    const value = out[p.name];
    if (!p.file || typeof value !== 'string') continue;
    const label = labelOf(p);
    const source = value === '-' ? 'stdin' : value;
    let text: string;
    try {
      if (value === '-') {
        if (stdinUsed !== undefined)
          throw new ZoteusError(
            'validation_error',
            `Only one input can read stdin: ${stdinUsed} and ${label} both name -.`,
            { field: p.name, hint: `Give ${label} the path of a file instead.` },
          );
        stdinUsed = label;
        // Only here: process.stdin makes a stream (a pipe's loads node:net) when first read.
        text = await readAll(io.stdin);
      } else {
        text = await readFileBounded(value);
      }
    } catch (error) {
      if (error instanceof ZoteusError) throw error;
      if (error instanceof TooLarge) throw textTooLargeError(`${label} (${source})`, p.name);
      throw unreadable(p, value, error);
    }
    if (p.file === 'text') {
      out[p.name] = text;
      continue;
    }
    // Refused on the text, before JSON.parse builds the structure that later walks would overflow on.
    if (textNestsTooDeep(text, 'json')) throw textTooDeepError(`${label} (${source})`, p.name);
    try {
      out[p.name] = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ZoteusError(
        'validation_error',
        `${label}: ${source} is not valid JSON (${(error as Error).message}).`,
        {
          field: p.name,
          hint: `${label} takes one JSON document (UTF-8); a list is written [{…}, {…}].`,
        },
      );
    }
  }
  return out;
}
