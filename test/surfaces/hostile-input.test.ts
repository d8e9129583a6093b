/**
 * Hostile input on both surfaces (issue 13): JSON nested thousands of levels deep, input
 * without end, `__proto__` / `constructor` / `prototype` keys. Each gets `validation_error`
 * (exit 3 on the CLI) naming the input, no stack trace and no `internal_error`, and changes
 * nothing: the Zotero test server sees no request at all. The CLI runs as the built binary
 * (`npm run build` first); MCP through a real SDK client, in process and over stdio.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../src/core/tool.js';
import { runMcp } from '../../src/surfaces/mcp/run.js';
import { tools } from '../../src/tools/index.js';
import { envelope, mcpOf, startItemsWorld, type ItemsWorld } from '../tools/items/setup.js';
import { isolatedEnv } from './mcp/harness.js';

const DEEP = 6000;

/** JSON text of an array nested `levels` deep around `inner`. */
const deepText = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);
/** The same as a value, built without recursion. */
function deepValue(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i += 1) value = [value];
  return value;
}

const deepItemText = `[{"itemType":"book","title":"T","extra":${deepText(DEEP)}}]`;
const deepBibtex = `@article{k,\n title = {${'{'.repeat(DEEP)}x${'}'.repeat(DEEP)}},\n doi = {10.1/x}\n}\n`;
const ROW = {
  item_key: 'ABCD2345',
  study: 'S',
  finding: 'F',
  coverage: 'unavailable',
  support: 'unverified',
};

let w: ItemsWorld;
let mcp: Awaited<ReturnType<typeof mcpOf>>;
beforeAll(async () => {
  w = await startItemsWorld();
  mcp = await mcpOf(w);
});
afterAll(async () => {
  await mcp.close();
  await w.close();
});
beforeEach(() => w.world.server.clearLog());

/** Nothing that betrays a crash: no stack frame, no RangeError, no internal_error. */
function expectNoCrash(text: string): void {
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toContain('RangeError');
  expect(text).not.toContain('Maximum call stack');
  expect(text).not.toContain('internal_error');
}

describe('the CLI (built binary)', () => {
  async function refused(args: string[], stdin: string | undefined, field: string, message: RegExp) {
    const r = await w.zot(args, {}, stdin);
    expectNoCrash(r.stdout + r.stderr);
    expect(r.code).toBe(3);
    const e = envelope(r);
    expect(e.ok).toBe(false);
    expect(e.error).toMatchObject({ code: 'validation_error', field });
    expect(e.error.message).toMatch(message);
    expect(w.requests()).toEqual([]);
    return e;
  }

  it('zot create FILE|-: items nested thousands deep, from stdin and from a file', async () => {
    await refused(
      ['create', '-'],
      deepText(DEEP),
      'items',
      /^ITEMS \(stdin\) is nested deeper than 64 levels/,
    );
    await refused(['create', '-'], deepItemText, 'items', /^ITEMS \(stdin\) is nested deeper than 64 levels/);
    const file = join(w.env().HOME!, 'deep.json');
    writeFileSync(file, deepItemText);
    await refused(['create', file], undefined, 'items', /^ITEMS \(.*deep\.json\) is nested deeper/);
    await refused(['create', file, '--dry-run'], undefined, 'items', /is nested deeper than 64/);
  });

  it('zot create FILE: a file without end is refused once it passes 128 MiB', async () => {
    await refused(
      ['create', '/dev/zero'],
      undefined,
      'items',
      /^ITEMS \(\/dev\/zero\) holds more than 128 MiB/,
    );
  });

  it('zot evidence-table --rows -: rows nested thousands deep', async () => {
    await refused(
      ['evidence-table', '--question', 'Q', '--rows', '-'],
      deepText(DEEP, JSON.stringify(ROW)),
      'rows',
      /^--rows \(stdin\) is nested deeper than 64 levels/,
    );
  });

  it('zot add --from-file: CSL-JSON and BibTeX records nested thousands deep', async () => {
    await refused(
      ['add', '--from-file', '-'],
      deepText(DEEP),
      'records',
      /^The records to import \(CSL-JSON\) are nested deeper than 64 levels/,
    );
    await refused(
      ['add', '--from-file', '-'],
      deepBibtex,
      'records',
      /^The records to import \(BibTeX\) are nested deeper than 64 levels/,
    );
    await refused(['add', '--from-file', '-', '--dry-run'], deepBibtex, 'records', /nested deeper than 64/);
  });

  it('zot create: an item with a __proto__ key is refused by name, not silently dropped', async () => {
    const items =
      '[{"itemType":"book","title":"T"},{"itemType":"book","title":"U","__proto__":{"title":"V"}}]';
    const e = await refused(['create', '-'], items, 'items', /^ITEMS\[1\]: unknown field '__proto__'/);
    expect(e.error.hint).toContain('__proto__');
    await refused(['create', '-', '--dry-run'], items, 'items', /unknown field '__proto__'/);
    const nested = '[{"itemType":"book","creators":[{"creatorType":"author","name":"A","__proto__":{}}]}]';
    await refused(['create', '-'], nested, 'items', /^ITEMS\[0\]\.creators\[0\]: unknown field '__proto__'/);
  });

  it('zot create: constructor and prototype keys in an item are unknown fields like any other', async () => {
    const items = JSON.stringify([
      { itemType: 'book', title: 'T', constructor: { prototype: { polluted: true } }, prototype: 'x' },
    ]);
    const e = await refused(['create', '-'], items, 'items', /invalid/);
    expect(e.error.message).toContain("items[0].constructor: 'constructor' is not a field of book");
    expect(e.error.message).toContain("items[0].prototype: 'prototype' is not a field of book");
  });
});

describe('MCP (in process, through an SDK client)', () => {
  async function refused(name: string, args: Record<string, unknown>, field: string, message: RegExp) {
    const result = await mcp.call(name, args);
    const text = JSON.stringify(result);
    expectNoCrash(text);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const error = result._meta?.['zoteus/error'] as { code: string; message: string; field?: string };
    expect(error).toMatchObject({ code: 'validation_error', field });
    expect(error.message).toMatch(message);
    expect((result.content[0] as { text: string }).text.startsWith('validation_error: ')).toBe(true);
    expect(w.requests()).toEqual([]);
    return error;
  }

  it('zotero_create_items and zotero_evidence_table: values nested thousands deep', async () => {
    await refused(
      'zotero_create_items',
      { items: deepValue(DEEP) },
      'items',
      /^items is nested deeper than 64 levels/,
    );
    await refused(
      'zotero_create_items',
      { items: [{ itemType: 'book', title: 'T', extra: deepValue(DEEP) }] },
      'items',
      /^items is nested deeper than 64 levels/,
    );
    await refused(
      'zotero_evidence_table',
      { question: 'Q', rows: [{ ...ROW, note: deepValue(DEEP) }] },
      'rows',
      /^rows is nested deeper than 64 levels/,
    );
  });

  it('zotero_import: CSL-JSON and BibTeX records nested thousands deep', async () => {
    await refused(
      'zotero_import',
      { records: deepText(DEEP) },
      'records',
      /^The records to import \(CSL-JSON\) are nested deeper/,
    );
    await refused(
      'zotero_import',
      { records: deepBibtex, format: 'bibtex' },
      'records',
      /\(BibTeX\) are nested deeper/,
    );
  });

  it('zotero_get_item and zotero_create_items: a __proto__ key is an unknown argument, at the top and inside items', async () => {
    // JSON.parse, as a transport does: an object literal would set the prototype instead.
    const top = JSON.parse('{"item_key":"ABCD2345","__proto__":{"polluted":true}}') as Record<
      string,
      unknown
    >;
    await refused(
      'zotero_get_item',
      top,
      '__proto__',
      /^Unknown argument '__proto__' for zotero_get_item\.$/,
    );
    const inItem = JSON.parse(
      '{"items":[{"itemType":"book","title":"T","__proto__":{"title":"U"}}]}',
    ) as Record<string, unknown>;
    await refused('zotero_create_items', inItem, 'items', /items\[0\]: unknown field '__proto__'/);
  });

  it('constructor and prototype keys are refused as unknown, and pollute nothing', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    await refused(
      'zotero_get_item',
      { item_key: 'ABCD2345', constructor: { prototype: { polluted: true } } },
      'constructor',
      /^Unknown argument 'constructor'/,
    );
    const items = [
      { itemType: 'book', title: 'T', constructor: { prototype: { polluted: true } }, prototype: {} },
    ];
    const error = await refused('zotero_create_items', { items }, 'items', /invalid/);
    expect(error.message).toContain("items[0].constructor: 'constructor' is not a field of book");
    expect(error.message).toContain("items[0].prototype: 'prototype' is not a field of book");
    await refused(
      'zotero_evidence_table',
      { question: 'Q', rows: [{ ...ROW, constructor: { prototype: { polluted: true } } }] },
      'rows[0]',
      /constructor/,
    );
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('MCP over stdio: JSON text as a client sends it', () => {
  it('refuses a __proto__ argument and deep nesting, sending nothing', async () => {
    let out = '';
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
    const stdin = new PassThrough();
    const running = runMcp({
      env: isolatedEnv({ ZOTERO_API_URL: w.world.server.url }),
      stdin,
      stdout,
      stderr: new PassThrough(),
      tools: tools as readonly AnyTool[],
    });
    const call = (id: number, name: string, args: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}\n`;
    stdin.end(
      [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}\n',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        call(2, 'zotero_get_item', '{"item_key":"ABCD2345","__proto__":{"polluted":true}}'),
        call(3, 'zotero_create_items', `{"items":${deepText(DEEP)}}`),
      ].join(''),
    );
    expect(await running).toBe(0);
    const replies = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: CallToolResult });
    const byId = (id: number) => replies.find((r) => r.id === id)!.result;
    expect(byId(2)).toMatchObject({ isError: true, _meta: { 'zoteus/error': { code: 'validation_error' } } });
    expect((byId(2).content[0] as { text: string }).text).toMatch(
      /^validation_error: Unknown argument '__proto__'/,
    );
    expect((byId(3).content[0] as { text: string }).text).toMatch(
      /^validation_error: items is nested deeper than 64 levels/,
    );
    expectNoCrash(out);
    expect(w.requests()).toEqual([]);
  });
});
