/**
 * Core code names no CLI command and no MCP tool in its text, and never branches on the
 * surface: a message refers to another tool or an input through core/call/refs.ts, and each
 * surface renders the reference in its own words. Checked three ways: the source of core and
 * render, every reference to every tool command rendered by both surfaces, and real refusals
 * on both surfaces.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paramRef, renderRefs, toolRef, onlyOn } from '../../src/core/call/refs.js';
import type { AnyTool } from '../../src/core/tool.js';
import { cliRefRenderer, commandRefs } from '../../src/surfaces/cli/refs.js';
import { mcpRefRenderer } from '../../src/surfaces/mcp/refs.js';
import { tools } from '../../src/tools/index.js';
import { KEY, startWorld, type World } from '../core/library/world.js';
import { runZot } from '../support/cli.js';
import { connect } from '../surfaces/mcp/harness.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const all = tools as readonly AnyTool[];
const toolNames = all.map((t) => t.name);
const cli = cliRefRenderer(commandRefs(all));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The source without comments, and with the arguments of toolRef(...) taken out. */
function code(text: string): string {
  return (
    text
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
      .replace(/(toolRef|commandRef)\(\s*'zotero_[a-z_]+'/g, "$1('REF'")
      // Words for the CLI alone (a built-in such as `zot config init`) are the CLI's to show.
      .replace(/onlyOn\('cli', '[^']*'\)/g, "onlyOn('cli', '')")
  );
}

describe('core and render speak through references', () => {
  // deps.ts is where a surface says which it is: it derives the process lifetime from that.
  const sources = ['src/core', 'src/render']
    .flatMap((d) => files(join(ROOT, d)))
    .filter((p) => !p.endsWith(join('src', 'core', 'deps.ts')));

  it('no source of core or render names a tool or a `zot` command, or asks which surface it serves', () => {
    // `zot` followed by a command word, quoted or not ("(zot index status shows it)").
    const named = new RegExp(`\\b(?:${toolNames.join('|')})\\b|\\bzot [a-z]`);
    const found: string[] = [];
    for (const path of sources) {
      const text = code(readFileSync(path, 'utf8'));
      text.split('\n').forEach((line, i) => {
        if (named.test(line) || /deps\.surface|surface === /.test(line))
          found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('no tool, prompt or resource asks which surface it serves', () => {
    const found: string[] = [];
    for (const path of ['src/tools', 'src/prompts', 'src/resources'].flatMap((d) => files(join(ROOT, d)))) {
      code(readFileSync(path, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          if (/\bsurface\b/.test(line)) found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it.each(all.flatMap((t) => t.cli.map((c) => [`${t.name} ${c.path.join(' ')}`, t, c] as const)))(
    '%s: a reference renders as a command on the CLI and as the tool on MCP',
    (_label, tool, command) => {
      const args: Record<string, string> = { ...(command.preset as Record<string, string>) };
      for (const name of command.args ?? []) args[name] = name.toUpperCase();
      const ref = toolRef(tool.name, args);
      const onCli = renderRefs(ref, cli);
      expect(onCli).toBe(
        `\`zot ${[...command.path, ...(command.args ?? []).map((a) => a.toUpperCase())].join(' ')}\``,
      );
      const onMcp = renderRefs(ref, mcpRefRenderer);
      expect(onMcp.startsWith(tool.name)).toBe(true);
      expect(onMcp).not.toMatch(/\bzot /);
    },
  );

  it('inputs and one-surface words', () => {
    const text = `Pass ${paramRef('save_path')} or ${paramRef('confirm', 'true')}${onlyOn('cli', ' (see `zot config init`)')}.`;
    expect(renderRefs(text, cli)).toBe('Pass --save or --confirm (see `zot config init`).');
    expect(renderRefs(text, mcpRefRenderer)).toBe('Pass save_path or confirm: true.');
  });
});

describe('real refusals on both surfaces', () => {
  let world: World;
  let mcp: Awaited<ReturnType<typeof connect>>;
  beforeAll(async () => {
    world = await startWorld();
    mcp = await connect(all, { ...world.env(), ZOTERO_API_URL: world.server.url, ZOTERO_API_KEY: KEY });
  });
  afterAll(async () => {
    await mcp.close();
    await world.close();
  });

  // Each a refusal whose hint refers to another tool or an input.
  const cases: Array<{ name: string; cli: string[]; mcp: { tool: string; args: Record<string, unknown> } }> =
    [
      {
        name: 'a collection that does not exist',
        cli: ['collection', 'rename', 'ZZZZ2345', 'x'],
        mcp: {
          tool: 'zotero_manage_collections',
          args: { action: 'rename', collection_key: 'ZZZZ2345', name: 'x' },
        },
      },
      {
        name: 'permanent deletion turned off',
        cli: ['delete', 'ABCD2345', '--yes'],
        mcp: { tool: 'zotero_delete_items', args: { item_keys: ['ABCD2345'] } },
      },
      {
        name: 'an item that does not exist',
        cli: ['note', 'add', 'ZZZZ2345', 'text'],
        mcp: { tool: 'zotero_create_note', args: { parent_item: 'ZZZZ2345', text: 'text' } },
      },
      {
        name: 'a group type without an id',
        cli: ['collection', 'list', '--library-type', 'group'],
        mcp: { tool: 'zotero_list_collections', args: { library_type: 'group' } },
      },
    ];

  it.each(cases)('$name', async (c) => {
    const r = await runZot(c.cli, { env: world.env() });
    const cliText = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(cliText).not.toMatch(/\bzotero_[a-z]/);
    expect(cliText).not.toContain('{{');
    const result = await mcp.client.callTool({ name: c.mcp.tool, arguments: c.mcp.args });
    const mcpText = JSON.stringify(result);
    expect(result.isError).toBe(true);
    expect(mcpText).not.toMatch(/`zot |'zot /);
    expect(mcpText).not.toContain('{{');
  });
});

describe('the MCP server names no tool itself', () => {
  it('its instructions name the tool whose declaration says startHere', async () => {
    const mcp = await connect(all, {});
    try {
      const text = mcp.client.getInstructions() ?? '';
      const first = all.find((t) => t.startHere !== undefined);
      expect(first).toBeDefined();
      expect(text).toContain(`Start with ${first?.name} ${first?.startHere}.`);
    } finally {
      await mcp.close();
    }
  });

  it('the surface sources name no tool', () => {
    const named = new RegExp(`\\b(?:${toolNames.join('|')})\\b`);
    const found: string[] = [];
    for (const path of files(join(ROOT, 'src', 'surfaces'))) {
      code(readFileSync(path, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          if (named.test(line)) found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
