/** Input validation at the CLI boundary: zod issues become one `validation_error` naming the field. */
import { ZoteusError } from '../../core/errors.js';
import { checkInputBounds } from '../../core/input-bounds.js';
import { sentence } from '../../core/words.js';
import { describeIssue, type DescribedIssue, type IssueNaming } from '../../core/input-issues.js';
import type { AnyTool, CliCommand } from '../../core/tool.js';
import { kebab } from './params.js';

/** An input as the command line spells it: `ITEM_KEY` for a positional, `--json` for an option. */
function labelOf(command: CliCommand, name: string): string {
  return command.args?.includes(name) ? name.toUpperCase() : `--${command.flags?.[name] ?? kebab(name)}`;
}

/** The surface's naming of inputs for the shared translation of issues (core/input-issues.ts). */
function namingOf(command: CliCommand): IssueNaming {
  return {
    label: (name) => labelOf(command, name),
    example: (name, value) => {
      const args = command.args ?? [];
      if (args[0] === name) return `\`zot ${command.path.join(' ')} ${value}\``;
      if (args.includes(name)) return `\`${value}\``;
      return `\`${labelOf(command, name)} ${value}\``;
    },
  };
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
  const naming = namingOf(command);
  const described = result.error.issues.map(
    (issue) => missingFile(command, issue, raw, naming) ?? describeIssue(issue, tool.input, raw, naming),
  );
  const first = described[0];
  throw new ZoteusError('validation_error', sentence(described.map((d) => d.text).join('; ')), {
    ...(first?.field ? { field: first.field } : {}),
    hint: `Run \`zot schema ${command.path.join(' ')}\` for the accepted arguments.`,
  });
}

/**
 * A file input that was not given (`zot create` without ITEMS): what the command line takes is a
 * path or `-`, not the JSON value the schema describes.
 */
function missingFile(
  command: CliCommand,
  issue: { path: readonly PropertyKey[] },
  raw: Record<string, unknown>,
  naming: IssueNaming,
): DescribedIssue | undefined {
  const name = issue.path[0];
  if (issue.path.length !== 1 || typeof name !== 'string' || raw[name] !== undefined) return undefined;
  const file = command.files?.[name];
  if (file === undefined) return undefined;
  const example = `${kebab(name)}.${file === 'json' ? 'json' : 'txt'}`;
  return {
    field: name,
    text: `${labelOf(command, name)} is required: the path of a ${file === 'json' ? 'JSON ' : ''}file, or - to read it from stdin, e.g. ${naming.example(name, example)}`,
  };
}

/** A message starts with a capital unless it starts with an input's name. */
