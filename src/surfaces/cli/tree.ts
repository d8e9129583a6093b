/**
 * The command tree: one node per CLI command, built from the tool declarations plus the
 * CLI's own commands (schema, config, mcp). `--help`, `zot schema` and the parser all
 * read this tree, so they cannot disagree.
 */
import type { AnyTool, CliCommand, GroupDeclaration, Tier } from '../../core/tool.js';
import { commandTier } from '../../core/tool.js';
import { commandParams, type Param, type ParamsTable } from './params.js';

export type BuiltinId =
  | 'schema'
  | 'config init'
  | 'config get'
  | 'config show'
  | 'auth local'
  | 'auth status'
  | 'auth logout'
  | 'mcp'
  | 'server'
  | 'server migrate'
  | 'server rotate-keys';

export interface CommandNode {
  path: string[];
  summary: string;
  tier: Tier | null;
  since: string;
  deprecated: boolean;
  mcpTool: string | null;
  params: Param[];
  children: Map<string, CommandNode>;
  target?: { kind: 'tool'; tool: AnyTool; command: CliCommand } | { kind: 'builtin'; id: BuiltinId };
  /** Writes only local files (`WRITES FILES`), not the library. */
  writesFilesOnly: boolean;
  /** A group node (`zot collection`): its summary is the group's help. */
  group?: boolean;
  /** The group's help where a command is also a group (`zot trash`, `zot note`). */
  groupSummary?: string;
  /** Other commands spelled under this node's path, chosen by a flag (CliCommand.via). */
  variants?: Array<{ triggers: string[]; node: CommandNode }>;
}

const opt = (name: string, type: Param['type'], help: string, extra: Partial<Param> = {}): Param => ({
  name,
  kind: 'option',
  type,
  required: false,
  flags: [`--${name.replace(/_/g, '-')}`],
  help,
  default: type === 'boolean' ? false : null,
  ...extra,
});

/** Flags every mutating command takes. */
export const MUTATING_FLAGS: Param[] = [
  opt('dry_run', 'boolean', 'Validate and print the planned change; needs no credentials and sends nothing.'),
  opt(
    'idempotency_key',
    'string',
    'Replay the stored result if this key already ran with the same arguments (24 h).',
  ),
  opt('yes', 'boolean', 'Confirm a destructive command without asking.', { flags: ['--yes', '-y'] }),
  opt(
    'no_interaction',
    'boolean',
    'Never prompt; a destructive command without --yes fails with confirmation_required.',
  ),
];

export const STREAM_FLAG = opt('stream', 'boolean', 'Print one NDJSON line per row, then a summary line.');
/** `--all`: a control named apart from any input called `all` (an export's), so the two never meet. */
export const ALL_FLAG: Param = {
  ...opt(
    'all_pages',
    'boolean',
    'Every row the command would page through, in one answer, when it fits the size bound (about 100 KB); --stream prints any number.',
  ),
  flags: ['--all'],
};

/** Flags of every command (root params in `zot schema`). */
export const GLOBAL_FLAGS: Param[] = [
  opt(
    'json',
    'boolean',
    'Force JSON output (default when stdout is not a TTY; ZOT_FORMAT overrides detection).',
  ),
  opt('profile', 'string', 'Config-file profile to use (overrides ZOT_PROFILE).'),
  opt('help', 'boolean', 'Show help.', { flags: ['--help', '-h'] }),
  opt('version', 'boolean', 'Print the version.', { flags: ['--version', '-V'] }),
];

/** The flags of a running server (`zot mcp --http`, `zot server`). */
const SERVE_FLAGS: Param[] = [
  opt('port', 'integer', 'HTTP port (default 8765; 0 picks a free one).', { default: 8765 }),
  opt(
    'host',
    'string',
    'HTTP host (default 127.0.0.1); beyond loopback only with sign-in configured (ZOTEUS_AUTH=zotero).',
    { default: '127.0.0.1' },
  ),
  opt('public_url', 'string', 'The address clients reach the server at (overrides ZOTEUS_PUBLIC_URL).'),
  opt(
    'toolsets',
    'string',
    'Which tools to list: comma-separated toolsets (default, all, library, collections, items, notes, tags, fulltext, search, citations, files, metadata, history, evidence); overrides ZOTEUS_TOOLSETS.',
  ),
];

const BUILTINS: Array<
  Omit<CommandNode, 'children' | 'target' | 'mcpTool' | 'deprecated' | 'since'> & { id: BuiltinId }
> = [
  {
    id: 'schema',
    path: ['schema'],
    summary: 'Describe the command tree, or one command, as JSON (for agents: use it instead of --help).',
    tier: 'read',
    writesFilesOnly: false,
    params: [
      {
        name: 'command',
        kind: 'argument',
        type: 'array',
        items: 'string',
        required: false,
        help: 'Command path, e.g. `collection list`; omit for the whole tree.',
        default: null,
        variadic: true,
      },
    ],
  },
  {
    id: 'config init',
    path: ['config', 'init'],
    summary: 'Create or update a profile in the config file, interactively (humans only).',
    tier: 'write',
    writesFilesOnly: true,
    params: [],
  },
  {
    id: 'config get',
    path: ['config', 'get'],
    summary: 'Print one configured value, raw, for shell profiles (e.g. `zot config get api_key`).',
    tier: 'read',
    writesFilesOnly: false,
    params: [
      {
        name: 'name',
        kind: 'argument',
        type: 'enum',
        choices: [
          'library_id',
          'library_type',
          'api_url',
          'api_key',
          'local_api_key',
          'zotero_data_dir',
          'data_dir',
        ],
        required: true,
        help: 'The setting to print.',
        default: null,
      },
    ],
  },
  {
    id: 'config show',
    path: ['config', 'show'],
    summary: 'Show the effective configuration and where each value comes from (API key redacted).',
    tier: 'read',
    writesFilesOnly: false,
    params: [],
  },
  {
    id: 'auth local',
    path: ['auth', 'local'],
    summary:
      'Ask the Zotero desktop app (10+) for a write key and store it in the profile (humans only: click "Always Allow").',
    tier: 'write',
    writesFilesOnly: true,
    params: [],
  },
  {
    id: 'auth status',
    path: ['auth', 'status'],
    summary:
      'Show the local API key configured (redacted), where writes go, and what the desktop app answers.',
    tier: 'read',
    writesFilesOnly: false,
    params: [],
  },
  {
    id: 'auth logout',
    path: ['auth', 'logout'],
    summary: "Forget the profile's local API key (Zotero keeps it until you clear its write authorisations).",
    tier: 'write',
    writesFilesOnly: true,
    params: [],
  },
  {
    id: 'mcp',
    path: ['mcp'],
    summary: 'Run the MCP server: stdio by default, Streamable HTTP with --http.',
    tier: 'read',
    writesFilesOnly: false,
    params: [opt('http', 'boolean', 'Serve Streamable HTTP instead of stdio.'), ...SERVE_FLAGS],
  },
  {
    id: 'server',
    path: ['server'],
    summary:
      'Run the shared MCP server over HTTP: sign-in with Zotero (ZOTEUS_AUTH=zotero), state in ZOTEUS_DATABASE_URL.',
    tier: 'read',
    writesFilesOnly: false,
    params: SERVE_FLAGS,
  },
  {
    id: 'server migrate',
    path: ['server', 'migrate'],
    summary: "Bring the shared server's state database up to date (safe from several replicas at once).",
    tier: 'write',
    writesFilesOnly: true,
    params: [],
  },
  {
    id: 'server rotate-keys',
    path: ['server', 'rotate-keys'],
    summary: "Re-encrypt every signed-in person's Zotero key under the newest key of ZOTEUS_SECRET_KEYS.",
    tier: 'write',
    writesFilesOnly: true,
    params: [],
  },
];

/** The CLI's own group; the groups of tool commands are declared beside their tools. */
const BUILTIN_GROUPS: GroupDeclaration[] = [
  { path: ['config'], summary: 'The config file and its profiles.' },
  {
    path: ['auth'],
    summary: "The desktop app's local API key: writes through Zotero 10 without a cloud key.",
  },
  {
    path: ['server'],
    summary: 'The shared MCP server: run it, migrate its state database, rotate its keys.',
  },
];

/** Group help by path (words joined by one space). */
type GroupSummaries = ReadonlyMap<string, string>;

function emptyNode(path: string[], groups: GroupSummaries): CommandNode {
  return {
    path,
    // A group without a declaration has no help (a test keeps every group declared).
    summary: groups.get(path.join(' ')) ?? '',
    tier: null,
    since: '0.1.0',
    deprecated: false,
    mcpTool: null,
    params: [],
    children: new Map(),
    writesFilesOnly: false,
    group: true,
  };
}

function place(root: CommandNode, node: Omit<CommandNode, 'children'>, groups: GroupSummaries): void {
  let parent = root;
  for (const [i, word] of node.path.slice(0, -1).entries()) {
    let next = parent.children.get(word);
    if (!next) {
      next = emptyNode(node.path.slice(0, i + 1), groups);
      parent.children.set(word, next);
    }
    parent = next;
  }
  const last = node.path[node.path.length - 1] as string;
  const existing = parent.children.get(last);
  if (existing?.target) throw new Error(`Two declarations claim the command \`zot ${node.path.join(' ')}\``);
  const groupSummary = groups.get(node.path.join(' '));
  parent.children.set(last, {
    ...node,
    ...(groupSummary !== undefined ? { groupSummary } : {}),
    children: existing?.children ?? new Map(),
  });
}

/**
 * The tree of `tools`' commands and the builtins. `known`: the parameters the build wrote
 * down (dist/cli-manifest.json); a command it lacks derives them from its declaration.
 * `groups`: the help of the groups the commands form (tools/index.ts `groups`).
 */
export function buildTree(
  tools: readonly AnyTool[],
  known?: Readonly<ParamsTable>,
  groups: readonly GroupDeclaration[] = [],
): CommandNode {
  const summaries: GroupSummaries = new Map(
    [...BUILTIN_GROUPS, ...groups].map((g) => [g.path.join(' '), g.summary]),
  );
  const root: CommandNode = {
    ...emptyNode([], summaries),
    summary: 'Zoteus: fast, safe access to a Zotero library.',
    params: GLOBAL_FLAGS,
  };
  for (const tool of tools) {
    for (const command of tool.cli) {
      const tier = commandTier(tool, command);
      const params = [...(known?.[command.path.join(' ')] ?? commandParams(tool, command))];
      if (tier !== 'read') params.push(...MUTATING_FLAGS);
      if (tool.rows && tier === 'read') {
        params.push(STREAM_FLAG);
        if (!params.some((p) => p.flags?.includes('--all'))) params.push(ALL_FLAG);
      }
      place(
        root,
        {
          path: [...command.path],
          summary: command.summary ?? tool.summary,
          tier,
          since: tool.since,
          deprecated: tool.deprecated ?? false,
          mcpTool: tool.name,
          params,
          target: { kind: 'tool', tool, command },
          writesFilesOnly: tool.writesFilesOnly ?? false,
        },
        summaries,
      );
    }
  }
  for (const builtin of BUILTINS) {
    const { id, ...rest } = builtin;
    const params = rest.tier === 'write' ? [...rest.params, MUTATING_FLAGS[0] as Param] : rest.params;
    place(
      root,
      { ...rest, params, since: '0.1.0', deprecated: false, mcpTool: null, target: { kind: 'builtin', id } },
      summaries,
    );
  }
  // After the built-ins: a spelling may live under one (`zot schema --zotero`).
  for (const tool of tools) {
    for (const command of tool.cli) if (command.via) addVariant(root, tool, command);
  }
  return root;
}

/** Registers `command.via`: its flags, present after the `via.path` words, select the command. */
function addVariant(root: CommandNode, tool: AnyTool, command: CliCommand): void {
  const via = command.via as NonNullable<CliCommand['via']>;
  const { node: own } = findNode(root, command.path);
  const { node: host, used } = findNode(root, via.path);
  if (used !== via.path.length || !host.target) {
    throw new Error(`${tool.name}: via path \`zot ${via.path.join(' ')}\` is not a command`);
  }
  const fields = new Map(Object.entries(via.flags).map(([flag, field]) => [field, flag]));
  const params = own.params.flatMap((p): Param[] => {
    const flag = fields.get(p.name);
    if (flag === undefined) return [p];
    const { variadic: _variadic, ...rest } = p;
    return [{ ...rest, kind: 'option', flags: [`--${flag}`], required: false }];
  });
  // A flag mapped to no field only chooses the command (`zot schema --zotero` is `zot item-types`).
  for (const [flag, field] of Object.entries(via.flags)) {
    if (field !== '') continue;
    params.push({
      name: flag,
      kind: 'option',
      type: 'boolean',
      required: false,
      flags: [`--${flag}`],
      help: `Selects \`zot ${command.path.join(' ')}\`.`,
      default: false,
      trigger: true,
    });
  }
  const triggers = Object.keys(via.flags).map((flag) => `--${flag}`);
  host.variants = [...(host.variants ?? []), { triggers, node: { ...own, params } }];
}

/** Longest prefix of `words` that names a node; returns the node and how many words it used. */
export function findNode(root: CommandNode, words: readonly string[]): { node: CommandNode; used: number } {
  let node = root;
  let used = 0;
  for (const word of words) {
    const next = node.children.get(word);
    if (!next) break;
    node = next;
    used += 1;
  }
  return { node, used };
}

/** Every command node (leaves with a target), depth first, sorted by path. */
export function allCommands(root: CommandNode): CommandNode[] {
  const out: CommandNode[] = [];
  const visit = (node: CommandNode) => {
    if (node.target) out.push(node);
    for (const key of [...node.children.keys()].sort()) visit(node.children.get(key) as CommandNode);
  };
  visit(root);
  return out;
}

/** Prose of a command in the CLI's words (cli-words.ts); the identity leaves it as declared. */
export type Speak = (text: string, node: CommandNode) => string;

/** The `zot schema` form of a node; `speak` puts its help texts in the CLI's words. */
export function schemaNode(node: CommandNode, speak: Speak = (text) => text): Record<string, unknown> {
  return {
    name: node.path.length ? node.path.join(' ') : 'zot',
    help: speak(node.summary, node),
    safety_tier: node.tier,
    since: node.since,
    deprecated: node.deprecated,
    mcp_tool: node.mcpTool,
    params: node.params.map((p) => {
      const out: Record<string, unknown> = {
        name: p.name,
        kind: p.kind,
        type: p.type === 'json' ? 'string' : p.type,
        required: p.required,
      };
      if (p.flags) out.flags = p.flags;
      out.help = speak(p.help, node);
      out.default = p.default === undefined ? null : p.default;
      if (p.choices) out.choices = p.choices;
      if (p.items) out.items = p.items === 'json' ? 'string' : p.items;
      if (p.variadic) out.variadic = true;
      return out;
    }),
    subcommands: [...node.children.keys()]
      .sort()
      .map((k) => schemaNode(node.children.get(k) as CommandNode, speak)),
  };
}
