/**
 * `zot saved-search create|delete` when writes go to the desktop: the create is one keyed batch
 * POST through the local API (a retry with the same idempotency key makes no second search);
 * the delete reads the search, then sends a DELETE, which on the local API erases it (Zotero's
 * trash, `deleted: true`, is not used: the tool deletes, as on the Web API, where a deleted
 * search is gone too). Nothing reaches the Web API.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { ALICE, startWorld, type World } from '../library/world.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';

let world: World;
let localUrl: string;
let writes: LocalWritesConfig;

beforeAll(async () => {
  world = await startWorld();
  localUrl = world.server.serveLocalApi({ userID: ALICE, groups: [10] });
  writes = world.server.serveLocalWrites();
  writes.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
});
afterAll(() => world.close());
beforeEach(() => world.server.clearLog());

const lib = () => world.server.library(`users/${ALICE}`);
const local = (e: RequestLogEntry): boolean => e.path.startsWith('/api');
/** The requests after the write probe (its `GET /api/` and empty batch). */
const sent = (): RequestLogEntry[] =>
  world.server.log.filter((e) => e.path !== '/api/' && !(Array.isArray(e.body) && e.body.length === 0));
const line = (e: RequestLogEntry): string =>
  `${e.method} ${e.path}${Object.keys(e.query).length ? `?${new URLSearchParams(e.query as Record<string, string>).toString()}` : ''}`;

const env = () =>
  world.env({ ZOTERO_API_KEY: undefined, ZOTEUS_LOCAL_API_URL: localUrl, ZOTEUS_LOCAL_API_KEY: LOCAL_KEY });

async function zot(argv: string[]) {
  const r = await zotAt([...argv, '--json'], { env: env() });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  return { code: r.code, env: r.json() as any };
}

describe('saved searches written through the desktop', () => {
  it('create: one keyed POST of the search to the local API; a retry with the same key makes no second one', async () => {
    const argv = ['saved-search', 'create', 'Desk sea', '--condition', 'title contains sea'];
    const r = await zot([...argv, '--idempotency-key', 'search-h20']);
    expect(r.code).toBe(0);
    expect(r.env.data.written_to).toBe('desktop');
    const [key] = r.env.data.created as [string];
    expect(lib().searches.get(key)).toMatchObject({
      name: 'Desk sea',
      conditions: [{ condition: 'title', operator: 'contains', value: 'sea' }],
    });
    const writesSent = sent().filter((e) => e.method !== 'GET');
    expect(writesSent.map(line)).toEqual(['POST /api/users/0/searches']);
    expect(writesSent[0]?.body).toEqual([
      { key, name: 'Desk sea', conditions: [{ condition: 'title', operator: 'contains', value: 'sea' }] },
    ]);
    expect(writesSent[0]?.headers['zotero-api-key']).toBe(LOCAL_KEY);
    expect(writesSent[0]?.headers['zotero-server-id']).toBe(writes.serverId);
    expect(world.server.log.filter((e) => !local(e))).toEqual([]);

    world.server.clearLog();
    const again = await zot([...argv, '--idempotency-key', 'search-h20']);
    expect(again.env.data.created).toEqual([key]);
    expect([...lib().searches.values()].filter((s) => s.name === 'Desk sea')).toHaveLength(1);
    expect(world.server.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('delete: read with the library version, then a DELETE that erases it on the desktop (not a trash flag)', async () => {
    const [key] = lib().addSearches([{ name: 'Old search', conditions: [] }]) as [string];
    const version = lib().version;
    world.server.clearLog();
    const r = await zot(['saved-search', 'delete', key, '--yes']);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({ deleted: key, deletedName: 'Old search', written_to: 'desktop' });
    // Besides detecting the desktop (its libraries): one read of the search, one DELETE.
    const searches = sent().filter((e) => e.path.endsWith('/searches'));
    expect(searches.map(line)).toEqual([
      `GET /api/users/0/searches?searchKey=${key}&limit=50`,
      `DELETE /api/users/0/searches?searchKey=${key}`,
    ]);
    expect(sent().filter((e) => e.method !== 'GET')).toHaveLength(1);
    const del = searches[1] as RequestLogEntry;
    expect(del.headers['if-unmodified-since-version']).toBe(String(version));
    expect(del.headers['zotero-api-key']).toBe(LOCAL_KEY);
    // Erased: not kept with deleted: true, and no PATCH was sent.
    expect(lib().searches.has(key)).toBe(false);
    expect(world.server.log.filter((e) => e.method === 'PATCH')).toEqual([]);
    expect(world.server.log.filter((e) => !local(e))).toEqual([]);
  });
});
