/**
 * Resources are declarations too: listed and read generically by the MCP surface. Then the
 * real `zotero://styles`: every style available offline, unpaged, as zotero_styles lists them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { defineResource, type ResourceDeclaration } from '../../../src/core/resource.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { buildMcpServer } from '../../../src/surfaces/mcp/server.js';
import { tools } from '../../../src/tools/index.js';
import { DEBIAN_LOCALES, DEBIAN_STYLES, debianStyle, startStyleServer } from '../../support/style-server.js';
import { connect, isolatedEnv } from './harness.js';

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

describe('zotero://styles', () => {
  const BUNDLED = ['apa', 'harvard-cite-them-right', 'vancouver'];
  let dir: string;
  let env: Record<string, string>;
  let requests: () => number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zoteus-styles-resource-'));
    const styleServer = await startStyleServer();
    closers.push(() => styleServer.close());
    requests = () => styleServer.log.length;
    env = {
      ZOTERO_DATA_DIR: join(dir, 'Zotero'),
      ZOT_CACHE_DIR: join(dir, 'cache'),
      ZOTEUS_STYLES_URL: styleServer.stylesUrl,
      ZOTEUS_LOCALES_URL: styleServer.localesUrl,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function read(extra: Record<string, string> = {}) {
    const mcp = await connect(tools, { ...env, ...extra });
    closers.push(mcp.close);
    const answer = await mcp.client.readResource({ uri: 'zotero://styles' });
    expect(answer.contents).toHaveLength(1);
    const first = answer.contents[0] as { uri: string; mimeType?: string; text: string };
    expect(first).toMatchObject({ uri: 'zotero://styles', mimeType: 'application/json' });
    return {
      mcp,
      data: JSON.parse(first.text) as Record<string, unknown> & { styles: Array<{ id: string }> },
    };
  }

  it('is listed among the resources', async () => {
    const mcp = await connect(tools, env);
    closers.push(mcp.close);
    const { resources } = await mcp.client.listResources();
    expect(resources.find((r) => r.uri === 'zotero://styles')).toEqual({
      uri: 'zotero://styles',
      name: 'styles',
      title: 'Citation styles available offline',
      description: expect.stringMatching(/^The CSL citation styles that work offline/),
      mimeType: 'application/json',
    });
  });

  it('on a fresh install: the bundled styles and locales, the default style and the repository, no network', async () => {
    const { data } = await read();
    expect(data).toEqual({
      styles: BUNDLED.map((id) => expect.objectContaining({ id, source: 'bundled', dependent: false })),
      totalResults: 3,
      defaultStyle: 'apa',
      repository: env.ZOTEUS_STYLES_URL,
      locales: ['de-DE', 'en-US', 'es-ES', 'fr-FR', 'nl-NL'].map((tag) => ({ tag, source: 'bundled' })),
    });
    expect((await read({ ZOTEUS_CITATION_STYLE: 'ieee' })).data.defaultStyle).toBe('ieee');
    expect(requests()).toBe(0);
  });

  it('holds every style available offline, unpaged: what zotero_styles gives page by page', async () => {
    // 150 of Debian's independent styles (not the bundled ids) and a dependent one, installed in
    // the Zotero data directory; a locale in the download cache.
    const styles = join(dir, 'Zotero', 'styles');
    mkdirSync(styles, { recursive: true });
    const files = readdirSync(DEBIAN_STYLES)
      .filter((name) => name.endsWith('.csl') && !BUNDLED.includes(name.slice(0, -4)))
      .slice(0, 150);
    for (const name of files) copyFileSync(join(DEBIAN_STYLES, name), join(styles, name));
    copyFileSync(debianStyle('ains')!, join(styles, 'ains.csl'));
    const locales = join(dir, 'cache', 'csl', 'locales');
    mkdirSync(locales, { recursive: true });
    copyFileSync(join(DEBIAN_LOCALES, 'locales-pt-BR.xml'), join(locales, 'locales-pt-BR.xml'));

    const { mcp, data } = await read();
    expect(data.totalResults).toBe(154);
    expect(data.styles).toHaveLength(154);
    expect(Object.keys(data).sort()).toEqual([
      'defaultStyle',
      'locales',
      'repository',
      'styles',
      'totalResults',
    ]);
    expect(data.styles.find((s) => s.id === 'ains')).toEqual({
      id: 'ains',
      title: 'AINS',
      source: 'installed',
      dependent: true,
      parent: 'thieme-german',
      class: 'in-text',
      citationFormat: 'numeric',
      defaultLocale: 'de-DE',
    });
    expect(data.locales).toContainEqual({ tag: 'pt-BR', source: 'cache' });

    // The tool pages the same list (100 at most a page): its pages put together are the resource.
    const call = async (args: Record<string, unknown>) =>
      (await mcp.client.callTool({ name: 'zotero_styles', arguments: args })).structuredContent as Record<
        string,
        unknown
      > & { styles: unknown[]; nextStart?: number };
    const first = await call({ limit: 100 });
    expect(first.nextStart).toBe(100);
    const second = await call({ start: 100, limit: 100 });
    expect(second.nextStart).toBeUndefined();
    expect([...first.styles, ...second.styles]).toEqual(data.styles);
    for (const field of ['totalResults', 'defaultStyle', 'repository', 'locales'])
      expect(data[field], field).toEqual(first[field]);
    expect(requests()).toBe(0);
  });
});
