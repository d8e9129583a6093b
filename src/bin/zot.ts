/**
 * `zot`: the CLI entry. `--version` (with or without `--json`) answers before anything else
 * is loaded; `zot schema` answers from the build-time manifest; a command of a tool loads
 * that tool's declaration only (the manifest says which modules it needs); anything else
 * loads every declaration. Heavy modules (MCP SDK, SQLite) load only when used.
 */
import type { AnyTool } from '../core/tool.js';
import type { ParamsTable } from '../surfaces/cli/params.js';

const argv = process.argv.slice(2);
const manifestUrl = new URL('../cli-manifest.json', import.meta.url);

// A closed pipe (`zot schema | head -1`) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const isVersion = (a: string) => a === '--version' || a === '-V';
// `--json` changes nothing here: the CLI prints the bare version either way.
if (argv.some(isVersion) && argv.every((a) => isVersion(a) || a === '--json')) {
  const { CLI_VERSION } = await import('../core/version.js');
  process.stdout.write(`${CLI_VERSION}\n`);
} else if (argv[0] === 'schema' && (await schemaFromManifest()) !== undefined) {
  // answered from the build-time manifest
} else {
  const allTools = async () => (await import('../tools/index.js')).tools;
  // Before any declaration builds its schemas: zod reads some settings when a schema is made.
  (await import('../surfaces/cli/one-shot.js')).configureOneShotProcess();
  const [{ runCli }, known] = await Promise.all([import('../surfaces/cli/main.js'), fromManifest()]);
  process.exitCode = await runCli({
    argv,
    env: process.env,
    io: process,
    ...(known.params ? { params: known.params } : {}),
    ...(known.tools ? { tools: known.tools, allTools } : { tools: await allTools() }),
  });
}

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
async function fromManifest(): Promise<{ tools?: AnyTool[]; params?: ParamsTable }> {
  const [{ readManifest }, { modulesFor }] = await Promise.all([
    import('../surfaces/cli/manifest.js'),
    import('../surfaces/cli/fast-start.js'),
  ]);
  const manifest = readManifest(manifestUrl);
  if (!manifest) return {};
  const modules = modulesFor(manifest.modules, argv);
  if (!modules) return { params: manifest.params };
  try {
    const loaded = await Promise.all(
      modules.map((m) => import(new URL(`../${m}`, import.meta.url).href) as Promise<{ default: AnyTool }>),
    );
    return { tools: loaded.map((m) => m.default), params: manifest.params };
  } catch {
    return {}; // a manifest out of step with dist/: the whole list still answers
  }
}
