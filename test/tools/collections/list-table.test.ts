/** `zot collection list`: names sorted as Zotero sorts them, "(top level)", and --tree. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareCollectionNames, treeOrder } from '../../../src/core/library/collections/list.js';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';
import { USER } from './fixtures.js';

describe('compareCollectionNames', () => {
  it('compares runs of digits by value, the rest case-insensitively', () => {
    const names = ['Topic 10', 'topic 2', 'Topic 1', 'Alpha', 'Topic 02b', 'Topic'];
    expect([...names].sort(compareCollectionNames)).toEqual([
      'Alpha',
      'Topic',
      'Topic 1',
      'topic 2',
      'Topic 02b',
      'Topic 10',
    ]);
  });
});

describe('treeOrder', () => {
  it('puts each collection after its parent with its depth; an orphan or a cycle counts as top level', () => {
    const rows = [
      { key: 'A', name: 'a', parentCollection: false as const },
      { key: 'B', name: 'b', parentCollection: false as const },
      { key: 'C', name: 'c', parentCollection: 'A' },
      { key: 'D', name: 'd', parentCollection: 'C' },
      { key: 'E', name: 'e', parentCollection: 'GONE' },
      { key: 'X', name: 'x', parentCollection: 'Y' },
      { key: 'Y', name: 'y', parentCollection: 'X' },
    ];
    expect(treeOrder(rows).map((r) => `${r.key}${r.depth}`)).toEqual([
      'A0',
      'C1',
      'D2',
      'B0',
      'E0',
      'X0',
      'Y1',
    ]);
  });
});

describe('zot collection list', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
    const lib = world.server.library(USER);
    lib.addCollections([
      { key: 'AAAA2345', name: 'Topic 10' },
      { key: 'BBBB2345', name: 'Topic 2' },
      { key: 'CCCC2345', name: 'Methods' },
    ]);
    lib.addCollections([
      { key: 'DDDD2345', name: 'Sub 10', parentCollection: 'BBBB2345' },
      { key: 'EEEE2345', name: 'Sub 9', parentCollection: 'BBBB2345' },
    ]);
    lib.addCollections([{ key: 'FFFF2345', name: 'Deep', parentCollection: 'EEEE2345' }]);
  });
  afterEach(async () => {
    await world.close();
  });

  it('sorts numbers in names by value and keeps the seed output without --tree', async () => {
    const r = await runZot(['collection', 'list'], { env: world.env() });
    expect(r.code).toBe(0);
    const rows = (r.json().data as { collections: Array<Record<string, unknown>> }).collections;
    expect(rows.map((c) => c.name)).toEqual(['Deep', 'Methods', 'Sub 9', 'Sub 10', 'Topic 2', 'Topic 10']);
    for (const row of rows) expect(Object.keys(row)).not.toContain('depth');
  });

  it('shows "(top level)" as the parent of a top-level collection in table mode', async () => {
    const r = await runZot(['collection', 'list', '--top'], { env: world.env({ ZOT_FORMAT: 'table' }) });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^key +name +parent/);
    expect(lines[2]).toMatch(/^CCCC2345 +Methods +\(top level\)/);
    expect(r.stdout).not.toMatch(/\bfalse\b/);
  });

  it('--tree lists the hierarchy, indented, and gives each row its depth in JSON', async () => {
    const r = await runZot(['collection', 'list', '--tree'], { env: world.env({ ZOT_FORMAT: 'table' }) });
    expect(r.code).toBe(0);
    const names = r.stdout
      .trimEnd()
      .split('\n')
      .slice(2, -1)
      .map((l) => l.slice(10).replace(/(?<=\S) {2,}.*$/, ''));
    expect(names).toEqual(['Methods', 'Topic 2', '  Sub 9', '    Deep', '  Sub 10', 'Topic 10']);
    const json = await runZot(['collection', 'list', '--tree'], { env: world.env() });
    const rows = (json.json().data as { collections: Array<{ key: string; depth: number }> }).collections;
    expect(rows.map((c) => `${c.key}:${c.depth}`)).toEqual([
      'CCCC2345:0',
      'BBBB2345:0',
      'EEEE2345:1',
      'FFFF2345:2',
      'DDDD2345:1',
      'AAAA2345:0',
    ]);
  });
});
