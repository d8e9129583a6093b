/**
 * `zotero_schema` / `zot item-types` and `zotero_sync` / `zot sync --since` against the Zotero
 * test server, over MCP (both generations of the protocol) and as CLI subprocesses.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client as ModernClient, InMemoryTransport as ModernMemory } from '@modelcontextprotocol/client';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { createCatalogue, createServer } from '../../../src/surfaces/mcp/server.js';
import { tools } from '../../../src/tools/index.js';
import { runZot } from '../../support/cli.js';
import { connect, isolatedEnv } from '../../surfaces/mcp/harness.js';
import { ALICE, KEY, startWorld, type World } from '../../core/library/world.js';

const USER = `users/${ALICE}`;
const bundled = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../data/zotero-schema.json', import.meta.url)), 'utf8'),
) as { version: number; itemTypes: Array<{ itemType: string }> };

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(() => world.close());

const env = () => ({ ZOTERO_API_URL: world.server.url, ZOTERO_API_KEY: KEY });

/** A stateless 2026-07-28 client on a server over the surface, in memory. */
async function modernClient(): Promise<{ client: ModernClient; close(): Promise<void> }> {
  const e = isolatedEnv(env());
  const catalogue = createCatalogue({ tools, config: loadConfig(e), env: e, version: CLI_VERSION });
  const [a, b] = ModernMemory.createLinkedPair();
  const handle = serveStdio(() => createServer(catalogue), { transport: b });
  const client = new ModernClient(
    { name: 't', version: '0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(a);
  return {
    client,
    close: async () => {
      await client.close();
      await handle.close();
      await catalogue.close();
    },
  };
}

describe('zotero_schema', () => {
  it('is the server’s schema when it serves one, the bundled copy otherwise; one item type with item_type', async () => {
    const newer = { ...structuredClone(bundled), version: bundled.version + 1 };
    world.server.setSchema(newer);
    const mcp = await connect(tools, env());
    try {
      const all = (await mcp.client.callTool({ name: 'zotero_schema', arguments: {} })) as CallToolResult;
      expect(all.isError).toBeFalsy();
      const out = all.structuredContent as {
        version: number;
        source: string;
        itemTypes: Array<Record<string, unknown>>;
      };
      expect(out).toMatchObject({ version: bundled.version + 1, source: 'server' });
      expect(out.itemTypes.map((t) => t.itemType)).toEqual(bundled.itemTypes.map((t) => t.itemType));
      const one = (await mcp.client.callTool({
        name: 'zotero_schema',
        arguments: { item_type: 'bookSection' },
      })) as CallToolResult;
      const section = (one.structuredContent as typeof out).itemTypes;
      expect(section).toHaveLength(1);
      expect(section[0]!.fields).toContainEqual({ field: 'bookTitle', baseField: 'publicationTitle' });
      expect((section[0]!.creatorTypes as string[])[0]).toBe('author');
      const unknown = (await mcp.client.callTool({
        name: 'zotero_schema',
        arguments: { item_type: 'scroll' },
      })) as CallToolResult;
      expect(unknown._meta?.['zoteus/error']).toMatchObject({ code: 'not_found', field: 'item_type' });
      const typo = (await mcp.client.callTool({
        name: 'zotero_schema',
        arguments: { item_type: 'bok' },
      })) as CallToolResult;
      expect(typo._meta?.['zoteus/error']).toMatchObject({
        code: 'not_found',
        message: `There is no item type "bok" in Zotero's schema (did you mean 'book'?).`,
      });
      // Checked once: the answer is kept for a day.
      expect(world.server.log.filter((e) => e.path === '/schema')).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });

  it('zot item-types: the bundled copy when the server has none, without a key', async () => {
    const run = await runZot(['item-types', 'journalArticle'], {
      env: world.env({ ZOTERO_API_KEY: undefined }),
    });
    expect(run.code).toBe(0);
    const data = (
      run.json() as { data: { source: string; version: number; itemTypes: Array<{ itemType: string }> } }
    ).data;
    expect(data).toMatchObject({ source: 'bundled', version: bundled.version });
    expect(data.itemTypes.map((t) => t.itemType)).toEqual(['journalArticle']);
  });
});

describe('zotero_sync', () => {
  function seed() {
    const lib = world.server.library(USER);
    lib.addItems([{ title: 'Old' }]);
    const mark = lib.version;
    const [kept, gone] = lib.addItems([{ title: 'Kept', itemType: 'book' }, { title: 'Gone' }]) as [
      string,
      string,
    ];
    const [coll] = lib.addCollections([{ name: 'New shelf' }]) as [string];
    lib.deleteItem(gone);
    return { lib, mark, kept, gone, coll };
  }

  it('over MCP, both generations: the same changes since a version, deletions included, and the version to go on from', async () => {
    const { lib, mark, kept, gone, coll } = seed();
    const legacy = await connect(tools, env());
    const modern = await modernClient();
    try {
      const args = { since: mark };
      const a = (await legacy.client.callTool({ name: 'zotero_sync', arguments: args })) as CallToolResult;
      const b = (await modern.client.callTool({ name: 'zotero_sync', arguments: args })) as CallToolResult;
      expect(a.isError).toBeFalsy();
      expect(b.structuredContent).toEqual(a.structuredContent);
      const out = a.structuredContent as {
        backend: string;
        library: string;
        libraryVersion: number;
        changes: Array<Record<string, unknown>>;
        counts: Record<string, unknown>;
        totalResults: number;
        provenance: string;
      };
      expect(out).toMatchObject({
        backend: 'web',
        library: USER,
        libraryVersion: lib.version,
        totalResults: 3,
      });
      expect(out.changes).toEqual([
        {
          kind: 'item',
          change: 'modified',
          key: kept,
          version: expect.any(Number),
          itemType: 'book',
          title: 'Kept',
        },
        { kind: 'collection', change: 'modified', key: coll, version: expect.any(Number), name: 'New shelf' },
        { kind: 'item', change: 'deleted', key: gone },
      ]);
      expect(out.counts).toMatchObject({
        items: { modified: 1, deleted: 1 },
        collections: { modified: 1, deleted: 0 },
      });
      expect(out.provenance).toMatch(/data/);
      const text = (a.content[0] as { text: string }).text;
      expect(text).toMatch(
        new RegExp(
          `^${USER} since version ${mark}: 2 modified \\(1 items\\), 1 deleted; now at version ${lib.version}`,
        ),
      );
      // Paged.
      const page = (await legacy.client.callTool({
        name: 'zotero_sync',
        arguments: { since: mark, limit: 2 },
      })) as CallToolResult;
      expect(page.structuredContent).toMatchObject({ start: 0, nextStart: 2, totalResults: 3 });
      // From the version given: nothing since.
      const none = (await legacy.client.callTool({
        name: 'zotero_sync',
        arguments: { since: out.libraryVersion },
      })) as CallToolResult;
      expect(none.structuredContent).toMatchObject({ changes: [], totalResults: 0 });
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('zot sync --since VERSION prints the changes in one envelope; without a key it is auth_missing', async () => {
    const { mark, gone } = seed();
    const run = await runZot(['sync', '--since', String(mark), '--limit', '10'], { env: world.env() });
    expect(run.code).toBe(0);
    const data = (run.json() as { data: { changes: Array<{ key?: string; change: string }> } }).data;
    expect(data.changes.at(-1)).toEqual({ kind: 'item', change: 'deleted', key: gone });
    const missing = await runZot(['sync', '--since', '0'], { env: world.env({ ZOTERO_API_KEY: undefined }) });
    expect(missing.code).toBe(2);
    expect((missing.json() as { error: { code: string } }).error.code).toBe('auth_missing');
    const bad = await runZot(['sync', '--since', '-3'], { env: world.env() });
    expect(bad.code).toBe(3);
  });
});
