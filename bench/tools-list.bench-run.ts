/**
 * What `tools/list` costs every MCP session before its first call, per tool: bytes of the whole
 * entry and of its description, input schema and output schema, as the SDK's client receives them
 * from an in-process server, for every tool (the delete tool on) and for the lean default set.
 *
 *   node bench/run.mjs bench/tools-list.bench-run.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { CLI_VERSION } from '../src/core/version.js';
import { buildMcpServer } from '../src/surfaces/mcp/server.js';
import { tools } from '../src/tools/index.js';

const dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-list-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function list(toolsets: string) {
  const env = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTEUS_TOOLSETS: toolsets,
    ZOTEUS_ALLOW_DELETE: 'true',
  };
  const server = buildMcpServer({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  const client = new Client({ name: 'bench', version: '0.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  const result = await client.listTools();
  await client.close();
  await server.close();
  return result;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? ''));

it('tools/list, per tool', async () => {
  const all = await list('all');
  const lean = await list('default');
  const inDefault = new Set(lean.tools.map((t) => t.name));
  const rows = all.tools
    .map((t) => ({
      name: t.name,
      total: bytes(t),
      description: bytes(t.description) - 2,
      input: bytes(t.inputSchema),
      output: bytes(t.outputSchema),
      default: inDefault.has(t.name) ? 'yes' : '',
    }))
    .sort((x, y) => y.total - x.total);
  const pad = (v: string | number, n: number) => String(v).padStart(n);
  const lines = [
    `${'tool'.padEnd(32)} ${pad('bytes', 6)} ${pad('descr', 6)} ${pad('input', 6)} ${pad('output', 6)} default`,
    ...rows.map(
      (r) =>
        `${r.name.padEnd(32)} ${pad(r.total, 6)} ${pad(r.description, 6)} ${pad(r.input, 6)} ${pad(r.output, 6)} ${r.default}`,
    ),
    `all: ${all.tools.length} tools, ${bytes(all)} bytes (budget 61,440); default set: ${lean.tools.length} tools, ${bytes(lean)} bytes (budget 30,720)`,
  ];
  console.log(lines.join('\n'));
  expect(rows.length).toBe(tools.length);
});
