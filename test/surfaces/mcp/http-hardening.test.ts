/**
 * The HTTP transport under hostile or broken requests: foreign origins (DNS rebinding),
 * sessions of the older revisions that are abandoned or opened by the thousand, requests that
 * miss or misstate their revision, unknown methods, oversized and unparsable bodies. Every one
 * is an answer of the specification's shape, never a crash, and none leaves state behind.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { httpSettings } from '../../../src/surfaces/mcp/http-settings.js';
import { REQUEST_ID_META_KEY } from '../../../src/surfaces/mcp/protocol.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { createCatalogue, createServer } from '../../../src/surfaces/mcp/server.js';
import {
  originAllowed,
  startHttp,
  type HttpHandle,
  type HttpOptions,
} from '../../../src/surfaces/mcp/transports.js';
import { tools } from '../../../src/tools/index.js';
import { isolatedEnv } from './harness.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

let lastEnv: Record<string, string> = {};
async function serve(options: Omit<HttpOptions, 'port'> = {}): Promise<HttpHandle> {
  const env = isolatedEnv();
  lastEnv = env;
  const catalogue = createCatalogue({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  const handle = await startHttp(() => createServer(catalogue), { port: 0, ...options });
  closers.push(() => handle.close());
  return handle;
}

interface Answer {
  status: number;
  headers: Headers;
  /** The JSON-RPC message: the body, or the last `data:` of an event stream. */
  json: Record<string, unknown> & {
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter(Boolean);
  const raw = response.headers.get('content-type')?.includes('text/event-stream') ? data.at(-1)! : text;
  return { status: response.status, headers: response.headers, json: raw ? JSON.parse(raw) : {} };
}

const REVISION = '2026-07-28';
const envelope = (revision = REVISION) => ({
  'io.modelcontextprotocol/protocolVersion': revision,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

/** A stateless request as a 2026-07-28 client sends it: envelope and headers. */
function stateless(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  extra: Record<string, string> = {},
) {
  // Mcp-Name: the tool or prompt name, or the resource URI.
  const named = params.name ?? params.uri;
  const name: Record<string, string> = typeof named === 'string' ? { 'mcp-name': named } : {};
  return post(
    url,
    { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope() } },
    { 'mcp-protocol-version': REVISION, 'mcp-method': method, ...name, ...extra },
  );
}

const initialize = (id: number | string = 1, protocolVersion = '2025-11-25') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/** Opens a session of the older revisions by hand; its id. */
async function openSession(url: string, protocolVersion = '2025-11-25'): Promise<string> {
  const answer = await post(url, initialize(1, protocolVersion));
  expect(answer.status).toBe(200);
  const id = answer.headers.get('mcp-session-id')!;
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id });
  return id;
}

function inSession(url: string, session: string, method: string, params: Record<string, unknown> = {}) {
  return post(
    url,
    { jsonrpc: '2.0', id: 9, method, params },
    { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
  );
}

describe('Origin (DNS rebinding)', () => {
  it('refuses foreign origins with 403 on every kind of request, and lets loopback pages and programs in', async () => {
    const handle = await serve();
    for (const origin of [
      'http://evil.example',
      'https://evil.example:8765',
      'null',
      'http://127.0.0.1.evil.example',
    ]) {
      const refused = [
        await post(handle.url, initialize(), { origin }),
        await stateless(handle.url, 'tools/list', {}, { origin }),
        await fetch(handle.url, { method: 'GET', headers: { origin, accept: 'text/event-stream' } }),
      ];
      for (const answer of refused) expect(answer.status).toBe(403);
      expect((refused[0] as Answer).json.error?.message).toMatch(/ZOTEUS_HTTP_ALLOWED_ORIGINS/);
    }
    expect(handle.sessions()).toBe(0);
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:3000', 'http://[::1]:8080']) {
      expect((await stateless(handle.url, 'tools/list', {}, { origin })).status).toBe(200);
    }
    expect((await stateless(handle.url, 'tools/list')).status).toBe(200);
  });

  it('ZOTEUS_HTTP_ALLOWED_ORIGINS lists the others, exactly', async () => {
    const settings = httpSettings({
      ZOTEUS_HTTP_ALLOWED_ORIGINS: 'https://app.example.org, http://tool.local:8080/',
    });
    expect(settings.allowedOrigins).toEqual(['https://app.example.org', 'http://tool.local:8080']);
    const handle = await serve({ settings });
    expect(
      (await stateless(handle.url, 'tools/list', {}, { origin: 'https://app.example.org' })).status,
    ).toBe(200);
    expect((await post(handle.url, initialize(), { origin: 'http://tool.local:8080' })).status).toBe(200);
    for (const origin of [
      'https://app.example.org:444',
      'http://app.example.org',
      'https://other.example.org',
    ]) {
      expect((await stateless(handle.url, 'tools/list', {}, { origin })).status).toBe(403);
    }
    expect(originAllowed(undefined, [])).toBe(true);
    expect(originAllowed('file://x', [])).toBe(false);
  });

  it('a listed entry that is no origin is a validation_error naming the variable (runMcp: exit 3)', async () => {
    expect(() => httpSettings({ ZOTEUS_HTTP_ALLOWED_ORIGINS: 'https://app.example.org/path' })).toThrow(
      /ZOTEUS_HTTP_ALLOWED_ORIGINS holds 'https:\/\/app.example.org\/path', which is not an origin/,
    );
    let stderr = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        stderr += String(chunk);
        done();
      },
    });
    for (const env of [
      { ZOTEUS_HTTP_ALLOWED_ORIGINS: 'evil' } as Record<string, string>,
      { ZOTEUS_HTTP_MAX_SESSIONS: '0' },
      { ZOTEUS_HTTP_SESSION_IDLE_S: 'soon' },
    ]) {
      stderr = '';
      const code = await runMcp({ env: isolatedEnv(env), http: true, port: 0, stderr: sink });
      expect(code).toBe(3);
      expect(stderr).toContain(`zoteus: validation_error: ${Object.keys(env)[0]}`);
    }
  });
});

describe('sessions of the older revisions, bounded', () => {
  it('an idle session is closed after ZOTEUS_HTTP_SESSION_IDLE_S; its id then answers 404', async () => {
    let now = 1_000_000;
    const log: string[] = [];
    const handle = await serve({
      settings: httpSettings({ ZOTEUS_HTTP_SESSION_IDLE_S: '60' }),
      now: () => now,
      log: (line) => log.push(line),
    });
    const idle = await openSession(handle.url);
    const busy = await openSession(handle.url);
    expect(handle.sessions()).toBe(2);
    now += 45_000;
    expect((await inSession(handle.url, busy, 'tools/list')).status).toBe(200);
    now += 20_000;
    await handle.sweep();
    // 65 s after its last request the first is gone; the second was used 20 s ago.
    expect(handle.sessions()).toBe(1);
    const gone = await inSession(handle.url, idle, 'tools/list');
    expect(gone.status).toBe(404);
    expect(gone.json.error).toMatchObject({ code: -32001, message: expect.stringMatching(/initialize/) });
    expect((await inSession(handle.url, busy, 'tools/list')).status).toBe(200);
    expect(log.join('\n')).toMatch(/session [0-9a-f]{8}… closed after 60 s idle/);
    now += 61_000;
    await handle.sweep();
    expect(handle.sessions()).toBe(0);
  });

  it('at ZOTEUS_HTTP_MAX_SESSIONS a new session is refused with a JSON-RPC error; stateless requests still work', async () => {
    const handle = await serve({ settings: httpSettings({ ZOTEUS_HTTP_MAX_SESSIONS: '20' }) });
    const opened: string[] = [];
    const refused: Answer[] = [];
    // Many more than the cap, as an attacker would open them.
    for (let i = 0; i < 150; i += 1) {
      const answer = await post(handle.url, initialize(`init-${i}`));
      if (answer.status === 200) opened.push(answer.headers.get('mcp-session-id')!);
      else refused.push(answer);
    }
    expect(opened).toHaveLength(20);
    expect(handle.sessions()).toBe(20);
    expect(refused).toHaveLength(130);
    const first = refused[0]!;
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('60');
    expect(first.json.id).toBe('init-20');
    expect(first.json.error?.code).toBe(-32000);
    expect(first.json.error?.message).toMatch(/^Too many sessions: 20 are open.*ZOTEUS_HTTP_MAX_SESSIONS/);
    expect(first.json.error?.data?.['zoteus/error']).toMatchObject({ code: 'rate_limited', retryable: true });
    // The 2026-07-28 revision has no sessions, and is not refused.
    expect((await stateless(handle.url, 'tools/call', { name: 'zotero_whoami', arguments: {} })).status).toBe(
      200,
    );
    // Closing one makes room for one.
    const closed = await fetch(handle.url, { method: 'DELETE', headers: { 'mcp-session-id': opened[0]! } });
    expect(closed.status).toBe(200);
    expect(handle.sessions()).toBe(19);
    expect((await post(handle.url, initialize('again'))).status).toBe(200);
    expect((await post(handle.url, initialize('over'))).status).toBe(503);
  });

  it('negotiates 2025-06-18 and 2025-11-25 in a session, and refuses a revision the session does not speak', async () => {
    const handle = await serve();
    for (const revision of ['2025-06-18', '2025-11-25']) {
      const answer = await post(handle.url, initialize(1, revision));
      expect(answer.json.result?.protocolVersion).toBe(revision);
    }
    const session = await openSession(handle.url, '2025-06-18');
    const wrong = await post(
      handle.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.json.error?.message).toMatch(/Unsupported protocol version/);
  });
});

describe('malformed requests are answers', () => {
  it('tools/call whose arguments are no object: an isError validation_error result, on both generations', async () => {
    const handle = await serve();
    const session = await openSession(handle.url);
    for (const args of ['x', null, [1], 42]) {
      for (const answer of [
        await stateless(handle.url, 'tools/call', { name: 'zotero_whoami', arguments: args }),
        await inSession(handle.url, session, 'tools/call', { name: 'zotero_whoami', arguments: args }),
      ]) {
        expect(answer.status).toBe(200);
        const result = answer.json.result!;
        expect(result.isError).toBe(true);
        const error = (result._meta as Record<string, Record<string, unknown>>)['zoteus/error']!;
        expect(error).toMatchObject({ code: 'validation_error', field: '(arguments)' });
        expect(String(error.message)).toMatch(/arguments must be an object/);
        expect((result._meta as Record<string, unknown>)[REQUEST_ID_META_KEY]).toMatch(/^[0-9a-f]{12}$/);
      }
    }
  });

  it('a missing, unsupported or misstated revision gets the specification’s error', async () => {
    const handle = await serve();
    // No revision at all, and no session: the older revisions need initialize first.
    const none = await post(handle.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(none.status).toBe(400);
    expect(none.json.error?.message).toMatch(/initialize/);
    // The header names 2026-07-28, the body has no envelope.
    const bare = await post(
      handle.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' },
    );
    expect(bare.status).toBe(400);
    expect(bare.json.error?.code).toBe(-32602);
    // A revision this server does not speak: -32022 naming the ones it does.
    const future = await post(
      handle.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(future.json.error).toMatchObject({ code: -32022, data: { requested: '2099-01-01' } });
    expect(future.json.error?.data?.supported).toContain(REVISION);
    // Headers that disagree with the body.
    const mismatch = await post(
      handle.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'zotero_whoami', _meta: envelope() } },
      { 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' },
    );
    expect(mismatch.json.error?.code).toBe(-32020);
  });

  it('unknown methods, unparsable and oversized bodies', async () => {
    const handle = await serve();
    expect((await stateless(handle.url, 'zotero/bogus')).json.error?.code).toBe(-32601);
    const session = await openSession(handle.url);
    expect((await inSession(handle.url, session, 'zotero/bogus')).json.error?.code).toBe(-32601);
    const junk = await post(handle.url, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(junk.status).toBe(400);
    expect(junk.json.error?.code).toBe(-32700);
    const huge = await post(
      handle.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { x: 'x'.repeat(5 * 1024 * 1024) },
      }),
    );
    expect(huge.status).toBe(413);
    expect(huge.json.error?.message).toMatch(/Payload Too Large/);
    // The server is still there.
    expect((await stateless(handle.url, 'tools/list')).status).toBe(200);
    expect(handle.sessions()).toBe(1);
  });
});

describe('request ids on MCP', () => {
  it('every result carries zoteus/request_id in _meta, and a JSON-RPC error in data', async () => {
    const handle = await serve();
    const ids = new Set<unknown>();
    for (const [method, params] of [
      ['tools/list', {}],
      ['prompts/list', {}],
      ['resources/list', {}],
      ['tools/call', { name: 'zotero_whoami', arguments: {} }],
      ['tools/call', { name: 'zotero_nope', arguments: {} }],
    ] as const) {
      const answer = await stateless(handle.url, method, params);
      const id = (answer.json.result?._meta as Record<string, unknown>)[REQUEST_ID_META_KEY];
      expect(id, method).toMatch(/^[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(5);
    const prompt = await stateless(handle.url, 'prompts/get', { name: 'zotero-nope' });
    expect(prompt.json.error?.data?.[REQUEST_ID_META_KEY]).toMatch(/^[0-9a-f]{12}$/);
    const resource = await stateless(handle.url, 'resources/read', { uri: 'zotero://nope' });
    expect(resource.json.error?.data?.[REQUEST_ID_META_KEY]).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('files saved over HTTP', () => {
  it('stateless requests share the confined folder callers/stateless; a session has its own', async () => {
    const handle = await serve();
    const row = {
      item_key: 'ABCD2345',
      study: 'Smith 2020',
      finding: 'It helps.',
      quotation: 'It helped.',
      page: 3,
      page_exact: true,
      coverage: 'passage',
      support: 'supported',
    };
    const args = { question: 'Q', rows: [row], save_path: 'tables/t.md' };
    const saved = async (answer: Answer) =>
      (answer.json.result?.structuredContent as { savedTo: string }).savedTo;
    const callers = `${lastEnv.ZOTEUS_DATA_DIR}/callers`;
    const a = await saved(
      await stateless(handle.url, 'tools/call', { name: 'zotero_evidence_table', arguments: args }),
    );
    expect(a).toBe(`${callers}/stateless/tables/t.md`);
    const session = await openSession(handle.url);
    const b = await saved(
      await inSession(handle.url, session, 'tools/call', { name: 'zotero_evidence_table', arguments: args }),
    );
    expect(b.startsWith(`${callers}/`)).toBe(true);
    expect(b).not.toBe(a);
    const escape = await stateless(handle.url, 'tools/call', {
      name: 'zotero_evidence_table',
      arguments: { ...args, save_path: '../../escape.md' },
    });
    expect(escape.json.result?.isError).toBe(true);
  });
});
