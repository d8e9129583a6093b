/**
 * Toolsets (ZOTEUS_TOOLSETS, `zot mcp --toolsets`): which tools a server lists. Each set lists its
 * members, the start-here tool, and every tool a listed description names (so no description sends
 * the model to a tool it cannot see); read-only mode composes; a tool left out is refused with how to
 * enable it; an unknown set is a startup error naming the choices.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TOOLSETS, namedTools, parseToolsets } from '../../../src/core/toolsets.js';
import { changesLibrary } from '../../../src/core/tool.js';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { tools } from '../../../src/tools/index.js';
import { runZot, sandbox } from '../../support/cli.js';
import { connect, isolatedEnv } from './harness.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function listed(env: Record<string, string>) {
  const mcp = await connect(tools, env);
  closers.push(mcp.close);
  const { tools: list } = await mcp.client.listTools();
  return { names: list.map((t) => t.name), list, client: mcp.client };
}

const byName = new Map(tools.map((t) => [t.name, t]));
const START = tools.find((t) => t.startHere !== undefined)!;
const DEFAULT_AT_LEAST = [
  'zotero_whoami',
  'zotero_list_collections',
  'zotero_manage_collections',
  'zotero_search_items',
  'zotero_get_item',
  'zotero_get_fulltext',
  'zotero_semantic_search',
  'zotero_tag_audit',
  'zotero_evidence_table',
  'zotero_format_bibliography',
  'zotero_export',
];

/** Every tool listed is a member, the start-here tool, or named by a listed description; nothing named is missing. */
function expectClosed(names: string[], members: string[]) {
  const listedTools = names.map((n) => byName.get(n)!);
  const named = new Set(listedTools.flatMap((t) => namedTools(t.description, byName).map((x) => x.name)));
  for (const name of names)
    expect(
      members.includes(name) || name === START.name || named.has(name),
      `${name} is listed for no reason`,
    ).toBe(true);
  for (const name of named) expect(names, `a listed description names ${name}`).toContain(name);
  for (const member of members) expect(names).toContain(member);
}

describe('toolsets', () => {
  it('the default set: the tools every session needs and those their descriptions name, nothing else', async () => {
    const { names } = await listed({ ZOTEUS_TOOLSETS: '', ZOTEUS_ALLOW_DELETE: 'true' });
    expect(names).toEqual(expect.arrayContaining(DEFAULT_AT_LEAST));
    expectClosed(
      names,
      tools.filter((t) => t.inDefaultSet).map((t) => t.name),
    );
    expect(names.length).toBeLessThan(tools.length);
    // Unset and "default" are the same list, in the declarations' order.
    expect((await listed({ ZOTEUS_TOOLSETS: 'default', ZOTEUS_ALLOW_DELETE: 'true' })).names).toEqual(names);
    expect(names).toEqual(tools.map((t) => t.name).filter((n) => names.includes(n)));
  });

  it.each(TOOLSETS.map((s) => [s]))('the %s set lists its members and what they name', async (set) => {
    // With the delete tool on: a description may name it, and it is then listed.
    const { names } = await listed({ ZOTEUS_TOOLSETS: set, ZOTEUS_ALLOW_DELETE: 'true' });
    const members = tools.filter((t) => t.toolset === set).map((t) => t.name);
    expect(members.length).toBeGreaterThan(0);
    expectClosed(names, members);
  });

  it('sets combine, "all" lists every tool, and names are read case-insensitively', async () => {
    const a = (await listed({ ZOTEUS_TOOLSETS: 'files' })).names;
    const b = (await listed({ ZOTEUS_TOOLSETS: 'history' })).names;
    const both = (await listed({ ZOTEUS_TOOLSETS: ' Files , HISTORY ' })).names;
    expect(new Set(both)).toEqual(new Set([...a, ...b]));
    const all = (await listed({ ZOTEUS_TOOLSETS: 'all', ZOTEUS_ALLOW_DELETE: 'true' })).names;
    expect(all).toEqual(tools.map((t) => t.name));
  });

  it('read-only mode composes: the set’s read tools only', async () => {
    const { names } = await listed({ ZOTEUS_TOOLSETS: 'tags', ZOTEUS_READ_ONLY: 'true' });
    expect(names).toEqual(expect.arrayContaining(['zotero_list_tags', 'zotero_tag_audit']));
    expect(names).not.toContain('zotero_manage_tags');
    for (const name of names) expect(changesLibrary(byName.get(name)!, byName.get(name)!.tier)).toBe(false);
  });

  it('a tool the sets leave out is refused with the toolset that offers it', async () => {
    const { names, client } = await listed({ ZOTEUS_TOOLSETS: 'citations' });
    expect(names).not.toContain('zotero_undo');
    const result = await client.callTool({ name: 'zotero_undo', arguments: { request_id: 'abc' } });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toContain('zotero_undo is not offered by this server: it is in the toolset "history"');
    expect(text).toContain('ZOTEUS_TOOLSETS=default,history');
  });

  it('whoami says which toolsets are on and how to offer the others', async () => {
    const { client } = await listed({ ZOTEUS_TOOLSETS: 'files,history' });
    const result = await client.callTool({ name: 'zotero_whoami', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { toolsets: unknown }).toolsets).toEqual({
      on: ['files', 'history'],
      off: TOOLSETS.filter((s) => s !== 'files' && s !== 'history'),
      hint: 'Start the MCP server with ZOTEUS_TOOLSETS set to a comma-separated list (e.g. files,history,library), or all for every tool.',
    });
    const all = await (
      await listed({ ZOTEUS_TOOLSETS: 'all' })
    ).client.callTool({ name: 'zotero_whoami', arguments: {} });
    expect((all.structuredContent as { toolsets: unknown }).toolsets).toEqual({ on: ['all'], off: [] });
  });

  it('an unknown set is a startup error naming the choices', async () => {
    expect(() => parseToolsets('ZOTEUS_TOOLSETS', 'default,nope')).toThrow(
      "ZOTEUS_TOOLSETS names no toolset 'nope'; the toolsets are default, all, library, collections, items, notes, tags, fulltext, search, citations, files, metadata, history, evidence.",
    );
    let text = '';
    const stderr = new (await import('node:stream')).Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    });
    const code = await runMcp({ env: isolatedEnv({ ZOTEUS_TOOLSETS: 'nope' }), stderr });
    expect(code).toBe(3);
    expect(text).toMatch(
      /^zoteus: validation_error: ZOTEUS_TOOLSETS names no toolset 'nope'; the toolsets are default, all, /,
    );
  });
});

describe('zot mcp --toolsets', () => {
  const box = sandbox();
  afterAll(() => box.cleanup());
  const list = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`;

  it('overrides ZOTEUS_TOOLSETS for the server it starts', async () => {
    const run = await runZot(['mcp', '--toolsets', 'history'], {
      env: { ...box.env, ZOTEUS_TOOLSETS: 'citations' },
      stdin: list,
    });
    expect(run.code).toBe(0);
    const names = (run.lines()[0] as { result: { tools: { name: string }[] } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).toEqual(expect.arrayContaining(['zotero_history', 'zotero_undo', START.name]));
    expect(names).not.toContain('zotero_format_bibliography');
  });

  it('refuses an unknown set before serving, exit 3, nothing on stdout', async () => {
    const run = await runZot(['mcp', '--toolsets', 'everything'], { env: box.env, stdin: list });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain("ZOTEUS_TOOLSETS names no toolset 'everything'");
  });
});
