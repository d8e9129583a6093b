/**
 * Help speaks CLI (issue 16, point 20): every command's `--help` at a terminal names commands
 * and flags, not MCP tools and JSON inputs, keeps a sentence whole ("e.g." does not end one),
 * wraps to the terminal and never splits a command across lines.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { allCommands, buildTree } from '../../../src/surfaces/cli/tree.js';
import { groups, tools } from '../../../src/tools/index.js';

async function helpOf(path: readonly string[], columns: number): Promise<string> {
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns });
  const stderr = Object.assign(new PassThrough(), { isTTY: true });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const code = await runCli({
    argv: [...path, '--help'],
    env: { NO_COLOR: '1', COLUMNS: String(columns), ZOT_CONFIG_DIR: '/nonexistent/zoteus-test' },
    io: { stdout, stderr, stdin },
    tools,
    groups,
  });
  expect(code).toBe(0);
  return out;
}

const commands = allCommands(buildTree(tools, undefined, groups)).map((n) => n.path);
const inputFields = new Set(
  tools.flatMap((t) => Object.keys(t.input.shape)).filter((name) => name.includes('_')),
);

describe('--help at a terminal', () => {
  it.each(commands.map((p) => [p.join(' '), p]))(
    'zot %s --help names no MCP tool or input field',
    async (_, path) => {
      const text = await helpOf(path as string[], 100);
      const prose = text
        .split('\n')
        .filter((line) => !line.startsWith('Safety tier:'))
        .join('\n');
      expect(prose).not.toMatch(/\bzotero_[a-z_]+/);
      const named = [...inputFields].filter((field) =>
        new RegExp(`(?<![\\w-])${field}(?![\\w-])`).test(prose),
      );
      expect(named).toEqual([]);
      for (const line of text.split('\n')) {
        // A line is longer only when one word is (a list of choices), never from prose.
        // (or an option with its choices).
        if (line.length > 100) expect(line.trim()).toMatch(/^(\S+|--[\w-]+ <\S+>)$/);
      }
      // A command in a code span is never cut in two by the wrap.
      for (const line of text.split('\n')) expect((line.match(/`/g) ?? []).length % 2).toBe(0);
    },
  );

  it('zot search --help: the commands and flags it refers to, whole option texts, named placeholders', async () => {
    const text = await helpOf(['search'], 100);
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain('About a topic or question: `zot semantic-search`.');
    expect(flat).toContain('--type <type> As --tag.');
    expect(text).toContain('--type <type>');
    expect(text).toContain('--tag <tag>');
    expect(text).not.toContain('<json>');
    // The whole option text, not its first sentence.
    expect(flat).toContain('--library-id <integer> Group id, or user id with --library-type.');
    expect(flat).toContain('--tag <tag> a || b; -a: not; list: all.');
  });

  it('a command that is one action of a tool shows its own summary, not the tool’s description of every action', async () => {
    const text = await helpOf(['collection', 'delete'], 80);
    expect(text).toContain('Delete a collection and all its subcollections (the items stay in the library).');
    expect(text).not.toContain('Set action to one of');
    for (const line of text.split('\n')) if (line.includes(' ')) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('words of one command', () => {
  it('a command that is one action names its own inputs in its own words', async () => {
    const text = await helpOf(['collection', 'add'], 100);
    expect(text).toContain('COLLECTION_KEY  The key of the collection to add the items to.');
    expect(text).not.toContain('all actions except');
  });

  it('a surface’s own words stay on it: no prompt (an MCP feature) in CLI help, one default', async () => {
    const text = await helpOf(['evidence-table'], 100);
    expect(text).not.toContain('zotero-evidence-table prompt');
    expect(text).not.toContain('{{');
    expect(text.replace(/\s+/g, ' ')).toContain('Rendering to produce (default "markdown").');
    expect(text).not.toContain('(default: "markdown")');
  });
});

describe('zot schema', () => {
  it('gives every help text in the CLI’s words (the same tree the manifest holds)', async () => {
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
    const helps: string[] = [];
    const visit = (node: { help: string; params: Array<{ help: string }>; subcommands: unknown[] }) => {
      helps.push(node.help, ...node.params.map((p) => p.help));
      for (const child of node.subcommands) visit(child as typeof node);
    };
    visit((JSON.parse(out) as { data: Parameters<typeof visit>[0] }).data);
    expect(helps.filter((h) => /\bzotero_[a-z_]+/.test(h))).toEqual([]);
    const named = helps.filter((h) =>
      [...inputFields].some((field) => new RegExp(`(?<![\\w-])${field}(?![\\w-])`).test(h)),
    );
    expect(named).toEqual([]);
    expect(helps).toContain('As --tag.');
  });
});
