/**
 * `zotero_whoami` reports each backend (the Web API, the desktop's local API, its
 * zotero.sqlite) and, for the default library and every library the desktop holds, which
 * backend serves its reads and why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/core/tool.js';
import whoamiTool from '../../../src/tools/library/whoami.js';
import { runZot } from '../../support/cli.js';
import {
  DEAD_LOCAL_API,
  GROUP_ID,
  KEY,
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

async function whoami(env: Record<string, string | undefined> = {}) {
  const deps = world.deps({ env });
  open.push(deps);
  const out = await whoamiTool.run({}, deps);
  expect(whoamiTool.output.safeParse(out).success).toBe(true);
  return out;
}

describe('zotero_whoami and the desktop backends', () => {
  it('Zotero running with its local API: both local backends, each library routed to the local API', async () => {
    world = await startDesktopWorld({ localApi: true });
    const out = await whoami();
    expect(out.backends.localApi).toMatchObject({
      configured: true,
      available: true,
      url: world.localApiUrl,
      state: 'enabled',
    });
    expect(out.backends.sqlite).toMatchObject({
      configured: true,
      available: true,
      path: world.dbPath,
      schemaVersion: 125,
      mode: 'direct',
    });
    expect(out.libraries.map((l) => [l.library, l.name, l.backend])).toEqual([
      [`users/${USER_ID}`, 'My Library', 'localApi'],
      [`groups/${GROUP_ID}`, 'Ocean Lab (shared)', 'localApi'],
    ]);
    expect(out.libraries[0]?.reason).toMatch(/no API key and no library are configured/);
    expect(whoamiTool.summarize?.(out, {})).toMatch(/desktop: local API/);
    // No key: nothing was sent to the Web API.
    expect(world.server.log.filter((e) => !e.path.startsWith('/api'))).toHaveLength(0);
  });

  it('Zotero closed: the local API not running, zotero.sqlite serves', async () => {
    world = await startDesktopWorld();
    const out = await whoami();
    expect(out.backends.localApi).toMatchObject({
      available: false,
      state: 'not_running',
      url: DEAD_LOCAL_API,
    });
    expect(out.backends.localApi.hint).toMatch(/Start Zotero/);
    expect(out.backends.sqlite.available).toBe(true);
    expect(out.libraries.every((l) => l.backend === 'sqlite')).toBe(true);
    expect(whoamiTool.summarize?.(out, {})).toMatch(/desktop: zotero\.sqlite/);
  });

  it('the local API disabled: says so and how to enable it', async () => {
    world = await startDesktopWorld({ localApi: true });
    world.server.setLocalApiEnabled(false);
    const out = await whoami();
    expect(out.backends.localApi).toMatchObject({ available: false, state: 'disabled' });
    expect(out.backends.localApi.hint).toMatch(
      /Allow other applications on this computer to communicate with Zotero/,
    );
  });

  it('with a key: the key checked, the key’s library on the desktop, a Web-only group is not listed', async () => {
    world = await startDesktopWorld();
    const out = await whoami({ ZOTERO_API_KEY: KEY });
    expect(out.key?.userID).toBe(USER_ID);
    expect(out.backends.web.available).toBe(true);
    expect(out.libraries.map((l) => [l.library, l.backend])).toEqual([
      [`users/${USER_ID}`, 'sqlite'],
      [`groups/${GROUP_ID}`, 'sqlite'],
    ]);
    expect(out.libraries[0]?.reason).toMatch(/signed in as the API key's user/);
  });

  it('a configured group the desktop does not hold: the Web API, and why', async () => {
    world = await startDesktopWorld();
    const out = await whoami({ ZOTERO_API_KEY: KEY, ZOTERO_LIBRARY_ID: '99', ZOTERO_LIBRARY_TYPE: 'group' });
    expect(out.libraries[0]).toMatchObject({ library: 'groups/99', backend: 'web' });
    expect(out.libraries[0]?.reason).toMatch(/not in the desktop app's Zotero/);
  });

  it('no desktop and no key: every backend unavailable, the default library unreadable, the call succeeds', async () => {
    world = await startDesktopWorld();
    const out = await whoami({ ZOTERO_DATA_DIR: '/nonexistent/Zotero' });
    expect(out.backends.sqlite).toMatchObject({ available: false, schemaVersion: null, mode: null });
    expect(out.backends.sqlite.detail).toMatch(/Zotero desktop data not found/);
    expect(out.libraries).toEqual([
      expect.objectContaining({
        library: 'users/0',
        backend: null,
        error: expect.objectContaining({ code: 'auth_missing' }),
      }),
    ]);
    expect(whoamiTool.summarize?.(out, {})).toMatch(/desktop: not found/);
  });

  it('ZOTEUS_LOCAL=off: the desktop is not looked at', async () => {
    world = await startDesktopWorld({ localApi: true });
    const out = await whoami({ ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY });
    expect(out.backends.localApi).toMatchObject({ configured: false, available: null });
    expect(out.backends.sqlite).toMatchObject({ configured: false, available: null, path: null });
    expect(out.libraries).toEqual([expect.objectContaining({ library: `users/${USER_ID}`, backend: 'web' })]);
    expect(world.server.log.filter((e) => e.path.startsWith('/api'))).toHaveLength(0);
  });

  it('an invalid ZOTEUS_LOCAL_API_URL is reported, not thrown', async () => {
    world = await startDesktopWorld();
    const out = await whoami({ ZOTEUS_LOCAL_API_URL: 'nope' });
    expect(out.backends.localApi).toMatchObject({ available: false, error: { code: 'validation_error' } });
  });
});

describe('zot whoami', () => {
  it('reports the desktop backends through the CLI, offline and without a key', async () => {
    world = await startDesktopWorld();
    const r = await runZot(['whoami'], { env: world.env() });
    expect(r.code).toBe(0);
    const data = (r.json() as { data: Awaited<ReturnType<typeof whoamiTool.run>> }).data;
    expect(data.backends.sqlite).toMatchObject({ available: true, path: world.dbPath, schemaVersion: 125 });
    expect(data.libraries[0]).toMatchObject({ library: `users/${USER_ID}`, backend: 'sqlite' });
    expect(r.stderr).toBe('');
  });
});
