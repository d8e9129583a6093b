/**
 * Entry point of the MCP surface, shared by the `zoteus` binary and `zot mcp`: load the
 * configuration, build the server from the one tool list, run a transport until it stops.
 */
import type { Readable, Writable } from 'node:stream';
import { loadConfig, type Config } from '../../core/config.js';
import { createServiceRegistry } from '../../core/deps.js';
import { toZoteusError } from '../../core/errors.js';
import type { Env } from '../../core/paths.js';
import { configSecrets, createRedactor, envSecrets } from '../../core/redact.js';
import type { AnyTool, ServiceRegistry } from '../../core/tool.js';
import { CLI_VERSION } from '../../core/version.js';
import { tools as allTools } from '../../tools/index.js';
import type { Principal } from './auth/principal.js';
import { authSettings, type AuthSettings } from './auth/settings.js';
import type { Deployment } from './deployment.js';
import { httpSettings, type HttpSettings } from './http-settings.js';
import { createCatalogue, createServer, type McpCatalogue } from './server.js';
import { startHttp, startStdio } from './transports.js';
import { renderErrorRefs } from '../../core/call/refs.js';
import { mcpRefRenderer } from './refs.js';
import { createMetrics, logWriter, opsSettings, type LogWriter, type OpsSettings } from './ops.js';

/**
 * `runMcp(options): Promise<number>`: resolves with the process exit code once the server
 * has stopped (stdio: the client closed stdin; HTTP: `signal` aborted, or SIGINT/SIGTERM).
 *   `zot mcp`                       → runMcp({ env: process.env })
 *   `zot mcp --http --port N --host H` → runMcp({ env: process.env, http: true, port: N, host: H })
 * A configuration error or a refused host/port is written to stderr (code, message, Hint
 * line, naming the variable or option) and resolves with its exit code (3 for validation_error);
 * nothing is written to stdout, which belongs to the protocol under stdio. Every request
 * answered is one line on stderr: the revision it used, the transport, the method, the
 * outcome and its request id.
 */
export interface RunMcpOptions {
  env: Env;
  /** Streamable HTTP instead of stdio. */
  http?: boolean;
  /** HTTP port; default 8765 (DEFAULT_HTTP_PORT); 0 picks a free one. */
  port?: number;
  /** HTTP host; default 127.0.0.1. Beyond loopback only with sign-in configured (ZOTEUS_AUTH). */
  host?: string;
  /** The address clients reach the server at (overrides ZOTEUS_PUBLIC_URL). */
  publicUrl?: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Diagnostics and the listening URL; default process.stderr. */
  stderr?: Writable;
  /**
   * Stops the server (tests, or a caller with its own lifecycle), as SIGTERM/SIGINT do: over
   * HTTP gracefully, the requests in flight answered first (at most ZOTEUS_SHUTDOWN_GRACE_S).
   */
  signal?: AbortSignal;
  /** The declarations to serve; default the one list of `src/tools`. */
  tools?: readonly AnyTool[];
}

/** Catalogues kept for kinds of grant other than the server's own (read-only, toolsets named). */
const MAX_GRANT_CATALOGUES = 32;

function stopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    if (signal?.aborted) return done();
    signal?.addEventListener('abort', done);
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

export async function runMcp(options: RunMcpOptions): Promise<number> {
  const stderr = options.stderr ?? process.stderr;
  // Before the config is loaded only the environment knows the key; redact it regardless.
  let redact = createRedactor(envSecrets(options.env));
  const write = (text: string) => void stderr.write(`${text}\n`);
  // Text until the settings say otherwise (ZOTEUS_LOG_FORMAT, read with --http).
  let current: LogWriter = logWriter('text', () => redact, write);
  const writeLog: LogWriter = (line, fields) => current(line, fields);

  let config: Config;
  let settings: HttpSettings | undefined;
  let auth: AuthSettings | undefined;
  let ops: OpsSettings | undefined;
  const env: Env = options.publicUrl ? { ...options.env, ZOTEUS_PUBLIC_URL: options.publicUrl } : options.env;
  try {
    config = loadConfig(env);
    redact = redact.with(configSecrets(config));
    if (options.http) {
      ops = opsSettings(env);
      current = logWriter(ops.logFormat, () => redact, write);
      settings = httpSettings(env);
      auth = authSettings(env);
    }
  } catch (error) {
    return report(error);
  }

  // What the configuration serves is derived once; every connection, session or stateless
  // request gets a cheap server instance over it, and they all share one service registry.
  const services: ServiceRegistry = createServiceRegistry();
  // Per server process, over HTTP: /metrics (ops.ts).
  const metrics = options.http ? createMetrics() : undefined;
  const catalogueOf = (served: Config, toolsetsChosenBy: 'server' | 'grant' = 'server') =>
    createCatalogue({
      tools: options.tools ?? allTools,
      config: served,
      toolsetsChosenBy,
      env: options.env,
      version: CLI_VERSION,
      writeLog,
      services,
      ...(metrics ? { metrics } : {}),
    });
  const catalogue = catalogueOf(config);
  // A read-only grant is served as read-only mode is: only the tools that leave the library
  // unchanged are listed (the others are still refused by name, in the grant's words). A grant
  // naming toolsets is served those. One catalogue per kind of grant, made when first asked for
  // (there are few kinds: the access times the toolsets' choices that clients ask for).
  const grantCatalogues = new Map<string, McpCatalogue>();
  const catalogueFor = (principal: Principal): McpCatalogue => {
    const readOnly = principal.readOnly || config.readOnly;
    const toolsets = principal.toolsets ?? config.toolsets;
    if (readOnly === config.readOnly && principal.toolsets === undefined) return catalogue;
    const kind = JSON.stringify([readOnly, toolsets]);
    let found = grantCatalogues.get(kind);
    if (!found) {
      found = catalogueOf(
        { ...config, readOnly, ...(toolsets !== undefined ? { toolsets } : {}) },
        principal.toolsets !== undefined ? 'grant' : 'server',
      );
      // Bounded: grants naming ever new combinations of toolsets cannot grow the process.
      if (grantCatalogues.size >= MAX_GRANT_CATALOGUES)
        grantCatalogues.delete(grantCatalogues.keys().next().value as string);
      grantCatalogues.set(kind, found);
    }
    return found;
  };
  let deployment: Deployment | undefined;
  // With sign-in, each request runs as its tenant (deployment.ts); without, as this machine's user.
  const serve = async (context: { principal?: Principal } = {}) =>
    context.principal && deployment
      ? createServer(catalogueFor(context.principal), {
          tenant: {
            caller: `tenant-${context.principal.tenantId}`,
            deps: await deployment.tenantDeps(context.principal),
          },
        })
      : createServer(catalogue);

  try {
    if (!options.http) {
      const stdio = startStdio(serve, {
        ...(options.stdin ? { stdin: options.stdin } : {}),
        ...(options.stdout ? { stdout: options.stdout } : {}),
        log: writeLog,
      });
      options.signal?.addEventListener('abort', () => void stdio.stop());
      await stdio.closed;
      return 0;
    }
    if (auth) {
      const { openDeployment } = await import('./deployment.js');
      const { openStateDatabase } = await import('../../core/store/state.js');
      const state = await openStateDatabase(env, config);
      deployment = await openDeployment({ env, settings: auth, base: catalogue.deps, state }).catch(
        async (error: unknown) => {
          await state.db.close();
          throw error;
        },
      );
    }
    const opened = deployment;
    const handle = await startHttp(serve, {
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.host !== undefined ? { host: options.host } : {}),
      log: writeLog,
      ...(settings ? { settings } : {}),
      ...(opened ? { auth: opened.auth, ready: () => opened.ready(), sessionStore: opened.sessions } : {}),
      ...(metrics ? { metrics } : {}),
      ...(ops?.metricsToken ? { metricsToken: ops.metricsToken } : {}),
    });
    await stopped(options.signal);
    await handle.shutdown(ops?.shutdownGraceMs ?? 0);
    return 0;
  } catch (error) {
    return report(error);
  } finally {
    await deployment?.close();
    await services.close();
  }

  function report(error: unknown): number {
    const zerr = renderErrorRefs(toZoteusError(error), mcpRefRenderer);
    writeLog(`zoteus: ${zerr.code}: ${zerr.message}${zerr.hint ? `\nHint: ${zerr.hint}` : ''}`, {
      level: 'error',
    });
    return zerr.exitCode;
  }
}
