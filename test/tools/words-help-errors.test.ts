/**
 * Help texts and errors in each surface's words (issue 16, points 11 and 20): the prose of the
 * search, tag audit, update and library declarations reads right as `--help` at a terminal and
 * in MCP's tools/list, and the errors of `zot pdf`, `zot collection create`, `zot update` and
 * `zot sync` name flags and positionals on the CLI, inputs over MCP, and say what to do.
 */
import { PassThrough } from 'node:stream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../src/core/tool.js';
import { runCli } from '../../src/surfaces/cli/main.js';
import { allCommands, buildTree } from '../../src/surfaces/cli/tree.js';
import { describeTool } from '../../src/surfaces/mcp/schemas.js';
import { groups, tools } from '../../src/tools/index.js';
import type { DesktopWorld } from '../core/library/router-world.js';
import { zotAt } from '../surfaces/cli/terminal-harness.js';
import { connect } from '../surfaces/mcp/harness.js';
import { K, startFulltextWorld } from './fulltext/world.js';

/** `zot … --help` at a terminal 100 columns wide, its lines joined (wrapping aside). */
async function helpOf(path: readonly string[]): Promise<string> {
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  const stderr = Object.assign(new PassThrough(), { isTTY: true });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const code = await runCli({
    argv: [...path, '--help'],
    env: { NO_COLOR: '1', COLUMNS: '100', ZOT_CONFIG_DIR: '/nonexistent/zoteus-test' },
    io: { stdout, stderr, stdin },
    tools,
    groups,
  });
  expect(code).toBe(0);
  return out.replace(/\s+/g, ' ');
}

const tool = (name: string): AnyTool => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(name);
  return found;
};

describe('help in CLI words, descriptions that read on both surfaces', () => {
  it('zot search --help: the tag, since and other inputs as flags, sibling tools as commands', async () => {
    const text = await helpOf(['search']);
    expect(text).toContain(
      '(--qmode "everything": any field, notes, full text) or list them. About a topic or question: `zot semantic-search`.',
    );
    expect(text).toContain('--sort <dateModified|');
    expect(text).toContain('--type <type> As --tag.');
    expect(text).not.toMatch(/\bzotero_(?!search_items\b)[a-z_]+/);
    expect(text).not.toContain('added_within_days');
    expect(text).not.toContain('["key"');
    // Over MCP the same sentence names the inputs and the tools.
    expect(describeTool(tool('zotero_search_items')).description).toContain(
      '(qmode "everything": any field, notes, full text) or list them. About a topic or question: zotero_semantic_search.',
    );
  });

  it('zot tag audit --help: the vocabulary file’s form and the rename command in CLI words, nothing "over MCP"', async () => {
    const text = await helpOf(['tag', 'audit']);
    expect(text).toContain('renames to apply with `zot tag …` (library-wide).');
    expect(text).toContain(
      '--vocabulary <string> Path to a JSON file, or - for stdin. A JSON list of terms: strings, or {"term": "Deep Learning", "synonyms": ["DL"], "tier": "method"}. (required)',
    );
    expect(text).toContain('--include-subcollections');
    for (const mcpOnly of [
      'over MCP',
      'is true',
      'action "rename"',
      'On the CLI',
      'zotero_manage_tags',
      'collection_keys',
    ]) {
      expect(text).not.toContain(mcpOnly);
    }
    // Over MCP the rename tool by name, and the vocabulary's shape from its schema, not prose.
    const published = describeTool(tool('zotero_tag_audit'));
    expect(published.description).toContain('renames to apply with zotero_manage_tags (library-wide).');
    const vocabulary = (published.inputSchema.properties as Record<string, { description?: string }>)
      .vocabulary;
    expect(vocabulary?.description ?? '').toBe('');
  });

  it('zot update --help shows no JSON object or list', async () => {
    const text = await helpOf(['update']);
    expect(text).toContain('Tags, collections, trash: `zot tag …`, `zot collection …`, `zot trash …`.');
    expect(text).toContain('--field <string> name=value, e.g. volume=12. (repeatable)');
    expect(text).not.toContain('{"volume"');
    expect(text).not.toContain('["volume=12"]');
    expect(text).not.toContain('zotero_manage');
  });

  it('every command’s --library-type help reads in CLI words, never "this server"', async () => {
    const withType = allCommands(buildTree(tools, undefined, groups)).filter((n) =>
      n.params.some((p) => p.name === 'library_type'),
    );
    expect(withType.length).toBeGreaterThan(20);
    for (const node of withType) {
      const text = await helpOf(node.path);
      const seed = node.path[0] === 'collection';
      expect(text, node.path.join(' ')).toContain(
        seed
          ? '--library-type <user|group> Which library to address: "user" (a personal library) or "group" (a shared group library). Omit to use the configured default library. "group" on its own is refused: pass --library-id with it.'
          : '--library-type <user|group> Kind of --library-id.',
      );
      expect(text, node.path.join(' ')).not.toContain('this server');
    }
    const published = (name: string) =>
      describeTool(tool(name)).inputSchema.properties as Record<string, { description?: string }>;
    expect(published('zotero_search_items').library_type?.description).toBe('Kind of library_id.');
    // The seed tools keep the seeds' words on MCP.
    expect(published('zotero_list_collections').library_type?.description).toBe(
      'Which library to address: "user" (a personal library) or "group" (a shared group library). Omit to use the library this server is configured for. "group" on its own is refused: pass library_id with it.',
    );
  });
});

let world: DesktopWorld;
let mcp: Awaited<ReturnType<typeof connect>>;
beforeAll(async () => {
  world = await startFulltextWorld();
  mcp = await connect(tools as readonly AnyTool[], world.env());
});
afterAll(async () => {
  await mcp?.close();
  await world?.close();
});

/** The error envelope of `zot ARGS` with stdout piped. */
async function cliError(args: string[]): Promise<{ code: number; error: Record<string, unknown> }> {
  const run = await zotAt(args, { env: world.env() });
  return { code: run.code, error: (run.json() as { error: Record<string, unknown> }).error };
}

/** The text of an MCP call's result: "code: message" and "Hint: …" for an error. */
async function mcpText(name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
  return (r.content[0] as { text: string }).text;
}

describe('zot pdf / zotero_get_fulltext: errors that name the flag or the input', () => {
  it('a page range that ends before it starts', async () => {
    const cli = await cliError(['pdf', K.paper, '--page-range', '9-1']);
    expect(cli.code).toBe(3);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      field: 'page_range',
      message: '--page-range "9-1" ends before it starts: give the first page, then the last ("1-9").',
      hint: 'A page, or the first and the last page of a range: e.g. --page-range 7 or --page-range 3-5.',
    });
    expect(await mcpText('zotero_get_fulltext', { item_key: K.paper, page_range: '9-1' })).toBe(
      'validation_error: page_range "9-1" ends before it starts: give the first page, then the last ("1-9").\nHint: A page, or the first and the last page of a range: e.g. page_range: 7 or page_range: 3-5.',
    );
  });

  it('two modes at once, with a hint', async () => {
    const cli = await cliError(['pdf', K.paper, '--q', 'ice', '--page-range', '1']);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      message: 'Give at most one of --q, --page-range and --outline: one mode per call.',
      hint: 'Ask one at a time: --q for the passages that match, --page-range for pages, --outline for the table of contents.',
    });
    expect(await mcpText('zotero_get_fulltext', { item_key: K.paper, q: 'ice', page_range: '1' })).toBe(
      'validation_error: Give at most one of q, page_range and outline: one mode per call.\nHint: Ask one at a time: q for the passages that match, page_range for pages, outline: true for the table of contents.',
    );
  });

  it('a page range of a text without page breaks is refused, not cut into fragments', async () => {
    const cli = await cliError(['pdf', K.report, '--page-range', '2']);
    expect(cli.code).toBe(3);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      field: 'page_range',
      message:
        'The text of this document has no page breaks (Zotero’s index of it has none, and the file itself is not on this computer), so --page-range cannot pick its pages.',
      hint: 'Search it with --q (each passage gives its estimated page, pageApprox), or read it from the start without --page-range (400 characters).',
    });
    expect(await mcpText('zotero_get_fulltext', { item_key: K.report, page_range: '2-3' })).toBe(
      'validation_error: The text of this document has no page breaks (Zotero’s index of it has none, and the file itself is not on this computer), so page_range cannot pick its pages.\nHint: Search it with q (each passage gives its estimated page, pageApprox), or read it from the start without page_range (400 characters).',
    );
    // A PDF on this computer has its pages: the same range is answered.
    const paged = await zotAt(['pdf', K.paper, '--page-range', '2'], { env: world.env() });
    expect(paged.code).toBe(0);
  });

  it('an offset past the end says how long the text is; one at the end says nothing follows', async () => {
    const cli = await cliError(['pdf', K.report, '--offset', '99999']);
    expect(cli.code).toBe(3);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      field: 'offset',
      message: '--offset 99999 is past the end of the text: it is 400 characters long.',
      hint: 'Read from an offset of 0 to 400, or search the text with --q.',
    });
    expect(await mcpText('zotero_get_fulltext', { item_key: K.report, offset: 99999 })).toBe(
      'validation_error: offset: 99999 is past the end of the text: it is 400 characters long.\nHint: Read from an offset of 0 to 400, or search the text with q.',
    );
    const end = await zotAt(['pdf', K.report, '--offset', '400'], { env: world.env() });
    expect(end.code).toBe(0);
    const data = (end.json() as { data: { text: string; message: string } }).data;
    expect(data.text).toBe('');
    expect(data.message).toContain('Nothing after --offset 400: the text ends there (400 characters).');
  });
});

describe('other errors in the caller’s words', () => {
  it('zot collection create without a name: the positional, what it is, an example', async () => {
    const cli = await cliError(['collection', 'create']);
    expect(cli.code).toBe(3);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      field: 'name',
      message:
        'NAME: the name of the new collection is required (1 to 255 characters), e.g. `zot collection create "Reading list"`.',
    });
  });

  it('zot update without a change: a hint in flags on the CLI, in inputs over MCP', async () => {
    const cli = await cliError(['update', 'ABCD2345']);
    expect(cli.code).toBe(3);
    expect(cli.error).toMatchObject({
      code: 'validation_error',
      message: 'Nothing to change: give at least one field.',
      hint: 'e.g. --title "New title", --date 2021, --field volume=12.',
    });
    expect(await mcpText('zotero_update_item', { item_key: 'ABCD2345' })).toBe(
      'validation_error: Nothing to change: give at least one field.\nHint: e.g. title: "New title", date: 2021, fields: {"volume": "12"}.',
    );
  });

  it('zot sync without a key says why the desktop cannot answer, and what to do', async () => {
    world.server.clearLog();
    const cli = await cliError(['sync', '--since', '0']);
    expect(cli.code).toBe(2);
    expect(cli.error).toMatchObject({
      code: 'auth_missing',
      message:
        'Listing changes needs a Zotero API key: only the Zotero cloud keeps the log of deletions a sync reads (the desktop’s database does not).',
      hint: 'Set ZOTERO_API_KEY (or ZOT_API_KEY), or select a profile that has one (`zot config init`, then --profile). Create a key at https://www.zotero.org/settings/keys. A key that can read the library is enough. Without a key, `zot list --since VERSION` lists the items changed after a version, but not what was deleted.',
    });
    expect(await mcpText('zotero_sync', { since: 0 })).toBe(
      'auth_missing: Listing changes needs a Zotero API key: only the Zotero cloud keeps the log of deletions a sync reads (the desktop’s database does not).\nHint: Set ZOTERO_API_KEY in the environment of the MCP server. Create a key at https://www.zotero.org/settings/keys. A key that can read the library is enough. Without a key, zotero_search_items (include_children: false, since: VERSION) lists the items changed after a version, but not what was deleted.',
    );
    // Refused before any request.
    expect(world.server.log).toEqual([]);
  });
});
