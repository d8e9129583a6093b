/**
 * What `content` carries (agent-interface.md, "MCP surface"; conventions.md, "Results"): a
 * one-line summary, then the output object as JSON text, redacted exactly like
 * structuredContent, so a client that passes only `content` to the model passes the data. A
 * partial write names what failed and why, the first few only; an error in which every entry
 * failed names them too, and keeps its `_meta` body within the size bound.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ZoteusError } from '../../../src/core/errors.js';
import { MESSAGE_BOUND } from '../../../src/core/items/read/bounds.js';
import { defineTool, type AnyTool } from '../../../src/core/tool.js';
import { connect } from './harness.js';
import { FAKE_API_KEY, partialTool } from './fixtures.js';

const base = { since: '0.1.0', toolset: 'library', cli: [], openWorld: true } as const;

const listing = defineTool({
  ...base,
  name: 'zotero_fixture_listing',
  title: 'Fixture listing',
  summary: 'A listing with a human text.',
  description: 'Lists rows; its text() renders them.',
  tier: 'read',
  input: z.object({}).strict(),
  output: z.object({
    rows: z.array(z.object({ key: z.string(), title: z.string() })),
    totalResults: z.number(),
  }),
  summarize: (out) => `${out.rows.length} rows of ${out.totalResults}.`,
  text: (out) => out.rows.map((r) => `${r.key}  ${r.title}`).join('\n'),
  run: async () => ({
    rows: [
      { key: 'ABCD2345', title: 'Sea-level rise: "quoted" \\ backslash' },
      { key: 'BCDE2345', title: 'Ünïcödé 海面上昇' },
    ],
    totalResults: 2,
  }),
});

const echoKey = defineTool({
  ...base,
  name: 'zotero_fixture_echo_key',
  title: 'Fixture echo key',
  summary: 'Echoes the API key into its output and summary.',
  description: 'A bug that would leak the key.',
  tier: 'read',
  input: z.object({}).strict(),
  output: z.object({ note: z.string(), url: z.string() }),
  summarize: (_out, _input) => `Read with ${FAKE_API_KEY}.`,
  run: async (_input, deps) => ({
    note: `key ${deps.config.apiKey ?? ''}`,
    url: `https://api.zotero.org/users/1?key=${deps.config.apiKey ?? ''}`,
  }),
});

function failures(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    index: i + 1,
    key: `K${String(i).padStart(3, '0')}2345`.slice(0, 8),
    code: 404,
    message: `Item K${i} does not exist in library users/1. ${'A long explanation. '.repeat(10)}`,
    reason: 'not_found',
  }));
}

const manyFailed = defineTool({
  ...base,
  name: 'zotero_fixture_many_failed',
  title: 'Fixture many failed',
  summary: 'One lands, thousands fail.',
  description: 'A partial result with many failures.',
  tier: 'write',
  input: z.object({ none: z.boolean().optional() }).strict(),
  output: z.object({
    updated: z.array(z.string()),
    failed: z.array(
      z.object({
        index: z.number(),
        key: z.string(),
        code: z.number(),
        message: z.string(),
        reason: z.string(),
      }),
    ),
  }),
  summarize: (out) => `Updated ${out.updated.length}.`,
  run: async (input) => ({ updated: input.none ? [] : ['ABCD2345'], failed: failures(2000) }),
});

const tools = [listing, echoKey, manyFailed, partialTool] as unknown as AnyTool[];
type Harness = Awaited<ReturnType<typeof connect>>;
let open: Harness | undefined;

async function call(name: string, args: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  open = await connect(tools, env);
  return (await open.client.callTool({ name, arguments: args })) as CallToolResult;
}
const texts = (r: CallToolResult) => r.content.map((c) => (c as { text: string }).text);

afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe('content of a success', () => {
  it('is the summary line, then the output as JSON text equal to structuredContent', async () => {
    const r = await call('zotero_fixture_listing');
    expect(r.isError).toBeFalsy();
    const [summary, json, ...rest] = texts(r);
    expect(summary).toBe('2 rows of 2.');
    expect(JSON.parse(json!)).toEqual(r.structuredContent);
    expect(json).toBe(JSON.stringify(r.structuredContent));
    // The human rendering repeats the JSON: it is the CLI's table output, not sent here.
    expect(rest).toEqual([]);
    expect(json).not.toContain('ABCD2345  Sea-level');
  });

  it('redacts the JSON text exactly like structuredContent', async () => {
    const r = await call('zotero_fixture_echo_key', {}, { ZOTERO_API_KEY: FAKE_API_KEY });
    const [summary, json] = texts(r);
    expect(summary).toBe('Read with [REDACTED].');
    expect(json).not.toContain(FAKE_API_KEY);
    expect(JSON.parse(json!)).toEqual(r.structuredContent);
    expect(r.structuredContent).toEqual({
      note: 'key [REDACTED]',
      url: 'https://api.zotero.org/users/1?key=[REDACTED]',
    });
  });
});

describe('a partial write', () => {
  it('names what failed and why in the summary line', async () => {
    const r = await call('zotero_fixture_partial');
    expect(r.isError).toBeFalsy();
    expect(texts(r)[0]).toBe(
      'Partial result: 3 landed, 2 failed: 10.1/d network_error (reset), 10.1/e not_found (no such DOI). Added 3 items.',
    );
    expect(JSON.parse(texts(r)[1]!)).toEqual(r.structuredContent);
  });

  it('names the first three of 2,000 failures, counts the rest, and cuts long messages', async () => {
    const r = await call('zotero_fixture_many_failed');
    const line = texts(r)[0]!;
    expect(line).toMatch(
      /^Partial result: 1 landed, 2000 failed: K0002345 not_found \(Item K0 does not exist/,
    );
    expect(line).toContain(', and 1997 more. Updated 1.');
    expect(line.length).toBeLessThan(500 + 100);
  });

  it('keeps its failures to the size bound, as an error does, and says how many it lists', async () => {
    const r = await call('zotero_fixture_many_failed');
    expect(r.isError).toBeFalsy();
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(MESSAGE_BOUND);
    const listed = (r.structuredContent as { failed: unknown[] }).failed.length;
    expect(listed).toBeGreaterThan(10);
    expect(listed).toBeLessThan(2000);
    expect(texts(r)[0]).toMatch(
      new RegExp(
        `Updated 1\\. \\(failed lists ${listed} of its 2000 entries: the answer must stay under 100 KB\\.\\)$`,
      ),
    );
    expect(JSON.parse(texts(r)[1]!)).toEqual(r.structuredContent);
  });
});

describe('an error where every entry failed', () => {
  it('names the first entries in its text and keeps the _meta body within the size bound', async () => {
    const r = await call('zotero_fixture_many_failed', { none: true });
    expect(r.isError).toBe(true);
    const [text] = texts(r);
    expect(text).toMatch(/^not_found: Nothing landed: all 2000 entries failed/);
    expect(text).toMatch(/\nFailed: K0002345 not_found \(.*\), and 1997 more\.\nHint: /);
    const body = r._meta?.['zoteus/error'] as { failed: unknown[]; failedOmitted: number };
    expect(body.failed.length + body.failedOmitted).toBe(2000);
    expect(body.failed.length).toBeGreaterThan(10);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(MESSAGE_BOUND);
  });

  it('a thrown error keeps its text as it was', async () => {
    const thrower = defineTool({
      ...base,
      name: 'zotero_fixture_throws',
      title: 'Fixture throws',
      summary: 'Throws.',
      description: 'Throws a ZoteusError.',
      tier: 'read',
      input: z.object({}).strict(),
      output: z.object({}),
      run: async () => {
        throw new ZoteusError('not_found', 'No such thing.', { hint: 'Look elsewhere.' });
      },
    });
    open = await connect([thrower] as unknown as AnyTool[]);
    const r = (await open.client.callTool({
      name: 'zotero_fixture_throws',
      arguments: {},
    })) as CallToolResult;
    expect(texts(r)).toEqual(['not_found: No such thing.\nHint: Look elsewhere.']);
  });
});
