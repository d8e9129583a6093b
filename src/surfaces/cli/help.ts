/** `--help` text, from the same tree as `zot schema`: grouped by safety tier, with markers. */
import type { Param } from './params.js';
import { allCommands, GLOBAL_FLAGS, type CommandNode } from './tree.js';

export function marker(node: CommandNode): string | null {
  if (node.tier === null || node.tier === 'read') return null;
  return node.writesFilesOnly ? 'WRITES FILES' : 'MUTATES LIBRARY';
}

/** What help knows of the configuration: in read-only mode the commands that write are disabled. */
export interface HelpOptions {
  readOnly?: boolean;
}

const DISABLED = 'disabled: ZOTEUS_READ_ONLY=true';

function disabled(node: CommandNode, options: HelpOptions): boolean {
  return options.readOnly === true && node.tier !== null && node.tier !== 'read';
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

function paramLines(params: Param[]): string[] {
  const rows = params.map((p) => {
    const left =
      p.kind === 'argument'
        ? `  ${p.name.toUpperCase()}${p.variadic ? '...' : ''}`
        : `  ${(p.flags ?? []).join(', ')}${p.type === 'boolean' ? '' : ` <${p.type === 'enum' ? (p.choices ?? []).join('|') : p.type === 'array' ? (p.items ?? 'value') : p.type}>`}`;
    const def =
      p.default !== null && p.default !== undefined && p.default !== false
        ? ` (default: ${JSON.stringify(p.default)})`
        : '';
    const repeat = p.kind === 'option' && p.type === 'array' ? ' (repeatable)' : '';
    return [
      left,
      `${firstSentence(p.help)}${repeat}${def}${p.required && p.kind === 'option' ? ' (required)' : ''}`,
    ] as const;
  });
  const width = Math.min(34, Math.max(0, ...rows.map(([l]) => l.length)));
  return rows.map(([l, r]) =>
    l.length > width ? `${l}\n${' '.repeat(width + 2)}${r}` : `${l.padEnd(width)}  ${r}`,
  );
}

function firstSentence(text: string): string {
  const m = /^(.*?\.)(\s|$)/s.exec(text);
  return (m ? (m[1] as string) : text).replace(/\s+/g, ' ');
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
    const width = Math.max(...group.map((n) => n.path.join(' ').length));
    for (const n of group)
      lines.push(
        `  ${n.path.join(' ').padEnd(width)}  ${n.summary}${disabled(n, options) ? ` [${DISABLED}]` : ''}`,
      );
  }
  lines.push('', 'Global options:', ...paramLines(GLOBAL_FLAGS));
  lines.push(
    '',
    'Exit codes: 0 ok, 1 runtime, 2 auth, 3 validation/confirmation, 4 not found, 5 network/rate limit, 6 conflict, 7 partial.',
  );
  return `${lines.join('\n')}\n`;
}

/** One line per command under a group: path, summary, marker. */
function childLines(node: CommandNode, options: HelpOptions): string[] {
  const kids = [...node.children.values()];
  const width = Math.max(...kids.map((k) => k.path.join(' ').length));
  return kids.map((k) => {
    const m = marker(k);
    const tags = [...(m ? [m] : []), ...(disabled(k, options) ? [DISABLED] : [])];
    return `  ${k.path.join(' ').padEnd(width)}  ${k.summary}${tags.length ? ` [${tags.join('; ')}]` : ''}`;
  });
}

export function commandHelp(node: CommandNode, options: HelpOptions = {}): string {
  if (node.group || !node.target) {
    const lines = [
      `zot ${node.path.join(' ')}: ${node.summary}`,
      '',
      'Commands:',
      ...childLines(node, options),
    ];
    return `${lines.join('\n')}\n`;
  }
  const m = marker(node);
  const lines = [`Usage: ${usageOf(node)}`, '', node.summary];
  if (m) lines.push('', m);
  if (disabled(node, options))
    lines.push(
      '',
      `Disabled: read-only mode is on (ZOTEUS_READ_ONLY=true), so this command is refused; --dry-run still shows the plan.`,
    );
  if (node.target.kind === 'tool') {
    lines.push('', node.target.tool.description);
    lines.push('', `Safety tier: ${node.tier}. MCP tool: ${node.mcpTool}.`);
  }
  const args = node.params.filter((p) => p.kind === 'argument');
  const flags = node.params.filter((p) => p.kind === 'option');
  if (args.length) lines.push('', 'Arguments:', ...paramLines(args));
  if (flags.length) lines.push('', 'Options:', ...paramLines(flags));
  // A command that is also a group (`zot trash`, `zot note`) lists the commands under it.
  if (node.children.size > 0) {
    const group = `Group \`zot ${node.path.join(' ')}\`${node.groupSummary ? `: ${node.groupSummary}` : ''}`;
    lines.push('', group, 'Commands:', ...childLines(node, options));
  }
  lines.push('', 'Global options: --json, --profile NAME, --help');
  return `${lines.join('\n')}\n`;
}
