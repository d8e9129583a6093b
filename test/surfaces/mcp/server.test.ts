import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderRefs } from '../../../src/core/call/refs.js';
import { mcpRefRenderer } from '../../../src/surfaces/mcp/refs.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { ERROR_META_KEY } from '../../../src/surfaces/mcp/results.js';
import { FAKE_API_KEY, fixtureTools } from './fixtures.js';
import { connect } from './harness.js';
import { startKeyServer } from '../../support/key-server.js';

const all: AnyTool[] = [...tools, ...fixtureTools];
const closers: Array<() => Promise<void>> = [];

async function open(list: readonly AnyTool[], env: Record<string, string> = {}): Promise<Client> {
  const { client, close } = await connect(list, env);
  closers.push(close);
  return client;
}

afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block');
  return first.text;
}

function errorMeta(result: CallToolResult): Record<string, unknown> {
  return (result._meta as Record<string, Record<string, unknown>>)[ERROR_META_KEY]!;
}

function expectError(result: CallToolResult, code: string): Record<string, unknown> {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(textOf(result).startsWith(`${code}: `)).toBe(true);
  const meta = errorMeta(result);
  expect(meta.code).toBe(code);
  expect(typeof meta.retryable).toBe('boolean');
  return meta;
}

function hasKeyAnywhere(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => hasKeyAnywhere(v, key));
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => k === key || hasKeyAnywhere(v, key));
}

describe('tools/list', () => {
  it('lists a tool that needs enabling only when its setting is on (ZOTEUS_ALLOW_DELETE)', async () => {
    const gated = all.filter((t) => t.enabled);
    expect(gated.length).toBeGreaterThan(0);
    const off = (await (await open(all)).listTools()).tools.map((t) => t.name);
    const on = (await (await open(all, { ZOTEUS_ALLOW_DELETE: 'true' })).listTools()).tools.map(
      (t) => t.name,
    );
    for (const tool of gated) {
      expect(off).not.toContain(tool.name);
      expect(on).toContain(tool.name);
    }
  });

  it('lists every declaration with closed input schemas, output schemas and annotations', async () => {
    const client = await open(all);
    const { tools: listed } = await client.listTools();
    // Tools an installation must enable (permanent deletion) are left out by default.
    expect(listed.map((t) => t.name)).toEqual(all.filter((t) => !t.enabled).map((t) => t.name));
    for (const tool of listed) {
      const declared = all.find((t) => t.name === tool.name)!;
      expect(tool.title).toBe(declared.title);
      // The declared prose with its references in MCP's words (`onlyOn('mcp', …)` kept, the CLI's dropped).
      expect(tool.description).toBe(renderRefs(declared.description, mcpRefRenderer));
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.inputSchema).not.toHaveProperty('$schema');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.outputSchema).not.toHaveProperty('$schema');
      // The title once: the top-level one, which clients prefer (no copy in the annotations); a
      // hint only where it differs from the specification's default or the tool is not read-only.
      const read = declared.tier === 'read';
      expect(tool.annotations).toEqual({
        readOnlyHint: read,
        ...(read ? {} : { destructiveHint: declared.tier === 'destructive' }),
        ...(!read && declared.idempotent === true ? { idempotentHint: true } : {}),
        ...(declared.openWorld ? {} : { openWorldHint: false }),
      });
    }
    // No dialect stamp anywhere, not only at the root.
    expect(hasKeyAnywhere(listed, '$schema')).toBe(false);
  });

  it('derives annotations from the tier', async () => {
    const client = await open(all);
    const { tools: listed } = await client.listTools();
    const byName = new Map(listed.map((t) => [t.name, t.annotations]));
    // What the specification's defaults say is left out: destructive and idempotent mean nothing
    // for a read-only tool; open world and not idempotent are the defaults.
    expect(byName.get('zotero_whoami')).toEqual({ readOnlyHint: true });
    expect(byName.get('zotero_fixture_write')).toEqual({ readOnlyHint: false, destructiveHint: false });
    expect(byName.get('zotero_fixture_destroy')).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
  });

  it('in read-only mode lists and accepts only tools that leave the library alone', async () => {
    const client = await open(all, { ZOTEUS_READ_ONLY: 'true' });
    const { tools: listed } = await client.listTools();
    // Reads, and tools that write local files only (conventions.md, "Tiers").
    expect(listed.map((t) => t.name)).toEqual(
      all.filter((t) => t.tier === 'read' || t.writesFilesOnly === true).map((t) => t.name),
    );
    expect(listed.map((t) => t.name)).toContain('zotero_evidence_table');
    const refused = await call(client, 'zotero_fixture_write', { name: 'x' });
    const meta = expectError(refused, 'permission_denied');
    expect(meta.message).toMatch(/read-only mode/);
    const destroy = await call(client, 'zotero_fixture_destroy');
    expectError(destroy, 'permission_denied');
    const whoami = await call(client, 'zotero_whoami');
    expect(whoami.isError).toBeFalsy();
    expect(whoami.structuredContent).toMatchObject({ readOnly: true });
  });
});

describe('tools/call', () => {
  it('runs zotero_whoami: structuredContent matches its output schema, text is its summary', async () => {
    const client = await open(tools);
    await client.listTools(); // lets the client validate structuredContent against outputSchema
    const result = await call(client, 'zotero_whoami');
    expect(result.isError).toBeFalsy();
    const whoami = tools.find((t) => t.name === 'zotero_whoami')!;
    const output = whoami.output.parse(result.structuredContent);
    expect(textOf(result)).toBe(whoami.summarize!(output, {}));
    expect(result._meta?.[ERROR_META_KEY]).toBeUndefined();
  });

  it('refuses an unknown argument by name, as a validation_error result', async () => {
    const client = await open(tools);
    const result = await call(client, 'zotero_whoami', { bogus: 1 });
    const meta = expectError(result, 'validation_error');
    expect(textOf(result)).toMatch(/'bogus'/);
    expect(meta.field).toBe('bogus');
  });

  it('names each invalid argument with its path', async () => {
    const client = await open(all);
    const result = await call(client, 'zotero_fixture_write', { name: 42 });
    const meta = expectError(result, 'validation_error');
    expect(textOf(result)).toMatch(/: name must be text \(got 42\)\./);
    expect(meta.field).toBe('name');
    const missing = await call(client, 'zotero_fixture_write', {});
    expect(textOf(expectErrorText(missing))).toMatch(/: name is required: /);
  });

  it('reports an unknown tool as not_found', async () => {
    const client = await open(tools);
    const result = await call(client, 'zotero_nope');
    expectError(result, 'not_found');
  });

  it('turns a thrown ZoteusError into code, message, Hint line and _meta', async () => {
    const client = await open(all);
    await client.listTools();
    const result = await call(client, 'zotero_fixture_not_found');
    const meta = expectError(result, 'not_found');
    expect(textOf(result)).toBe(
      'not_found: Collection ABCD2345 does not exist in library users/123.\nHint: List collections with zotero_list_collections.',
    );
    expect(meta).toEqual({
      code: 'not_found',
      message: 'Collection ABCD2345 does not exist in library users/123.',
      retryable: false,
      hint: 'List collections with zotero_list_collections.',
      field: 'key',
    });
    const limited = await call(client, 'zotero_fixture_rate_limited');
    expect(expectError(limited, 'rate_limited')).toMatchObject({ retryable: true, retry_after_seconds: 30 });
  });

  it('turns a plain Error into internal_error without a stack trace', async () => {
    const client = await open(all);
    const result = await call(client, 'zotero_fixture_crash');
    expectError(result, 'internal_error');
    expect(textOf(result)).toMatch(/TypeError: Cannot read properties/);
    expect(textOf(result)).not.toMatch(/\n\s+at /);
    expect(JSON.stringify(result)).not.toMatch(/\.ts:\d+|\.js:\d+/);
  });

  it('reports a partial result as success, with counts in the text and failed in structuredContent', async () => {
    const client = await open(all);
    await client.listTools();
    const result = await call(client, 'zotero_fixture_partial');
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/3 landed, 2 failed/);
    expect(textOf(result)).toMatch(/Added 3 items\./);
    expect((result.structuredContent as { failed: unknown[] }).failed).toHaveLength(2);
  });

  it('never sends output that violates the output schema: internal_error instead', async () => {
    const client = await open(all);
    await client.listTools();
    const result = await call(client, 'zotero_fixture_bad_output');
    const meta = expectError(result, 'internal_error');
    expect(meta.message).toMatch(/output schema/);
    expect(meta.message).toMatch(/count/);
  });

  it('reports auth_missing for a tool that needs a key when none is configured', async () => {
    const client = await open(all);
    expectError(await call(client, 'zotero_fixture_needs_key'), 'auth_missing');
    // With a key, the pipeline checks it (GET /keys/current) before the work.
    const keys = await startKeyServer(FAKE_API_KEY);
    closers.push(() => keys.close());
    const keyed = await open(all, { ZOTERO_API_KEY: FAKE_API_KEY, ZOTERO_API_URL: keys.url });
    expect((await call(keyed, 'zotero_fixture_needs_key')).isError).toBeFalsy();
  });

  it('never lets the API key into a result', async () => {
    const client = await open(all, { ZOTERO_API_KEY: FAKE_API_KEY });
    const results = [
      await call(client, 'zotero_fixture_leak'),
      await call(client, 'zotero_fixture_leak', { plain: true }),
      await call(client, 'zotero_whoami'),
    ];
    expectError(results[0]!, 'auth_invalid');
    expectError(results[1]!, 'internal_error');
    for (const result of results) expect(JSON.stringify(result)).not.toContain(FAKE_API_KEY);
    expect(textOf(results[0]!)).toContain('[REDACTED]');
  });
});

describe('progress', () => {
  it('forwards progress events to a client that passed onprogress', async () => {
    const client = await open(all);
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool({ name: 'zotero_fixture_progress', arguments: {} }, undefined, {
      onprogress: (p) => seen.push({ progress: p.progress, total: p.total }),
    });
    expect(result.isError).toBeFalsy();
    expect(seen.map((p) => p.progress)).toEqual([0, 1, 2, 3]);
    expect(seen.every((p) => p.total === 3)).toBe(true);
  });

  it('drops progress events when the client did not ask for them', async () => {
    const { client, server, close } = await connect(all);
    closers.push(close);
    const sent: string[] = [];
    const transport = server.transport!;
    const original = transport.send.bind(transport);
    transport.send = async (message, options) => {
      if ('method' in message) sent.push(message.method);
      return original(message, options);
    };
    const result = await call(client, 'zotero_fixture_progress');
    expect(result.isError).toBeFalsy();
    expect(sent).not.toContain('notifications/progress');
    // Control: the same spy does see them when the client asks.
    await client.callTool({ name: 'zotero_fixture_progress', arguments: {} }, undefined, {
      onprogress: () => {},
    });
    expect(sent).toContain('notifications/progress');
  });
});

function expectErrorText(result: CallToolResult): CallToolResult {
  expectError(result, 'validation_error');
  return result;
}
