/** Connects an SDK Client to a server built by the surface, in memory. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadConfig } from '../../../src/core/config.js';
import type { AnyTool } from '../../../src/core/tool.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { buildMcpServer } from '../../../src/surfaces/mcp/server.js';

/** An environment that reads nothing of the developer's machine. */
export function isolatedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const root = mkdtempSync(join(tmpdir(), 'zoteus-mcp-'));
  return {
    HOME: root,
    ZOT_CONFIG_DIR: join(root, 'config'),
    ZOT_CACHE_DIR: join(root, 'cache'),
    ZOTEUS_DATA_DIR: join(root, 'data'),
    ZOTERO_DATA_DIR: join(root, 'Zotero'),
    // Nothing listens on port 9: a test that forgets to point at its test server fails
    // with a network_error instead of reaching the internet.
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    // Nor may a developer's running Zotero answer a test's reads.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTEUS_CROSSREF_URL: 'http://127.0.0.1:9/crossref',
    ZOTEUS_DATACITE_URL: 'http://127.0.0.1:9/datacite',
    ZOTEUS_ARXIV_URL: 'http://127.0.0.1:9/arxiv',
    ZOTEUS_OPENLIBRARY_URL: 'http://127.0.0.1:9/openlibrary',
    ZOTEUS_LOC_URL: 'http://127.0.0.1:9/lcdb',
    ZOTEUS_STYLES_URL: 'http://127.0.0.1:9/styles',
    ZOTEUS_LOCALES_URL: 'http://127.0.0.1:9/locales',
    // Every tool: the tests of a tool reach it whatever the lean default (toolsets.test.ts tests that).
    ZOTEUS_TOOLSETS: 'all',
    ...extra,
  };
}

export async function connect(tools: readonly AnyTool[], extraEnv: Record<string, string> = {}) {
  const env = isolatedEnv(extraEnv);
  const server = buildMcpServer({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  const client = new Client({ name: 'zoteus-test', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return {
    client,
    server,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
