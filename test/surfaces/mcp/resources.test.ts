/** Resources are declarations too: listed and read generically by the MCP surface. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { defineResource, type ResourceDeclaration } from '../../../src/core/resource.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { buildMcpServer } from '../../../src/surfaces/mcp/server.js';
import { isolatedEnv } from './harness.js';

const KEY = 'Zk3yS3cr3tAbCdEf12345678';
const fixtures: ResourceDeclaration[] = [
  defineResource({
    uri: 'zotero://fixture',
    name: 'fixture',
    title: 'Fixture',
    description: 'A JSON resource.',
    mimeType: 'application/json',
    read: async (deps) => ({ readOnly: deps.config.readOnly, rows: [1, 2] }),
  }),
  defineResource({
    uri: 'zotero://broken',
    name: 'broken',
    title: 'Broken',
    description: 'Fails, with the key in its message.',
    mimeType: 'application/json',
    read: async (deps) => {
      throw new ZoteusError('auth_invalid', `Key ${deps.config.apiKey} was refused.`, {
        hint: 'Check the key.',
      });
    },
  }),
];

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function open() {
  const env = isolatedEnv({ ZOTERO_API_KEY: KEY });
  const server = buildMcpServer({
    tools: [],
    resources: fixtures,
    config: loadConfig(env),
    env,
    version: CLI_VERSION,
  });
  const client = new Client({ name: 't', version: '0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

describe('MCP resources', () => {
  it('lists every declaration', async () => {
    const client = await open();
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      {
        uri: 'zotero://fixture',
        name: 'fixture',
        title: 'Fixture',
        description: 'A JSON resource.',
        mimeType: 'application/json',
      },
      {
        uri: 'zotero://broken',
        name: 'broken',
        title: 'Broken',
        description: 'Fails, with the key in its message.',
        mimeType: 'application/json',
      },
    ]);
  });

  it('reads a JSON resource as text', async () => {
    const client = await open();
    const result = await client.readResource({ uri: 'zotero://fixture' });
    expect(result.contents).toEqual([
      { uri: 'zotero://fixture', mimeType: 'application/json', text: '{"readOnly":false,"rows":[1,2]}' },
    ]);
  });

  it('an unknown resource is an error starting with not_found', async () => {
    const client = await open();
    await expect(client.readResource({ uri: 'zotero://nope' })).rejects.toThrow(
      /not_found: There is no resource zotero:\/\/nope\./,
    );
  });

  it('a failed read carries the code and never the key', async () => {
    const client = await open();
    const error = (await client
      .readResource({ uri: 'zotero://broken' })
      .catch((e: unknown) => e)) as Error & {
      data?: unknown;
    };
    expect(error.message).toMatch(/auth_invalid: Key \[REDACTED\] was refused\. Hint: Check the key\./);
    expect(JSON.stringify(error.data)).not.toContain(KEY);
    expect(error.message).not.toContain(KEY);
  });
});
