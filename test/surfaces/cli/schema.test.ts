/** `zot schema`: the machine-readable command tree (agent-interface.md, "zot schema"). */
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';

const box = sandbox();
afterAll(() => box.cleanup());

interface Node {
  name: string;
  help: string;
  safety_tier: string | null;
  since: string;
  deprecated: boolean;
  mcp_tool: string | null;
  params: Array<Record<string, unknown>>;
  subcommands: Node[];
}

function walk(node: Node, out: Node[] = []): Node[] {
  out.push(node);
  for (const child of node.subcommands) walk(child, out);
  return out;
}

describe('zot schema', () => {
  it('prints the whole tree rooted at "zot" with full-path names', async () => {
    const r = await runZot(['schema'], { env: box.env });
    expect(r.code).toBe(0);
    const root = r.json().data as Node;
    expect(root.name).toBe('zot');
    const names = walk(root).map((n) => n.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'whoami',
        'schema',
        'config',
        'config get',
        'config show',
        'config init',
        'mcp',
      ]),
    );
    for (const node of walk(root)) {
      expect(Object.keys(node)).toEqual([
        'name',
        'help',
        'safety_tier',
        'since',
        'deprecated',
        'mcp_tool',
        'params',
        'subcommands',
      ]);
    }
  });

  it('every param has a documented type, and enums carry their choices', async () => {
    const root = (await runZot(['schema'], { env: box.env, bin: FIXTURE_ZOT })).json().data as Node;
    const types = new Set(['string', 'integer', 'number', 'boolean', 'array', 'enum']);
    for (const node of walk(root)) {
      for (const p of node.params) {
        expect(types.has(p.type as string), `${node.name} ${String(p.name)}`).toBe(true);
        expect(['argument', 'option']).toContain(p.kind);
        if (p.type === 'enum') expect(Array.isArray(p.choices)).toBe(true);
        if (p.kind === 'option') expect((p.flags as string[])[0]).toMatch(/^--[a-z][a-z-]*$/);
      }
    }
  });

  it('one node: `zot schema whoami`', async () => {
    const r = await runZot(['schema', 'whoami'], { env: box.env });
    expect(r.json().data).toEqual({
      name: 'whoami',
      help: 'Show the Zoteus version, the default library, read-only mode and which backends are set up.',
      safety_tier: 'read',
      since: '0.1.0',
      deprecated: false,
      mcp_tool: 'zotero_whoami',
      params: [],
      subcommands: [],
    });
  });

  it('a nested node: `zot schema fixture list` with typed params and defaults', async () => {
    const r = await runZot(['schema', 'fixture', 'list'], { env: box.env, bin: FIXTURE_ZOT });
    const node = r.json().data as Node;
    expect(node.name).toBe('fixture list');
    expect(node.mcp_tool).toBe('fixture_list');
    expect(node.params.find((p) => p.name === 'limit')).toEqual({
      name: 'limit',
      kind: 'option',
      type: 'integer',
      required: false,
      flags: ['--limit'],
      help: 'Page size.',
      default: 200,
    });
    expect(node.params.find((p) => p.name === 'mode')).toMatchObject({
      type: 'enum',
      choices: ['plain', 'wide'],
    });
    expect(node.params.find((p) => p.name === 'stream')).toMatchObject({
      type: 'boolean',
      flags: ['--stream'],
    });
  });

  it('mutating nodes carry their tier and the mutating flags; arguments come first', async () => {
    const node = (await runZot(['schema', 'fixture', 'write'], { env: box.env, bin: FIXTURE_ZOT })).json()
      .data as Node;
    expect(node.safety_tier).toBe('write');
    expect(node.params[0]).toMatchObject({ name: 'text', kind: 'argument', type: 'string', required: true });
    const flags = node.params.flatMap((p) => (p.flags as string[] | undefined) ?? []);
    expect(flags).toEqual(
      expect.arrayContaining([
        '--dry-run',
        '--idempotency-key',
        '--yes',
        '--no-interaction',
        '--library-id',
        '--library-type',
      ]),
    );
    const destroy = (
      await runZot(['schema', 'fixture', 'destroy'], { env: box.env, bin: FIXTURE_ZOT })
    ).json().data as Node;
    expect(destroy.safety_tier).toBe('destructive');
  });

  it('an unknown path is not_found with exit 4', async () => {
    const r = await runZot(['schema', 'collection', 'frobnicate'], { env: box.env });
    expect(r.code).toBe(4);
    expect(r.json().error).toMatchObject({
      code: 'not_found',
      message: 'No command `zot collection frobnicate`: did you mean `zot schema collection`?',
    });
  });

  it('agrees with --help: every command in the tree is listed in zot --help', async () => {
    const root = (await runZot(['schema'], { env: box.env, bin: FIXTURE_ZOT })).json().data as Node;
    const help = (await runZot(['--help'], { env: { ...box.env, ZOT_FORMAT: 'table' }, bin: FIXTURE_ZOT }))
      .stdout;
    for (const node of walk(root)) {
      if (node.subcommands.length === 0 && node.name !== 'zot')
        expect(help).toContain(`  ${node.name}  `.replace(/ {2}$/, ''));
    }
  });
});
