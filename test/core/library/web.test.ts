/** Library addressing, the key check and its caches, and the access check, against the test server. */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  checkKey,
  KEY_CHECK_TTL_MS,
  keyCachePath,
  parseKeyCacheFile,
} from '../../../src/core/library/keys.js';
import { grantFor, openWebLibrary, plannedLibrary } from '../../../src/core/library/web.js';
import { startZoteroServer } from '../../support/zotero-server/index.js';
import { ALICE, BAD_KEY, BOB, KEY, movableClock, READ_KEY, startWorld, type World } from './world.js';
import { onCli } from '../../support/refs.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.close();
});

async function refusal(promise: Promise<unknown>): Promise<ZoteusError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ZoteusError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const writes = () => world.server.log.filter((e) => e.method !== 'GET' && e.method !== 'HEAD');

describe('addressing', () => {
  const table: Array<{
    name: string;
    args: { library_id?: number; library_type?: 'user' | 'group' };
    env?: Record<string, string | undefined>;
    prefix: string;
    source: string;
  }> = [
    {
      name: 'library_id alone is a group id',
      args: { library_id: 10 },
      prefix: 'groups/10',
      source: 'argument',
    },
    {
      name: 'library_id with library_type group',
      args: { library_id: 20, library_type: 'group' },
      prefix: 'groups/20',
      source: 'argument',
    },
    {
      name: "library_id with library_type user, the key's own",
      args: { library_id: ALICE, library_type: 'user' },
      prefix: 'users/1',
      source: 'argument',
    },
    { name: "neither: the key's own user library", args: {}, prefix: 'users/1', source: 'key' },
    {
      name: 'neither: the configured group',
      args: {},
      env: { ZOTERO_LIBRARY_ID: '10', ZOTERO_LIBRARY_TYPE: 'group' },
      prefix: 'groups/10',
      source: 'config',
    },
    {
      name: 'neither: a configured id is a user id by default',
      args: {},
      env: { ZOTERO_LIBRARY_ID: '1' },
      prefix: 'users/1',
      source: 'config',
    },
    {
      name: "library_type user over a configured group: the key's user",
      args: { library_type: 'user' },
      env: { ZOTERO_LIBRARY_ID: '10', ZOTERO_LIBRARY_TYPE: 'group' },
      prefix: 'users/1',
      source: 'key',
    },
  ];
  for (const row of table) {
    it(row.name, async () => {
      const lib = await openWebLibrary(world.deps({ env: row.env }), row.args, { access: 'read' });
      expect(lib.prefix).toBe(row.prefix);
      expect(lib.ref.source).toBe(row.source);
      expect(lib.keyInfo).toMatchObject({ userID: ALICE, username: 'alice' });
      expect(JSON.stringify(lib.keyInfo)).not.toContain(KEY);
      // The library's prefix works with the client it came with.
      const listed = await lib.client.listAll(`/${lib.prefix}/collections`);
      expect(listed.complete).toBe(true);
    });
  }

  it('library_type group without an id is a validation_error, before any request', async () => {
    const error = await refusal(openWebLibrary(world.deps(), { library_type: 'group' }, { access: 'read' }));
    expect(error).toMatchObject({ code: 'validation_error', field: 'library_id' });
    expect(world.server.log).toHaveLength(0);
  });

  it("a user id that is not the key's is permission_denied, after only the key check", async () => {
    const error = await refusal(
      openWebLibrary(world.deps(), { library_id: BOB, library_type: 'user' }, { access: 'read' }),
    );
    expect(error.code).toBe('permission_denied');
    expect(error.exitCode).toBe(2);
    expect(error.field).toBe('library_id');
    expect(error.message).toContain('users/2');
    expect(error.hint).toContain('users/1');
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current']);
  });

  it("a configured user id that is not the key's names ZOTERO_LIBRARY_ID in the hint", async () => {
    const error = await refusal(
      openWebLibrary(world.deps({ env: { ZOTERO_LIBRARY_ID: '2' } }), {}, { access: 'read' }),
    );
    expect(error.code).toBe('permission_denied');
    expect(error.hint).toContain('ZOTERO_LIBRARY_ID');
  });

  it('no key is auth_missing (exit 2) naming ZOTERO_API_KEY, with no request', async () => {
    const error = await refusal(
      openWebLibrary(world.deps({ env: { ZOTERO_API_KEY: undefined } }), {}, { access: 'read' }),
    );
    expect(error).toMatchObject({ code: 'auth_missing' });
    expect(error.exitCode).toBe(2);
    expect(error.hint).toContain('ZOTERO_API_KEY');
    expect(world.server.log).toHaveLength(0);
  });

  it('plannedLibrary resolves without network and refuses a group without an id', () => {
    const config = world.deps().config;
    expect(plannedLibrary({ library_id: 5 }, config)).toEqual({
      type: 'group',
      id: 5,
      source: 'argument',
      description: 'groups/5',
    });
    expect(plannedLibrary({}, config)).toMatchObject({ type: 'user', id: null, source: 'key' });
    expect(() => plannedLibrary({ library_type: 'group' }, config)).toThrow(ZoteusError);
    expect(world.server.log).toHaveLength(0);
  });
});

describe('the key check', () => {
  it('is made once per deps: two calls, and concurrent ones, send one /keys/current', async () => {
    const deps = world.deps();
    await openWebLibrary(deps, {}, { access: 'read' });
    await openWebLibrary(deps, { library_id: 10 }, { access: 'write' });
    await Promise.all([1, 2, 3].map(() => openWebLibrary(deps, { library_id: 20 }, { access: 'read' })));
    expect(world.keyChecks()).toBe(1);
    // Concurrent first calls share one request too.
    const fresh = world.deps();
    await Promise.all([1, 2, 3, 4].map(() => openWebLibrary(fresh, {}, { access: 'read' })));
    expect(world.keyChecks()).toBe(2);
  });

  it('on MCP nothing is written to disk', async () => {
    const deps = world.deps({ surface: 'mcp' });
    await checkKey(deps);
    expect(existsSync(keyCachePath(deps.config, KEY))).toBe(false);
  });

  it('is re-made in memory after ten minutes', async () => {
    const clock = movableClock();
    const deps = world.deps({ clock });
    await checkKey(deps);
    clock.advance(KEY_CHECK_TTL_MS - 1);
    expect((await checkKey(deps)).source).toBe('memory');
    clock.advance(1);
    expect((await checkKey(deps)).source).toBe('server');
    expect(world.keyChecks()).toBe(2);
  });

  it('on the CLI is cached on disk for ten minutes, by a hash, without the key, 0600 in a 0700 dir', async () => {
    const clock = movableClock();
    const first = world.deps({ surface: 'cli', clock });
    expect((await checkKey(first)).source).toBe('server');
    const path = keyCachePath(first.config, KEY);
    expect(path.startsWith(world.box.env.ZOT_CACHE_DIR as string)).toBe(true);
    expect(path).toMatch(/[/\\]keys[/\\][0-9a-f]{64}\.json$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(KEY);
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(
      ['access', 'checkedAt', 'displayName', 'userID', 'username'].sort(),
    );

    // A new invocation (new deps) within ten minutes: no request.
    clock.advance(KEY_CHECK_TTL_MS - 1000);
    const second = world.deps({ surface: 'cli', clock });
    const again = await checkKey(second);
    expect(again.source).toBe('disk');
    expect(again.info).toMatchObject({ userID: ALICE, username: 'alice', displayName: 'Alice Liddell' });
    expect(world.keyChecks()).toBe(1);

    // Expired: checked again, and the file is refreshed.
    clock.advance(1000);
    const third = world.deps({ surface: 'cli', clock });
    expect((await checkKey(third)).source).toBe('server');
    expect(world.keyChecks()).toBe(2);
    expect((JSON.parse(readFileSync(path, 'utf8')) as { checkedAt: number }).checkedAt).toBe(clock.now());
  });

  it('is keyed by server and key: another key or URL does not reuse the entry', async () => {
    const a = world.deps({ surface: 'cli' });
    const b = world.deps({ surface: 'cli', env: { ZOTERO_API_KEY: READ_KEY } });
    expect(keyCachePath(a.config, KEY)).not.toBe(keyCachePath(b.config, READ_KEY));
    expect(keyCachePath(a.config, KEY)).not.toBe(
      keyCachePath({ ...a.config, apiUrl: 'https://api.zotero.org' }, KEY),
    );
    await checkKey(a);
    await checkKey(b);
    expect(world.keyChecks()).toBe(2);
  });

  it('a corrupt or future-dated cache file is a miss', async () => {
    const deps = world.deps({ surface: 'cli' });
    await checkKey(deps);
    const path = keyCachePath(deps.config, KEY);
    writeFileSync(path, '{not json');
    expect((await checkKey(world.deps({ surface: 'cli' }))).source).toBe('server');
    const body = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...body, checkedAt: Date.now() + 60_000 }));
    expect((await checkKey(world.deps({ surface: 'cli' }))).source).toBe('server');
    expect(parseKeyCacheFile(JSON.stringify({ ...body, userID: 'x' }), Date.now())).toBeUndefined();
    expect(world.keyChecks()).toBe(3);
  });

  it('an invalid key is auth_invalid on a read, and is not cached', async () => {
    const deps = world.deps({ surface: 'cli', env: { ZOTERO_API_KEY: BAD_KEY } });
    for (let i = 0; i < 2; i++) {
      const error = await refusal(openWebLibrary(deps, {}, { access: 'read' }));
      expect(error.code).toBe('auth_invalid');
      expect(error.exitCode).toBe(2);
      expect(JSON.stringify(error.toJSON()) + error.stack).not.toContain(BAD_KEY);
    }
    expect(world.keyChecks()).toBe(2);
    expect(existsSync(keyCachePath(deps.config, BAD_KEY))).toBe(false);
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current', '/keys/current']);
  });

  it('an unreachable server is network_error', async () => {
    const gone = await startZoteroServer();
    await gone.close();
    const error = await refusal(
      openWebLibrary(
        world.deps({ env: { ZOTERO_API_URL: gone.url, ZOTEUS_TIMEOUT_MS: '2000' } }),
        {},
        { access: 'read' },
      ),
    );
    expect(error.code).toBe('network_error');
    expect(error.exitCode).toBe(5);
  });

  it('never lets the key into the debug log', async () => {
    const logs: string[] = [];
    const deps = world.deps({ logs });
    const lib = await openWebLibrary(deps, { library_id: 10 }, { access: 'read' });
    await lib.client.listAll(`/${lib.prefix}/items`);
    expect(logs.join('\n')).toContain('/keys/current');
    expect(logs.join('\n')).not.toContain(KEY);
  });
});

describe('the access check', () => {
  it('a write to a group the key can only read is permission_denied with zero write requests', async () => {
    const deps = world.deps({ env: { ZOTERO_API_KEY: READ_KEY } });
    await expect(openWebLibrary(deps, { library_id: 20 }, { access: 'read' })).resolves.toMatchObject({
      prefix: 'groups/20',
      grant: { read: true, write: false, via: 'group' },
    });
    const error = await refusal(openWebLibrary(deps, { library_id: 20 }, { access: 'write' }));
    expect(error.code).toBe('permission_denied');
    expect(error.message).toContain('groups/20');
    expect(error.hint).toContain('canWrite');
    expect(writes()).toHaveLength(0);
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current']);
  });

  it("a write to the key's read-only user library is permission_denied", async () => {
    const deps = world.deps({ env: { ZOTERO_API_KEY: READ_KEY } });
    const error = await refusal(openWebLibrary(deps, {}, { access: 'write' }));
    expect(error.code).toBe('permission_denied');
    expect(error.message).toContain('users/1');
    expect(writes()).toHaveLength(0);
  });

  it('a group absent from a key without `all` is permission_denied even for reads', async () => {
    const deps = world.deps({ env: { ZOTERO_API_KEY: READ_KEY } });
    const error = await refusal(openWebLibrary(deps, { library_id: 10 }, { access: 'read' }));
    expect(error.code).toBe('permission_denied');
    expect(error.hint).toContain('zotero_groups');
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current']);
    // The CLI names its own command.
    const cli = await refusal(
      openWebLibrary(
        world.deps({ surface: 'cli', env: { ZOTERO_API_KEY: READ_KEY } }),
        { library_id: 10 },
        {
          access: 'read',
        },
      ),
    );
    expect(onCli(cli.hint ?? '')).toContain('`zot groups`');
  });

  it('`groups.all` is accepted for any group; the server refuses one the user is not in', async () => {
    const lib = await openWebLibrary(world.deps(), { library_id: 40 }, { access: 'read' });
    expect(lib.grant).toEqual({ read: true, write: true, via: 'all' });
    const error = await refusal(lib.client.listAll(`/${lib.prefix}/collections`));
    expect(error.code).toBe('permission_denied');
  });

  it('read-only mode refuses a write before any request', async () => {
    const deps = world.deps({ env: { ZOTEUS_READ_ONLY: 'true' } });
    const error = await refusal(openWebLibrary(deps, {}, { access: 'write' }));
    expect(error.code).toBe('permission_denied');
    expect(world.server.log).toHaveLength(0);
    await expect(openWebLibrary(deps, {}, { access: 'read' })).resolves.toMatchObject({ prefix: 'users/1' });
  });

  it('grantFor reads the key access table', () => {
    const info = (access: object) => ({ userID: 7, username: 'u', displayName: 'u', access });
    const user = { type: 'user' as const, id: 7 };
    expect(grantFor(info({}), user)).toEqual({ read: false, write: false, via: 'none' });
    expect(grantFor(info({ user: { library: true } }), user)).toEqual({
      read: true,
      write: false,
      via: 'user',
    });
    expect(grantFor(info({ user: { library: true, write: true } }), user)).toMatchObject({ write: true });
    expect(grantFor(info({ user: { write: true } }), user)).toMatchObject({ read: false, write: false });
    expect(grantFor(info({ user: { library: true, write: true } }), { type: 'user', id: 8 })).toMatchObject({
      read: false,
    });
    const group = { type: 'group' as const, id: 3 };
    expect(grantFor(info({ groups: { '3': { library: true } } }), group)).toEqual({
      read: true,
      write: false,
      via: 'group',
    });
    expect(grantFor(info({ groups: { all: { library: true } } }), group)).toEqual({
      read: true,
      write: false,
      via: 'all',
    });
    // The union of the group's entry and `all`, as the server grants it.
    expect(
      grantFor(info({ groups: { all: { library: true, write: true }, '3': { library: true } } }), group),
    ).toEqual({
      read: true,
      write: true,
      via: 'group',
    });
    expect(grantFor(info({ groups: { '4': { library: true, write: true } } }), group)).toEqual({
      read: false,
      write: false,
      via: 'none',
    });
  });
});
