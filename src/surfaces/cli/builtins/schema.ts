/** `zot schema [COMMAND...]`: the command tree, or one node of it, as JSON. */
import { ZoteusError } from '../../../core/errors.js';
import { findNode, schemaNode, type CommandNode, type Speak } from '../tree.js';

export function schemaData(
  root: CommandNode,
  words: readonly string[],
  speak?: Speak,
): Record<string, unknown> {
  const { node, used } = findNode(root, words);
  if (used < words.length) {
    throw new ZoteusError('not_found', `No command \`zot ${words.join(' ')}\`.`, {
      hint: 'Run `zot schema` for the whole command tree.',
    });
  }
  return schemaNode(node, speak);
}
