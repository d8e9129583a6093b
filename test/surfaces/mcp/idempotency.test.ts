/**
 * `idempotency_key` on MCP: the same semantics and store as the CLI's `--idempotency-key`,
 * scoped per tool (and per caller on a shared deployment).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { KEY, startWorld, type World } from '../../core/library/world.js';
import { connect } from './harness.js';

let world: World;
let mcp: Awaited<ReturnType<typeof connect>>;
beforeEach(async () => {
  world = await startWorld();
  mcp = await connect(tools as readonly AnyTool[], {
    ...world.env(),
    ZOTERO_API_URL: world.server.url,
    ZOTERO_API_KEY: KEY,
  });
});
afterEach(async () => {
  await mcp.close();
  await world.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
const errorOf = (r: CallToolResult) =>
  (r._meta as Record<string, { code: string; field?: string }>)['zoteus/error'];
const collections = () => [...world.server.library('users/1').collections.values()];

describe('idempotency_key over MCP', () => {
  it('every mutating tool publishes it, no read tool does', async () => {
    const listed = (await mcp.client.listTools()).tools;
    for (const tool of listed) {
      const declared = (tools as readonly AnyTool[]).find((t) => t.name === tool.name) as AnyTool;
      const has = Object.hasOwn(tool.inputSchema.properties ?? {}, 'idempotency_key');
      expect(has, tool.name).toBe(declared.tier !== 'read');
    }
  });

  it('a repeat replays the same result without a request; other arguments are conflict', async () => {
    const first = await call('zotero_manage_collections', {
      action: 'create',
      name: 'Once',
      idempotency_key: 'm1',
    });
    expect(first.isError).toBeFalsy();
    world.server.clearLog();
    const again = await call('zotero_manage_collections', {
      action: 'create',
      name: 'Once',
      idempotency_key: 'm1',
    });
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    expect(world.server.log).toEqual([]);
    expect(collections().filter((c) => c.name === 'Once')).toHaveLength(1);

    const other = await call('zotero_manage_collections', {
      action: 'create',
      name: 'Other',
      idempotency_key: 'm1',
    });
    expect(other.isError).toBe(true);
    expect(errorOf(other)).toMatchObject({ code: 'conflict', field: 'idempotency_key' });
    expect(world.server.log).toEqual([]);
  });

  it('scoped per tool: the same key on another tool is another request', async () => {
    await call('zotero_manage_collections', { action: 'create', name: 'Scoped', idempotency_key: 'same' });
    const note = await call('zotero_create_items', {
      items: [{ itemType: 'book', title: 'Scoped book' }],
      idempotency_key: 'same',
    });
    expect(note.isError).toBeFalsy();
  });

  it('a final error is replayed; a read tool refuses the argument; a bad key is validation_error', async () => {
    const missing = await call('zotero_manage_collections', {
      action: 'rename',
      collection_key: 'ZZZZ2345',
      name: 'x',
      idempotency_key: 'nf',
    });
    expect(errorOf(missing)?.code).toBe('not_found');
    world.server.clearLog();
    const replayed = await call('zotero_manage_collections', {
      action: 'rename',
      collection_key: 'ZZZZ2345',
      name: 'x',
      idempotency_key: 'nf',
    });
    expect(JSON.stringify(replayed)).toBe(JSON.stringify(missing));
    expect(world.server.log).toEqual([]);

    const read = await call('zotero_list_collections', { idempotency_key: 'r' });
    expect(errorOf(read)?.code).toBe('validation_error');
    const bad = await call('zotero_manage_collections', { action: 'create', name: 'y', idempotency_key: '' });
    expect(errorOf(bad)).toMatchObject({ code: 'validation_error', field: 'idempotency_key' });
    expect(world.server.log).toEqual([]);
  });

  it('a damaged store is named, never a bug, and nothing is written', async () => {
    mkdirSync(join(world.box.dir, 'cache'), { recursive: true });
    writeFileSync(join(world.box.dir, 'cache', 'idempotency.db'), 'garbage '.repeat(100));
    const r = await call('zotero_manage_collections', {
      action: 'create',
      name: 'Never',
      idempotency_key: 'd',
    });
    expect(r.isError).toBe(true);
    expect(errorOf(r)?.code).toBe('validation_error');
    expect((r.content[0] as { text: string }).text).toContain('idempotency.db');
    expect((r.content[0] as { text: string }).text).not.toMatch(/bug/i);
    expect(collections().filter((c) => c.name === 'Never')).toHaveLength(0);
  });
});
