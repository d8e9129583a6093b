/**
 * The fast start (`bin/zot` loading only the declarations a command needs): it reads the
 * command words as the parser does, and the partial tree it builds answers like the whole one.
 */
import { describe, expect, it } from 'vitest';
import { splitPath } from '../../../src/surfaces/cli/argv.js';
import { commandPath, modulesFor } from '../../../src/surfaces/cli/fast-start.js';
import { moduleRoutes } from '../../../src/surfaces/cli/module-routes.js';
import { buildTree, findNode } from '../../../src/surfaces/cli/tree.js';
import { tools } from '../../../src/tools/index.js';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';

const root = buildTree(tools);
const isCommand = (path: readonly string[]) => findNode(root, path).used === path.length;

describe('commandPath', () => {
  it.each([
    [['read', 'ABCD2345']],
    [['--json', 'collection', 'list', '--limit', '5']],
    [['collection', '--json', 'list']],
    [['--profile', 'read', 'collection', 'list']],
    [['--profile=read', 'collection', 'list']],
    [['collection', 'list', 'extra', 'words']],
    [['note', 'ABCD2345', '--add', 'text']],
    [['note', 'add', 'ABCD2345', 'text']],
    [['tag', 'nope']],
    [['nope', 'read']],
    [['--', 'read']],
    [['read', '--', 'collection']],
    [['--profile']],
    [[]],
  ])('reads %j as the parser does', (argv) => {
    expect(commandPath(argv, isCommand)).toEqual(splitPath(root, argv).node.path);
  });
});

describe('modulesFor', () => {
  const routes = moduleRoutes(tools, (tool) => tool.name);

  it('names the declarations of a command and of everything under it', () => {
    expect(modulesFor(routes, ['read', 'ABCD2345', '--json'])).toEqual(['zotero_get_item']);
    expect(modulesFor(routes, ['collection', 'list'])).toEqual(['zotero_list_collections']);
    expect(modulesFor(routes, ['collection'])).toEqual([
      'zotero_list_collections',
      'zotero_manage_collections',
    ]);
    // `zot note KEY --add TEXT` is another declaration's command, chosen by a flag.
    expect(modulesFor(routes, ['note', 'ABCD2345'])).toEqual(['zotero_list_notes', 'zotero_create_note']);
  });

  it('leaves root help, unknown commands and the builtins to the whole list', () => {
    for (const argv of [
      [],
      ['--help'],
      ['nope'],
      ['schema', 'read'],
      ['config', 'show'],
      ['mcp'],
      ['--', 'read'],
    ]) {
      expect(modulesFor(routes, argv)).toBeUndefined();
    }
  });
});

describe('bin/zot answers as the whole CLI does', () => {
  // fixture-zot loads every declaration (plus fixtures, outside these subtrees).
  it.each([
    [['--version']],
    [['-V', '--version']],
    [['collection']],
    [['collection', '--help']],
    [['collection', 'nope']],
    [['collection', 'list', '--nope']],
    [['collection', 'list', 'extra']],
    [['read', '--help']],
    [['read', 'not-a-key']],
    [['note', '--help']],
    [['tag', '--help']],
    [['trash', '--help']],
    [['index']],
    [['note', 'ABCD2345', '--add', 'A note', '--dry-run']],
    [['collection', 'create', 'New', '--dry-run']],
    [['tag', 'list', '--limit', 'many']],
    [['schema', 'serch']],
  ])('%j', async (argv) => {
    const box = sandbox();
    try {
      const [fast, whole] = await Promise.all([
        runZot([...argv, '--json'], { env: box.env }),
        runZot([...argv, '--json'], { env: box.env, bin: FIXTURE_ZOT }),
      ]);
      const strip = (out: string) => out.replace(/"meta":\{[^}]*\}/g, '"meta":{}');
      expect(fast.code).toBe(whole.code);
      expect(strip(fast.stdout)).toBe(strip(whole.stdout));
    } finally {
      box.cleanup();
    }
  });
});
