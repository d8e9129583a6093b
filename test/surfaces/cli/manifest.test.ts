/** The build-time manifest that lets `zot schema` start fast is the live tree, exactly. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import { paramsTable, type ParamsTable } from '../../../src/surfaces/cli/params.js';
import { buildTree, findNode, schemaNode, type CommandNode } from '../../../src/surfaces/cli/tree.js';
import { groups, tools } from '../../../src/tools/index.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { treeSpeaker } from '../../../src/surfaces/cli/cli-words.js';
import { cliRefRenderer, commandRefs } from '../../../src/surfaces/cli/refs.js';
import { ROOT, runZot, sandbox } from '../../support/cli.js';

describe('dist/cli-manifest.json', () => {
  it('equals the tree built from the declarations (rebuild with npm run build)', () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}/dist/cli-manifest.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest.cli_version).toBe(CLI_VERSION);
    const tree = buildTree(tools, undefined, groups);
    expect(manifest.schema).toEqual(schemaNode(tree, treeSpeaker(tree, cliRefRenderer(commandRefs(tools)))));
    expect(manifest.groups).toEqual(groups);
  });

  it('dist/cli-start.json, which every command reads at start, is the manifest without its schema tree', () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}/dist/cli-manifest.json`, 'utf8')) as Record<
      string,
      unknown
    >;
    const start = JSON.parse(readFileSync(`${ROOT}/dist/cli-start.json`, 'utf8')) as Record<string, unknown>;
    const { schema, ...rest } = manifest;
    expect(schema).toBeDefined();
    expect(start).toEqual(rest);
    expect(Object.keys(start)).not.toContain('schema');
  });

  it('holds each command’s parameters as derived from its declaration, and a tree built with them is the same', () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}/dist/cli-manifest.json`, 'utf8')) as {
      params: ParamsTable;
    };
    const live = paramsTable(tools);
    expect(manifest.params).toEqual(live);
    expect(Object.keys(live).length).toBe(tools.reduce((n, t) => n + t.cli.length, 0));
    expect(shape(buildTree(tools, manifest.params))).toEqual(shape(buildTree(tools)));
  });

  it('the fast path and the full CLI print the same data for every node', async () => {
    const box = sandbox();
    try {
      const fast = (await runZot(['schema'], { env: box.env })).json().data;
      // --profile is not handled by the fast path, so this goes through the full CLI.
      const { writeFileSync, mkdirSync } = await import('node:fs');
      mkdirSync(box.env.ZOT_CONFIG_DIR as string, { recursive: true });
      writeFileSync(`${box.env.ZOT_CONFIG_DIR}/config.json`, JSON.stringify({ profiles: { p: {} } }));
      const full = (await runZot(['schema', '--profile', 'p'], { env: box.env })).json().data;
      expect(fast).toEqual(full);
    } finally {
      box.cleanup();
    }
  });

  it('the fast path applies the same startup checks', async () => {
    const box = sandbox();
    try {
      const r = await runZot(['schema'], { env: { ...box.env, ZOTEUS_LOCAL: 'sometimes' } });
      expect(r.code).toBe(3);
      expect((r.json().error as { field: string }).field).toBe('ZOTEUS_LOCAL');
    } finally {
      box.cleanup();
    }
  });
});

/** A node and everything under it, variants and targets included. */
function shape(node: CommandNode): unknown {
  const { subcommands: _subcommands, ...own } = schemaNode(node);
  const target = node.target?.kind === 'tool' ? node.target.tool.name : node.target?.id;
  return {
    ...own,
    group: node.group ?? false,
    target,
    variants: (node.variants ?? []).map((v) => ({ triggers: v.triggers, node: shape(v.node) })),
    children: [...node.children.keys()].sort().map((k) => shape(node.children.get(k) as CommandNode)),
  };
}

describe('the modules of dist/cli-manifest.json (what `zot <command>` loads)', () => {
  it('name every command path, and build from there down the same tree as every declaration', async () => {
    const manifest = JSON.parse(readFileSync(`${ROOT}/dist/cli-manifest.json`, 'utf8')) as {
      modules: Record<string, string[] | null>;
    };
    const whole = buildTree(tools);
    const paths: string[] = [];
    const visit = (node: CommandNode) => {
      if (node.path.length) paths.push(node.path.join(' '));
      for (const child of node.children.values()) visit(child);
    };
    visit(whole);
    expect(Object.keys(manifest.modules).sort()).toEqual(paths.sort());

    for (const [path, modules] of Object.entries(manifest.modules)) {
      const words = path.split(' ');
      const { node } = findNode(whole, words);
      if (modules === null) {
        // Built-ins (schema, mcp) and groups of them (config, auth) load everything.
        const builtin = (n: CommandNode): boolean =>
          n.target?.kind === 'builtin' || (n.children.size > 0 && [...n.children.values()].every(builtin));
        expect(builtin(node), path).toBe(true);
        continue;
      }
      const own = await Promise.all(
        modules.map(
          async (m) =>
            ((await import(/* @vite-ignore */ `../../../src/${m}`)) as { default: AnyTool }).default,
        ),
      );
      const part = findNode(buildTree(own), words);
      expect(part.used, path).toBe(words.length);
      expect(shape(part.node), path).toEqual(shape(node));
    }
  });
});

describe('versions', () => {
  it('the CLI version is the package version', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };
    expect(CLI_VERSION).toBe(pkg.version);
  });
});
