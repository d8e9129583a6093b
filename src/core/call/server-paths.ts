/**
 * One rule for the inputs that name a file to read (attach a file by its path, check a
 * manuscript by its path, a .csl style by its path): on a shared deployment (`Deps.fileRoot`
 * set) Zoteus never reads a path on the server's disk on a caller's behalf, so the pipeline
 * refuses such an input before anything else, with a `validation_error` naming the inline
 * input to send instead. Each declaration lists its path inputs (`serverPaths`); locally they
 * read the caller's own disk as before.
 */
import { ZoteusError } from '../errors.js';
import type { AnyTool, Deps } from '../tool.js';
import { paramRef } from './refs.js';

export interface ServerPathInput {
  /** What to send instead, in references: `content_base64 with filename`. */
  instead: string;
  /** Whether a value names a file (a style is an id or a .csl path); default: every value. */
  isPath?: (value: string) => boolean;
}

/** The `validation_error` for the first path input this call gives on a shared deployment. */
export function refuseServerPaths(
  tool: Pick<AnyTool, 'serverPaths'>,
  input: Readonly<Record<string, unknown>>,
  deps: Pick<Deps, 'fileRoot'>,
): void {
  if (deps.fileRoot === undefined || tool.serverPaths === undefined) return;
  for (const [field, rule] of Object.entries(tool.serverPaths)) {
    const given = input[field];
    const values = (Array.isArray(given) ? given : [given]).filter((v): v is string => typeof v === 'string');
    if (!values.some((value) => rule.isPath?.(value) ?? true)) continue;
    throw new ZoteusError(
      'validation_error',
      `${paramRef(field)} names a file on the server's own disk, which this shared server never reads for a caller: send the content inline instead, as ${rule.instead}.`,
      {
        field,
        hint: `Read the file on your side and pass it as ${rule.instead}.`,
      },
    );
  }
}
