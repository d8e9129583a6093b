/** `zot schema WORDS` for a command that does not exist: the closest commands (both schema paths). */
import { didYouMean } from '../../core/did-you-mean.js';
import { ZoteusError } from '../../core/errors.js';

export function noCommand(words: readonly string[], commands: readonly string[]): ZoteusError {
  const near = didYouMean(words.join(' '), commands, (c) => `\`zot schema ${c}\``);
  return new ZoteusError('not_found', `No command \`zot ${words.join(' ')}\`${near ? `: ${near}` : '.'}`, {
    hint: 'Run `zot schema` for the whole command tree.',
  });
}
