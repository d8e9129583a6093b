/**
 * Builds the `deps` a handler receives. Surfaces call this once per process (MCP) or
 * per invocation (CLI); everything stateful hangs off the returned object.
 */
import type { Config } from './config.js';
import type { UpstreamObserver } from './http/observe.js';
import { configSecrets, createRedactor, type Redactor } from './redact.js';
import type { Clock, Deps, Logger, ProgressEvent, ServiceRegistry } from './tool.js';
import { freshWriteIds, type WriteIds } from './writes/ids.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Services created on first use and shared for the life of the deps (a client, a store). */
export function createServiceRegistry(): ServiceRegistry {
  const services = new Map<string, Promise<unknown>>();
  return {
    get<T>(name: string, create: () => T | Promise<T>): Promise<T> {
      let found = services.get(name);
      if (!found) {
        found = Promise.resolve().then(create);
        services.set(name, found);
      }
      return found as Promise<T>;
    },
    async close() {
      const all = [...services.values()];
      services.clear();
      for (const service of all) {
        const value = (await service.catch(() => undefined)) as { close?: () => unknown } | undefined;
        if (value && typeof value.close === 'function') await value.close();
      }
    },
  };
}

export interface DepsOptions {
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  version: string;
  surface: Deps['surface'];
  clock?: Clock;
  /** Where prose diagnostics go (already redacted when called). */
  writeLog?: (line: string, fields?: { level: 'warn' | 'debug' }) => void;
  progress?: (event: ProgressEvent) => void;
  services?: ServiceRegistry;
  debug?: boolean;
  /** The request's create ids (from its idempotency record); fresh ones otherwise. */
  writeIds?: WriteIds;
  /** Told of the Zotero Web API's answers and waits (a server's metrics). */
  upstream?: UpstreamObserver;
}

export function createDeps(options: DepsOptions): Deps {
  const redact: Redactor = createRedactor(configSecrets(options.config));
  const write = options.writeLog ?? (() => {});
  const log: Logger = {
    warn: (message) => write(redact(message), { level: 'warn' }),
    debug: (message) => {
      if (options.debug) write(redact(message), { level: 'debug' });
    },
  };
  return {
    config: options.config,
    env: options.env,
    clock: options.clock ?? systemClock,
    redact,
    log,
    progress: options.progress ?? (() => {}),
    surface: options.surface,
    lifetime: options.surface === 'cli' ? 'call' : 'server',
    version: options.version,
    services: options.services ?? createServiceRegistry(),
    writeIds: options.writeIds ?? freshWriteIds(),
    ...(options.upstream ? { upstream: options.upstream } : {}),
  };
}
