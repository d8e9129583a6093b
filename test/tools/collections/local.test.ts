/**
 * The collection listing served by the desktop app: from zotero.sqlite with no key and no
 * network, and from the local API, answering exactly as the Web API does for the same library;
 * `zot collection list` end to end against a sample database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { listCollections } from '../../../src/core/library/collections.js';
import type { Deps } from '../../../src/core/tool.js';
import listTool from '../../../src/tools/collections/list-collections.js';
import { runZot } from '../../support/cli.js';
import {
  GROUP_ID,
  KEY,
  SAMPLE_KEYS,
  startDesktopWorld,
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

const C = SAMPLE_KEYS.user.collections;
/** The sample's collections outside the trash, sorted by name. */
const SORTED = [
  { key: C.attribution, name: 'Attribution', parentCollection: C.climate },
  { key: C.climate, name: 'Climate Science', parentCollection: false },
  { key: C.iceSheets, name: 'Ice Sheets', parentCollection: C.seaLevel },
  { key: C.ml, name: 'Machine Learning', parentCollection: false },
  { key: C.seaLevel, name: 'Sea Level', parentCollection: C.climate },
  { key: C.thesis, name: 'Thesis Writing', parentCollection: false },
  { key: C.transformers, name: 'Transformers', parentCollection: C.ml },
];

describe('collection list from the desktop', () => {
  it('zotero.sqlite, no key, no request; the same page as the Web API for the same library', async () => {
    world = await startDesktopWorld();
    const local = await listCollections(deps(), {});
    expect(world.server.log).toHaveLength(0);
    expect(listTool.output.safeParse(local).success).toBe(true);
    expect(local.collections.map(({ numItems: _n, ...c }) => c)).toEqual(SORTED);
    expect(local.collections.find((c) => c.key === C.seaLevel)?.numItems).toBeGreaterThan(0);
    expect(local).toMatchObject({ totalResults: 7, start: 0, complete: true });

    // The Web API, for the same library: the same page, item counts included.
    const web = await listCollections(deps({ ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY }), {});
    expect(web).toEqual(local);
  });

  it('q, top, paging and a group, as on the Web API', async () => {
    world = await startDesktopWorld({ localApi: true });
    const inputs = [
      { q: 'sea' },
      { top: true },
      { start: 2, limit: 3 },
      { library_id: GROUP_ID },
      { library_id: GROUP_ID, q: 'field' },
    ];
    for (const input of inputs) {
      const sqlite = await listCollections(deps({ ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api' }), input);
      const localApi = await listCollections(deps(), input);
      const web = await listCollections(deps({ ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY }), input);
      expect(localApi).toEqual(sqlite);
      expect(web).toEqual(sqlite);
    }
    const group = await listCollections(deps(), { library_id: GROUP_ID });
    expect(group.collections.map((c) => c.key).sort()).toEqual(
      [SAMPLE_KEYS.group.collections.fieldwork, SAMPLE_KEYS.group.collections.shared].sort(),
    );
    // The local API served the whole listing in one request per call.
    expect(
      world.server.log.filter((e) => e.path === '/api/users/0/collections' && !e.query.limit),
    ).toHaveLength(3);
  });

  it('complete is false past ZOTEUS_MAX_COLLECTIONS, with the same message as on the Web API', async () => {
    world = await startDesktopWorld();
    const out = await listCollections(deps({ ZOTEUS_MAX_COLLECTIONS: '3' }), {});
    expect(out).toMatchObject({ complete: false, read: 3, totalResults: 3 });
    expect(out.message).toBe(
      'Read 3 of 7 collections: one listing reads at most 3 (ZOTEUS_MAX_COLLECTIONS); totalResults and the page come from the collections read.',
    );
  });
});

describe('zot collection list against a sample zotero.sqlite', () => {
  it('offline with ZOTEUS_LOCAL=on: the desktop answers, the Web API is never asked', async () => {
    world = await startDesktopWorld();
    const r = await runZot(['collection', 'list'], {
      // A key is set (so the command's key requirement is met) but points at nothing: the
      // listing must come from the database.
      env: world.env({ ZOTEUS_LOCAL: 'on', ZOTERO_API_KEY: KEY, ZOTERO_API_URL: 'http://127.0.0.1:9' }),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const data = (r.json() as { data: { collections: Array<{ name: string }>; totalResults: number } }).data;
    expect(data.collections.map((c) => c.name)).toEqual(SORTED.map((c) => c.name));
    expect(data.totalResults).toBe(7);
  });

  // Runs once the tool no longer demands a key up front (needsKey), which the desktop makes unnecessary.
  it('with no key at all: ZOTERO_DATA_DIR is enough', async () => {
    world = await startDesktopWorld();
    const r = await runZot(['collection', 'list', '--q', 'sea'], { env: world.env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const data = (r.json() as { data: { collections: Array<{ key: string }> } }).data;
    expect(data.collections.map((c) => c.key)).toEqual([C.seaLevel]);
    expect(world.server.log).toHaveLength(0);
  });

  it('without a key and without desktop data: auth_missing (exit 2)', async () => {
    world = await startDesktopWorld();
    const r = await runZot(['collection', 'list'], { env: world.env({ ZOTERO_DATA_DIR: '/nonexistent' }) });
    expect(r.code).toBe(2);
    expect((r.json() as { error: { code: string } }).error.code).toBe('auth_missing');
  });
});
