/**
 * The order of checks (agent-interface.md), for every mutating command of every tool, on both
 * surfaces, with the Zotero test server counting requests: each refusal happens at its step,
 * whatever later steps would also refuse, and sends nothing but the (cached) key check.
 *
 *   validation → offline gates (read-only mode) → dry-run → credentials → key check
 *   → confirmation → the work
 *
 * Valid inputs are made from each declaration's published schema (keys where a key goes, the
 * first choice of an enum, …); a command the generator cannot fill fails here, so a new tool
 * cannot skip the table.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool, CliCommand } from '../../src/core/tool.js';
import { describeTool } from '../../src/surfaces/mcp/schemas.js';
import { tools } from '../../src/tools/index.js';
import { KEY, READ_KEY, startWorld, type World } from '../core/library/world.js';
import { runZot } from '../support/cli.js';
import { connect } from '../surfaces/mcp/harness.js';

type Schema = {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  minItems?: number;
  anyOf?: Schema[];
};

const KEY_OF_ITEM = 'ABCD2345';

/** Inputs a schema cannot show (objects of a tool's own shape), by field name. */
const EXAMPLES: Record<string, unknown> = {
  items: [{ itemType: 'book', title: 'Ordered' }],
  rows: [{ study: 'S', finding: 'F', coverage: 'abstract-only', support: 'unverified' }],
  question: 'Q?',
  // A key whose name does not end in `key` (the published schema carries no key pattern).
  parent_item: KEY_OF_ITEM,
  records: '10.1234/ordered',
  doi: '10.1234/ordered',
  new_name: 'renamed',
  conditions: ['title contains ordered'],
};

/** What a command needs beyond its required inputs (something to change), by tool. */
const EXTRA: Record<string, Record<string, unknown>> = {
  zotero_update_item: { title: 'A new title' },
  zotero_attach_file: { content_base64: 'b3JkZXJlZA==', filename: 'ordered.txt' },
  // A preview is a read; the order of a write's checks holds for applying.
  zotero_update_status: { apply: true },
  zotero_enrich: { apply: true },
  zotero_merge_items: { apply: true, item_keys: ['BCDE2345'] },
};

function valueFor(name: string, schema: Schema): unknown {
  if (name in EXAMPLES) return EXAMPLES[name];
  const s = schema.anyOf?.find((a) => a.type !== 'null') ?? schema;
  if (s.enum) return s.enum[0];
  if (s.type === 'array') return [valueFor(name.replace(/s$/, ''), s.items ?? { type: 'string' })];
  if (s.type === 'integer' || s.type === 'number') return Math.max(1, s.minimum ?? 1);
  if (s.type === 'boolean') return true;
  if (s.type === 'string')
    return s.pattern?.includes('23456789') || /key$/.test(name) ? KEY_OF_ITEM : 'ordered';
  throw new Error(`no example for input ${name} (${JSON.stringify(schema).slice(0, 80)})`);
}

/** A valid input of one command: its preset, and a value for every required input. */
function validInput(tool: AnyTool, command: CliCommand): Record<string, unknown> {
  const schema = describeTool(tool).inputSchema as Schema;
  const input: Record<string, unknown> = { ...(command.preset ?? {}), ...(EXTRA[tool.name] ?? {}) };
  const needed = new Set([...(schema.required ?? []), ...(command.args ?? [])]);
  for (const name of needed) {
    if (name in input || name === 'idempotency_key') continue;
    input[name] = valueFor(name, schema.properties?.[name] ?? {});
  }
  // Superrefinements an action adds (create needs a name, …): fill from the action's description.
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if (typeof field === 'string' && !(field in input))
        input[field] = valueFor(field, schema.properties?.[field] ?? {});
    }
  }
  if (!tool.input.safeParse(input).success)
    throw new Error(`${tool.name} ${command.path.join(' ')}: no valid input`);
  return input;
}

/** The argv of a command with that input: positionals in order, the rest as options. */
function argvOf(command: CliCommand, input: Record<string, unknown>): string[] {
  const argv = [...command.path];
  for (const name of command.args ?? []) {
    const v = input[name];
    // A positional file (`zot create FILE|-`) reads stdin, given below.
    if (command.files?.[name]) argv.push('-');
    else argv.push(...(Array.isArray(v) ? v.map(String) : [String(v)]));
  }
  for (const [name, value] of Object.entries(input)) {
    if ((command.args ?? []).includes(name) || (command.preset && name in command.preset)) continue;
    const flag = `--${command.flags?.[name] ?? name.replace(/_/g, '-')}`;
    if (command.files?.[name]) continue; // files are given below
    if (typeof value === 'boolean') argv.push(flag);
    else if (Array.isArray(value))
      for (const v of value) argv.push(flag, typeof v === 'string' ? v : JSON.stringify(v));
    else argv.push(flag, String(value));
  }
  return argv;
}

interface Case {
  label: string;
  tool: AnyTool;
  command: CliCommand;
  tier: string;
  input: Record<string, unknown>;
  argv: string[];
  stdin: string | undefined;
}

const cases: Case[] = [];
for (const tool of tools as readonly AnyTool[]) {
  for (const command of tool.cli) {
    const tier = command.tier ?? tool.tier;
    if (tier === 'read' || tool.writesFilesOnly) continue;
    const input = validInput(tool, command);
    const fileFields = Object.keys(command.files ?? {}).filter((f) => f in input);
    const argv = argvOf(command, input);
    let stdin: string | undefined;
    for (const field of fileFields) {
      if (!(command.args ?? []).includes(field))
        argv.push(`--${command.flags?.[field] ?? field.replace(/_/g, '-')}`, '-');
      stdin = typeof input[field] === 'string' ? (input[field] as string) : JSON.stringify(input[field]);
    }
    cases.push({ label: `zot ${command.path.join(' ')}`, tool, command, tier, input, argv, stdin });
  }
}

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

const sent = () => world.server.log.map((e) => `${e.method} ${e.path}`);
const keyCheckOnly = (requests: string[]) => requests.every((r) => r === 'GET /keys/current');

async function zot(c: Case, extraArgv: string[], env: Record<string, string | undefined>) {
  world.server.clearLog();
  // stdout is a pipe, so the answer is JSON without --json.
  const r = await runZot([...c.argv, ...extraArgv], {
    env: world.env({ ZOTEUS_ALLOW_DELETE: 'true', ...env }),
    ...(c.stdin !== undefined ? { stdin: c.stdin } : {}),
  });
  const body = r.json() as { ok: unknown; error?: { code: string } };
  return { code: r.code, error: body.error?.code, ok: body.ok, requests: sent() };
}

describe('the order of checks on the CLI, for every mutating command', () => {
  it('covers every mutating command of the tool list', () => {
    expect(cases.length).toBeGreaterThan(15);
  });

  describe.each(cases)('$label', (c) => {
    it('an unknown option is validation_error before read-only mode or credentials', async () => {
      const r = await zot(c, ['--no-such-option', 'x'], {
        ZOTEUS_READ_ONLY: 'true',
        ZOTERO_API_KEY: undefined,
      });
      expect([r.code, r.error]).toEqual([3, 'validation_error']);
      expect(r.requests).toEqual([]);
    });

    it('read-only mode refuses before credentials; --dry-run still plans, offline and keyless', async () => {
      const r = await zot(c, [], { ZOTEUS_READ_ONLY: 'true', ZOTERO_API_KEY: undefined });
      expect([r.code, r.error]).toEqual([2, 'permission_denied']);
      const dry = await zot(c, ['--dry-run'], { ZOTERO_API_KEY: undefined });
      expect([dry.code, dry.ok]).toEqual([0, true]);
      expect([...r.requests, ...dry.requests]).toEqual([]);
    });

    it('no key: auth_missing before any confirmation, nothing sent', async () => {
      const r = await zot(c, [], { ZOTERO_API_KEY: undefined });
      expect([r.code, r.error]).toEqual([2, 'auth_missing']);
      expect(r.requests).toEqual([]);
    });

    it('a key that may not write: permission_denied after the key check alone', async () => {
      const r = await zot(c, [], { ZOTERO_API_KEY: READ_KEY });
      expect([r.code, r.error]).toEqual([2, 'permission_denied']);
      expect(keyCheckOnly(r.requests)).toBe(true);
    });

    it.runIf(c.tier === 'destructive')(
      'destructive without --yes off a TTY: confirmation_required after the key check alone',
      async () => {
        const r = await zot(c, [], { ZOTERO_API_KEY: KEY });
        expect([r.code, r.error]).toEqual([3, 'confirmation_required']);
        expect(keyCheckOnly(r.requests)).toBe(true);
      },
    );
  });
});

describe('the order of checks over MCP, for every mutating tool', () => {
  const byTool = [...new Map(cases.map((c) => [c.tool.name, c])).values()];
  const open = (env: Record<string, string>) =>
    connect(tools as readonly AnyTool[], {
      ...world.env(),
      ZOTERO_API_URL: world.server.url,
      ZOTEUS_ALLOW_DELETE: 'true',
      ...env,
    });
  const codeOf = (r: CallToolResult) =>
    (r._meta as Record<string, { code: string }> | undefined)?.['zoteus/error']?.code;

  it.each(byTool)('$tool.name', async (c) => {
    const call = async (env: Record<string, string>, args: Record<string, unknown>) => {
      const mcp = await open(env);
      try {
        world.server.clearLog();
        const r = (await mcp.client.callTool({ name: c.tool.name, arguments: args })) as CallToolResult;
        return { code: codeOf(r), requests: sent() };
      } finally {
        await mcp.close();
      }
    };
    const unknown = await call({ ZOTEUS_READ_ONLY: 'true' }, { ...c.input, no_such_argument: 1 });
    expect(unknown).toEqual({ code: 'validation_error', requests: [] });
    expect(await call({ ZOTEUS_READ_ONLY: 'true' }, c.input)).toEqual({
      code: 'permission_denied',
      requests: [],
    });
    expect(await call({ ZOTERO_API_KEY: '' }, c.input)).toEqual({ code: 'auth_missing', requests: [] });
    const readKey = await call({ ZOTERO_API_KEY: READ_KEY }, c.input);
    expect(readKey.code).toBe('permission_denied');
    expect(keyCheckOnly(readKey.requests)).toBe(true);
  });
});

describe('a person at a terminal is never asked about a call that will be refused', () => {
  const onTty = async (argv: string[], env: Record<string, string | undefined>) => {
    world.server.clearLog();
    // stdin is not answered: a prompt would wait for it and the run would be killed.
    const r = await runZot(argv, { env: world.env(env), tty: true, timeoutMs: 15_000 });
    return { out: r.stdout + r.stderr, requests: sent() };
  };

  it('permanent deletion turned off: permission_denied, no [y/N]', async () => {
    const r = await onTty(['delete', KEY_OF_ITEM], { ZOTEUS_ALLOW_DELETE: undefined });
    expect(r.out).toContain('ZOTEUS_ALLOW_DELETE');
    expect(r.out).not.toMatch(/\[y\/N\]/i);
    expect(r.requests).toEqual([]);
  });

  it('no key: auth_missing, no [y/N]', async () => {
    const r = await onTty(['collection', 'delete', KEY_OF_ITEM], { ZOTERO_API_KEY: undefined });
    expect(r.out).toMatch(/ZOTERO_API_KEY/);
    expect(r.out).not.toMatch(/\[y\/N\]/i);
    expect(r.requests).toEqual([]);
  });

  it('a key that may not write: permission_denied, no [y/N]', async () => {
    const r = await onTty(['collection', 'delete', KEY_OF_ITEM], { ZOTERO_API_KEY: READ_KEY });
    expect(r.out).not.toMatch(/\[y\/N\]/i);
    expect(keyCheckOnly(r.requests)).toBe(true);
  });
});
