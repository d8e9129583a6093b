/**
 * The world of the item tool tests: the Zotero test server (alice's library `users/1`, keys
 * and groups of `test/core/library/world.ts`) plus the local resolver fakes, with helpers to
 * run the CLI and to read the request log.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AnyTool, Deps, ProgressEvent } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { runZot, type RunResult } from '../../support/cli.js';
import { startResolverFakes, type FakeResolvers } from '../../support/resolvers/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { ALICE, KEY, startWorld, type World } from '../../core/library/world.js';

export const LIB = `users/${ALICE}`;

export interface ItemsWorld {
  world: World;
  fakes: FakeResolvers;
  /** Env for the CLI: sandbox, test server, KEY, resolver fakes, plus `extra`. */
  env(extra?: Record<string, string | undefined>): Record<string, string>;
  zot(args: string[], extra?: Record<string, string | undefined>, stdin?: string): Promise<RunResult>;
  deps(options?: { env?: Record<string, string | undefined>; progress?: ProgressEvent[] }): Deps;
  /** `METHOD /path` of every request the Zotero server saw (the key check included). */
  requests(): string[];
  /** Requests other than the key check and the schema refresh. */
  work(): string[];
  close(): Promise<void>;
}

export async function startItemsWorld(): Promise<ItemsWorld> {
  const world = await startWorld();
  const fakes = await startResolverFakes();
  const env = (extra: Record<string, string | undefined> = {}) => world.env({ ...fakes.env(), ...extra });
  return {
    world,
    fakes,
    env,
    zot: (args, extra = {}, stdin) =>
      runZot(args, { env: env(extra), ...(stdin !== undefined ? { stdin } : {}) }),
    deps: (options = {}) => {
      const deps = world.deps({ env: { ...fakes.env(), ...options.env } });
      const events = options.progress;
      return events ? { ...deps, progress: (e: ProgressEvent) => void events.push(e) } : deps;
    },
    requests: () => world.server.log.map((e) => `${e.method} ${e.path}`),
    work: () =>
      world.server.log
        .filter((e) => e.path !== '/keys/current' && e.path !== '/schema')
        .map((e) => `${e.method} ${e.path}`),
    close: async () => {
      await fakes.close();
      await world.close();
    },
  };
}

/** An MCP client on a server built from the one tool list, pointed at the world. */
export async function mcpOf(w: ItemsWorld, extra: Record<string, string> = {}) {
  const mcp = await connect(tools as readonly AnyTool[], {
    ZOTERO_API_URL: w.world.server.url,
    ZOTERO_API_KEY: KEY,
    ...w.fakes.env(),
    ...extra,
  });
  return {
    ...mcp,
    call: async (name: string, args: Record<string, unknown>) =>
      (await mcp.client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

/** The envelope of a CLI run, typed loosely for assertions. */
export type Envelope = {
  ok: boolean | 'partial';
  data: Record<string, unknown> & { failed?: unknown[] };
  error: {
    code: string;
    message: string;
    retryable: boolean;
    hint?: string;
    field?: string;
    failed?: unknown[];
  };
  meta: Record<string, unknown>;
  next?: string[];
  dry_run?: boolean;
};

export function envelope(r: RunResult): Envelope {
  return r.json() as unknown as Envelope;
}

/** NDJSON progress events from stderr. */
export function progressLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
