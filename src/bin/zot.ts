/**
 * `zot`: the CLI entry. `--version` answers before anything else is loaded; every other
 * command loads the CLI surface, and heavy modules (MCP SDK, SQLite) only when used.
 */
const argv = process.argv.slice(2);

// A closed pipe (`zot schema | head -1`) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { CLI_VERSION } = await import('../core/version.js');
  process.stdout.write(`${CLI_VERSION}\n`);
} else if (argv[0] === 'schema' && (await schemaFromManifest()) !== undefined) {
  // answered from the build-time manifest
} else {
  const [{ runCli }, { tools }] = await Promise.all([
    import('../surfaces/cli/main.js'),
    import('../tools/index.js'),
  ]);
  process.exitCode = await runCli({ argv, env: process.env, io: process, tools });
}

/** `zot schema` answered from dist/cli-manifest.json without loading the declarations. */
async function schemaFromManifest(): Promise<number | undefined> {
  const { fastSchema } = await import('../surfaces/cli/fast-schema.js');
  const code = fastSchema(
    argv.slice(1),
    process.env,
    process,
    new URL('../cli-manifest.json', import.meta.url),
  );
  if (code !== undefined) process.exitCode = code;
  return code;
}
