/**
 * The `zoteus` binary: the MCP server over stdio (what MCP clients launch), or over
 * Streamable HTTP with `--http [--port N] [--host H]`. Same as `zot mcp`.
 * The shell shim `bin/zoteus` imports this module, so it runs on import.
 */
import { parseArgs } from 'node:util';
import { runMcp } from '../surfaces/mcp/run.js';
import { CLI_VERSION } from '../core/version.js';

const USAGE = `Usage: zoteus [--http] [--port N] [--host H]

Runs the Zoteus MCP server (zotero_* tools) over stdio, or over Streamable HTTP with --http
(default http://127.0.0.1:8765/mcp; loopback hosts only). Clients of the stateless 2026-07-28
revision and of the initialize-based 2025-11-25, 2025-06-18 and 2025-03-26 work on both; stderr
has one line per request naming the revision it used. Configuration comes from the environment
(ZOTERO_API_KEY, ZOTERO_LIBRARY_ID, ZOTEUS_READ_ONLY, ...; see \`zot config show\`); with --http
also ZOTEUS_HTTP_MAX_SESSIONS, ZOTEUS_HTTP_SESSION_IDLE_S and ZOTEUS_HTTP_ALLOWED_ORIGINS.`;

function usageError(message: string): number {
  process.stderr.write(`zoteus: validation_error: ${message}\nHint: Run \`zoteus --help\` for usage.\n`);
  return 3;
}

async function main(argv: string[]): Promise<number> {
  let values: { http?: boolean; port?: string; host?: string; help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        http: { type: 'boolean' },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }));
  } catch (error) {
    return usageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${CLI_VERSION}\n`);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
      return usageError(`--port must be an integer from 0 to 65535; got '${values.port}'.`);
    }
    port = Number(values.port);
  }
  if (!values.http && (port !== undefined || values.host !== undefined)) {
    return usageError('--port and --host apply only with --http.');
  }
  return runMcp({
    env: process.env,
    http: values.http === true,
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
  });
}

process.exitCode = await main(process.argv.slice(2));
