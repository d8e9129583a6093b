/**
 * The router: which backend serves a library's reads under ZOTEUS_LOCAL=off|on|auto, with and
 * without a key, for libraries the desktop holds or not; the local API before zotero.sqlite;
 * read-your-writes after `noteWrite`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { checkKey } from '../../../src/core/library/keys.js';
import { noteWrite, openLibraryReader, RECENT_WRITE_TTL_MS } from '../../../src/core/library/router.js';
import type { Deps } from '../../../src/core/tool.js';
import { movableClock } from './world.js';
import {
  GROUP_ID,
  KEY,
  OTHER_KEY,
  OTHER_USER_ID,
  SAMPLE_KEYS,
  sampleLibrarySpec,
  startDesktopWorld,
  USER_ID,
  WEB_GROUP_ID,
  type DesktopWorld,
} from './router-world.js';
import { sqlite } from '../local/helpers.js';

let world: DesktopWorld;
const open: Deps[] = [];
afterEach(async () => {
  for (const deps of open.splice(0)) await deps.services.close();
  await world?.close();
});

function deps(
  env: Record<string, string | undefined> = {},
  o: Parameters<DesktopWorld['deps']>[0] = {},
): Deps {
  const d = world.deps({ ...o, env: { ...o.env, ...env } });
  open.push(d);
  return d;
}

async function failure(work: Promise<unknown>): Promise<ZoteusError> {
  try {
    await work;
  } catch (error) {
    if (isZoteusError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Backend and library of a route. */
async function route(d: Deps, args: { library_id?: number; library_type?: 'user' | 'group' } = {}) {
  const { route } = await openLibraryReader(d, args);
  return `${route.backend} ${route.library}`;
}

const NO_DESKTOP = { ZOTERO_DATA_DIR: '/nonexistent/Zotero' };
const webRequests = () => world.server.log.filter((e) => !e.path.startsWith('/api'));

describe('ZOTEUS_LOCAL=off', () => {
  beforeEach(async () => {
    world = await startDesktopWorld({ localApi: true });
  });

  it('the Web API serves every library, even one the desktop holds', async () => {
    const d = deps({ ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY });
    expect(await route(d)).toBe(`web users/${USER_ID}`);
    expect(await route(d, { library_id: GROUP_ID })).toBe(`web groups/${GROUP_ID}`);
    const { route: r } = await openLibraryReader(d, {});
    expect(r.reason).toMatch(/ZOTEUS_LOCAL=off/);
    // Nothing was asked of the desktop.
    expect(world.server.log.filter((e) => e.path.startsWith('/api'))).toHaveLength(0);
  });

  it('without a key: auth_missing', async () => {
    const error = await failure(openLibraryReader(deps({ ZOTEUS_LOCAL: 'off' }), {}));
    expect(error.code).toBe('auth_missing');
  });
});

describe('ZOTEUS_LOCAL=auto (the default)', () => {
  describe('the desktop with zotero.sqlite only (Zotero closed)', () => {
    beforeEach(async () => {
      world = await startDesktopWorld();
    });

    it('no key, no library configured: the desktop personal library, offline', async () => {
      const d = deps();
      const { reader, route: r } = await openLibraryReader(d, {});
      expect(r).toMatchObject({ backend: 'sqlite', library: `users/${USER_ID}` });
      expect(r.reason).toMatch(/zotero\.sqlite/);
      expect(r.reason).toMatch(/local API is not in use/);
      expect(reader.library).toEqual({ type: 'user', id: USER_ID });
      expect((await reader.collections()).collections.length).toBe(7);
      expect(world.server.log).toHaveLength(0);
    });

    it('no key: a group the desktop holds is read locally; one it does not hold is not_found', async () => {
      expect(await route(deps(), { library_id: GROUP_ID })).toBe(`sqlite groups/${GROUP_ID}`);
      const error = await failure(openLibraryReader(deps(), { library_id: WEB_GROUP_ID }));
      expect(error.code).toBe('not_found');
      expect(error.message).toMatch(/Group 99 cannot be read: group 99 is not in the desktop app's Zotero/);
      expect(error.hint).toMatch(/ZOTERO_API_KEY/);
      expect(error.field).toBe('library_id');
    });

    it("a key whose user is not known yet: the desktop library is assumed to be the key's", async () => {
      const d = deps({ ZOTERO_API_KEY: KEY });
      const { route: r } = await openLibraryReader(d, {});
      expect(r.backend).toBe('sqlite');
      expect(r.reason).toMatch(/assumed to be the API key's user/);
      expect(webRequests()).toHaveLength(0);
    });

    it("a key checked before: the desktop serves the key's library only when it is signed in as that user", async () => {
      const same = deps({ ZOTERO_API_KEY: KEY });
      await checkKey(same);
      expect(await route(same)).toBe(`sqlite users/${USER_ID}`);
      const other = deps({ ZOTERO_API_KEY: OTHER_KEY });
      await checkKey(other);
      const { route: r } = await openLibraryReader(other, {});
      expect(r).toMatchObject({ backend: 'web', library: `users/${OTHER_USER_ID}` });
      expect(r.reason).toMatch(/signed in as user 8675309, but the API key belongs to user 4242/);
    });

    it('the CLI knows the key user from the disk cache of an earlier invocation', async () => {
      await checkKey(deps({ ZOTERO_API_KEY: OTHER_KEY }, { surface: 'cli' }));
      world.server.clearLog();
      const later = deps({ ZOTERO_API_KEY: OTHER_KEY }, { surface: 'cli' });
      const { route: r } = await openLibraryReader(later, {});
      expect(r.backend).toBe('web');
      // The key check came from the disk cache: only the listing would reach the server.
      expect(world.server.log.filter((e) => e.path === '/keys/current')).toHaveLength(0);
    });

    it('with a key: groups by group id, desktop or Web', async () => {
      const d = deps({ ZOTERO_API_KEY: KEY });
      expect(await route(d, { library_id: GROUP_ID })).toBe(`sqlite groups/${GROUP_ID}`);
      const { reader, route: r } = await openLibraryReader(d, { library_id: WEB_GROUP_ID });
      expect(r).toMatchObject({ backend: 'web', library: `groups/${WEB_GROUP_ID}` });
      expect(r.reason).toMatch(/not in the desktop app's Zotero/);
      expect((await reader.items({})).items.map((i) => i.data.title)).toEqual(['Only in the cloud']);
    });

    it('a configured or named user library: the desktop only when signed in as that user', async () => {
      const mine = deps({ ZOTERO_API_KEY: KEY, ZOTERO_LIBRARY_ID: String(USER_ID) });
      expect(await route(mine)).toBe(`sqlite users/${USER_ID}`);
      expect(await route(deps({ ZOTERO_API_KEY: KEY }), { library_id: USER_ID, library_type: 'user' })).toBe(
        `sqlite users/${USER_ID}`,
      );
      const other = deps({ ZOTERO_API_KEY: OTHER_KEY });
      expect(await route(other, { library_id: OTHER_USER_ID, library_type: 'user' })).toBe(
        `web users/${OTHER_USER_ID}`,
      );
      // Without a key, another user's library cannot be read at all.
      const error = await failure(
        openLibraryReader(deps(), { library_id: OTHER_USER_ID, library_type: 'user' }),
      );
      expect(error.code).toBe('not_found');
      expect(error.message).toMatch(/signed in as user 8675309, not 4242/);
    });

    it('a bad address is refused before anything is detected', async () => {
      const error = await failure(openLibraryReader(deps(), { library_type: 'group' }));
      expect(error.code).toBe('validation_error');
    });
  });

  describe('no desktop data', () => {
    beforeEach(async () => {
      world = await startDesktopWorld();
    });

    it('with a key: the Web API, saying why', async () => {
      const { route: r } = await openLibraryReader(deps({ ...NO_DESKTOP, ZOTERO_API_KEY: KEY }), {});
      expect(r).toMatchObject({ backend: 'web', library: `users/${USER_ID}` });
      expect(r.reason).toMatch(/No Zotero desktop data is available/);
      expect(r.reason).toMatch(/not running/);
    });

    it('without a key: auth_missing, whose hint names both ways out', async () => {
      const error = await failure(openLibraryReader(deps(NO_DESKTOP), {}));
      expect(error.code).toBe('auth_missing');
      expect(error.message).toMatch(/no Zotero desktop data was found/);
      expect(error.hint).toMatch(/ZOTERO_DATA_DIR/);
      expect(error.hint).toMatch(/ZOTERO_API_KEY/);
    });
  });

  describe('a desktop signed in to no account', () => {
    beforeEach(async () => {
      const { user: _user, ...spec } = sampleLibrarySpec();
      world = await startDesktopWorld({ spec });
    });

    it("its library is not the key's library: the Web API serves that", async () => {
      const { route: r } = await openLibraryReader(deps({ ZOTERO_API_KEY: KEY }), {});
      expect(r.backend).toBe('web');
      expect(r.reason).toMatch(/signed in to no Zotero account/);
    });

    it('without a key it is the default library, users/0', async () => {
      expect(await route(deps())).toBe('sqlite users/0');
    });
  });

  describe('the app running with its local API', () => {
    beforeEach(async () => {
      world = await startDesktopWorld({ localApi: true });
    });

    it('the local API is preferred to zotero.sqlite; prefer picks sqlite', async () => {
      const d = deps();
      const { reader, route: r } = await openLibraryReader(d, {});
      expect(r).toMatchObject({ backend: 'localApi', library: `users/${USER_ID}` });
      expect(r.reason).toMatch(/local API answers/);
      world.server.clearLog();
      expect((await reader.collections()).collections).toHaveLength(7);
      expect(world.server.log.map((e) => e.path)).toEqual(['/api/users/0/collections']);
      expect(await route(d, { library_id: GROUP_ID })).toBe(`localApi groups/${GROUP_ID}`);
      const preferred = await openLibraryReader(d, {}, { prefer: 'sqlite' });
      expect(preferred.route.backend).toBe('sqlite');
    });

    it('detection happens once per deps', async () => {
      const d = deps();
      await openLibraryReader(d, {});
      await openLibraryReader(d, { library_id: GROUP_ID });
      const probes = world.server.log.filter(
        (e) => e.path === '/api/users/0/collections' && e.query.limit === '1',
      );
      expect(probes).toHaveLength(1);
    });

    it('a disabled local API: zotero.sqlite', async () => {
      world.server.setLocalApiEnabled(false);
      const { route: r } = await openLibraryReader(deps(), {});
      expect(r.backend).toBe('sqlite');
      expect(r.reason).toMatch(/local API is disabled/);
    });

    it('the local API alone (no zotero.sqlite found) serves the user library and its groups', async () => {
      const d = deps(NO_DESKTOP);
      const { reader, route: r } = await openLibraryReader(d, {});
      expect(r).toMatchObject({ backend: 'localApi', library: `users/${USER_ID}` });
      expect((await reader.items({ top: true })).totalResults).toBe(27);
      expect(await route(d, { library_id: GROUP_ID })).toBe(`localApi groups/${GROUP_ID}`);
      await expect(openLibraryReader(d, { library_id: WEB_GROUP_ID })).rejects.toMatchObject({
        code: 'not_found',
      });
    });
  });
});

describe('ZOTEUS_LOCAL=on', () => {
  beforeEach(async () => {
    world = await startDesktopWorld();
  });

  it('the desktop serves what it holds', async () => {
    expect(await route(deps({ ZOTEUS_LOCAL: 'on' }))).toBe(`sqlite users/${USER_ID}`);
    expect(await route(deps({ ZOTEUS_LOCAL: 'on', ZOTERO_API_KEY: KEY }))).toBe(`sqlite users/${USER_ID}`);
  });

  it('no desktop: not_found saying what was looked for and how to fix it, even with a key', async () => {
    const error = await failure(
      openLibraryReader(deps({ ZOTEUS_LOCAL: 'on', ZOTERO_API_KEY: KEY, ...NO_DESKTOP }), {}),
    );
    expect(error.code).toBe('not_found');
    expect(error.message).toMatch(/ZOTEUS_LOCAL=on requires the Zotero desktop app's data/);
    expect(error.message).toMatch(/127\.0\.0\.1:9/);
    expect(error.message).toMatch(/nonexistent/);
    expect(error.hint).toMatch(/ZOTERO_DATA_DIR/);
    expect(webRequests()).toHaveLength(0);
  });

  it('a disabled local API and no database: the hint says how to enable it', async () => {
    world.server.serveLocalApi({ userID: USER_ID, enabled: false });
    const error = await failure(
      openLibraryReader(
        deps({ ZOTEUS_LOCAL: 'on', ZOTEUS_LOCAL_API_URL: world.localApiUrl, ...NO_DESKTOP }),
        {},
      ),
    );
    expect(error.code).toBe('not_found');
    expect(error.message).toMatch(/disabled/);
    expect(error.hint).toMatch(/Allow other applications on this computer to communicate with Zotero/);
  });

  it('a library the desktop does not hold: the Web API with a key, not_found without', async () => {
    expect(await route(deps({ ZOTEUS_LOCAL: 'on', ZOTERO_API_KEY: KEY }), { library_id: WEB_GROUP_ID })).toBe(
      `web groups/${WEB_GROUP_ID}`,
    );
    const error = await failure(
      openLibraryReader(deps({ ZOTEUS_LOCAL: 'on' }), { library_id: WEB_GROUP_ID }),
    );
    expect(error.code).toBe('not_found');
  });
});

describe('read-your-writes', () => {
  beforeEach(async () => {
    world = await startDesktopWorld();
  });

  async function setLocalVersion(version: number): Promise<void> {
    const Database = await sqlite();
    const db = new Database(world.dbPath);
    db.prepare("UPDATE libraries SET version = ? WHERE type = 'user'").run(version);
    db.close();
  }

  it('after a write above the local copy, reads go to the Web API until the copy catches up', async () => {
    const d = deps({ ZOTERO_API_KEY: KEY });
    await checkKey(d);
    expect(await route(d)).toBe(`sqlite users/${USER_ID}`);
    await noteWrite(d, `users/${USER_ID}`, 1700);
    const { route: r } = await openLibraryReader(d, {});
    expect(r).toMatchObject({ backend: 'web', library: `users/${USER_ID}` });
    expect(r.reason).toMatch(/library version 1700.*at version 1600/);
    // Other libraries are not concerned.
    expect(await route(d, { library_id: GROUP_ID })).toBe(`sqlite groups/${GROUP_ID}`);
    // Zotero syncs the write down.
    await setLocalVersion(1700);
    expect(await route(d)).toBe(`sqlite users/${USER_ID}`);
  });

  it('a write at or below the local version changes nothing', async () => {
    const d = deps({ ZOTERO_API_KEY: KEY });
    await noteWrite(d, `users/${USER_ID}`, 1600);
    expect(await route(d)).toBe(`sqlite users/${USER_ID}`);
  });

  it('a group write keeps that group on the Web API', async () => {
    const d = deps({ ZOTERO_API_KEY: KEY });
    await noteWrite(d, `groups/${GROUP_ID}`, 999);
    expect(await route(d, { library_id: GROUP_ID })).toBe(`web groups/${GROUP_ID}`);
    expect(await route(d)).toBe(`sqlite users/${USER_ID}`);
  });

  it('the CLI remembers writes across invocations for ten minutes', async () => {
    const clock = movableClock();
    const first = deps({ ZOTERO_API_KEY: KEY }, { surface: 'cli', clock });
    await noteWrite(first, `users/${USER_ID}`, 1700);
    const file = join(world.box.dir, 'cache', 'recent-writes.json');
    expect(existsSync(file)).toBe(true);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { writes: unknown[] };
    expect(saved.writes).toEqual([
      { api: world.server.url, library: `users/${USER_ID}`, version: 1700, at: clock.now() },
    ]);
    expect(await route(deps({ ZOTERO_API_KEY: KEY }, { surface: 'cli', clock }))).toBe(
      `web users/${USER_ID}`,
    );
    clock.advance(RECENT_WRITE_TTL_MS);
    expect(await route(deps({ ZOTERO_API_KEY: KEY }, { surface: 'cli', clock }))).toBe(
      `sqlite users/${USER_ID}`,
    );
  });

  it('in memory, the write expires after ten minutes too', async () => {
    const clock = movableClock();
    const d = deps({ ZOTERO_API_KEY: KEY }, { clock });
    await noteWrite(d, `users/${USER_ID}`, 1700);
    expect(await route(d)).toBe(`web users/${USER_ID}`);
    clock.advance(RECENT_WRITE_TTL_MS);
    expect(await route(d)).toBe(`sqlite users/${USER_ID}`);
  });

  it('through the local API: its library version decides', async () => {
    await world.close();
    world = await startDesktopWorld({ localApi: true });
    const d = deps({ ZOTERO_API_KEY: KEY, ...NO_DESKTOP });
    expect(await route(d)).toBe(`localApi users/${USER_ID}`);
    await noteWrite(d, `users/${USER_ID}`, 1700);
    expect(await route(d)).toBe(`web users/${USER_ID}`);
    // Zotero syncs: the local library moves to the version of the write.
    world.server.library(`users/${USER_ID}`).addItems([{ title: 'Synced down' }]);
    world.server.library(`users/${USER_ID}`).version = 1700;
    expect(await route(d)).toBe(`localApi users/${USER_ID}`);
  });
});

describe('group items never leak into the user library through the router', () => {
  beforeEach(async () => {
    world = await startDesktopWorld({ localApi: true });
  });

  it.each(['sqlite', 'localApi'] as const)('%s', async (prefer) => {
    const { reader, route: r } = await openLibraryReader(deps(), {}, { prefer });
    expect(r.backend).toBe(prefer);
    const keys = (await reader.items({ includeTrashed: true })).items.map((i) => i.key);
    expect(keys).toContain(SAMPLE_KEYS.user.items.seaLevelArticle);
    expect(keys).not.toContain(SAMPLE_KEYS.group.items.coralReport);
    expect(keys).not.toContain(SAMPLE_KEYS.group.items.groupArticle);
  });
});
