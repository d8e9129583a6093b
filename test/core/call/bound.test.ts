/** The pipeline's last bound: one huge field cannot make an answer no client can take. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundOutput, OUTPUT_BUDGET } from '../../../src/core/call/bound.js';
import type { AnyTool } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { KEY, startWorld, type World } from '../library/world.js';
import { connect } from '../../surfaces/mcp/harness.js';

describe('boundOutput', () => {
  it('leaves an output that fits as it is (the same object)', () => {
    const small = { title: 'x'.repeat(1000), items: [{ key: 'ABCD2345' }] };
    expect(boundOutput(small)).toBe(small);
  });

  it('cuts the longest strings until the output fits, saying what was cut, keeping everything else', () => {
    const big = {
      key: 'ABCD2345',
      title: 't'.repeat(3_000_000),
      creators: [{ name: 'n'.repeat(2_000_000) }],
      n: 3,
    };
    const out = boundOutput(big);
    expect(JSON.stringify(out).length).toBeLessThanOrEqual(OUTPUT_BUDGET);
    expect(out.key).toBe('ABCD2345');
    expect(out.n).toBe(3);
    expect(out.title).toMatch(/^t+… \[[\d,]+ more characters cut: the answer must stay under 100 KB\]$/);
    expect(out.creators[0]?.name).toMatch(/more characters cut/);
    expect(big.title).toHaveLength(3_000_000); // the input is not changed
  });
});

describe('an item with a 3 MB title and a 2 MB creator, over MCP', () => {
  let world: World;
  let key: string;
  beforeAll(async () => {
    world = await startWorld();
    [key] = world.server.library('users/1').addItems([
      {
        title: 'T'.repeat(3_000_000),
        creators: [{ creatorType: 'author', lastName: 'L'.repeat(2_000_000), firstName: 'A' }],
      },
    ]) as [string];
  });
  afterAll(() => world.close());

  it.each([
    ['zotero_get_item', () => ({ item_key: key })],
    ['zotero_summarize', () => ({ item_keys: [key] })],
    ['zotero_search_items', () => ({})],
    ['zotero_sync', () => ({ since: 0 })],
  ])('%s answers within the message bound', async (name, args) => {
    const mcp = await connect(tools as readonly AnyTool[], {
      ...world.env(),
      ZOTERO_API_URL: world.server.url,
      ZOTERO_API_KEY: KEY,
      ZOTEUS_LOCAL: 'off',
    });
    try {
      const r = (await mcp.client.callTool({ name, arguments: args() })) as CallToolResult;
      expect(r.isError, JSON.stringify(r.content).slice(0, 300)).toBeFalsy();
      expect(
        JSON.stringify(r).length,
        `structured ${JSON.stringify(r.structuredContent).length}, text ${JSON.stringify(r.content).length}`,
      ).toBeLessThanOrEqual(100_000);
    } finally {
      await mcp.close();
    }
  });
});
