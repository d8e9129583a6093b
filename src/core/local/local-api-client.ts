/**
 * The Web API client pointed at the desktop's local API (local-api.ts): a module of its own, so
 * that the client loads only once a detection found the local API, never for a read of
 * zotero.sqlite.
 */
import type { Deps } from '../tool.js';
import { createZoteroClient, type FetchLike, type ZoteroClient } from '../zotero/index.js';

/** The Web API client pointed at the local API: no key, the configured timeout and retry budget. */
export function createLocalApiClient(
  deps: Pick<Deps, 'config' | 'clock' | 'redact' | 'log'>,
  url: string,
  options: { fetch?: FetchLike } = {},
): ZoteroClient {
  return createZoteroClient({
    apiUrl: url,
    apiKey: undefined,
    retryBudgetMs: deps.config.retryBudgetMs,
    timeoutMs: deps.config.timeoutMs,
    clock: deps.clock,
    redact: deps.redact,
    log: (line) => deps.log.debug(`local API: ${line}`),
    fetch: options.fetch,
  });
}
