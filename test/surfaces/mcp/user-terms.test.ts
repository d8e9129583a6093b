/** MCP refusals name parameters and say what they accept (issue 16, point 11). */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tools } from '../../../src/tools/index.js';
import { connect } from './harness.js';

let open: Awaited<ReturnType<typeof connect>> | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function call(name: string, args: Record<string, unknown>) {
  open ??= await connect(tools);
  const r = (await open.client.callTool({ name, arguments: args })) as CallToolResult;
  expect(r.isError).toBe(true);
  return (r.content[0] as { text: string }).text;
}

describe('MCP validation in parameter names', () => {
  it('a missing parameter', async () => {
    expect(await call('zotero_get_item', {})).toBe(
      'validation_error: Invalid arguments for zotero_get_item: item_key is required: an 8-character Zotero item key (digits 2-9 and capital letters except O), e.g. "ABCD2345".\nHint: Check the arguments against the tool\'s inputSchema.',
    );
  });

  it('a number out of its bounds or not whole', async () => {
    expect(await call('zotero_search_items', { q: 'x', limit: 2.5 })).toMatch(
      /^validation_error: Invalid arguments for zotero_search_items: limit must be a whole number from 1 to 100 \(got 2\.5\)\.\n/,
    );
    expect(await call('zotero_search_items', { q: 'x', limit: '5' })).toMatch(
      /: limit must be a whole number from 1 to 100 \(got '5'\)\.\n/,
    );
  });

  it('an unknown parameter gets the closest one', async () => {
    expect(await call('zotero_search_items', { q: 'x', limt: 3 })).toMatch(
      /^validation_error: Unknown argument 'limt' for zotero_search_items \(did you mean 'limit'\?\)\.\n/,
    );
  });
});
