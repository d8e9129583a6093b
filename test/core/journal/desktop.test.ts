/**
 * The journal at the client interface covers the desktop's local API too: a write the desktop
 * takes is journaled under its library (users/0), and undone through the desktop, nothing sent
 * to the cloud.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
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
});
afterAll(() => world.close());
beforeEach(() => {
  writes.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
  writes.answer = 'always';
  world.server.clearLog();
});

const env = () =>
  world.env({ ZOTERO_API_KEY: undefined, ZOTEUS_LOCAL_API_URL: localUrl, ZOTEUS_LOCAL_API_KEY: LOCAL_KEY });
const zot = (argv: string[]) => zotAt(argv, { env: env() });

describe('the journal of desktop writes', () => {
  it('a tag added through the desktop is journaled and undone through it; the cloud sees nothing', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Desktop A', tags: [{ tag: 'old' }] }]) as [string];
    const added = await zot(['tag', 'add', 'new', a]);
    expect(added.code).toBe(0);
    expect(lib.items.get(a)?.tags).toEqual([{ tag: 'old' }, { tag: 'new' }]);
    const id = (added.json().meta as { request_id: string }).request_id;

    const history = await zot(['history']);
    expect((history.json().data as { requests: unknown[] }).requests).toMatchObject([
      { requestId: id, library: 'users/0', tool: 'zotero_manage_tags', undoable: true },
    ]);
    const undone = await zot(['undo', id, '--yes']);
    expect(undone.code).toBe(0);
    expect(undone.json().data).toMatchObject({ library: 'users/0', updated: [a], failed: [] });
    expect(lib.items.get(a)?.tags).toEqual([{ tag: 'old' }]);
    expect(world.server.log.filter((e) => !e.path.startsWith('/api'))).toEqual([]);
  });
});
