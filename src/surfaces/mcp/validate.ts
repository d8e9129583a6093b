/**
 * Validation at the MCP boundary, done by the surface rather than the SDK so that a bad
 * argument becomes a `validation_error` result with `_meta`, not the SDK's bare text.
 */
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { ZoteusError } from '../../core/errors.js';
import { checkInputBounds } from '../../core/input-bounds.js';
import type { AnyTool } from '../../core/tool.js';

/** `a.b[0]`; the root is `(arguments)` so a message never has an empty subject. */
function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(arguments)';
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`).join('; ');
}

/**
 * `tools/call` as the SDK's schema reads it, except that `arguments` is passed on as the
 * client sent it: the SDK parses it as a record, which drops a `__proto__` key silently, so
 * `parseArguments` could not refuse it. (The SDK still checks that it is an object.)
 */
export const CallToolRequestAsSent = CallToolRequestSchema.extend({
  params: CallToolRequestSchema.shape.params.extend({
    arguments: z.custom<Record<string, unknown>>(() => true).optional(),
  }),
});

/**
 * Parses `arguments` with the tool's input schema. Unknown arguments (`__proto__` among
 * them) are refused by name even if a declaration forgot `.strict()`: the published schema
 * is closed either way. Depth, size and nested `__proto__` keys are checked before zod
 * walks the value (core/input-bounds.ts).
 */
export function parseArguments(
  tool: AnyTool,
  args: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const given = args ?? {};
  const accepted = Object.keys(tool.input.shape);
  const unknown = Object.keys(given).filter((key) => !accepted.includes(key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => `'${key}'`).join(', ');
    throw new ZoteusError(
      'validation_error',
      `Unknown argument${unknown.length > 1 ? 's' : ''} ${names} for ${tool.name}.`,
      {
        field: unknown[0],
        hint: accepted.length
          ? `Accepted arguments: ${accepted.join(', ')}.`
          : `${tool.name} takes no arguments; call it with {}.`,
      },
    );
  }
  checkInputBounds(given, (key) => key);
  const parsed = tool.input.safeParse(given);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ZoteusError(
      'validation_error',
      `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error.issues)}.`,
      {
        ...(first && first.path.length > 0 ? { field: pathOf(first.path) } : {}),
        hint: "Check the arguments against the tool's inputSchema.",
      },
    );
  }
  return parsed.data as Record<string, unknown>;
}
