/**
 * Tool references (core/call/refs.ts) as the CLI writes them: the command of that tool whose
 * preset fits the arguments, positionals in order, the rest as flags: `zot trash KEY…`,
 * `zot collection list --q TEXT`. The table of commands comes from the declarations, or from
 * the build-time manifest when only some declarations are loaded (fast start).
 */
import type { RefRenderer } from '../../core/call/refs.js';
import { shellWord } from '../../core/shell-word.js';
import type { AnyTool } from '../../core/tool.js';
import { kebab } from './params.js';

export interface CommandRef {
  path: string[];
  args: string[];
  preset: Record<string, unknown>;
  flags: Record<string, string>;
}

/** Tool name → its CLI commands. */
export type CommandRefs = Record<string, CommandRef[]>;

export function commandRefs(tools: readonly AnyTool[]): CommandRefs {
  const out: CommandRefs = {};
  for (const tool of tools) {
    out[tool.name] = tool.cli.map((c) => ({
      path: [...c.path],
      args: [...(c.args ?? [])],
      preset: { ...(c.preset ?? {}) },
      flags: { ...(c.flags ?? {}) },
    }));
  }
  return out;
}

export function cliRefRenderer(refs: CommandRefs): RefRenderer {
  const all = Object.values(refs).flat();
  return {
    surface: 'cli',
    tool(tool, args, bare) {
      const commands = refs[tool] ?? [];
      const fits = (c: CommandRef) =>
        Object.entries(c.preset).every(
          ([name, value]) => args[name] === undefined || String(value) === args[name],
        );
      const score = (c: CommandRef) =>
        Object.keys(c.preset).filter((name) => args[name] !== undefined).length;
      // A tool named without arguments whose commands each fix an action (`zot collection
      // create|delete|…`) is all of them: their shared words.
      if (!bare && Object.keys(args).length === 0 && commands.length > 1) {
        if (commands.every((c) => Object.keys(c.preset).length > 0)) {
          const shared = commonPath(commands.map((c) => c.path));
          if (shared.length > 0) return `\`zot ${shared.join(' ')} …\``;
        }
      }
      const command = commands.filter(fits).sort((a, b) => score(b) - score(a))[0];
      // A tool without a command of its own (none today): its name is the best there is.
      if (!command) return tool;
      const words = ['zot', ...command.path];
      for (const name of command.args) {
        const value = args[name];
        if (value === undefined) continue;
        // Several item keys in one value (a `next` for many items): each its own word.
        const keys = value.split(' ');
        if (keys.length > 1 && keys.every((k) => KEY.test(k))) words.push(...keys);
        else words.push(word(value));
      }
      for (const [name, value] of Object.entries(args)) {
        if (command.args.includes(name) || name in command.preset) continue;
        words.push(flagOf(command, name), ...(value === '' || value === 'true' ? [] : [word(value)]));
      }
      return bare ? words.join(' ') : `\`${words.join(' ')}\``;
    },
    param(name, value) {
      // The flag as the commands spell it (`save_path` is `--save`), else its kebab-case.
      const command = all.find((c) => c.flags[name] !== undefined);
      const flag = command ? flagOf(command, name) : `--${kebab(name)}`;
      return value === undefined || value === 'true' ? flag : `${flag} ${value}`;
    },
  };
}

/** A Zotero key: a word as it is. */
const KEY = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

function commonPath(paths: readonly string[][]): string[] {
  const first = paths[0] ?? [];
  let n = 0;
  while (n < first.length && paths.every((p) => p[n] === first[n])) n += 1;
  return first.slice(0, n);
}

/** A value as a shell takes it; an example placeholder (`KEY…`, `TEXT`) stays as it is. */
function word(value: string): string {
  if (/^[A-Z][A-Z_]*…?$/.test(value) || value.startsWith('"')) return value;
  return shellWord(value) ?? value;
}

function flagOf(command: CommandRef, name: string): string {
  return `--${command.flags[name] ?? kebab(name)}`;
}
