/**
 * The whole inventory of declarations, checked at once (as github-mcp-server does), and a
 * committed snapshot of every tool's published input and output JSON Schema, so a contract
 * change shows up in review.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildTree, findNode, type CommandNode } from '../../src/surfaces/cli/tree.js';
import { describeTool } from '../../src/surfaces/mcp/schemas.js';
import { groups, tools } from '../../src/tools/index.js';

describe('tool inventory', () => {
  it('names are unique and all zotero_*', () => {
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^zotero_[a-z_]+$/);
  });

  it.each(tools.map((t) => [t.name, t] as const))('%s is fully declared', (_name, tool) => {
    expect(['read', 'write', 'destructive']).toContain(tool.tier);
    expect(typeof tool.openWorld).toBe('boolean');
    expect(tool.title.length).toBeGreaterThan(3);
    expect(tool.summary.length).toBeGreaterThan(10);
    expect(tool.summary).not.toContain('\n');
    expect(tool.description.length).toBeGreaterThan(tool.summary.length);
    expect(tool.output).toBeInstanceOf(z.ZodObject);
    expect(tool.cli.length).toBeGreaterThan(0);
    for (const command of tool.cli) expect(command.path.length).toBeGreaterThan(0);
    expect(tool.since).toMatch(/^\d+\.\d+\.\d+$/);
    // Closed input: an unknown argument must be refused.
    expect(tool.input.safeParse({ __unknown__: 1 }).success).toBe(false);
    const published = describeTool(tool);
    expect(published.inputSchema.additionalProperties).toBe(false);
    expect(JSON.stringify(published)).not.toContain('"$schema"');
    if (tool.tier !== 'read' || tool.cli.some((c) => (c.tier ?? tool.tier) !== 'read')) {
      expect(typeof tool.plan, `${tool.name} mutates and needs plan() for --dry-run`).toBe('function');
    }
    // A tool that writes files only (an export) runs whole again: only library writes retry entries.
    if ('failed' in tool.output.shape && tool.tier !== 'read' && tool.writesFilesOnly !== true) {
      expect(
        tool.retryFailed,
        `${tool.name} can fail per entry and needs retryFailed for idempotent retries`,
      ).toBeDefined();
    }
  });

  it('every CLI command belongs to exactly one declaration', () => {
    const paths = tools.flatMap((t) => t.cli.map((c) => c.path.join(' ')));
    expect(new Set(paths).size).toBe(paths.length);
    expect(() => buildTree(tools)).not.toThrow();
  });

  it('the same kind of change has the same tier (conventions.md, "Safety tiers")', () => {
    const root = buildTree(tools);
    const tier = (path: string) => findNode(root, path.split(' ')).node.tier;
    for (const path of ['collection remove', 'collection delete', 'tag remove', 'tag delete', 'delete'])
      expect(tier(path), path).toBe('destructive');
    for (const path of ['collection add', 'tag add', 'tag rename', 'trash', 'trash restore'])
      expect(tier(path), path).toBe('write');
  });

  it('every CLI group has real help, declared beside its tools, and every declared group is one', () => {
    const root = buildTree(tools, undefined, groups);
    const grouping: CommandNode[] = [];
    const visit = (node: CommandNode) => {
      if (node.path.length > 0 && node.children.size > 0) grouping.push(node);
      for (const child of node.children.values()) visit(child);
    };
    visit(root);
    expect(grouping.map((n) => n.path.join(' '))).toEqual(
      expect.arrayContaining(['collection', 'config', 'index', 'note', 'tag', 'trash']),
    );
    for (const node of grouping) {
      const help = node.group ? node.summary : node.groupSummary;
      const where = `zot ${node.path.join(' ')}`;
      expect(help, `${where} has no group help`).toBeTypeOf('string');
      // Not a placeholder ("index commands."): says what the group is for.
      expect(help as string, where).not.toMatch(/^[\w -]+ commands\.?$/);
      expect((help as string).length, where).toBeGreaterThan(30);
    }
    const declared = groups.map((g) => g.path.join(' '));
    expect(new Set(declared).size).toBe(declared.length);
    for (const group of groups) {
      const { node, used } = findNode(root, group.path);
      expect(used, `group ${group.path.join(' ')} is no command path`).toBe(group.path.length);
      expect(node.children.size, `group ${group.path.join(' ')} has no commands under it`).toBeGreaterThan(0);
    }
  });

  it.each(tools.map((t) => [t.name, t] as const))(
    '%s schemas match the committed snapshot',
    async (name, tool) => {
      const { inputSchema, outputSchema, annotations } = describeTool(tool);
      await expect(
        `${JSON.stringify({ inputSchema, outputSchema, annotations }, null, 2)}\n`,
      ).toMatchFileSnapshot(`./schemas/${name}.json`);
    },
  );
});
