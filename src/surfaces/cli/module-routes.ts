/**
 * Build time (scripts/build-manifest.mjs): which tool modules each command path needs, the
 * `modules` of dist/cli-manifest.json that fast-start.ts reads.
 */
import type { AnyTool } from '../../core/tool.js';
import type { ModuleRoutes } from './manifest.js';
import { buildTree, type CommandNode } from './tree.js';

const startsWith = (path: readonly string[], prefix: readonly string[]) =>
  prefix.length <= path.length && prefix.every((word, i) => path[i] === word);

/**
 * The tools whose commands make up the subtree of `prefix`: those with a command (or a
 * flag-chosen spelling, `via`) at or under it, plus the hosts of their spellings, which
 * `buildTree` needs to place them.
 */
export function toolsUnder(tools: readonly AnyTool[], prefix: readonly string[]): AnyTool[] {
  const chosen = new Set(
    tools.filter((t) =>
      t.cli.some(
        (c) => startsWith(c.path, prefix) || (c.via !== undefined && startsWith(c.via.path, prefix)),
      ),
    ),
  );
  for (let grew = true; grew;) {
    grew = false;
    for (const tool of [...chosen]) {
      for (const c of tool.cli) {
        if (!c.via) continue;
        const via = c.via.path;
        for (const host of tools) {
          if (chosen.has(host) || !host.cli.some((h) => h.path.join(' ') === via.join(' '))) continue;
          chosen.add(host);
          grew = true;
        }
      }
    }
  }
  return tools.filter((t) => chosen.has(t));
}

/** Every command path of the tree with the modules that build its subtree (null where a builtin lives). */
export function moduleRoutes(tools: readonly AnyTool[], moduleOf: (tool: AnyTool) => string): ModuleRoutes {
  const routes: ModuleRoutes = {};
  const hasBuiltin = (node: CommandNode): boolean =>
    node.target?.kind === 'builtin' || [...node.children.values()].some(hasBuiltin);
  const visit = (node: CommandNode) => {
    if (node.path.length > 0) {
      routes[node.path.join(' ')] = hasBuiltin(node) ? null : toolsUnder(tools, node.path).map(moduleOf);
    }
    for (const child of node.children.values()) visit(child);
  };
  visit(buildTree(tools));
  return routes;
}
