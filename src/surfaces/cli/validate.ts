/** Input validation at the CLI boundary: zod issues become one `validation_error` naming the field. */
import type { z } from 'zod';
import { ZoteusError } from '../../core/errors.js';
import { checkInputBounds } from '../../core/input-bounds.js';
import type { AnyTool, CliCommand } from '../../core/tool.js';
import { kebab } from './params.js';

/** An input as the command line spells it: `ITEM_KEY` for a positional, `--json` for an option. */
function labelOf(command: CliCommand, name: string): string {
  return command.args?.includes(name) ? name.toUpperCase() : `--${command.flags?.[name] ?? kebab(name)}`;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  command: CliCommand,
): { field: string | undefined; text: string } {
  const top = issue.path[0];
  if (issue.code === 'unrecognized_keys' && typeof top === 'string') {
    const label = labelOf(command, top);
    const where = issue.path
      .slice(1)
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('');
    return {
      field: top,
      text: `${label}${where}: unknown field ${issue.keys.map((k) => `'${k}'`).join(', ')}`,
    };
  }
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((k) => `--${command.flags?.[k] ?? kebab(k)}`).join(', ');
    return { field: issue.keys[0], text: `unknown argument ${names}` };
  }
  if (typeof top !== 'string') return { field: undefined, text: issue.message };
  const label = labelOf(command, top);
  const rest = issue.path
    .slice(1)
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('');
  return { field: top, text: `${label}${rest}: ${issue.message}` };
}

export function validateInput(
  tool: AnyTool,
  command: CliCommand,
  raw: Record<string, unknown>,
): Record<string, unknown> {
  // Before zod: its walk recurses, and it drops a `__proto__` key without a word.
  checkInputBounds(raw, (name) => labelOf(command, name));
  const result = tool.input.safeParse(raw);
  if (result.success) return result.data as Record<string, unknown>;
  const described = result.error.issues.map((issue) => describeIssue(issue, command));
  const first = described[0];
  throw new ZoteusError('validation_error', `Invalid input: ${described.map((d) => d.text).join('; ')}.`, {
    ...(first?.field ? { field: first.field } : {}),
    hint: `Run \`zot schema ${command.path.join(' ')}\` for the accepted arguments.`,
  });
}
