/**
 * The shapes of `tools/call` results (agent-interface.md, "MCP surface"): a one-line summary
 * plus `structuredContent` on success (partial results included), and an `isError` result
 * whose text starts with the code and whose `_meta["zoteus/error"]` holds the error body on
 * failure. An error never goes in `structuredContent`: clients validate it against
 * `outputSchema` even on errors and would reject the whole result.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toZoteusError } from '../../core/errors.js';
import type { Outcome } from '../../core/outcome.js';
import { redactValue, type Redactor } from '../../core/redact.js';
import type { AnyTool } from '../../core/tool.js';

export const ERROR_META_KEY = 'zoteus/error';

/** "Partial result: 3 landed, 2 failed." for a partial outcome (counted in core/outcome.ts). */
export function partialLine(outcome: Outcome): string | undefined {
  if (outcome.kind !== 'partial') return undefined;
  const failed = outcome.failed.length;
  return `Partial result: ${outcome.total - failed} landed, ${failed} failed (see structuredContent.failed).`;
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

/** The tool's human text (a rendered table), when it has one; a failing hook is left out. */
function textOf(
  tool: AnyTool,
  output: Record<string, unknown>,
  input: Record<string, unknown>,
): string | undefined {
  try {
    return tool.text?.(output, input);
  } catch {
    return undefined;
  }
}

export function successResult(
  tool: AnyTool,
  output: Record<string, unknown>,
  input: Record<string, unknown>,
  redact: Redactor,
  outcome: Outcome = { kind: 'ok' },
): CallToolResult {
  const partial = partialLine(outcome);
  const summary = summaryOf(tool, output, input);
  const text = partial ? `${partial} ${summary}` : summary;
  const body = textOf(tool, output, input);
  return {
    content: [
      { type: 'text', text: redact(text) },
      ...(body !== undefined ? [{ type: 'text' as const, text: redact(body) }] : []),
    ],
    structuredContent: redactValue(output, redact),
  };
}

/** Any failure as an `isError` result; anything that is not a ZoteusError is an `internal_error`. */
export function errorResult(error: unknown, redact: Redactor): CallToolResult {
  const body = redactValue(toZoteusError(error).toJSON(), redact);
  const text = `${body.code}: ${body.message}${body.hint ? `\nHint: ${body.hint}` : ''}`;
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { [ERROR_META_KEY]: body },
  };
}
