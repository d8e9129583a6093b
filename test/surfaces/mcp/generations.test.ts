/**
 * Both generations of the protocol against the same declarations, through the SDKs' own
 * clients: a stateless 2026-07-28 client (SDK v2, pinned: no `initialize`, the `_meta`
 * envelope on every request) and an initialize-based one (SDK 1.32: 2025-11-25, a session on
 * HTTP), over Streamable HTTP and over stdio (the built binary). The same calls answer with
 * the same bytes; what differs is only what the revisions define differently: the request id
 * (one per request), the SDK's `serverInfo` stamp and the lists' cache hints (2026-07-28 only).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { REQUEST_ID_META_KEY } from '../../../src/surfaces/mcp/protocol.js';
import { createCatalogue, createServer, LIST_CACHE_HINT } from '../../../src/surfaces/mcp/server.js';
import { startHttp, type HttpHandle } from '../../../src/surfaces/mcp/transports.js';
import { tools } from '../../../src/tools/index.js';
import { fixtureTools } from './fixtures.js';
import { isolatedEnv } from './harness.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../../../dist/bin/zoteus.js', import.meta.url));

/** What both clients can do; each SDK's own types stay behind it. */
interface AnyClient {
  request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

function modern(client: ModernClient): AnyClient {
  return {
    request: async (method, params) => {
      switch (method) {
        case 'tools/list':
          return (await client.listTools()) as Record<string, unknown>;
        case 'tools/call':
          return (await client.callTool(
            params as { name: string; arguments?: Record<string, unknown> },
          )) as Record<string, unknown>;
        case 'prompts/list':
          return (await client.listPrompts()) as Record<string, unknown>;
        case 'prompts/get':
          return (await client.getPrompt(params as { name: string })) as Record<string, unknown>;
        case 'resources/list':
          return (await client.listResources()) as Record<string, unknown>;
        default:
          throw new Error(method);
      }
    },
    close: () => client.close(),
  };
}

function legacy(client: LegacyClient): AnyClient {
  return {
    request: async (method, params) => {
      switch (method) {
        case 'tools/list':
          return (await client.listTools()) as Record<string, unknown>;
        case 'tools/call':
          return (await client.callTool(params as { name: string })) as Record<string, unknown>;
        case 'prompts/list':
          return (await client.listPrompts()) as Record<string, unknown>;
        case 'prompts/get':
          return (await client.getPrompt(params as { name: string })) as Record<string, unknown>;
        case 'resources/list':
          return (await client.listResources()) as Record<string, unknown>;
        default:
          throw new Error(method);
      }
    },
    close: () => client.close(),
  };
}

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

/** A result as both revisions define it alike: the request id, the SDK's stamp and cache hints set apart. */
function common(result: Record<string, unknown>): {
  rest: string;
  requestId: unknown;
  serverInfo: unknown;
  cache: unknown;
} {
  const { _meta, ttlMs, cacheScope, resultType: _resultType, ...rest } = result;
  const meta = { ...(_meta as Record<string, unknown> | undefined) };
  const requestId = meta[REQUEST_ID_META_KEY];
  const serverInfo = meta[SERVER_INFO];
  delete meta[REQUEST_ID_META_KEY];
  delete meta[SERVER_INFO];
  const kept = Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
  return {
    rest: JSON.stringify(kept),
    requestId,
    serverInfo,
    cache: ttlMs === undefined && cacheScope === undefined ? undefined : { ttlMs, cacheScope },
  };
}

/** The same requests, each answered by both clients. */
const REQUESTS: Array<[string, Record<string, unknown> | undefined]> = [
  ['tools/list', undefined],
  ['prompts/list', undefined],
  ['resources/list', undefined],
  ['tools/call', { name: 'zotero_whoami', arguments: {} }],
  ['tools/call', { name: 'zotero_whoami', arguments: { bogus: 1 } }],
  ['prompts/get', { name: 'zotero-evidence-table', arguments: { question: 'Q' } }],
];
const LISTS = new Set(['tools/list', 'prompts/list', 'resources/list']);

async function compare(
  stateless: AnyClient,
  initialized: AnyClient,
  extra: typeof REQUESTS = [],
): Promise<void> {
  for (const [method, params] of [...REQUESTS, ...extra]) {
    const a = common(await stateless.request(method, params));
    const b = common(await initialized.request(method, params));
    expect(a.rest, `${method} ${JSON.stringify(params)}`).toBe(b.rest);
    for (const id of [a.requestId, b.requestId]) expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(a.requestId).not.toBe(b.requestId);
    expect(a.serverInfo).toMatchObject({ name: 'zoteus', version: CLI_VERSION });
    expect(b.serverInfo).toBeUndefined();
    // Cache hints are 2026-07-28's; the older revisions have no such fields.
    expect(a.cache).toEqual(LISTS.has(method) ? LIST_CACHE_HINT : undefined);
    expect(b.cache).toBeUndefined();
  }
}

describe('Streamable HTTP: a stateless 2026-07-28 client and an initialize-based one', () => {
  let handle: HttpHandle;
  const log: string[] = [];
  beforeAll(async () => {
    const env = isolatedEnv();
    const catalogue = createCatalogue({
      tools: [...tools, ...fixtureTools],
      config: loadConfig(env),
      env,
      version: CLI_VERSION,
      writeLog: (line) => log.push(line),
    });
    handle = await startHttp(() => createServer(catalogue), { port: 0, log: (line) => log.push(line) });
  });
  afterAll(() => handle.close());

  it('answer the same calls with the same bytes, and the log names each revision', async () => {
    const a = new ModernClient({ name: 'modern-http', version: '0' }, PINNED);
    await a.connect(new ModernHttp(new URL(handle.url)));
    const legacyTransport = new LegacyHttp(new URL(handle.url));
    const b = new LegacyClient({ name: 'legacy-http', version: '0' });
    await b.connect(legacyTransport);
    try {
      expect(a.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(legacyTransport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(handle.sessions()).toBe(1);
      await compare(modern(a), legacy(b), [
        ['tools/call', { name: 'zotero_fixture_not_found', arguments: {} }],
        ['tools/call', { name: 'zotero_fixture_partial', arguments: {} }],
      ]);
      const lines = log.join('\n');
      expect(lines).toMatch(
        /zoteus: mcp 2026-07-28 http tools\/call zotero_whoami: ok in \d+ ms \(request_id [0-9a-f]{12}\)/,
      );
      expect(lines).toMatch(/zoteus: mcp 2025-11-25 http tools\/call zotero_whoami: ok in \d+ ms/);
      expect(lines).toMatch(/zoteus: mcp 2026-07-28 http tools\/call zotero_whoami: validation_error/);
    } finally {
      await a.close();
      await legacyTransport.terminateSession();
      await b.close();
    }
    expect(handle.sessions()).toBe(0);
  });

  it('the SDK v2 client negotiating on its own picks 2026-07-28; left at its default it initializes', async () => {
    const auto = new ModernClient({ name: 'auto', version: '0' }, { versionNegotiation: { mode: 'auto' } });
    await auto.connect(new ModernHttp(new URL(handle.url)));
    const plain = new ModernClient({ name: 'plain', version: '0' });
    await plain.connect(new ModernHttp(new URL(handle.url)));
    try {
      expect(auto.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(plain.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const x = common(
        (await auto.callTool({ name: 'zotero_whoami', arguments: {} })) as Record<string, unknown>,
      );
      const y = common(
        (await plain.callTool({ name: 'zotero_whoami', arguments: {} })) as Record<string, unknown>,
      );
      expect(x.rest).toBe(y.rest);
    } finally {
      await auto.close();
      await plain.close();
    }
  });
});

const built = existsSync(bin);
describe.skipIf(!built)(
  'stdio (built zoteus): a stateless 2026-07-28 client and an initialize-based one',
  () => {
    it('answer the same calls with the same bytes, and stderr names each revision', async () => {
      const env = { PATH: process.env.PATH ?? '', ...isolatedEnv() };
      const modernTransport = new ModernStdio({
        command: process.execPath,
        args: [bin],
        env,
        cwd: root,
        stderr: 'pipe',
      });
      const legacyTransport = new LegacyStdio({
        command: process.execPath,
        args: [bin],
        env,
        cwd: root,
        stderr: 'pipe',
      });
      const stderr = { modern: '', legacy: '' };
      modernTransport.stderr?.on('data', (chunk) => (stderr.modern += String(chunk)));
      legacyTransport.stderr?.on('data', (chunk) => (stderr.legacy += String(chunk)));
      const a = new ModernClient({ name: 'modern-stdio', version: '0' }, PINNED);
      const b = new LegacyClient({ name: 'legacy-stdio', version: '0' });
      await Promise.all([a.connect(modernTransport), b.connect(legacyTransport)]);
      try {
        await compare(modern(a), legacy(b));
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
      await expect
        .poll(() => stderr.modern)
        .toMatch(/zoteus: mcp 2026-07-28 stdio tools\/call zotero_whoami: ok/);
      expect(stderr.legacy).toMatch(/zoteus: mcp 2025-11-25 stdio tools\/call zotero_whoami: ok/);
      expect(stderr.modern).not.toMatch(/2025-/);
      expect(stderr.legacy).not.toMatch(/2026-07-28/);
    }, 30_000);
  },
);
