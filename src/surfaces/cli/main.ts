/**
 * The CLI surface: argv in; an envelope, an exit code and stderr diagnostics out.
 * Generic over the tool declarations; the only code (with argv.ts) that parses argv.
 */
import { loadConfig, type Config } from '../../core/config.js';
import { systemClock } from '../../core/deps.js';
import { renderErrorRefs } from '../../core/call/refs.js';
import { ZoteusError, toZoteusError } from '../../core/errors.js';
import { configSecrets, createRedactor, envSecrets } from '../../core/redact.js';
import type { AnyTool, Clock, GroupDeclaration } from '../../core/tool.js';
import { CLI_VERSION } from '../../core/version.js';
import { parseCommandLine, type Parsed } from './argv.js';
import type { ConfigName } from './builtins/config.js';
import { meta, newRequestId, successEnvelope, dryRunEnvelope } from './envelope.js';
import { chooseFormat, terminalWidth, useColour, type CliIO } from './io.js';
import { createWriter, type Writer } from './output.js';
import type { ParamsTable } from './params.js';
import { errorExit, runToolCommand } from './run-tool.js';
import { cliRefRenderer, commandRefs, type CommandRefs } from './refs.js';
import { buildTree, schemaNode, type CommandNode } from './tree.js';

export interface RunCliOptions {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  io: CliIO;
  /** The declarations the command tree is built from. */
  tools: readonly AnyTool[];
  /**
   * Every declaration, when `tools` holds only those of the command (bin/zot's fast start):
   * the follow-up commands a write suggests are checked against the whole tree.
   */
  allTools?: () => Promise<readonly AnyTool[]>;
  /** Command parameters the build wrote down (dist/cli-manifest.json), by command path. */
  params?: Readonly<ParamsTable>;
  /** The help of the CLI groups (tools/index.ts `groups`, or the manifest's copy). */
  groups?: readonly GroupDeclaration[];
  /** Every tool's commands (the manifest's), for messages that refer to another tool. */
  commands?: Readonly<CommandRefs>;
  clock?: Clock;
}

export async function runCli(options: RunCliOptions): Promise<number> {
  const { argv, env, io } = options;
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const requestId = newRequestId();
  // The format is decided before anything can fail, so even a usage error is an envelope.
  const format = chooseFormat(argv.includes('--json'), env.ZOT_FORMAT, Boolean(io.stdout.isTTY));
  const redactFromEnv = createRedactor(envSecrets(env));
  let writer: Writer = createWriter(io, format, redactFromEnv, useColour(io.stdout, env), {
    argv,
    width: terminalWidth(io.stdout, env),
    stderrColour: useColour(io.stderr, env),
  });
  try {
    const root = buildTree(options.tools, options.params, options.groups);
    const parsed = parseCommandLine(root, argv);
    for (const notice of parsed.notices) writer.stderr(notice);
    if (parsed.controls.version) {
      writer.raw(`${CLI_VERSION}\n`);
      return 0;
    }
    if (parsed.controls.help || !parsed.node.target) {
      const { commandHelp, rootHelp } = await import('./help.js');
      const { inputNames, treeSpeaker } = await import('./cli-words.js');
      const refs = cliRefRenderer(options.commands ?? commandRefs(options.tools));
      if (format === 'table') {
        const helpOptions = {
          readOnly: readOnlyFor(env, parsed.controls.profile),
          refs,
          known: inputNames(root, options.params),
          width: terminalWidth(io.stdout, env),
        };
        writer.raw(
          parsed.node.path.length
            ? commandHelp(parsed.node, helpOptions)
            : rootHelp(root, CLI_VERSION, helpOptions),
        );
        return 0;
      }
      // JSON mode: every stdout line is JSON. `--help` is the schema node; a bare group is a
      // usage error that names its subcommands.
      if (!parsed.controls.help) throw missingSubcommand(parsed.node);
      writer.envelope(
        successEnvelope(
          schemaNode(parsed.node, treeSpeaker(root, refs, options.params)),
          meta(requestId, startedAt, clock.now()),
        ),
      );
      return 0;
    }
    const isInit =
      parsed.node.target.kind === 'builtin' &&
      (parsed.node.target.id === 'config init' || parsed.node.target.id === 'auth local');
    const config = loadConfig(env, { profile: parsed.controls.profile, allowMissingProfile: isInit });
    writer = createWriter(io, format, redactFromEnv.with(configSecrets(config)), useColour(io.stdout, env), {
      argv,
      width: terminalWidth(io.stdout, env),
      stderrColour: useColour(io.stderr, env),
    });
    return await dispatch(root, parsed, { ...options, clock }, config, writer, requestId, startedAt);
  } catch (error) {
    const refs = cliRefRenderer(options.commands ?? commandRefs(options.tools));
    return errorExit(writer, renderErrorRefs(toZoteusError(error), refs), requestId, startedAt, clock.now());
  }
}

/** Whether read-only mode is on, for help; a configuration that does not load says nothing. */
function readOnlyFor(
  env: Readonly<Record<string, string | undefined>>,
  profile: string | undefined,
): boolean {
  try {
    return loadConfig(env, { profile, allowMissingProfile: true }).readOnly;
  } catch {
    return false;
  }
}

function missingSubcommand(node: CommandNode): ZoteusError {
  const where = ['zot', ...node.path].join(' ');
  const subcommands = [...node.children.values()].map((k) => k.path.join(' '));
  return new ZoteusError('validation_error', `missing subcommand: \`${where}\` needs a command.`, {
    hint: `Subcommands: ${subcommands.join(', ')}. Run \`zot schema${node.path.length ? ` ${node.path.join(' ')}` : ''}\` for their parameters.`,
  });
}

async function dispatch(
  root: CommandNode,
  parsed: Parsed,
  options: RunCliOptions & { clock: Clock },
  config: Config,
  writer: Writer,
  requestId: string,
  startedAt: number,
): Promise<number> {
  const { node, controls, input } = parsed;
  const target = node.target;
  if (!target) throw new ZoteusError('internal_error', 'No command to run.');
  const m = () => meta(requestId, startedAt, options.clock.now());
  const succeed = (data: Record<string, unknown>) => {
    if (writer.format === 'json') writer.envelope(successEnvelope(data, m()));
    else writer.table(data, undefined, undefined);
    return 0;
  };

  if (target.kind === 'tool') {
    const allTools = options.allTools;
    return runToolCommand({
      wholeTree: async () => (allTools ? buildTree(await allTools(), options.params, options.groups) : root),
      node,
      tool: target.tool,
      command: target.command,
      rawInput: input,
      refs: cliRefRenderer(options.commands ?? commandRefs(options.tools)),
      controls,
      config,
      env: options.env,
      io: options.io,
      writer,
      clock: options.clock,
      requestId,
      startedAt,
    });
  }

  // The builtins load only when run: a tool command never needs them.
  const { configValue, initConfig, showConfig } = await import('./builtins/config.js');
  switch (target.id) {
    case 'schema': {
      const { schemaData } = await import('./builtins/schema.js');
      const { treeSpeaker } = await import('./cli-words.js');
      const refs = cliRefRenderer(options.commands ?? commandRefs(options.tools));
      const speak = treeSpeaker(root, refs, options.params);
      return succeed(schemaData(root, (input.command as string[] | undefined) ?? [], speak));
    }
    case 'config show':
      return succeed(showConfig(config));
    case 'config get': {
      // The parser has held the name to the settings already (argv.ts: did you mean).
      const name = input.name as ConfigName;
      const value = configValue(config, name) ?? null;
      // Raw by default: `export ZOT_API_KEY="$(zot config get api_key)"` is its purpose.
      if (controls.json) {
        const envelope = successEnvelope({ name, value }, m());
        options.io.stdout.write(`${JSON.stringify(envelope)}\n`);
      } else if (value !== null) options.io.stdout.write(`${value}\n`);
      else writer.stderr(`${name} is not set (zot config show lists the effective configuration).`);
      return value === null && !controls.json ? 4 : 0;
    }
    case 'config init': {
      if (controls.dry_run) {
        writer.envelope(
          dryRunEnvelope(
            {
              command: 'config init',
              file: config.configFile,
              profile: controls.profile ?? config.profile ?? 'default',
            },
            m(),
          ),
        );
        return 0;
      }
      return succeed(
        await initConfig(
          options.io,
          config.configFile,
          controls.profile ?? config.profile ?? 'default',
          controls.no_interaction,
          config,
        ),
      );
    }
    case 'auth local':
    case 'auth status':
    case 'auth logout': {
      const { authLocal, authLogout, authStatus } = await import('./builtins/auth.js');
      const profile = controls.profile ?? config.profile ?? 'default';
      if (target.id === 'auth status') return succeed(await authStatus(config, options.env));
      if (controls.dry_run) {
        writer.envelope(dryRunEnvelope({ command: target.id, file: config.configFile, profile }, m()));
        return 0;
      }
      if (target.id === 'auth logout') return succeed(authLogout(config, profile));
      return succeed(await authLocal(options.io, config, options.env, profile, controls.no_interaction));
    }
    case 'mcp':
    case 'server': {
      const { runMcp } = await import('../mcp/run.js');
      return runMcp({
        env:
          typeof input.toolsets === 'string'
            ? { ...options.env, ZOTEUS_TOOLSETS: input.toolsets }
            : options.env,
        http: target.id === 'server' || input.http === true,
        ...(input.port !== undefined ? { port: Number(input.port) } : {}),
        ...(typeof input.host === 'string' ? { host: input.host } : {}),
        ...(typeof input.public_url === 'string' ? { publicUrl: input.public_url } : {}),
      });
    }
    case 'server migrate': {
      const { serverMigrate } = await import('./builtins/server.js');
      return succeed(await serverMigrate(options.env, config, controls.dry_run === true));
    }
    case 'server rotate-keys': {
      const { serverRotateKeys } = await import('./builtins/server.js');
      if (controls.dry_run) {
        writer.envelope(
          dryRunEnvelope({ command: target.id, would: 're-encrypt every key under the newest key' }, m()),
        );
        return 0;
      }
      return succeed(await serverRotateKeys(options.env, config));
    }
  }
}
