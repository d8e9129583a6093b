/**
 * CLI parameters derived from a tool's zod input schema (through its JSON Schema), so
 * `--help`, `zot schema` and the parser read the same description of every flag.
 */
import * as z from 'zod';
import type { AnyTool, CliCommand } from '../../core/tool.js';

export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'enum' | 'json';

export interface Param {
  /** The input field it fills (snake_case), or the control flag's name. */
  name: string;
  kind: 'argument' | 'option';
  type: ParamType;
  required: boolean;
  flags?: string[];
  help: string;
  default: unknown;
  choices?: string[];
  /** Item type of an array. */
  items?: ParamType;
  /** Positional that takes every remaining word. */
  variadic?: boolean;
  /** The value is a path (or `-` for stdin) whose content fills the field. */
  file?: 'json' | 'text';
  /** A flag that only chooses this command among the spellings of a path (`zot schema --zotero`). */
  trigger?: boolean;
}

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  items?: JsonSchema;
  description?: string;
  default?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  const?: unknown;
}

export function kebab(name: string): string {
  return name
    .replace(/_/g, '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();
}

function typeOf(schema: JsonSchema): { type: ParamType; choices?: string[]; items?: ParamType } {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) {
    return { type: 'enum', choices: schema.enum as string[] };
  }
  const t = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (t.length === 1) {
    const only = t[0];
    if (only === 'string' || only === 'integer' || only === 'number' || only === 'boolean')
      return { type: only };
    if (only === 'array')
      return { type: 'array', items: schema.items ? typeOf(schema.items).type : 'string' };
  }
  // Unions (`string | number`) and objects are taken as text: a string is the widest form
  // a shell can pass; zod decides afterwards whether it fits.
  if (t.length > 1 && t.every((x) => x === 'string' || x === 'number' || x === 'integer'))
    return { type: 'string' };
  return { type: 'json' };
}

/** The JSON Schema of a tool's input, as the model and the CLI both see it. */
export function inputJsonSchema(tool: AnyTool): JsonSchema {
  return z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/**
 * Every tool command's parameters by command path (words joined by one space): written into
 * dist/cli-manifest.json at build time, so a `zot` process builds its command tree without
 * deriving a JSON Schema from each input (zod's toJSONSchema: 5-15 ms for one command).
 */
export type ParamsTable = Record<string, Param[]>;

export function paramsTable(tools: readonly AnyTool[]): ParamsTable {
  const table: ParamsTable = {};
  for (const tool of tools)
    for (const command of tool.cli) table[command.path.join(' ')] = commandParams(tool, command);
  return table;
}

/** Parameters of one CLI command of a tool: positionals first, then options. */
export function commandParams(tool: AnyTool, command: CliCommand): Param[] {
  const schema = inputJsonSchema(tool);
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const hidden = new Set([...Object.keys(command.preset ?? {}), ...(command.omit ?? [])]);
  const positional = command.args ?? [];
  const params: Param[] = [];
  for (const [index, name] of positional.entries()) {
    const prop = properties[name];
    if (!prop) throw new Error(`CLI argument ${name} of ${tool.name} is not an input field`);
    const file = command.files?.[name];
    if (file) {
      // A positional file (`zot create FILE|-`): the word is the path, never the value itself.
      params.push({
        name,
        kind: 'argument',
        type: 'string',
        required: required.has(name),
        help: fileHelp(file, prop),
        default: null,
        file,
      });
      continue;
    }
    const t = typeOf(prop);
    params.push({
      name,
      kind: 'argument',
      ...t,
      required:
        required.has(name) ||
        (command.preset === undefined ? false : isRequiredForCommand(tool, command, name)),
      help: command.help?.[name] ?? prop.description ?? '',
      default: prop.default ?? null,
      ...(t.type === 'array' && index === positional.length - 1 ? { variadic: true } : {}),
    });
  }
  for (const [name, prop] of Object.entries(properties)) {
    if (hidden.has(name) || positional.includes(name)) continue;
    const file = command.files?.[name];
    if (file) {
      params.push({
        name,
        kind: 'option',
        type: 'string',
        required: required.has(name),
        flags: [`--${command.flags?.[name] ?? kebab(name)}`],
        help: fileHelp(file, prop),
        default: null,
        file,
      });
      continue;
    }
    const t = typeOf(prop);
    params.push({
      name,
      kind: 'option',
      ...t,
      required: required.has(name),
      flags: [`--${command.flags?.[name] ?? kebab(name)}`],
      help: command.help?.[name] ?? prop.description ?? '',
      default: prop.default ?? null,
    });
  }
  return params;
}

function fileHelp(file: 'json' | 'text', prop: JsonSchema): string {
  return `Path to a ${file === 'json' ? 'JSON ' : ''}file, or - for stdin. ${prop.description ?? ''}`.trim();
}

/**
 * A positional of a multi-action tool is optional in the schema (other actions omit it)
 * but required by this command: probe by validating the preset without it.
 */
function isRequiredForCommand(tool: AnyTool, command: CliCommand, name: string): boolean {
  const probe = tool.input.safeParse({ ...command.preset });
  if (probe.success) return false;
  return probe.error.issues.some((issue) => issue.path[0] === name || issue.message.includes(name));
}
