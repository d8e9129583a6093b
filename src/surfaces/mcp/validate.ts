/**
 * Validation at the MCP boundary, done by the surface rather than the SDK so that a bad
 * argument becomes a `validation_error` result with `_meta`, not the SDK's bare text.
 */
import * as z from 'zod';
import { ZoteusError } from '../../core/errors.js';
import { checkInputBounds } from '../../core/input-bounds.js';
import { didYouMean } from '../../core/did-you-mean.js';
import { sentence } from '../../core/words.js';
import { describeIssue, type IssueNaming } from '../../core/input-issues.js';
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

/** ` (did you mean 'limit'?)`, or nothing. */
function near(given: string, accepted: readonly string[]): string {
  const text = didYouMean(given, accepted);
  return text ? ` (${text})` : '';
}

/** MCP names an input by its parameter name and shows an example as JSON. */
const NAMING: IssueNaming = { label: (name) => name, example: (_name, value) => JSON.stringify(value) };

/**
 * The params of a `tools/call` as the handler reads them: `arguments` passed on as the client
 * sent it. The SDK's own schema parses it as a record, which drops a `__proto__` key silently,
 * so `parseArguments` could not refuse it; and arguments that are no object at all never reach
 * the handler (protocol.ts sets them aside, `argumentsObject` refuses them).
 */
export const CallParamsAsSent = z.looseObject({
  name: z.string(),
  arguments: z.unknown().optional(),
});

/** `arguments` as an object of named arguments, or a validation_error that says what came instead. */
export function argumentsObject(tool: AnyTool, raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  const got = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`;
  throw new ZoteusError(
    'validation_error',
    `Invalid arguments for ${tool.name}: arguments must be an object of named arguments; got ${got}.`,
    {
      field: '(arguments)',
      hint: `Pass an object such as {} or {"name": value}, keyed by the properties of ${tool.name}'s inputSchema.`,
    },
  );
}

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
      `Unknown argument${unknown.length > 1 ? 's' : ''} ${names} for ${tool.name}${near(unknown[0] as string, accepted)}.`,
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
    const described = parsed.error.issues.map(
      (issue) => describeIssue(issue, tool.input, given, NAMING).text,
    );
    throw new ZoteusError(
      'validation_error',
      sentence(`Invalid arguments for ${tool.name}: ${described.join('; ')}`),
      {
        ...(first && first.path.length > 0 ? { field: pathOf(first.path) } : {}),
        hint: "Check the arguments against the tool's inputSchema.",
      },
    );
  }
  return parsed.data as Record<string, unknown>;
}
