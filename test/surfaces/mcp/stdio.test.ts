/**
 * The built `zoteus` binary over stdio, driven by the SDK's client. `npm test` builds before
 * vitest; when dist/ is missing (a bare `vitest run`) these tests are skipped, saying why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from './harness.js';
import { tools as declared } from '../../../src/tools/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../../../dist/bin/zoteus.js', import.meta.url));
const built = existsSync(bin);
if (!built) console.warn(`Skipping stdio tests: ${bin} is missing; run \`npm run build\` first.`);

/** Only what the server needs: no developer credentials leak into the child. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', ...isolatedEnv(extra) };
}

it('the built binary exists (npm test builds before the suite)', () => {
  expect(built).toBe(true);
});

describe.skipIf(!built)('zoteus over stdio (built)', () => {
  it('lists tools and calls zotero_whoami', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin],
      env: childEnv(),
      cwd: root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'zoteus-stdio-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('zotero_whoami');
      const result = (await client.callTool({ name: 'zotero_whoami', arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ readOnly: false, profile: null });
      expect(result.content[0]).toMatchObject({ type: 'text' });
    } finally {
      await client.close();
    }
  }, 20_000);

  it('exits non-zero naming the variable when the configuration is invalid', () => {
    const run = spawnSync(process.execPath, [bin], {
      env: childEnv({ ZOTEUS_READ_ONLY: 'maybe' }),
      cwd: root,
      input: '',
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/ZOTEUS_READ_ONLY/);
    expect(run.stderr).toMatch(/validation_error/);
  });

  it('refuses an unknown flag with a validation_error and exit 3', () => {
    const run = spawnSync(process.execPath, [bin, '--bogus'], {
      env: childEnv(),
      input: '',
      encoding: 'utf8',
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/validation_error/);
  });

  it('`zot mcp` serves the same server over stdio; ZOTEUS_READ_ONLY=true lists no tool that changes the library', async () => {
    const zot = fileURLToPath(new URL('../../../bin/zot', import.meta.url));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [zot, 'mcp'],
      env: childEnv({ ZOTEUS_READ_ONLY: 'true' }),
      cwd: root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'zot-mcp-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      // Reads, and the tools that write local files only (readOnlyHint false, library untouched).
      const writers = tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name);
      expect(writers.sort()).toEqual(
        declared
          .filter((t) => t.writesFilesOnly === true)
          .map((t) => t.name)
          .sort(),
      );
      for (const tool of tools) expect(tool.annotations?.destructiveHint).not.toBe(true);
      expect(tools.map((t) => t.name)).toContain('zotero_whoami');
    } finally {
      await client.close();
    }
  }, 20_000);
});
