/** Table mode: the page line at the bottom of every listing, and the command for the next page. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextPageCommand, pageFooter } from '../../../src/surfaces/cli/output.js';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';
import { USER } from '../../tools/collections/fixtures.js';

describe('nextPageCommand', () => {
  it('replaces --start, keeps the rest, and quotes what a shell would split', () => {
    expect(nextPageCommand(['search', 'climate'], 25)).toBe('zot search climate --start 25');
    expect(nextPageCommand(['search', 'ice sheet', '--start', '25', '--limit', '25'], 50)).toBe(
      "zot search 'ice sheet' --limit 25 --start 50",
    );
    expect(nextPageCommand(['search', '--start=5', "it's"], 10)).toBe(`zot search 'it'\\''s' --start 10`);
  });

  it('turns "Continue with start=N." into a Next page line', () => {
    expect(
      pageFooter('Showing 1–25 of 120 items (sqlite). Continue with start=25.', ['search', 'x']),
    ).toEqual(['Showing 1–25 of 120 items (sqlite).', 'Next page: zot search x --start 25']);
    expect(pageFooter('Showing 1–2 of 2 items (web).', ['search'])).toEqual([
      'Showing 1–2 of 2 items (web).',
    ]);
  });
});

describe('zot collection list in table mode', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
    world.server
      .library(USER)
      .addCollections(
        Array.from({ length: 5 }, (_, i) => ({ key: `AAAA${'23456'[i]}234`, name: `Topic ${i + 1}` })),
      );
  });
  afterEach(async () => {
    await world.close();
  });

  it('puts the page line below the rows and says how to get the next page', async () => {
    const r = await runZot(['collection', 'list', '--limit', '2'], {
      env: world.env({ ZOT_FORMAT: 'table' }),
    });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([
      'Showing 1–2 of 5 collections.',
      'Next page: zot collection list --limit 2 --start 2',
    ]);
    expect(lines[0]).toMatch(/^key\s+name/);
    const last = await runZot(['collection', 'list', '--limit', '2', '--start', '4'], {
      env: world.env({ ZOT_FORMAT: 'table' }),
    });
    expect(last.stdout.trimEnd().split('\n').at(-1)).toBe('Showing 5–5 of 5 collections.');
  });
});
