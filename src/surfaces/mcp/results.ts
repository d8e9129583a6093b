/**
 * The shapes of `tools/call` results (agent-interface.md, "MCP surface"): on success (partial
 * results included) `content` holds a one-line summary and then the output object as JSON text,
 * so a client that passes only `content` to the model still passes the data (the MCP
 * specification asks tools that return structured content to do so), and `structuredContent`
 * holds the same object; both are redacted alike. A failure is an `isError` result whose text
 * starts with the code and whose `_meta["zoteus/error"]` holds the error body. An error never
 * goes in `structuredContent`: clients validate it against `outputSchema` even on errors and
 * would reject the whole result.
 *
 * A declaration's human `text()` (a rendered table, digests as lines) is not sent: it repeats
 * the JSON copy, and carrying it would make an answer three times its output and break the size
 * bound of conventions.md for the tools that need it most (digests, full text, evidence tables).
 * The CLI's table mode prints it.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { toZoteusError, type ErrorBody } from '../../core/errors.js';
import { fitRows, ROWS_BUDGET } from '../../core/items/read/bounds.js';
import type { Outcome } from '../../core/outcome.js';
import { redactValue, type Redactor } from '../../core/redact.js';
import type { AnyTool } from '../../core/tool.js';
import { renderErrorRefs, renderRefs, renderValueRefs } from '../../core/call/refs.js';
import { mcpRefRenderer } from './refs.js';

export const ERROR_META_KEY = 'zoteus/error';

/** Failed entries a summary line names; the rest are counted. */
const NAMED_FAILURES = 3;
/** Characters of an entry, and of its message, that a summary line quotes. */
const ENTRY_CHARS = 60;
const MESSAGE_CHARS = 80;

function short(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  return clean.length <= max ? clean : `${clean.slice(0, max - 1).trimEnd()}…`;
}

/**
 * One failed entry in a few words: `ABCD2345 not_found (Item does not exist)`. Both shapes of
 * conventions.md: objects `{index, key, code, message, reason}` and identifier entries
 * `{entry, error: {code, message}}`.
 */
function describeFailure(entry: unknown): string {
  const e = (entry ?? {}) as {
    index?: unknown;
    key?: unknown;
    entry?: unknown;
    code?: unknown;
    reason?: unknown;
    message?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  const what =
    typeof e.key === 'string' && e.key
      ? e.key
      : typeof e.entry === 'string' && e.entry
        ? e.entry
        : typeof e.index === 'number'
          ? `#${e.index}`
          : 'an entry';
  const code =
    typeof e.reason === 'string'
      ? e.reason
      : typeof e.error?.code === 'string'
        ? e.error.code
        : typeof e.code === 'number' || typeof e.code === 'string'
          ? String(e.code)
          : 'failed';
  const message =
    typeof e.message === 'string' ? e.message : typeof e.error?.message === 'string' ? e.error.message : '';
  return `${short(what, ENTRY_CHARS)} ${code}${message ? ` (${short(message, MESSAGE_CHARS)})` : ''}`;
}

/** `ABCD2345 not_found (…), 10.1/x network_error (…), and 4 more`: the first few, the rest counted. */
export function failureList(failed: readonly unknown[]): string {
  const named = failed.slice(0, NAMED_FAILURES).map(describeFailure);
  const rest = failed.length - named.length;
  return rest > 0 ? `${named.join(', ')}, and ${rest} more` : named.join(', ');
}

/**
 * "Partial result: 3 landed, 2 failed: ABCD2345 not_found (Item does not exist), …" for a
 * partial outcome (counted in core/outcome.ts); bounded whatever the number of failures.
 */
export function partialLine(outcome: Outcome): string | undefined {
  if (outcome.kind !== 'partial') return undefined;
  const failed = outcome.failed.length;
  return `Partial result: ${outcome.total - failed} landed, ${failed} failed: ${failureList(outcome.failed)}.`;
}

/** The tool's own one-liner, or a generic one when it has none (or when it throws). */
function summaryOf(tool: AnyTool, output: Record<string, unknown>, input: Record<string, unknown>): string {
  if (tool.summarize) {
    try {
      return tool.summarize(output, input);
    } catch {
      // A broken summary must not turn a call that did its work into an error (a write
      // reported as failed invites a retry); fall through to the generic line.
    }
  }
  return `${tool.title}: done.`;
}

/** The output as `structuredContent` and as its JSON text, redacted alike (serialized once when nothing can leak). */
function redactedOutput(
  output: Record<string, unknown>,
  redact: Redactor,
): { structured: Record<string, unknown>; json: string } {
  const json = JSON.stringify(output);
  if (!redact.mayChange(json)) return { structured: output, json };
  const structured = redactValue(output, redact);
  return { structured, json: JSON.stringify(structured) };
}

/** The longest summary line an answer carries (the data follows it as JSON). */
const SUMMARY_MAX = 500;

export function successResult(
  tool: AnyTool,
  output: Record<string, unknown>,
  input: Record<string, unknown>,
  redact: Redactor,
  outcome: Outcome = { kind: 'ok' },
): CallToolResult {
  // References to other tools in the output (a suggested fix) name the tools and their arguments.
  output = renderValueRefs(output, mcpRefRenderer);
  const partial = partialLine(outcome);
  const summary = renderRefs(summaryOf(tool, output, input), mcpRefRenderer);
  // A batch of thousands whose entries mostly failed: its failures kept to the size bound, as an
  // error's are, and the line says so (the summary above counted them all; the call's record
  // keeps them all, for a retry with the same idempotency key).
  let note = '';
  if (Array.isArray(output.failed) && output.failed.length > 0) {
    const kept = fitRows(output.failed as unknown[], ROWS_BUDGET);
    if (kept.cut) {
      note = ` (failed lists ${kept.rows.length} of its ${output.failed.length} entries: the answer must stay under 100 KB.)`;
      output = { ...output, failed: kept.rows };
    }
  }
  // One line for people: a summary that quotes a huge title must not double the answer.
  const whole = partial ? `${partial} ${summary}` : summary;
  const room = SUMMARY_MAX - note.length;
  const line = (whole.length > room ? `${whole.slice(0, room)}…` : whole) + note;
  const { structured, json } = redactedOutput(output, redact);
  const link = resourceLinkOf(structured);
  return {
    content: [{ type: 'text', text: redact(line) }, { type: 'text', text: json }, ...(link ? [link] : [])],
    structuredContent: structured,
  };
}

/**
 * An output's `resource` (`{uri, name, mimeType}`: what a tool did not embed, such as a binary
 * file) also goes out as a `resource_link` content block, which a client can read with
 * `resources/read`.
 */
function resourceLinkOf(
  output: Record<string, unknown>,
): { type: 'resource_link'; uri: string; name: string; mimeType?: string } | undefined {
  const r = output.resource as { uri?: unknown; name?: unknown; mimeType?: unknown } | undefined;
  if (r === null || typeof r !== 'object' || typeof r.uri !== 'string' || typeof r.name !== 'string')
    return undefined;
  return {
    type: 'resource_link',
    uri: r.uri,
    name: r.name,
    ...(typeof r.mimeType === 'string' ? { mimeType: r.mimeType } : {}),
  };
}

/**
 * Any failure as an `isError` result; anything that is not a ZoteusError is an `internal_error`.
 * A batch in which every entry failed names the first few in the text, and its body keeps as
 * many entries as the size bound allows (`failedOmitted` counts the others).
 */
export function errorResult(error: unknown, redact: Redactor): CallToolResult {
  const rendered = renderErrorRefs(toZoteusError(error), mcpRefRenderer);
  const body: ErrorBody & { failedOmitted?: number } = redactValue(rendered.toJSON(), redact);
  let text = `${body.code}: ${body.message}`;
  if (Array.isArray(body.failed) && body.failed.length > 0) {
    text += `\nFailed: ${failureList(body.failed)}.`;
    const kept = fitRows(body.failed, ROWS_BUDGET);
    if (kept.cut) {
      body.failedOmitted = body.failed.length - kept.rows.length;
      body.failed = kept.rows;
    }
  }
  if (body.hint) text += `\nHint: ${body.hint}`;
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { [ERROR_META_KEY]: body },
  };
}
