/**
 * argv → (command node, raw input, control flags), with Node's own `parseArgs`. Every
 * parse failure becomes a `validation_error` (exit 3), never a bare parser message.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest, didYouMean } from '../../core/did-you-mean.js';
import { ZoteusError } from '../../core/errors.js';
import type { DeprecatedFlag } from '../../core/tool.js';
import type { Param } from './params.js';
import { findNode, GLOBAL_FLAGS, type CommandNode } from './tree.js';

export interface Controls {
  json: boolean;
  profile: string | undefined;
  help: boolean;
  version: boolean;
  dry_run: boolean;
  idempotency_key: string | undefined;
  yes: boolean;
  no_interaction: boolean;
  stream: boolean;
  /** `--all` (ALL_FLAG), on commands that page and have no input of that name. */
  all: boolean;
}

const CONTROL_NAMES = new Set([
  'json',
  'profile',
  'help',
  'version',
  'dry_run',
  'idempotency_key',
  'yes',
  'no_interaction',
  'stream',
  'all_pages',
]);

export interface Parsed {
  node: CommandNode;
  /** Words that did not name a command, when the path stopped early (`zot nope`). */
  unknownWord: string | undefined;
  input: Record<string, unknown>;
  controls: Controls;
  /** One line each for stderr: an old flag spelling was used (CliCommand.deprecatedFlags). */
  notices: string[];
}

function usage(message: string, field?: string, hint?: string): ZoteusError {
  return new ZoteusError('validation_error', message, {
    ...(field ? { field } : {}),
    hint: hint ?? 'Run `zot schema` (or `zot <command> --help`) for the accepted arguments.',
  });
}

function optionName(param: Param): string {
  const long = param.flags?.find((f) => f.startsWith('--'));
  return long ? long.slice(2) : param.name;
}

/** Splits the command path off argv; global flags may stand before it. */
export function splitPath(
  root: CommandNode,
  argv: readonly string[],
): { node: CommandNode; rest: string[]; unknownWord?: string } {
  let node = root;
  const rest: string[] = [];
  let descending = true;
  let unknownWord: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i] as string;
    if (token === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (token.startsWith('-')) {
      rest.push(token);
      // The value of a global valued flag must not be read as a command word.
      if (descending && token === '--profile' && i + 1 < argv.length) rest.push(argv[++i] as string);
      continue;
    }
    if (descending) {
      const next = node.children.get(token);
      if (next) {
        node = next;
        continue;
      }
      descending = false;
      if (!node.target) unknownWord = token;
    }
    rest.push(token);
  }
  return unknownWord === undefined ? { node, rest } : { node, rest, unknownWord };
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** `zot nope`'s hint: the closest commands, or the commands there are. */
function commandHint(node: CommandNode, word: string): { near: string; hint: string } {
  const where = node.path.length ? `zot ${node.path.join(' ')}` : 'zot';
  const names = [...node.children.keys()];
  const near = didYouMean(word, names, (n) => `\`${where} ${n}\``);
  return {
    near,
    hint: `Commands here: ${names.sort().join(', ')}. Run \`${where} --help\` or \`zot schema\` for the whole tree.`,
  };
}

/**
 * `--limit -5`, `--type -attachment`: a valued option followed by a word that starts with one
 * dash and is no flag of this command (a negative number, an excluding filter) takes it as its
 * value (Node's parser would call it ambiguous), as `--limit=-5` would.
 */
function joinNegativeValues(
  rest: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
): string[] {
  const valued = new Map<string, string>();
  for (const [long, o] of Object.entries(options)) {
    if (o.type !== 'string') continue;
    valued.set(`--${long}`, long);
    if (o.short) valued.set(`-${o.short}`, long);
  }
  const shorts = new Set(Object.values(options).flatMap((o) => (o.short ? [o.short] : [])));
  // `-y` or a cluster of this command's short flags (`-yV`) is flags; any other single-dash word is a value.
  const isValue = (word: string) =>
    /^-(\d|\.\d)/.test(word) || (/^-[^-]/.test(word) && ![...word.slice(1)].every((c) => shorts.has(c)));
  const out: string[] = [];
  for (let i = 0; i < rest.length; i += 1) {
    const token = rest[i] as string;
    if (token === '--') {
      out.push(...rest.slice(i));
      break;
    }
    const long = valued.get(token);
    const next = rest[i + 1];
    if (long !== undefined && next !== undefined && isValue(next)) {
      out.push(`--${long}=${next}`);
      i += 1;
    } else out.push(token);
  }
  return out;
}

function convert(param: Param, raw: string, flag: string): unknown {
  const type = param.type === 'array' ? (param.items ?? 'string') : param.type;
  switch (type) {
    case 'integer':
    case 'number': {
      // Decimal only (`0x10`, `1e3`-less spellings like `Infinity` are not numbers here): a value
      // that is not stays text, and the schema's refusal says what the input accepts.
      return DECIMAL.test(raw.trim()) ? Number(raw) : raw;
    }
    case 'json': {
      const trimmed = raw.trim();
      if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
        try {
          return JSON.parse(trimmed) as unknown;
        } catch {
          throw usage(`${flag} must be valid JSON.`, param.name);
        }
      }
      return raw;
    }
    default:
      return raw;
  }
}

export function parseCommandLine(root: CommandNode, argv: readonly string[]): Parsed {
  const split = splitPath(root, argv);
  const { rest, unknownWord } = split;
  // Another command spelled under this path, chosen by a flag (`zot note KEY --add TEXT`).
  const variant = split.node.variants?.find((v) =>
    rest.some((token) => v.triggers.some((t) => token === t || token.startsWith(`${t}=`))),
  );
  const node = variant?.node ?? split.node;
  if (unknownWord !== undefined) {
    const where = node.path.length ? `zot ${node.path.join(' ')}` : 'zot';
    const { near, hint } = commandHint(node, unknownWord);
    throw new ZoteusError(
      'validation_error',
      `Unknown command '${unknownWord}' for \`${where}\`${near ? `: ${near}` : '.'}`,
      { hint },
    );
  }
  const params = [...GLOBAL_FLAGS, ...node.params];
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const p of params) {
    if (p.kind !== 'option') continue;
    const long = optionName(p);
    const short = p.flags?.find((f) => /^-[A-Za-z]$/.test(f));
    options[long] = {
      type: p.type === 'boolean' ? 'boolean' : 'string',
      ...(p.type === 'array' ? { multiple: true } : {}),
      ...(short ? { short: short.slice(1) } : {}),
    };
  }
  const deprecated = deprecatedOptions(node, options);
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: joinNegativeValues(rest, options),
      options,
      strict: true,
      allowPositionals: true,
    });
    values = parsed.values as Record<string, unknown>;
    positionals = parsed.positionals;
  } catch (error) {
    throw parseFailure((error as Error).message, node, options);
  }

  const controls: Controls = {
    json: values.json === true,
    profile: typeof values.profile === 'string' ? values.profile : undefined,
    help: values.help === true,
    version: values.version === true,
    dry_run: values['dry-run'] === true,
    idempotency_key:
      typeof values['idempotency-key'] === 'string' ? (values['idempotency-key'] as string) : undefined,
    yes: values.yes === true,
    no_interaction: values['no-interaction'] === true,
    stream: values.stream === true,
    all: node.params.some((p) => p.name === 'all_pages') && values.all === true,
  };

  const input: Record<string, unknown> = {};
  if (node.target?.kind === 'tool') Object.assign(input, node.target.command.preset ?? {});
  for (const p of node.params) {
    if (p.kind !== 'option' || CONTROL_NAMES.has(p.name) || p.trigger) continue;
    const long = optionName(p);
    const value = values[long];
    if (value === undefined) continue;
    const flag = `--${long}`;
    if (p.type === 'boolean') input[p.name] = value;
    else if (Array.isArray(value)) input[p.name] = value.map((v) => convert(p, String(v), flag));
    else input[p.name] = convert(p, String(value), flag);
  }

  const args = node.params.filter((p) => p.kind === 'argument');
  const words = positionals;
  let i = 0;
  for (const p of args) {
    if (i >= words.length) break;
    if (p.variadic) {
      input[p.name] = words.slice(i).map((w) => convert(p, w, p.name));
      i = words.length;
    } else {
      input[p.name] = convert(p, words[i] as string, p.name);
      i += 1;
    }
  }
  if (i < words.length) {
    throw usage(`Unexpected argument '${words[i]}' for \`zot ${node.path.join(' ')}\`.`);
  }
  const notices = applyDeprecated(deprecated, values, input);
  if (controls.all && controls.stream) {
    throw usage(
      '--all and --stream both read every row: --all answers once, --stream prints a line per row. Choose one.',
      'all',
    );
  }
  if (node.target?.kind === 'builtin' && !controls.help && !controls.version) checkBuiltinInput(node, input);
  return { node, unknownWord, input, controls, notices };
}

/**
 * A built-in has no input schema to validate against (`zot config get`): its declared
 * parameters are checked here, required ones and choices, in the same words as a tool's.
 */
function checkBuiltinInput(node: CommandNode, input: Record<string, unknown>): void {
  const where = `zot ${node.path.join(' ')}`;
  for (const p of node.params) {
    const label = p.kind === 'argument' ? p.name.toUpperCase() : `--${optionName(p)}`;
    const value = input[p.name];
    const choices = p.type === 'enum' ? (p.choices ?? []) : [];
    const example = (choice: string | undefined) =>
      choice === undefined
        ? `Run \`${where} --help\` for the accepted arguments.`
        : `Example: \`${where} ${p.kind === 'argument' ? choice : `${label} ${choice}`}\`.`;
    const oneOf = choices.map((c) => `'${c}'`).join(', ');
    if (value === undefined) {
      if (!p.required) continue;
      throw usage(
        `${label} is required${choices.length ? `: one of ${oneOf}` : ''}.`,
        p.name,
        example(choices[0]),
      );
    }
    if (p.type === 'integer' && !Number.isInteger(value)) {
      throw usage(
        `${label} must be a whole number (got ${JSON.stringify(String(value).slice(0, 60))}).`,
        p.name,
        `Run \`${where} --help\` for the accepted arguments.`,
      );
    }
    if (choices.length && typeof value === 'string' && !choices.includes(value)) {
      const near = didYouMean(value, choices);
      throw usage(
        `${label} must be one of ${oneOf} (got ${JSON.stringify(value.slice(0, 60))})${near ? `; ${near}` : '.'}`,
        p.name,
        example(closest(value, choices)[0] ?? choices[0]),
      );
    }
  }
}

/** Node's parser's refusal in the command line's terms, with the closest flags. */
function parseFailure(
  message: string,
  node: CommandNode,
  options: NonNullable<ParseArgsConfig['options']>,
): ZoteusError {
  const where = node.path.length ? `zot ${node.path.join(' ')}` : 'zot';
  const help = `Run \`${where} --help\` for the accepted flags.`;
  const unknown = /Unknown option '([^']+)'/.exec(message)?.[1];
  if (unknown !== undefined) {
    const flags = Object.keys(options).map((long) => `--${long}`);
    const name = unknown.split('=')[0] as string;
    const near = name.startsWith('--') ? didYouMean(name, flags, (f) => f) : '';
    return usage(`Unknown flag ${unknown} for \`${where}\`${near ? `: ${near}` : '.'}`, unknown, help);
  }
  const missing = /Option '([^']+)' argument (missing|is ambiguous)/.exec(message)?.[1];
  if (missing !== undefined) {
    const flag = /--[\w-]+/.exec(missing)?.[0] ?? missing;
    return usage(
      `${flag} needs a value.`,
      flag.replace(/^-+/, ''),
      `${help} A value that starts with a dash is written ${flag}=-VALUE.`,
    );
  }
  const boolean = /Option '([^']+)' does not take an argument/.exec(message)?.[1];
  if (boolean !== undefined) {
    const flag = /--[\w-]+/.exec(boolean)?.[0] ?? boolean;
    return usage(`${flag} takes no value: give it alone to turn it on.`, flag.replace(/^-+/, ''), help);
  }
  return usage(message.replace(/\. To specify a positional argument.*$/s, '.'), undefined, help);
}

interface OldFlag {
  name: string;
  spec: DeprecatedFlag;
  /** The options that replace it. */
  targets: Param[];
}

/**
 * The command's old flag spellings, added to the parser's options (hidden: `--help` and `zot
 * schema` read only `node.params`). One that names no option of the command is ignored.
 */
function deprecatedOptions(node: CommandNode, options: NonNullable<ParseArgsConfig['options']>): OldFlag[] {
  const declared = node.target?.kind === 'tool' ? node.target.command.deprecatedFlags : undefined;
  const out: OldFlag[] = [];
  for (const [name, spec] of Object.entries(declared ?? {})) {
    if (Object.hasOwn(options, name)) continue;
    const wanted = spec.field !== undefined ? [spec.field] : spec.fields;
    const targets = node.params.filter((p) => p.kind === 'option' && wanted.includes(p.name));
    if (targets.length !== wanted.length) continue;
    const only = targets[0] as Param;
    options[name] =
      spec.field === undefined
        ? { type: 'string' }
        : {
            type: only.type === 'boolean' ? 'boolean' : 'string',
            ...(only.type === 'array' ? { multiple: true } : {}),
          };
    out.push({ name, spec, targets });
  }
  return out;
}

/** Fills the inputs of the old flags that were given; the notices to print. */
function applyDeprecated(
  old: readonly OldFlag[],
  values: Record<string, unknown>,
  input: Record<string, unknown>,
): string[] {
  const notices: string[] = [];
  for (const { name, spec, targets } of old) {
    const value = values[name];
    if (value === undefined) continue;
    const flag = `--${name}`;
    const use = targets.map((p) => `--${optionName(p)}`).join(' and ');
    notices.push(`zot: ${flag} is deprecated; use ${use} (removed in ${spec.removedIn}).`);
    const taken = targets.find((p) => input[p.name] !== undefined);
    if (taken)
      throw usage(
        `${flag} and --${optionName(taken)} set the same input; give --${optionName(taken)} only.`,
        taken.name,
      );
    if (spec.field !== undefined) {
      const p = targets[0] as Param;
      input[p.name] =
        p.type === 'boolean'
          ? value
          : Array.isArray(value)
            ? value.map((v) => convert(p, String(v), flag))
            : convert(p, String(value), flag);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(value));
    } catch {
      throw usage(`${flag} must be a JSON object; it is deprecated: use ${use}.`, name);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw usage(`${flag} must be a JSON object; it is deprecated: use ${use}.`, name);
    }
    for (const [key, v] of Object.entries(parsed)) {
      const p = targets.find((t) => t.name === key);
      if (!p) throw usage(`${flag} has no field '${key.slice(0, 40)}'; it is deprecated: use ${use}.`, name);
      input[p.name] = v;
    }
  }
  return notices;
}

export { findNode };
