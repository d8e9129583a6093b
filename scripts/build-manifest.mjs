#!/usr/bin/env node
/**
 * Writes dist/cli-manifest.json from the compiled tool declarations: the `zot schema` tree,
 * so `zot schema` can answer without loading zod and every tool module (start-up budget:
 * 3.5x `node -e 0`); per command path the tool modules it needs, so `zot read KEY`
 * loads one declaration instead of all; and each command's parameters, so no process derives
 * them from the zod schemas again; and each tool's commands, so a message that refers to another
 * tool names its command; and the help of the CLI groups, which a command's tree needs without
 * loading tools/index.js. It is derived, never edited: `npm run build`
 * rewrites it, and a test checks it equals the live tree. dist/cli-start.json is the same
 * without the schema tree: what a command reads at start.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildTree, schemaNode } from '../dist/surfaces/cli/tree.js';
import { paramsTable } from '../dist/surfaces/cli/params.js';
import { moduleRoutes } from '../dist/surfaces/cli/module-routes.js';
import { cliRefRenderer, commandRefs } from '../dist/surfaces/cli/refs.js';
import { treeSpeaker } from '../dist/surfaces/cli/cli-words.js';
import { groups, tools } from '../dist/tools/index.js';
import { CLI_VERSION } from '../dist/core/version.js';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Which dist module declares each tool: found by importing every module under dist/tools that
 * src/tools still has (tsc leaves the output of a moved or deleted source behind, and it may no
 * longer load against the modules it imported).
 */
async function toolModules() {
  const found = new Map();
  const src = fileURLToPath(new URL('../src/tools/', import.meta.url));
  const files = readdirSync(`${dist}tools`, { recursive: true }).filter(
    (f) => f.endsWith('.js') && existsSync(`${src}${f.slice(0, -'.js'.length)}.ts`),
  );
  for (const file of files.sort()) {
    const module = await import(pathToFileURL(`${dist}tools/${file}`).href);
    if (tools.includes(module.default)) found.set(module.default, `tools/${file.split('\\').join('/')}`);
  }
  return (tool) => {
    const path = found.get(tool);
    if (!path) throw new Error(`No module under dist/tools has ${tool.name} as its default export`);
    return path;
  };
}

const tree = buildTree(tools, undefined, groups);
const manifest = {
  cli_version: CLI_VERSION,
  // Help texts in the CLI's words, as `zot schema` gives them without the manifest.
  schema: schemaNode(tree, treeSpeaker(tree, cliRefRenderer(commandRefs(tools)))),
  modules: moduleRoutes(tools, await toolModules()),
  params: paramsTable(tools),
  commands: commandRefs(tools),
  groups,
};
writeFileSync(`${dist}cli-manifest.json`, `${JSON.stringify(manifest)}\n`);
// What every command reads at start (src/bin/zot.ts): the same without the `zot schema` tree,
// more than half of the manifest, which only `zot schema` needs (~1 ms of JSON.parse, 0.4 MB).
const start = { ...manifest };
delete start.schema;
writeFileSync(`${dist}cli-start.json`, `${JSON.stringify(start)}\n`);
