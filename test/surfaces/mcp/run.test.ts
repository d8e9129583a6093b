/** runMcp over in-process stdio streams: the lifecycle the `zoteus` binary relies on. */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../../src/core/tool.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { isolatedEnv } from './harness.js';

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

function slowTool(closed: string[]): AnyTool {
  return defineTool({
    name: 'zotero_fixture_slow',
    title: 'Fixture slow',
    summary: 'Takes a moment and uses a service.',
    description: 'A fixture.',
    tier: 'read',
    openWorld: false,
    since: '0.1.0',
    cli: [],
    input: z.object({}).strict(),
    output: z.object({ ok: z.boolean() }),
    run: async (_input, deps) => {
      await deps.services.get('probe', () => ({ close: () => void closed.push('probe') }));
      await deps.clock.sleep(50);
      return { ok: true };
    },
  }) as unknown as AnyTool;
}

const messages = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'zotero_fixture_slow', arguments: {} } },
];

describe('runMcp over stdio', () => {
  it('answers a call whose client closed stdin right after sending it, then closes services', async () => {
    const closed: string[] = [];
    const stdin = new PassThrough();
    const stdout = sink();
    const stderr = sink();
    const running = runMcp({
      env: isolatedEnv(),
      stdin,
      stdout: stdout.stream,
      stderr: stderr.stream,
      tools: [slowTool(closed)],
    });
    stdin.end(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    expect(await running).toBe(0);
    const replies = stdout
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: { structuredContent?: unknown } });
    expect(replies.find((r) => r.id === 2)?.result.structuredContent).toEqual({ ok: true });
    expect(closed).toEqual(['probe']);
    // One line per request: the revision it used, the transport, what it asked, how it ended.
    expect(stderr.text()).toMatch(
      /^zoteus: mcp 2025-06-18 stdio tools\/call zotero_fixture_slow: ok in \d+ ms \(request_id [0-9a-f]{12}\)\n$/,
    );
  });

  it('returns 3 and names the variable on a configuration error', async () => {
    const stderr = sink();
    const code = await runMcp({ env: isolatedEnv({ ZOTEUS_READ_ONLY: 'maybe' }), stderr: stderr.stream });
    expect(code).toBe(3);
    expect(stderr.text()).toMatch(/^zoteus: validation_error: ZOTEUS_READ_ONLY must be true or false/);
    expect(stderr.text()).toMatch(/Hint: Fix or unset ZOTEUS_READ_ONLY\./);
  });
});
