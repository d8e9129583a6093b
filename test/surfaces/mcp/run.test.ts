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
    toolset: 'library',
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

interface Reply {
  id?: unknown;
  result?: Record<string, unknown> & {
    _meta?: Record<string, unknown>;
    protocolVersion?: string;
    ttlMs?: number;
  };
  error?: { code: number; message: string; data?: Record<string, unknown> & { supported?: string[] } };
}

/** Runs runMcp over in-process pipes with these messages on stdin; the answers by id, and stderr. */
async function exchange(lines: unknown[]): Promise<{ byId: Map<unknown, Reply>; stderr: string }> {
  const stdin = new PassThrough();
  const stdout = sink();
  const stderr = sink();
  const running = runMcp({ env: isolatedEnv(), stdin, stdout: stdout.stream, stderr: stderr.stream });
  stdin.end(lines.map((m) => `${JSON.stringify(m)}\n`).join(''));
  expect(await running).toBe(0);
  const replies = stdout
    .text()
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Reply);
  return { byId: new Map(replies.map((r) => [r.id, r])), stderr: stderr.text() };
}

const envelope = (revision = '2026-07-28') => ({
  'io.modelcontextprotocol/protocolVersion': revision,
  'io.modelcontextprotocol/clientInfo': { name: 'pipe', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

describe('both generations on one stdio pipe', () => {
  it('a stateless 2026-07-28 client: every request carries the envelope; arguments that are no object are a validation_error', async () => {
    const { byId, stderr } = await exchange([
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'zotero_whoami', arguments: 'x', _meta: envelope() },
      },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'zotero_whoami', arguments: null, _meta: envelope() },
      },
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 5, method: 'zotero/bogus', params: { _meta: envelope() } },
    ]);
    expect(byId.get(1)?.result).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'public' });
    for (const id of [2, 3]) {
      expect(byId.get(id)?.result).toMatchObject({
        isError: true,
        _meta: { 'zoteus/error': { code: 'validation_error', field: '(arguments)' } },
      });
      expect(byId.get(id)?.result?._meta?.['zoteus/request_id']).toMatch(/^[0-9a-f]{12}$/);
    }
    // Without its envelope a request of this connection is refused, by the SDK, as the specification says.
    expect(byId.get(4)?.error?.code).toBe(-32602);
    expect(byId.get(5)?.error?.code).toBe(-32601);
    expect(stderr).toMatch(
      /zoteus: mcp 2026-07-28 stdio tools\/call zotero_whoami: validation_error in \d+ ms/,
    );
  });

  it('an initialize-based client: the same refusal of arguments that are no object, without cache hints', async () => {
    const { byId, stderr } = await exchange([
      messages[0],
      messages[1],
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'zotero_whoami', arguments: [1] } },
    ]);
    expect(byId.get(1)?.result?.protocolVersion).toBe('2025-06-18');
    expect(byId.get(2)?.result?.ttlMs).toBeUndefined();
    expect(byId.get(3)?.result).toMatchObject({
      isError: true,
      _meta: { 'zoteus/error': { code: 'validation_error', field: '(arguments)' } },
    });
    expect(stderr).toMatch(/zoteus: mcp 2025-06-18 stdio tools\/list: ok/);
  });

  it('a request for a revision this server does not speak gets -32022 naming the supported one', async () => {
    const opening = await exchange([
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
    ]);
    expect(opening.byId.get(1)?.error?.code).toBe(-32022);
    expect(opening.byId.get(1)?.error?.data?.supported).toContain('2026-07-28');
    // Later on a stateless connection too: each request is checked, not only the first.
    const later = await exchange([
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'zotero_whoami', _meta: envelope('2025-11-25') },
      },
    ]);
    expect(later.byId.get(1)?.result).toBeDefined();
    expect(later.byId.get(2)?.error).toMatchObject({ code: -32022, data: { requested: '2099-01-01' } });
    expect(later.byId.get(3)?.error).toMatchObject({ code: -32022, data: { requested: '2025-11-25' } });
  });
});
