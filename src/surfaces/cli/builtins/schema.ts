/** `zot schema [COMMAND...]`: the command tree, or one node of it, as JSON. */
import { allCommands, findNode, schemaNode, type CommandNode, type Speak } from '../tree.js';
import { noCommand } from '../no-command.js';

export function schemaData(
  root: CommandNode,
  words: readonly string[],
  speak?: Speak,
): Record<string, unknown> {
  const { node, used } = findNode(root, words);
  if (used < words.length) {
    throw noCommand(
      words,
      allCommands(root).map((n) => n.path.join(' ')),
    );
  }
  return schemaNode(node, speak);
}
