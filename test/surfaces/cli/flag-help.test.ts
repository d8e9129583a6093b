/**
 * The CLI is not budgeted (issue 22, point 5): a parameter text cut for `tools/list` keeps its
 * explanation on the CLI through `onlyOn('cli', …)`, flags named by `paramRef` inside it, while
 * MCP publishes the short text (or none) unchanged.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { onlyOn, paramRef, renderRefs, toolRef } from '../../../src/core/call/refs.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { cliRefRenderer, commandRefs } from '../../../src/surfaces/cli/refs.js';
import { mcpRefRenderer } from '../../../src/surfaces/mcp/refs.js';
import { groups, tools } from '../../../src/tools/index.js';
import { connect } from '../mcp/harness.js';

const SEEDS = new Set(['zotero_manage_collections', 'zotero_list_collections', 'zotero_evidence_table']);

interface Node {
  name: string;
  mcp_tool: string | null;
  params: Array<{ name: string; help: string }>;
  subcommands: Node[];
}

async function schema(): Promise<Node> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const code = await runCli({
    argv: ['schema'],
    env: { NO_COLOR: '1', ZOT_CONFIG_DIR: '/nonexistent/zoteus-test' },
    io: { stdout, stderr: new PassThrough(), stdin: new PassThrough() },
    tools,
    groups,
  });
  expect(code).toBe(0);
  return (JSON.parse(out) as { data: Node }).data;
}

function commands(node: Node, path: string[] = []): Array<{ path: string; node: Node }> {
  const here = node.name ? [...path, node.name] : path;
  return [
    ...(node.mcp_tool ? [{ path: here.join(' '), node }] : []),
    ...node.subcommands.flatMap((child) => commands(child, here)),
  ];
}

function helpOf(all: Array<{ path: string; node: Node }>, path: string, param: string): string | undefined {
  return all.find((c) => c.path === path)?.node.params.find((p) => p.name === param)?.help;
}

describe('flag help on the CLI, short texts on MCP', () => {
  it('a CLI-only text renders the references it holds; MCP leaves it out whole', () => {
    const cli = cliRefRenderer(commandRefs(tools));
    const text = `Short.${onlyOn('cli', ` With ${paramRef('save_path')}: see ${toolRef('zotero_history')}.`)}`;
    expect(renderRefs(text, cli)).toBe('Short. With --save: see `zot history`.');
    expect(renderRefs(text, mcpRefRenderer)).toBe('Short.');
  });

  it('every flag of every command (but the seed tools’) says what it does', async () => {
    const all = commands(await schema()).filter((c) => !SEEDS.has(c.node.mcp_tool ?? ''));
    expect(all.length).toBeGreaterThan(40);
    const silent = all.flatMap((c) =>
      c.node.params.filter((p) => p.help.trim() === '').map((p) => `zot ${c.path} ${p.name}`),
    );
    expect(silent).toEqual([]);
  });

  it('zot search, zot read and zot merge explain their flags in CLI words', async () => {
    const all = commands(await schema());
    expect(helpOf(all, 'zot search', 'q')).toBe(
      'Words that must all match (case- and accent-insensitive; punctuation separates words). Omit to list items.',
    );
    expect(helpOf(all, 'zot list', 'sort')).toBe(
      'Sort field (default dateModified; with --days only dateAdded).',
    );
    expect(helpOf(all, 'zot list', 'since')).toBe(
      'Library version. Only items changed after it (for syncing; not a date).',
    );
    expect(helpOf(all, 'zot read', 'offset')).toBe(
      'Start the fields longer than --max-chars at this character (the end a previous answer gave in truncatedFields); shorter fields are always whole.',
    );
    expect(helpOf(all, 'zot merge', 'plan_id')).toBe(
      'With --apply: the plan id a preview returned, applied exactly; an item changed since is a conflict.',
    );
    expect(helpOf(all, 'zot pdf', 'q')).toBe(
      'Words to find: returns the best-matching passages (not with --page-range or --outline).',
    );
    expect(helpOf(all, 'zot undo', 'request_id')).toBe(
      'The request id of the write to undo, as its answer’s meta carries it (`zot history` lists them).',
    );
  });

  it('tools/list keeps the short texts: none, or the budgeted words alone', async () => {
    const mcp = await connect(tools, { ZOTEUS_TOOLSETS: 'all' });
    try {
      const listed = (await mcp.client.listTools()).tools;
      const props = (name: string) =>
        (listed.find((t) => t.name === name)?.inputSchema.properties ?? {}) as Record<
          string,
          { description?: string }
        >;
      expect(props('zotero_search_items').q).not.toHaveProperty('description');
      expect(props('zotero_search_items').sort).not.toHaveProperty('description');
      expect(props('zotero_search_items').since?.description).toBe('Library version.');
      expect(props('zotero_get_item').offset?.description).toBe('A truncatedFields end.');
      expect(props('zotero_merge_items').plan_id).not.toHaveProperty('description');
      expect(props('zotero_undo').request_id?.description).toBe(
        "As the write's answer carries it in meta (the history lists them).",
      );
    } finally {
      await mcp.close();
    }
  });
});
