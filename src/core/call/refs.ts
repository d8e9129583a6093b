/**
 * References inside a message or hint to things a caller does on its own surface. Core code
 * does not know which surface a call came through, so it writes a reference and each surface
 * renders it when the text leaves:
 *
 * - `toolRef('zotero_trash_items', { item_keys: 'KEY…' })`: `zot trash KEY…` on the CLI,
 *   `zotero_trash_items (item_keys: KEY…)` on MCP; a reference names a tool's declaration (its
 *   name), the arguments are its input names with example values;
 * - `paramRef('confirm', 'true')`: `--confirm` on the CLI, `confirm: true` on MCP;
 * - `onlyOn('cli', '…')`: words that apply to one surface (a CLI built-in such as
 *   `zot config init`), left out on the other; they may hold references themselves.
 */
import { ZoteusError } from '../errors.js';

/** How a surface writes references. */
export interface RefRenderer {
  surface: 'cli' | 'mcp';
  /** A reference in prose; `bare` for a command given as data (a suggestion to run). */
  tool(tool: string, args: Readonly<Record<string, string>>, bare?: boolean): string;
  param(name: string, value: string | undefined): string;
}

const REF = /\{\{(tool|call|param|cli|mcp):([^}]*)\}\}/g;

/** A reference to `tool`, called with `args`, to put in a message or a hint. */
export function toolRef(tool: string, args: Readonly<Record<string, string>> = {}): string {
  const parts = Object.entries(args).map(([name, value]) => ` ${name}=${encodeURIComponent(value)}`);
  return `{{tool:${tool}${parts.join('')}}}`;
}

/** A reference that is itself the answer (a suggested call to run): a bare command on the CLI. */
export function commandRef(tool: string, args: Readonly<Record<string, string>> = {}): string {
  return toolRef(tool, args).replace('{{tool:', '{{call:');
}

/** A reference to an input (a flag on the CLI), with the value to give it when there is one. */
export function paramRef(name: string, value?: string): string {
  return `{{param:${name}${value === undefined ? '' : `=${encodeURIComponent(value)}`}}}`;
}

/** Words shown on one surface only. */
export function onlyOn(surface: 'cli' | 'mcp', text: string): string {
  return `{{${surface}:${encodeURIComponent(text)}}}`;
}

/** The text with every reference rendered by `render`. */
export function renderRefs(text: string, render: RefRenderer): string {
  if (!text.includes('{{')) return text;
  return text.replace(REF, (_all, kind: string, body: string) => {
    // A surface's own words may hold references of their own (a flag in a CLI-only text).
    if (kind === 'cli' || kind === 'mcp') {
      return kind === render.surface ? renderRefs(decodeURIComponent(body), render) : '';
    }
    if (kind === 'param') {
      const at = body.indexOf('=');
      return at < 0
        ? render.param(body, undefined)
        : render.param(body.slice(0, at), decodeURIComponent(body.slice(at + 1)));
    }
    const [tool, ...parts] = body.split(' ').filter(Boolean);
    const args: Record<string, string> = {};
    for (const part of parts) {
      const at = part.indexOf('=');
      args[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
    }
    return render.tool(tool ?? '', args, kind === 'call');
  });
}

/** Whether a text still holds a reference (a surface that forgot to render it). */
export function hasRefs(text: string): boolean {
  REF.lastIndex = 0;
  const found = REF.test(text);
  REF.lastIndex = 0;
  return found;
}

/** A JSON value with the references in its strings rendered; the value itself when it holds none. */
export function renderValueRefs<T>(value: T, render: RefRenderer): T {
  if (!hasRefs(JSON.stringify(value) ?? '')) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return renderRefs(v, render);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** The error with the references of its message, hint and failed entries rendered. */
export function renderErrorRefs(error: ZoteusError, render: RefRenderer): ZoteusError {
  if (!hasRefs(`${error.message}${error.hint ?? ''}${JSON.stringify(error.failed ?? [])}`)) return error;
  const text = (s: string): string => renderRefs(s, render);
  const failed = error.failed?.map((entry) =>
    entry !== null &&
    typeof entry === 'object' &&
    typeof (entry as { message?: unknown }).message === 'string'
      ? { ...entry, message: text((entry as { message: string }).message) }
      : entry,
  );
  return new ZoteusError(error.code, text(error.message), {
    ...(error.hint !== undefined ? { hint: text(error.hint) } : {}),
    ...(error.field !== undefined ? { field: error.field } : {}),
    retryable: error.retryable,
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    ...(error.status !== undefined ? { status: error.status } : {}),
    ...(failed !== undefined ? { failed } : {}),
    ...(error.declined ? { declined: true } : {}),
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
  });
}
