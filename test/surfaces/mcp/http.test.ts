/** Streamable HTTP, on a free loopback port, driven by the SDK's client transport. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { buildMcpServer } from '../../../src/surfaces/mcp/server.js';
import { isLoopbackHost, startHttp } from '../../../src/surfaces/mcp/transports.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { tools } from '../../../src/tools/index.js';
import { Writable } from 'node:stream';
import { isolatedEnv } from './harness.js';

function factory() {
  const env = isolatedEnv();
  const config = loadConfig(env);
  return () => buildMcpServer({ tools, config, env, version: CLI_VERSION });
}

async function connectHttp(url: string): Promise<Client> {
  const client = new Client({ name: 'zoteus-http-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('Streamable HTTP', () => {
  it('serves tools/list and tools/call on 127.0.0.1', async () => {
    const lines: string[] = [];
    const handle = await startHttp(factory(), { port: 0, log: (line) => lines.push(line) });
    try {
      expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(lines.join('\n')).toContain(handle.url);
      const client = await connectHttp(handle.url);
      const { tools: listed } = await client.listTools();
      expect(listed.map((t) => t.name)).toContain('zotero_whoami');
      const result = (await client.callTool({ name: 'zotero_whoami', arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ version: CLI_VERSION });
      // Two clients get two sessions.
      const second = await connectHttp(handle.url);
      expect((await second.listTools()).tools.length).toBe(listed.length);
      await second.close();
      await client.close();
    } finally {
      await handle.close();
    }
  });

  it('refuses a non-loopback host', async () => {
    const refused = startHttp(factory(), { host: '0.0.0.0', port: 0 });
    await expect(refused).rejects.toBeInstanceOf(ZoteusError);
    await expect(refused).rejects.toMatchObject({ code: 'validation_error', field: 'host' });
    await expect(refused).rejects.toThrow(/loopback unless authentication is configured/);
  });

  it('knows which hosts are loopback (one answer for listening, Host headers and redirect URIs)', () => {
    for (const host of [
      '127.0.0.1',
      '127.5.6.7',
      '::1',
      '[::1]',
      'localhost',
      'LOCALHOST',
      '::ffff:127.0.0.1',
      // As URL parsing writes it: new URL('http://[::ffff:127.0.0.1]/').hostname.
      new URL('http://[::ffff:127.0.0.1]/').hostname,
    ]) {
      expect(isLoopbackHost(host)).toBe(true);
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.2',
      'example.com',
      '10.0.0.1',
      '128.0.0.1',
      '127.0.0.999',
      '127.0.0.1.example.com',
      '::ffff:10.0.0.1',
      new URL('http://[::ffff:10.0.0.1]/').hostname,
    ]) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });

  it('rejects requests whose Host header is not a loopback name (DNS rebinding)', async () => {
    const handle = await startHttp(factory(), { port: 0 });
    try {
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          handle.url,
          { method: 'POST', headers: { host: 'evil.example:80', 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(status).toBe(403);
    } finally {
      await handle.close();
    }
  });

  it('runMcp reports a refused host on stderr with exit code 3', async () => {
    let stderr = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        stderr += String(chunk);
        done();
      },
    });
    const code = await runMcp({ env: isolatedEnv(), http: true, host: '0.0.0.0', port: 0, stderr: sink });
    expect(code).toBe(3);
    expect(stderr).toMatch(/^zoteus: validation_error: .*loopback/);
  });

  it('runMcp serves over HTTP until its signal aborts', async () => {
    let stderr = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        stderr += String(chunk);
        done();
      },
    });
    const stop = new AbortController();
    const running = runMcp({ env: isolatedEnv(), http: true, port: 0, stderr: sink, signal: stop.signal });
    await expect.poll(() => stderr, { timeout: 5000 }).toMatch(/listening on http/);
    const url = /listening on (\S+)/.exec(stderr)![1]!;
    const client = await connectHttp(url);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    stop.abort();
    expect(await running).toBe(0);
  });
});
