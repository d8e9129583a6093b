/**
 * `next` suggestions are commands an agent may run as they are: each one is parsed
 * against the command tree, and one that does not parse is dropped (and logged) rather
 * than printed. A suggestion may carry `<placeholder>` words for values only the user has.
 */
import { parseCommandLine } from './argv.js';
import type { CommandNode } from './tree.js';

/** Splits a suggestion like a shell would for simple quoting ("two words", 'x'). */
function words(command: string): string[] | null {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(command); m; m = re.exec(command)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

export function checkSuggestion(root: CommandNode, command: string): boolean {
  const argv = words(command);
  if (!argv || argv[0] !== 'zot') return false;
  try {
    const parsed = parseCommandLine(root, argv.slice(1));
    // A number flag's value must be a number or a placeholder (`--limit <n>`): the parser leaves
    // any other word as text for the schema to refuse, and a suggestion is not validated further.
    const badNumber = parsed.node.params.some((p) => {
      const value = parsed.input[p.name];
      const numeric = p.type === 'integer' || p.type === 'number';
      return numeric && typeof value === 'string' && !/^<[^>]+>$/.test(value);
    });
    return parsed.node.target !== undefined && !badNumber;
  } catch {
    return false;
  }
}
