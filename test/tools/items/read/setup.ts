/**
 * The worlds of the read-tool tests: the sample `zotero.sqlite` (no API key: the router reads
 * the desktop's database) and the Web API test server (a key, no desktop), with deps built the
 * way the surfaces build them, the CLI as a subprocess and an MCP client.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { loadConfig } from '../../../../src/core/config.js';
import { createDeps } from '../../../../src/core/deps.js';
import type { AnyTool, Deps, ProgressEvent } from '../../../../src/core/tool.js';
import { CLI_VERSION } from '../../../../src/core/version.js';
import { tools } from '../../../../src/tools/index.js';
import { runZot, sandbox, type RunResult } from '../../../support/cli.js';
import { buildSampleLibrary, SAMPLE_KEYS } from '../../../support/zotero-sqlite/index.js';
import { connect } from '../../../surfaces/mcp/harness.js';

export { SAMPLE_KEYS };
export const SAMPLE_USER = `users/${SAMPLE_KEYS.user.userID}`;
export const I = SAMPLE_KEYS.user.items;
export const C = SAMPLE_KEYS.user.collections;

/** Nothing listens on port 9: no test reaches a real desktop app or the internet. */
const NOWHERE = 'http://127.0.0.1:9';

export interface Sample {
  dir: string;
  dataDir: string;
  env(extra?: Record<string, string | undefined>): Record<string, string>;
  deps(options?: {
    env?: Record<string, string | undefined>;
    progress?: ProgressEvent[];
    surface?: Deps['surface'];
  }): Deps;
  zot(args: string[], extra?: Record<string, string | undefined>): Promise<RunResult>;
  mcp(extra?: Record<string, string>): Promise<Mcp>;
  close(): Promise<void>;
}

export interface Mcp {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  listTools(): Promise<string[]>;
  close(): Promise<void>;
}

function clean(all: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) if (v !== undefined) out[k] = v;
  return out;
}

/** Deps as a surface builds them, from an environment. */
export function depsFor(
  env: Record<string, string>,
  options: { progress?: ProgressEvent[]; surface?: Deps['surface'] } = {},
): Deps {
  const events = options.progress;
  return createDeps({
    config: loadConfig(env),
    env,
    version: CLI_VERSION,
    surface: options.surface ?? 'mcp',
    ...(events ? { progress: (e: ProgressEvent) => void events.push(e) } : {}),
  });
}

export async function mcpClient(env: Record<string, string>): Promise<Mcp> {
  const mcp = await connect(tools as readonly AnyTool[], env);
  return {
    call: async (name, args) => (await mcp.client.callTool({ name, arguments: args })) as CallToolResult,
    listTools: async () => (await mcp.client.listTools()).tools.map((t) => t.name),
    close: () => mcp.close(),
  };
}

/** The sample library in a sandbox's Zotero data directory; no API key. */
export async function startSample(): Promise<Sample> {
  const box = sandbox();
  const dataDir = box.env.ZOTERO_DATA_DIR as string;
  await buildSampleLibrary(join(dataDir, 'zotero.sqlite'));
  const env = (extra: Record<string, string | undefined> = {}) =>
    clean({ ...box.env, ZOTEUS_LOCAL_API_URL: NOWHERE, ZOTERO_API_URL: NOWHERE, ...extra });
  const opened: Deps[] = [];
  return {
    dir: box.dir,
    dataDir,
    env,
    deps: (options = {}) => {
      const deps = depsFor(env(options.env), options);
      opened.push(deps);
      return deps;
    },
    zot: (args, extra = {}) => runZot(args, { env: env(extra) }),
    mcp: (extra = {}) => mcpClient({ ZOTERO_DATA_DIR: dataDir, ZOTEUS_LOCAL_API_URL: NOWHERE, ...extra }),
    close: async () => {
      for (const d of opened) await d.services.close();
      box.cleanup();
    },
  };
}

/** The structured output of an MCP result, typed loosely. */
export function structured<T = Record<string, unknown>>(r: CallToolResult): T {
  return r.structuredContent as T;
}

export function texts(r: CallToolResult): string[] {
  return r.content.map((c) => (c as { text: string }).text);
}

export type Envelope = {
  ok: boolean;
  data: Record<string, unknown>;
  error: { code: string; message: string; hint?: string; field?: string; retryable: boolean };
  meta: Record<string, unknown>;
};

export const envelope = (r: RunResult): Envelope => r.json() as unknown as Envelope;

/** NDJSON lines of stderr (progress events). */
export function stderrEvents(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
