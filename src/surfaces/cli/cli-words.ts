/**
 * A declaration's prose in the CLI's words (issue 16, point 20). Descriptions and parameter
 * help are written once, for a model calling tools by name with JSON inputs; a person at the
 * shell reads commands and flags: `zotero_list_tags` becomes `zot tag list`, `collection_key`
 * the command's `--collection`, `include_children: true` the flag `--include-children`.
 */
import { renderRefs, type RefRenderer } from '../../core/call/refs.js';
import type { Param, ParamsTable } from './params.js';
import { allCommands, type CommandNode, type Speak } from './tree.js';

/** How a parameter of this command is spelled: its flag, or its argument's metavar. */
function spelling(params: readonly Param[], name: string, refs: RefRenderer): string {
  const own = params.find((p) => p.name === name);
  if (own?.kind === 'argument') return own.name.toUpperCase();
  return own?.flags?.[0] ?? refs.param(name, undefined);
}

const SETTING = /\b(?:set |pass )?([a-z][a-z0-9]*(?:_[a-z0-9]+)*): (true|false|"[^"]*"|-?\d+)/g;
const TOOL = /`?\b(zotero_[a-z_]+)\b`?/g;
const SNAKE = /(?<![\w."`-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w"`(-])/g;
/** `save_path` in a code span: the flag, still in one. */
const QUOTED = /`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`/g;
/** `qmode "everything"`, `direction "asc"`: one of this command's options with a value. */
const GIVEN = /\b([a-z][a-z0-9]*) ("[^"]*")/g;
/** `start/limit`: two of this command's options. */
const PAIR = /\b([a-z][a-z0-9_]*)\/([a-z][a-z0-9_]*)\b/g;
/** A one-letter argument (`q`): a word no sentence uses on its own. */
const LETTER = /(?<![\w."`-])([a-z])(?![\w"`(-])/g;

/**
 * `known`: the input fields the declarations have (a snake_case word that is none of them is
 * left alone: it is a value or an output field).
 */
export function speakCli(
  text: string,
  params: readonly Param[],
  refs: RefRenderer,
  known: ReadonlySet<string>,
): string {
  const isField = (name: string) => known.has(name) || params.some((p) => p.name === name);
  const isOwn = (name: string) => params.some((p) => p.name === name);
  // References first (`onlyOn`, `toolRef`): then the declared names left in the prose.
  return renderRefs(text, refs)
    .replace(TOOL, (whole, tool: string) => (tool.length > 7 ? refs.tool(tool, {}) : whole))
    .replace(SETTING, (whole, name: string, value: string) => {
      // A one-word name of another command's input ("key: 8 characters") is prose.
      if (!(isOwn(name) || (name.includes('_') && isField(name)))) return whole;
      const flag = spelling(params, name, refs);
      if (value === 'true') return flag;
      if (value === 'false') return `without ${flag}`;
      return `${flag} ${value}`;
    })
    .replace(QUOTED, (whole, name: string) => (isField(name) ? `\`${spelling(params, name, refs)}\`` : whole))
    .replace(GIVEN, (whole, name: string, value: string) =>
      isOwn(name) ? `${spelling(params, name, refs)} ${value}` : whole,
    )
    .replace(PAIR, (whole, a: string, b: string) =>
      isOwn(a) && isOwn(b) ? `${spelling(params, a, refs)}/${spelling(params, b, refs)}` : whole,
    )
    .replace(SNAKE, (whole, name: string) => (isField(name) ? spelling(params, name, refs) : whole))
    .replace(LETTER, (whole, name: string) => (isOwn(name) ? spelling(params, name, refs) : whole));
}

/**
 * Every input field name of the commands (what `speakCli` may rename): from the build's table
 * of every command's parameters when there is one, since a fast start's tree holds only some.
 */
export function inputNames(root: CommandNode, params?: Readonly<ParamsTable>): Set<string> {
  const lists = params ? Object.values(params) : allCommands(root).map((n) => n.params);
  return new Set(lists.flatMap((list) => list.map((p) => p.name)));
}

/** The speaker of a whole command tree: each node's prose with its own flags. */
export function treeSpeaker(root: CommandNode, refs: RefRenderer, params?: Readonly<ParamsTable>): Speak {
  const known = inputNames(root, params);
  return (text, node) => speakCli(text, node.params, refs, known);
}
