/**
 * `zotero_saved_searches` on every backend: the same definitions from zotero.sqlite, the
 * desktop's local API and the Web API; `run` through the local API's `searches/KEY/items`
 * (paged, one request a page), and refused with a clear message where nothing can run it (the
 * Web API, zotero.sqlite), never with an empty page; unknown keys are not_found.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { openZoteroSqlite } from '../../../src/core/local/index.js';
import { savedSearches, type SavedSearchesInput } from '../../../src/core/searches/read.js';
import type { AnyTool, Deps } from '../../../src/core/tool.js';
import tool from '../../../src/tools/searches/saved-searches.js';
import { tools } from '../../../src/tools/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import {
  DEAD_LOCAL_API,
  KEY,
  sampleLibrarySpec,
  SAMPLE_KEYS,
  startDesktopWorld,
  USER_ID,
  type DesktopWorld,
} from '../../core/library/router-world.js';

let world: DesktopWorld;
const open: Deps[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.services.close();
  await world?.close();
});

function deps(env: Record<string, string | undefined> = {}): Deps {
  const d = world.deps({ env });
  open.push(d);
  return d;
}

const SQLITE = { ZOTEUS_LOCAL_API_URL: DEAD_LOCAL_API };
const WEB = { ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY };
const USER = `users/${USER_ID}`;

const SEA_LEVEL = {
  name: 'Sea level, not trashed',
  conditions: [
    { condition: 'tag', operator: 'is', value: 'sea level' },
    { condition: 'deleted', operator: 'false', value: '' },
  ],
};

/** The sample's saved search, copied to the test server (Web API and local API) with its key and version. */
async function desktopWithSearches(localApi: boolean): Promise<{ key: string; trashedKey: string }> {
  world = await startDesktopWorld({ localApi });
  const listed = await savedSearches(deps(SQLITE), { action: 'list' });
  const key = listed.searches![0]!.key;
  const lib = world.server.library(USER);
  lib.addSearches([{ key, ...SEA_LEVEL }]);
  lib.searches.get(key)!.version = 950;
  return { key, trashedKey: '' };
}

async function refusal(d: Deps, input: SavedSearchesInput): Promise<ZoteusError> {
  const error = await savedSearches(d, input).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isZoteusError(error)) throw new Error(`expected a ZoteusError, got ${String(error)}`);
  return error;
}

/** Every answer but where it came from. */
const content = ({ backend: _b, ...rest }: Record<string, unknown>) => rest;

describe('saved search definitions on every backend', () => {
  it('list and show: the same searches from zotero.sqlite, the local API and the Web API', async () => {
    const { key } = await desktopWithSearches(true);
    const expected = { key, version: 950, ...SEA_LEVEL };

    const sqlite = await savedSearches(deps(SQLITE), { action: 'list' });
    expect(sqlite).toEqual({
      searches: [expected],
      totalResults: 1,
      start: 0,
      backend: 'sqlite',
      library: USER,
    });
    expect(tool.output.safeParse({ ...sqlite, provenance: 'p' }).success).toBe(true);
    world.server.clearLog();
    const local = await savedSearches(deps(), { action: 'list' });
    expect(local.backend).toBe('localApi');
    // One request for the definitions (beside the desktop's detection).
    expect(
      world.server.log.filter((e) => e.path.includes('searches')).map((e) => `${e.method} ${e.path}`),
    ).toEqual(['GET /api/users/0/searches']);
    const web = await savedSearches(deps(WEB), { action: 'list' });
    expect(web.backend).toBe('web');
    expect(content(local as never)).toEqual(content(sqlite as never));
    expect(content(web as never)).toEqual(content(sqlite as never));

    for (const env of [SQLITE, {}, WEB]) {
      const shown = await savedSearches(deps(env), { action: 'show', search_key: key });
      expect(shown.search).toEqual(expected);
    }
  });

  it('a trashed saved search is listed with deleted: true, sorted by name with the others', async () => {
    world = await startDesktopWorld();
    const lib = world.server.library(USER);
    const [b, a] = lib.addSearches([
      { name: 'beta', conditions: [{ condition: 'title', operator: 'contains', value: 'ice' }] },
      { name: 'Alpha', conditions: [{ condition: 'joinMode', operator: 'any', value: '' }] },
    ]);
    lib.searches.get(b!)!.deleted = true;
    const out = await savedSearches(deps(WEB), { action: 'list' });
    expect(out.searches!.map((s) => [s.name, s.deleted ?? false])).toEqual([
      ['Alpha', false],
      ['beta', true],
    ]);
    expect(out.searches![0]!.key).toBe(a);
  });

  it('zotero.sqlite: trashed searches, an old-style collection value (libraryID_KEY) as the key, a mode kept', async () => {
    const spec = sampleLibrarySpec();
    const user = spec.libraries.find((l) => l.type === 'user')!;
    user.searches = [
      {
        key: 'OLDSRCH2',
        name: 'Old style',
        version: 5,
        conditions: [
          { condition: 'collection', operator: 'is', value: `1_${SAMPLE_KEYS.user.collections.climate}` },
          { condition: 'fulltextContent/regexp', operator: 'contains', value: 'sea.*level' },
        ],
      },
      { key: 'BNSRCH22', name: 'Binned', version: 6, deleted: true, conditions: [] },
    ];
    world = await startDesktopWorld({ spec });
    const out = await savedSearches(deps(SQLITE), { action: 'list' });
    expect(out.searches).toEqual([
      { key: 'BNSRCH22', version: 6, name: 'Binned', conditions: [], deleted: true },
      {
        key: 'OLDSRCH2',
        version: 5,
        name: 'Old style',
        conditions: [
          { condition: 'collection', operator: 'is', value: SAMPLE_KEYS.user.collections.climate },
          { condition: 'fulltextContent/regexp', operator: 'contains', value: 'sea.*level' },
        ],
      },
    ]);
  });

  it('show of an unknown key, or of a string that is not a key, is not_found naming the library', async () => {
    await desktopWithSearches(false);
    const missing = await refusal(deps(SQLITE), { action: 'show', search_key: 'ZZZZZZZZ' });
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe(`No saved search "ZZZZZZZZ" in ${USER}.`);
    const bad = await refusal(deps(SQLITE), { action: 'show', search_key: 'nope' });
    expect(bad.message).toBe(
      `No saved search "nope" in ${USER}: "nope" is not a Zotero key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ).`,
    );
  });
});

describe('running a saved search', () => {
  it('through the local API: its items, one request a page, paged with nextStart', async () => {
    const { key } = await desktopWithSearches(true);
    // What the saved search means, read independently from zotero.sqlite: items tagged "sea level" outside the trash.
    const reader = await openZoteroSqlite(world.dbPath);
    let expected: string[];
    try {
      const libraryID = await reader.libraryIdFor({ type: 'user' });
      expected = (await reader.items(libraryID, { tag: 'sea level' })).items.map((i) => i.key).sort();
    } finally {
      reader.close();
    }
    expect(expected.length).toBeGreaterThan(3);

    world.server.clearLog();
    const all = await savedSearches(deps(), { action: 'run', search_key: key });
    expect(all.backend).toBe('localApi');
    expect(all.search).toEqual({ key, version: 950, ...SEA_LEVEL });
    expect(all.items!.map((i) => i.key).sort()).toEqual(expected);
    expect(all).toMatchObject({ totalResults: expected.length, start: 0 });
    expect(all.nextStart).toBeUndefined();
    const runs = world.server.log.filter((e) => e.path === `/api/users/0/searches/${key}/items`);
    expect(runs.map((e) => e.query)).toEqual([{ start: '0', limit: '25' }]);
    expect(tool.output.safeParse({ ...all, provenance: 'p' }).success).toBe(true);

    const page = await savedSearches(deps(), { action: 'run', search_key: key, start: 1, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page).toMatchObject({ totalResults: expected.length, start: 1, nextStart: 3 });
  });

  it('a page of a run is held to the size bound: long fields cut, truncated with nextStart', async () => {
    const { key } = await desktopWithSearches(true);
    // 60 more matches on the desktop, each with a 30,000-character abstract.
    world.server.library(USER).addItems(
      Array.from({ length: 60 }, (_, i) => ({
        title: `Long ${i}`,
        abstractNote: `${'sea '.repeat(7_500)}${i}`,
        tags: [{ tag: 'sea level' }],
      })),
    );
    const out = await savedSearches(deps(), { action: 'run', search_key: key, limit: 100 });
    expect(out.truncated).toBe(true);
    const shown = out.items!.length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(out.totalResults!);
    expect(out.nextStart).toBe(shown);
    expect(JSON.stringify(out.items).length).toBeLessThanOrEqual(40_000);
    const long = out.items!.filter((i) => String(i.data?.title).startsWith('Long '));
    expect(long.length).toBeGreaterThan(0);
    for (const item of long) expect(String(item.data?.abstractNote)).toHaveLength(2_000);
    expect(out.truncatedFields).toEqual(
      long.map((i) => ({
        key: i.key,
        field: 'abstractNote',
        length: 30_000 + String(i.data?.title).length - 5,
      })),
    );
  });

  it('zot saved-search run KEY on the CLI: the items in the envelope', async () => {
    const { key } = await desktopWithSearches(true);
    const r = await zotAt(['saved-search', 'run', key, '--limit', '3'], { env: world.env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const data = r.json().data as {
      items: unknown[];
      totalResults: number;
      backend: string;
      nextStart: number;
    };
    expect(data.items).toHaveLength(3);
    expect(data).toMatchObject({ backend: 'localApi', nextStart: 3 });
  });

  it('through the Web API: refused with validation_error saying only the desktop app runs it, no items request', async () => {
    const { key } = await desktopWithSearches(false);
    world.server.clearLog();
    const error = await refusal(deps(WEB), { action: 'run', search_key: key });
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe(
      `Saved search "Sea level, not trashed" (${key}) cannot be run through the Zotero Web API, which stores saved searches but does not run them. Only the Zotero desktop app runs saved searches: Zotero 7 or later, running on this computer with its local API enabled (Settings → Advanced → “Allow other applications on this computer to communicate with Zotero”) and holding ${USER}. ZOTEUS_LOCAL=off keeps the desktop app out of this call.`,
    );
    expect(
      world.server.log.filter((e) => e.path !== '/keys/current').map((e) => `${e.method} ${e.path}`),
    ).toEqual([`GET /${USER}/searches`]);

    // Over the CLI: exit 3, the hint in the caller's words.
    const r = await zotAt(['saved-search', 'run', key], { env: world.env(WEB) });
    expect(r.code).toBe(3);
    const err = (r.json() as { error: { code: string; hint: string; message: string } }).error;
    expect(err.code).toBe('validation_error');
    expect(err.hint).toBe(
      `Start Zotero with its local API enabled and run it again; meanwhile \`zot saved-search show ${key}\` shows its conditions, and \`zot search WORDS\` (with --tag, --type, --collection) can approximate them.`,
    );
  });

  it('from zotero.sqlite (the app is not running): refused, saying why the local API is not there', async () => {
    const { key } = await desktopWithSearches(false);
    const error = await refusal(deps(SQLITE), { action: 'run', search_key: key });
    expect(error.code).toBe('validation_error');
    expect(error.message).toMatch(
      new RegExp(
        `^Saved search "Sea level, not trashed" \\(${key}\\) cannot be run from zotero\\.sqlite, which holds its definition but not Zotero's search engine\\. Only the Zotero desktop app runs saved searches: .* Now: .+`,
      ),
    );
    expect(world.server.log).toHaveLength(0);
  });

  it('an unknown key is not_found, on the local API and on the Web API alike', async () => {
    await desktopWithSearches(true);
    for (const env of [{}, WEB]) {
      const error = await refusal(deps(env), { action: 'run', search_key: 'ZZZZZZZZ' });
      expect(error.code).toBe('not_found');
      expect(error.message).toBe(`No saved search "ZZZZZZZZ" in ${USER}.`);
    }
  });
});

describe('what a person and an agent read', () => {
  it('MCP: one-line summaries of list, show and run (a refusal is isError with the code first)', async () => {
    const { key } = await desktopWithSearches(false);
    const mcp = await connect(tools as readonly AnyTool[], world.env());
    try {
      const text = async (args: Record<string, unknown>) => {
        const r = await mcp.client.callTool({ name: 'zotero_saved_searches', arguments: args });
        return { error: r.isError === true, line: (r.content as Array<{ text: string }>)[0]!.text };
      };
      expect(await text({ action: 'list' })).toEqual({
        error: false,
        line: 'Showing 1–1 of 1 saved search (sqlite).',
      });
      expect(await text({ action: 'show', search_key: key })).toEqual({
        error: false,
        line: `Saved search "Sea level, not trashed" (${key}): 2 conditions (sqlite).`,
      });
      const run = await text({ action: 'run', search_key: key });
      expect(run.error).toBe(true);
      expect(run.line).toMatch(
        /^validation_error: Saved search "Sea level, not trashed" .* cannot be run from zotero\.sqlite/,
      );
      const missing = await text({ action: 'show' });
      expect(missing).toEqual({
        error: true,
        line: expect.stringContaining(
          'search_key: the key of the saved search is required for action "show"',
        ),
      });
    } finally {
      await mcp.close();
    }
  });

  it('zot saved-search delete on a terminal asks with the name and conditions read from the desktop', async () => {
    const { key } = await desktopWithSearches(false);
    const r = await zotAt(['saved-search', 'delete', key], {
      env: world.env({ ZOTERO_API_KEY: KEY }),
      stdinTTY: true,
      stdoutTTY: true,
      stderrTTY: true,
      stdin: 'n\n',
      columns: 300,
    });
    expect(r.stderr).toContain(
      `will delete saved search "Sea level, not trashed" (${key}, 2 conditions); the items it matched stay in the library. Proceed? [y/N]`,
    );
    expect(r.stderr).toContain('Cancelled.');
    expect(world.server.log.filter((e) => e.method === 'DELETE')).toHaveLength(0);
    expect(world.server.library(USER).searches.has(key)).toBe(true);
  });
});
