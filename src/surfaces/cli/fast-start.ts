/**
 * A command loads only the declarations it needs. Loading every tool module (and building
 * the JSON Schemas of every input) costs more than `zot read KEY` itself, so the build
 * records, per command path, which tool modules declare it and everything under it
 * (`modules` in dist/cli-manifest.json); `bin/zot` loads just those and builds the tree from
 * them. That partial tree equals the whole one from the command's node down, so parsing,
 * `--help` and usage errors are the same; anything outside a tool's subtree (root help, an
 * unknown command, `schema`, `config`, `mcp`) has no entry and loads everything.
 */
import type { ModuleRoutes } from './manifest.js';

/**
 * The command words of argv as the parser reads them (argv.ts `splitPath`): flags may stand
 * before and among them, `--profile` takes the next token, `--` ends them, and so does the
 * first word that names no subcommand.
 */
export function commandPath(
  argv: readonly string[],
  isCommand: (path: readonly string[]) => boolean,
): string[] {
  const path: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i] as string;
    if (token === '--') break;
    if (token.startsWith('-')) {
      if (token === '--profile') i += 1;
      continue;
    }
    if (!isCommand([...path, token])) break;
    path.push(token);
  }
  return path;
}

/** The tool modules `argv` needs, or undefined when it needs the whole list. */
export function modulesFor(routes: ModuleRoutes, argv: readonly string[]): string[] | undefined {
  const path = commandPath(argv, (p) => Object.hasOwn(routes, p.join(' ')));
  if (path.length === 0) return undefined;
  return routes[path.join(' ')] ?? undefined;
}
