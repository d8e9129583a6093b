/**
 * Toolsets: the groups of tools an MCP server can be limited to (ZOTEUS_TOOLSETS, `zot mcp
 * --toolsets`). Every session pays for the tool list before its first call, so the default is a
 * lean set; a chosen set always brings the tools its descriptions send the model to, so no
 * description names a tool the client cannot see. The CLI is not limited: every command stays.
 */
import { ZoteusError } from './errors.js';

export const TOOLSETS = [
  'library',
  'collections',
  'items',
  'notes',
  'tags',
  'fulltext',
  'search',
  'citations',
  'files',
  'metadata',
  'history',
  'evidence',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

/** What ZOTEUS_TOOLSETS asks for: the lean default set, every tool, or the named groups. */
export type ToolsetChoice = 'default' | 'all' | readonly (Toolset | 'default')[];

const CHOICES = ['default', 'all', ...TOOLSETS] as const;

/** Parses a comma-separated list; an unknown name is a startup error naming the choices. */
export function parseToolsets(name: string, value: string | undefined): ToolsetChoice {
  const words = (value ?? '')
    .split(',')
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  if (words.length === 0) return 'default';
  const unknown = words.filter((w) => !(CHOICES as readonly string[]).includes(w));
  if (unknown.length > 0)
    throw new ZoteusError(
      'validation_error',
      `${name} names no toolset ${unknown.map((w) => `'${w}'`).join(', ')}; the toolsets are ${CHOICES.join(', ')}.`,
      { field: name, hint: `Give a comma-separated list of ${CHOICES.join(', ')} (e.g. default,files).` },
    );
  if (words.includes('all')) return 'all';
  if (words.length === 1 && words[0] === 'default') return 'default';
  return [...new Set(words)] as (Toolset | 'default')[];
}

/** What selection needs of a declaration (tool.ts's ToolDeclaration has it). */
interface Selectable {
  name: string;
  description: string;
  toolset: Toolset;
  inDefaultSet?: boolean | undefined;
  startHere?: string | undefined;
}

/**
 * The tools a choice exposes: the members of the chosen sets (`default`: those declared
 * `inDefaultSet`; named sets may add `default` to keep it), the start-here tool always (it says
 * which sets are on), and every tool a chosen description names, until none is missing.
 */
export function selectTools<T extends Selectable>(tools: readonly T[], choice: ToolsetChoice): T[] {
  if (choice === 'all') return [...tools];
  const wanted = new Set<string>(choice === 'default' ? ['default'] : choice);
  const chosen = new Set(
    tools.filter(
      (t) =>
        t.startHere !== undefined ||
        wanted.has(t.toolset) ||
        (wanted.has('default') && t.inDefaultSet === true),
    ),
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const queue = [...chosen];
  while (queue.length > 0) {
    const tool = queue.pop() as T;
    for (const named of namedTools(tool.description, byName)) {
      if (chosen.has(named)) continue;
      chosen.add(named);
      queue.push(named);
    }
  }
  return tools.filter((t) => chosen.has(t));
}

/** The declarations a description names (by their names, as written or as a reference). */
export function namedTools<T extends { name: string }>(
  description: string,
  byName: ReadonlyMap<string, T>,
): T[] {
  const out: T[] = [];
  for (const [name, tool] of byName) {
    if (new RegExp(`(?<![a-z_])${name}(?![a-z_])`).test(description)) out.push(tool);
  }
  return out;
}

/** The toolsets a choice has on, in the order of TOOLSETS (`default` and `all` as words). */
export function toolsetsOn(choice: ToolsetChoice): string[] {
  if (choice === 'default' || choice === 'all') return [choice];
  return CHOICES.filter((t) => (choice as readonly string[]).includes(t));
}
