/**
 * References to another tool inside a message or hint. Core code does not know which surface
 * a call came through, so it writes `toolRef('zotero_trash_items', { item_keys: 'KEY…' })` and
 * each surface renders the reference in its own terms when the text leaves: `zot trash KEY…`
 * on the CLI, `zotero_trash_items (item_keys: KEY…)` on MCP. A reference names the tool's
 * declaration (its name); the arguments are the tool's input names with example values.
 */

import { ZoteusError } from '../errors.js';

/** How a surface writes a reference: the tool's name and the example arguments. */
export type RefRenderer = (tool: string, args: Readonly<Record<string, string>>) => string;

const REF = /\{\{tool:([a-z_]+)((?: [a-z_]+=[^ }]*)*)\}\}/g;

/** A reference to `tool`, called with `args`, to put in a message or a hint. */
export function toolRef(tool: string, args: Readonly<Record<string, string>> = {}): string {
  const parts = Object.entries(args).map(([name, value]) => ` ${name}=${encodeURIComponent(value)}`);
  return `{{tool:${tool}${parts.join('')}}}`;
}

/** The text with every reference rendered by `render`. */
export function renderRefs(text: string, render: RefRenderer): string {
  if (!text.includes('{{tool:')) return text;
  return text.replace(REF, (_all, tool: string, rawArgs: string) => {
    const args: Record<string, string> = {};
    for (const part of rawArgs.trim().split(' ').filter(Boolean)) {
      const at = part.indexOf('=');
      args[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
    }
    return render(tool, args);
  });
}

/** Whether a text still holds a reference (a surface that forgot to render it). */
export function hasRefs(text: string): boolean {
  REF.lastIndex = 0;
  return REF.test(text);
}

/** The error with the references of its message, hint and failed entries rendered. */
export function renderErrorRefs(error: ZoteusError, render: RefRenderer): ZoteusError {
  const text = (s: string): string => renderRefs(s, render);
  const failed = error.failed?.map((entry) =>
    entry !== null &&
    typeof entry === 'object' &&
    typeof (entry as { message?: unknown }).message === 'string'
      ? { ...entry, message: text((entry as { message: string }).message) }
      : entry,
  );
  if (!hasRefs(`${error.message}${error.hint ?? ''}${JSON.stringify(error.failed ?? [])}`)) return error;
  return new ZoteusError(error.code, text(error.message), {
    ...(error.hint !== undefined ? { hint: text(error.hint) } : {}),
    ...(error.field !== undefined ? { field: error.field } : {}),
    retryable: error.retryable,
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(failed !== undefined ? { failed } : {}),
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
  });
}
