/**
 * `zotero_evidence_table` through the MCP surface: in memory (stdio's unconfined case) and
 * over Streamable HTTP, where every session saves only inside its own folder.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parse } from 'csv-parse/sync';
import { marked, type Tokens } from 'marked';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { needsFormulaGuard } from '../../../src/render/evidence/index.js';
import { ERROR_META_KEY } from '../../../src/surfaces/mcp/results.js';
import { buildMcpServer } from '../../../src/surfaces/mcp/server.js';
import { startHttp } from '../../../src/surfaces/mcp/transports.js';
import { PROVENANCE } from '../../../src/tools/shared/params.js';
import { tools } from '../../../src/tools/index.js';
import { connect, isolatedEnv } from '../../surfaces/mcp/harness.js';
import { HOSTILE_QUESTION, HOSTILE_ROWS } from '../../render/fixtures.js';

const NAME = 'zotero_evidence_table';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function open(env: Record<string, string> = {}) {
  const c = await connect(tools, env);
  closers.push(c.close);
  return c.client;
}

const call = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: NAME, arguments: args })) as CallToolResult;

const textOf = (result: CallToolResult) => {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected text');
  return first.text;
};

function expectError(result: CallToolResult, code: string) {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(textOf(result).startsWith(`${code}: `)).toBe(true);
  return (result._meta as Record<string, Record<string, unknown>>)[ERROR_META_KEY]!;
}

const ROW = {
  item_key: 'ABCD2345',
  study: 'Smith 2020',
  finding: 'It helps.',
  quotation: 'It helped.',
  page: 3,
  page_exact: true,
  coverage: 'passage',
  support: 'supported',
};

describe('tools/list', () => {
  it('lists it as a write tool that touches nothing outside the machine, with closed row schemas', async () => {
    const client = await open();
    const tool = (await client.listTools()).tools.find((t) => t.name === NAME)!;
    // The title once, at the top level (clients prefer it to the annotation's).
    expect(tool.title).toBe('Render an evidence table');
    expect(tool.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(tool.description).toMatch(
      /^Render evidence rows as a Markdown\/CSV table from passages retrieved/,
    );
    expect(tool.description).toContain('it does NOT search or read the library');
    const input = tool.inputSchema as {
      properties: Record<string, { description?: string; items?: Record<string, unknown> }>;
      required: string[];
    };
    // The seed's parameters, and the optional idempotency_key every mutating tool takes.
    expect(Object.keys(input.properties).sort()).toEqual([
      'format',
      'idempotency_key',
      'overwrite',
      'question',
      'rows',
      'save_path',
    ]);
    expect(input.required.sort()).toEqual(['question', 'rows']);
    expect(input.properties.rows!.description).toBe('One row per study. Order is preserved.');
    expect(input.properties.question!.description).toBe(
      'The research question this table answers; it becomes the table caption.',
    );
    expect(input.properties.rows!.items).toMatchObject({ additionalProperties: false });
    // The output in outline (issue 22): the seed's fields, each with the seed's text; and
    // resource, the saved file's resource on a shared server (issue 23).
    const output = tool.outputSchema as { properties: Record<string, { description?: string }> };
    expect(Object.keys(output.properties).sort()).toEqual([
      'coverage',
      'format',
      'provenance',
      'question',
      'resource',
      'rowCount',
      'savedTo',
      'table',
      'warnings',
    ]);
    expect(output.properties.table!.description).toBe('The rendered table, ready to paste or save.');
  });

  it('is listed and answers in read-only mode: it writes files only, never the library', async () => {
    const client = await open({ ZOTEUS_READ_ONLY: 'true' });
    const listed = (await client.listTools()).tools.find((t) => t.name === NAME);
    expect(listed?.annotations?.readOnlyHint).toBe(false);
    const result = await call(client, { question: 'Q', rows: [ROW] });
    expect(result.isError).toBeFalsy();
  });
});

describe('tools/call', () => {
  it('renders hostile rows as Markdown: structuredContent, and the coverage line in the text', async () => {
    const client = await open();
    const result = await call(client, { question: HOSTILE_QUESTION, rows: HOSTILE_ROWS });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as Record<string, unknown>;
    expect(Object.keys(out)).toEqual([
      'table',
      'format',
      'question',
      'rowCount',
      'coverage',
      'warnings',
      'provenance',
    ]);
    expect(out).toMatchObject({
      format: 'markdown',
      question: HOSTILE_QUESTION,
      rowCount: HOSTILE_ROWS.length,
      coverage: { passage: 5, abstractOnly: 1, unavailable: 2 },
      provenance: PROVENANCE,
    });
    expect((out.warnings as string[]).length).toBe(6);
    const table = out.table as string;
    expect(table).toBe(
      readFileSync(join(import.meta.dirname, '../../render/golden/evidence-hostile.md'), 'utf8'),
    );
    const line =
      'Coverage: 5 of 8 rows rest on a retrieved passage, 1 on the abstract only, 2 on no retrieved text. 3 rows contradict their own evidence; 6 warnings.';
    expect(textOf(result)).toBe(`Evidence table (markdown, 8 rows). ${line}`);
    // "Returns the rendered table as text": the second content block is the output as JSON
    // text, the table in it as it is in structuredContent.
    expect(result.content).toHaveLength(2);
    expect(JSON.parse((result.content[1] as { text: string }).text)).toEqual(out);
    expect(table).toContain(`\n${line}\n`);
    const parsed = marked.lexer(table).find((t): t is Tokens.Table => t.type === 'table')!;
    expect(parsed.rows.every((r) => r.length === parsed.header.length)).toBe(true);
  });

  it('renders CSV that parses back cell for cell; no warnings field when there are none', async () => {
    const client = await open();
    const result = await call(client, { question: HOSTILE_QUESTION, rows: HOSTILE_ROWS, format: 'csv' });
    const out = result.structuredContent as { table: string; warnings: string[] };
    expect(out.table).toBe(
      readFileSync(join(import.meta.dirname, '../../render/golden/evidence-hostile.csv'), 'utf8'),
    );
    const records = parse(out.table, { record_delimiter: '\r\n' }) as string[][];
    HOSTILE_ROWS.forEach((row, i) => {
      const finding = records[i + 1]![2]!;
      expect(needsFormulaGuard(row.finding) ? finding.slice(1) : finding).toBe(row.finding);
    });
    expect(out.warnings.length).toBe(12);
    const clean = (await call(client, { question: 'Q', rows: [ROW] })).structuredContent!;
    expect(clean).not.toHaveProperty('warnings');
    expect(clean).not.toHaveProperty('savedTo');
  });

  it.each([
    [
      { rows: [ROW, { ...ROW, support: 'maybe' }] },
      'rows[1].support',
      /Row 2: support must be one of "supported", "contradicted", "uncertain" or "unverified"; got "maybe"/,
    ],
    [
      { rows: [ROW, ROW, { ...ROW, coverage: 'full' }] },
      'rows[2].coverage',
      /Row 3: coverage must be one of "passage", "abstract-only" or "unavailable"; got "full"/,
    ],
    [
      { rows: [{ ...ROW, extra: 1 }] },
      'rows[0]',
      /Row 1 has unknown field 'extra'; a row's fields are item_key, study/,
    ],
    [
      { rows: [{ ...ROW, item_key: 'abcd' }] },
      'rows[0].item_key',
      /Row 1: item_key must be a Zotero item key/,
    ],
    [{ rows: [{ ...ROW, coverage: undefined }] }, 'rows[0].coverage', /Row 1: coverage is missing/],
    [
      { rows: [{ ...ROW, page_exact: 'yes' }] },
      'rows[0].page_exact',
      /Row 1: page_exact must be true or false; got "yes"/,
    ],
    [{ rows: [] }, 'rows', /rows must hold at least one row/],
    [{ rows: [ROW], question: '  ' }, 'question', /question must not be empty/],
    [{ rows: [ROW], format: 'html' }, 'format', /format must be "markdown" or "csv"/],
  ])('refuses %j naming the row and the field', async (patch, field, message) => {
    const client = await open();
    const meta = expectError(await call(client, { question: 'Q', ...patch }), 'validation_error');
    expect(meta.field).toBe(field);
    expect(meta.message).toMatch(message);
  });

  it('refuses an unknown argument', async () => {
    const client = await open();
    const meta = expectError(
      await call(client, { question: 'Q', rows: [ROW], style: 'apa' }),
      'validation_error',
    );
    expect(meta.field).toBe('style');
  });

  it('saves locally (stdio: unconfined) the same bytes as `table`, and refuses to overwrite', async () => {
    const env = isolatedEnv();
    const client = await open(env);
    const path = join(env.HOME!, 'out', 'table.csv');
    const result = await call(client, { question: 'Q', rows: [ROW], format: 'csv', save_path: path });
    const out = result.structuredContent as { table: string; savedTo: string };
    expect(out.savedTo).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(out.table);
    expect(textOf(result)).toContain(`Saved to ${path}.`);
    const again = expectError(
      await call(client, { question: 'Q', rows: [ROW], save_path: path }),
      'conflict',
    );
    expect(again.hint).toContain('overwrite: true');
    expect(readFileSync(path, 'utf8')).toBe(out.table);
    const replaced = await call(client, { question: 'Q2', rows: [ROW], save_path: path, overwrite: true });
    expect(readFileSync(path, 'utf8')).toBe((replaced.structuredContent as { table: string }).table);
  });
});

describe('over HTTP (a shared deployment)', () => {
  async function serve() {
    const env = isolatedEnv();
    const config = loadConfig(env);
    const handle = await startHttp(() => buildMcpServer({ tools, config, env, version: CLI_VERSION }), {
      port: 0,
    });
    closers.push(() => handle.close());
    const client = async () => {
      const c = new Client({ name: 'evidence-http-test', version: '0.0.0' });
      await c.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
      closers.push(() => c.close());
      return c;
    };
    return { env, client };
  }

  it('saves inside the caller’s own folder under ZOTEUS_DATA_DIR; each session has its own', async () => {
    const { env, client } = await serve();
    const a = await client();
    const b = await client();
    const args = { question: 'Q', rows: [ROW], save_path: 'tables/t.md' };
    const savedA = ((await call(a, args)).structuredContent as { savedTo: string }).savedTo;
    const savedB = ((await call(b, args)).structuredContent as { savedTo: string }).savedTo;
    const callers = join(env.ZOTEUS_DATA_DIR!, 'callers');
    expect(savedA.startsWith(`${callers}/`)).toBe(true);
    expect(savedA.endsWith('/tables/t.md')).toBe(true);
    expect(savedA).not.toBe(savedB);
    expect(existsSync(savedA) && existsSync(savedB)).toBe(true);
  });

  it('refuses .., absolute paths outside the folder, ~ and escaping symlinks, writing nothing', async () => {
    const { env, client } = await serve();
    const c = await client();
    const victim = join(env.HOME!, 'victim.md');
    writeFileSync(victim, 'precious');
    for (const save_path of [
      '../escape.md',
      '../../escape.md',
      victim,
      join(env.HOME!, 'new.md'),
      '~/x.md',
    ]) {
      const meta = expectError(
        await call(c, { question: 'Q', rows: [ROW], save_path, overwrite: true }),
        'permission_denied',
      );
      expect(meta.field).toBe('save_path');
    }
    // Find this session's folder, plant a symlink to the outside in it, and try to use it.
    const ok = (
      (await call(c, { question: 'Q', rows: [ROW], save_path: 'first.md' })).structuredContent as {
        savedTo: string;
      }
    ).savedTo;
    const folder = join(ok, '..');
    symlinkSync(env.HOME!, join(folder, 'home-link'));
    symlinkSync(victim, join(folder, 'victim-link.md'));
    mkdirSync(join(env.HOME!, 'sub'));
    for (const save_path of ['home-link/x.md', 'home-link/sub/x.md', 'victim-link.md']) {
      expectError(
        await call(c, { question: 'Q', rows: [ROW], save_path, overwrite: true }),
        'permission_denied',
      );
    }
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(existsSync(join(env.HOME!, 'x.md')) || existsSync(join(env.HOME!, 'sub', 'x.md'))).toBe(false);
    expect(existsSync(join(env.HOME!, 'new.md')) || existsSync(join(env.HOME!, 'escape.md'))).toBe(false);
    expect(realpathSync(folder).startsWith(realpathSync(join(env.ZOTEUS_DATA_DIR!, 'callers')))).toBe(true);
  });
});
