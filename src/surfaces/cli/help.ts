/** `--help` text, from the same tree as `zot schema`: grouped by safety tier, with markers. */
import type { RefRenderer } from '../../core/call/refs.js';
import { speakCli } from './cli-words.js';
import type { Param } from './params.js';
import { allCommands, GLOBAL_FLAGS, type CommandNode } from './tree.js';

export function marker(node: CommandNode): string | null {
  if (node.tier === null || node.tier === 'read') return null;
  return node.writesFilesOnly ? 'WRITES FILES' : 'MUTATES LIBRARY';
}

/** What help knows of the configuration: in read-only mode the commands that write are disabled. */
export interface HelpOptions {
  readOnly?: boolean;
  /** How tools and inputs are named on the CLI: without it, prose is printed as declared. */
  refs?: RefRenderer;
  /** Every input field of the command tree (what `speakCli` may rename). */
  known?: ReadonlySet<string>;
  /** The terminal's width; help wraps its prose to it (at most 100 columns), else not at all. */
  width?: number | undefined;
}

function cliText(text: string, params: readonly Param[], options: HelpOptions): string {
  return options.refs ? speakCli(text, params, options.refs, options.known ?? new Set()) : text;
}

/** Words of `text` in lines of at most `width` columns (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  // A `code span` is one word: a command split over two lines cannot be copied.
  const words = text.match(/[^\s`]*`[^`]*`[^\s`]*|[^\s`]+/g) ?? [];
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Wrapped only to a known width (a terminal's, or COLUMNS), as tables are fitted. */
const helpWidth = (options: HelpOptions) =>
  options.width === undefined ? Number.POSITIVE_INFINITY : Math.max(40, Math.min(100, options.width));

const DISABLED = 'disabled: ZOTEUS_READ_ONLY=true';

function disabled(node: CommandNode, options: HelpOptions): boolean {
  // Commands that only write local files stay available (conventions.md, "Tiers").
  return options.readOnly === true && node.tier !== null && node.tier !== 'read' && !node.writesFilesOnly;
}

function usageOf(node: CommandNode): string {
  const args = node.params
    .filter((p) => p.kind === 'argument')
    .map((p) => {
      const word = p.name.toUpperCase() + (p.variadic ? '...' : '');
      return p.required ? word : `[${word}]`;
    });
  const hasOptions = node.params.some((p) => p.kind === 'option');
  return ['zot', ...node.path, ...args, ...(hasOptions ? ['[options]'] : [])].join(' ');
}

/** The value's placeholder: choices, an item type, or the flag's own word for free-form values. */
function placeholder(p: Param): string {
  if (p.type === 'boolean') return '';
  if (p.type === 'enum') return ` <${(p.choices ?? []).join('|')}>`;
  if (p.type === 'array') return ` <${p.items === 'json' || p.items === undefined ? 'value' : p.items}>`;
  // Text or a JSON list (an item type expression, a tag filter): named after the flag, not "json".
  if (p.type === 'json') return ` <${(p.flags?.[0] ?? p.name).replace(/^--/, '')}>`;
  return ` <${p.type}>`;
}

/** `context`: every parameter of the command, for the flags its prose names. */
function paramLines(
  params: Param[],
  options: HelpOptions = {},
  context: readonly Param[] = params,
): string[] {
  const rows = params.map((p) => {
    const left =
      p.kind === 'argument'
        ? `  ${p.name.toUpperCase()}${p.variadic ? '...' : ''}`
        : `  ${(p.flags ?? []).join(', ')}${placeholder(p)}`;
    const def =
      // A help that states its default already ("(default "markdown")") is not told it twice.
      p.default !== null && p.default !== undefined && p.default !== false && !/\bdefault\b/i.test(p.help)
        ? ` (default: ${JSON.stringify(p.default)})`
        : '';
    const repeat = p.kind === 'option' && p.type === 'array' ? ' (repeatable)' : '';
    const help = cliText(p.help, context, options).replace(/\s+/g, ' ').trim();
    return [left, `${help}${repeat}${def}${p.required && p.kind === 'option' ? ' (required)' : ''}`] as const;
  });
  return columns(rows, options);
}

/**
 * Two columns, the right one wrapped under itself: a left cell wider than `cap` gets a line
 * of its own, so one long flag does not push every text to the right.
 */
function columns(rows: ReadonlyArray<readonly [string, string]>, options: HelpOptions, cap = 34): string[] {
  const width = Math.min(cap, Math.max(0, ...rows.map(([l]) => l.length)));
  const indent = ' '.repeat(width + 2);
  const room = helpWidth(options) - width - 2;
  return rows.map(([l, r]) => {
    const text = wrap(r, room);
    const body = text.map((line, i) => (i === 0 ? line : `${indent}${line}`)).join('\n');
    return l.length > width ? `${l}\n${indent}${body}` : `${l.padEnd(width)}  ${body}`;
  });
}

const TIER_TITLES: Array<[string, (n: CommandNode) => boolean]> = [
  ['Read commands', (n) => n.tier === 'read' && n.mcpTool !== null],
  ['Write commands (MUTATES LIBRARY)', (n) => n.tier === 'write' && !n.writesFilesOnly],
  ['Destructive commands (MUTATES LIBRARY)', (n) => n.tier === 'destructive'],
  ['Local files (WRITES FILES)', (n) => n.tier === 'write' && n.writesFilesOnly && n.mcpTool !== null],
  ['Setup and introspection', (n) => n.mcpTool === null],
];

export function rootHelp(root: CommandNode, version: string, options: HelpOptions = {}): string {
  const lines = [
    `zot ${version}: fast, safe access to a Zotero library, for agents and people.`,
    '',
    'Usage: zot <command> [arguments] [options]',
    '',
    'Output is one JSON envelope on stdout when stdout is not a TTY (or with --json); a table on a TTY.',
    'Agents: use `zot schema [command]` rather than parsing this help.',
  ];
  const commands = allCommands(root);
  for (const [title, test] of TIER_TITLES) {
    const group = commands.filter(test);
    if (!group.length) continue;
    const off = group.every((n) => disabled(n, options));
    lines.push('', `${title}${off ? ` [${DISABLED}]` : ''}:`);
    const rows = group.map(
      (n) =>
        [
          `  ${n.path.join(' ')}`,
          `${cliText(n.summary, n.params, options)}${disabled(n, options) ? ` [${DISABLED}]` : ''}`,
        ] as const,
    );
    lines.push(...columns(rows, options, 40));
  }
  lines.push('', 'Global options:', ...paramLines(GLOBAL_FLAGS, options));
  lines.push(
    '',
    'Exit codes: 0 ok, 1 runtime, 2 auth, 3 validation/confirmation, 4 not found, 5 network/rate limit, 6 conflict, 7 partial.',
  );
  return `${lines.join('\n')}\n`;
}

/** One line per command under a group: path, summary, marker. */
function childLines(node: CommandNode, options: HelpOptions): string[] {
  const kids = [...node.children.values()];
  const rows = kids.map((k) => {
    const m = marker(k);
    const tags = [...(m ? [m] : []), ...(disabled(k, options) ? [DISABLED] : [])];
    return [
      `  ${k.path.join(' ')}`,
      `${cliText(k.summary, k.params, options)}${tags.length ? ` [${tags.join('; ')}]` : ''}`,
    ] as const;
  });
  return columns(rows, options, 40);
}

export function commandHelp(node: CommandNode, options: HelpOptions = {}): string {
  if (node.group || !node.target) {
    const lines = [
      ...wrap(
        `zot ${node.path.join(' ')}: ${cliText(node.summary, node.params, options)}`,
        helpWidth(options),
      ),
      '',
      'Commands:',
      ...childLines(node, options),
    ];
    return `${lines.join('\n')}\n`;
  }
  const m = marker(node);
  const para = (text: string) => wrap(cliText(text, node.params, options), helpWidth(options));
  const lines = [`Usage: ${usageOf(node)}`, '', ...para(node.summary)];
  if (m) lines.push('', m);
  if (disabled(node, options))
    lines.push(
      '',
      ...para(
        'Disabled: read-only mode is on (ZOTEUS_READ_ONLY=true), so this command is refused; --dry-run still shows the plan.',
      ),
    );
  if (node.target.kind === 'tool') {
    // A command that fixes some inputs (`zot collection delete` is one action of a tool) is
    // told by its summary: the tool's description speaks of all of its actions.
    if (node.target.command.preset === undefined) lines.push('', ...para(node.target.tool.description));
    lines.push('', `Safety tier: ${node.tier}. MCP tool: ${node.mcpTool}.`);
  }
  const args = node.params.filter((p) => p.kind === 'argument');
  const flags = node.params.filter((p) => p.kind === 'option');
  if (args.length) lines.push('', 'Arguments:', ...paramLines(args, options, node.params));
  if (flags.length) lines.push('', 'Options:', ...paramLines(flags, options, node.params));
  // A command that is also a group (`zot trash`, `zot note`) lists the commands under it.
  if (node.children.size > 0) {
    const group = `Group \`zot ${node.path.join(' ')}\`${node.groupSummary ? `: ${node.groupSummary}` : ''}`;
    lines.push('', ...para(group), 'Commands:', ...childLines(node, options));
  }
  lines.push('', 'Global options: --json, --profile NAME, --help');
  return `${lines.join('\n')}\n`;
}
