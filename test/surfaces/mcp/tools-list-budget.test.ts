/**
 * What every MCP session pays before its first call: the bytes of `tools/list` (issue 22). The
 * whole list, with every tool on (the delete tool, the idempotency keys, the seed tools' fixed
 * texts), stays within 60 KB; the lean default set within 30 KB. Measured through the SDK's client
 * as a client receives it, and printed per tool so a growing description shows where.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../../src/tools/index.js';
import { connect } from './harness.js';

const KB = 1024;

async function listed(env: Record<string, string>) {
  const mcp = await connect(tools, env);
  try {
    const result = await mcp.client.listTools();
    return { result, bytes: Buffer.byteLength(JSON.stringify(result)) };
  } finally {
    await mcp.close();
  }
}

function table(list: { tools: { name: string }[] }): string {
  return list.tools
    .map((t) => [t.name, Buffer.byteLength(JSON.stringify(t))] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([name, bytes]) => `${name.padEnd(32)} ${String(bytes).padStart(6)}`)
    .join('\n');
}

describe('the size of tools/list', () => {
  let full: Awaited<ReturnType<typeof listed>>;
  let lean: Awaited<ReturnType<typeof listed>>;
  beforeAll(async () => {
    full = await listed({ ZOTEUS_TOOLSETS: 'all', ZOTEUS_ALLOW_DELETE: 'true' });
    lean = await listed({ ZOTEUS_TOOLSETS: 'default', ZOTEUS_ALLOW_DELETE: 'true' });
  });
  afterAll(() => {
    console.log(
      `tools/list: all ${full.result.tools.length} tools ${full.bytes} bytes; default set ${lean.result.tools.length} tools ${lean.bytes} bytes\n${table(full.result)}`,
    );
  });

  it('every tool, the delete tool included: at most 60 KB', () => {
    expect(full.result.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    expect(full.bytes).toBeLessThanOrEqual(60 * KB);
  });

  it('the default set: at most 30 KB', () => {
    expect(lean.bytes).toBeLessThanOrEqual(30 * KB);
  });
});
