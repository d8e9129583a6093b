/**
 * `zot`: the CLI entry. `--version` (with or without `--json`) answers before anything else
 * is loaded; `zot schema` answers from the build-time manifest; a command of a tool loads
 * that tool's declaration only (the manifest says which modules it needs); anything else
 * loads every declaration. Heavy modules (MCP SDK, SQLite) load only when used.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { AnyTool, GroupDeclaration } from '../core/tool.js';
import type { ParamsTable } from '../surfaces/cli/params.js';
import type { CommandRefs } from '../surfaces/cli/refs.js';

/** `true` in the CommonJS bundle (scripts/bundle-cli.mjs defines it); absent in dist/. */
declare const ZOTEUS_BUNDLE: boolean | undefined;

const argv = process.argv.slice(2);
const manifestUrl = new URL('../cli-manifest.json', import.meta.url);
// The manifest without the `zot schema` tree, which no other command needs.
const startUrl = new URL('../cli-start.json', import.meta.url);
// The bundle's tool modules are required: V8's code cache (surfaces/cli/compile-cache.ts)
// serves require() only. The compiled ES modules of dist/ are imported.
const requireTool = typeof ZOTEUS_BUNDLE !== 'undefined' ? createRequire(import.meta.url) : undefined;

// A closed pipe (`zot schema | head -1`) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const isVersion = (a: string) => a === '--version' || a === '-V';

async function main(): Promise<void> {
  // `--json` changes nothing here: the CLI prints the bare version either way.
  if (argv.some(isVersion) && argv.every((a) => isVersion(a) || a === '--json')) {
    const { CLI_VERSION } = await import('../core/version.js');
    process.stdout.write(`${CLI_VERSION}\n`);
    return;
  }
  if (argv[0] === 'schema' && (await schemaFromManifest()) !== undefined) return; // from the manifest
  const list = () => import('../tools/index.js');
  const allTools = async () => (await list()).tools;
  // Before any declaration builds its schemas: zod reads some settings when a schema is made.
  (await import('../surfaces/cli/one-shot.js')).configureOneShotProcess();
  const [{ runCli }, known] = await Promise.all([import('../surfaces/cli/main.js'), fromManifest()]);
  process.exitCode = await runCli({
    argv,
    env: process.env,
    io: process,
    ...(known.params ? { params: known.params } : {}),
    ...(known.commands ? { commands: known.commands } : {}),
    groups: known.groups ?? (await list()).groups,
    ...(known.tools ? { tools: known.tools, allTools } : { tools: await allTools() }),
  });
}

// No top-level await: the bundle is CommonJS (scripts/bundle-cli.mjs).
void main();

/** `zot schema` answered from dist/cli-manifest.json without loading the declarations. */
async function schemaFromManifest(): Promise<number | undefined> {
  const { fastSchema } = await import('../surfaces/cli/fast-schema.js');
  const code = fastSchema(argv.slice(1), process.env, process, manifestUrl);
  if (code !== undefined) process.exitCode = code;
  return code;
}

/**
 * What the build-time manifest tells this command: the declarations it needs (none when it
 * needs them all) and every command's parameters; nothing when there is no usable manifest.
 */
async function fromManifest(): Promise<{
  tools?: AnyTool[];
  params?: ParamsTable;
  commands?: CommandRefs;
  groups?: GroupDeclaration[];
}> {
  const [{ readStartManifest }, { modulesFor }] = await Promise.all([
    import('../surfaces/cli/manifest.js'),
    import('../surfaces/cli/fast-start.js'),
  ]);
  const manifest = readStartManifest(startUrl);
  if (!manifest) return {};
  const modules = modulesFor(manifest.modules, argv);
  const { params, commands, groups } = manifest;
  if (!modules) return { params, commands, groups };
  try {
    const loaded = await Promise.all(modules.map(loadModule));
    return { tools: loaded.map((m) => m.default), params, commands, groups };
  } catch {
    return {}; // a manifest out of step with dist/: the whole list still answers
  }
}

/** A tool module by its path under dist/ (or dist/bundle/). */
async function loadModule(path: string): Promise<{ default: AnyTool }> {
  const url = new URL(`../${path}`, import.meta.url);
  // dist/'s ES modules are imported. In the bundle this line is dead code (ZOTEUS_BUNDLE), which
  // the bundler drops: a bundle file with an import() is compiled by Node, outside the code cache.
  if (typeof ZOTEUS_BUNDLE === 'undefined') return (await import(url.href)) as { default: AnyTool };
  return requireTool!(fileURLToPath(url)) as { default: AnyTool };
}
