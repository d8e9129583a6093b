/**
 * Writes through the desktop's local API (Zotero 10+), end to end through the CLI in-process:
 * the test server's local-API write mode (local-writes.ts) over the same libraries as its Web
 * API, so a test can tell which side a write reached by the request log.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { probeLocalWrites } from '../../../src/core/local/local-writes.js';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import { tools } from '../../../src/tools/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { ALICE, startWorld, type World } from './world.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';
const ONCE_KEY = 'Onc3K3yAbCdEf1234567890abcdefghi';

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
afterEach(() => {
  writes.keys.clear();
  writes.used.length = 0;
});

/** The desktop is the only way to write: no Web API key at all. */
function desktopEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return world.env({
    ZOTERO_API_KEY: undefined,
    ZOTEUS_LOCAL_API_URL: localUrl,
    ZOTEUS_LOCAL_API_KEY: LOCAL_KEY,
    ...extra,
  });
}

const local = (e: RequestLogEntry): boolean => e.path.startsWith('/api');
const cloud = (e: RequestLogEntry): boolean => !local(e);
const localWrites = (): RequestLogEntry[] =>
  world.server.log.filter((e) => local(e) && e.method !== 'GET' && e.method !== 'HEAD');

function zot(argv: string[], env = desktopEnv()) {
  return zotAt([...argv, '--json'], { env });
}

describe('detection', () => {
  it('Zotero 10 with its local API on: writable, with the server id, and no key sent', async () => {
    const found = await probeLocalWrites({ url: localUrl });
    expect(found.state).toBe('writable');
    expect(found.serverId).toBe(writes.serverId);
    const sent = world.server.log.filter(local);
    expect(sent.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /api/', 'POST /api/users/0/items']);
    expect(sent[1]?.body).toEqual([]);
    for (const e of sent) {
      expect(e.headers['zotero-api-key']).toBeUndefined();
      expect(e.headers.authorization).toBeUndefined();
    }
    // The probe used up no key.
    expect(writes.keys.has(LOCAL_KEY)).toBe(true);
  });

  it('Zotero 9 (a read-only local API): read_only, and writes go to the Web API', async () => {
    const nine = await (await import('../../support/zotero-server/index.js')).startZoteroServer();
    try {
      const url = nine.serveLocalApi({ userID: ALICE });
      const found = await probeLocalWrites({ url });
      expect(found.state).toBe('read_only');
      expect(found.detail).toMatch(/older than Zotero 10/);
    } finally {
      await nine.close();
    }
  });

  it('the local API off: disabled, with where to turn it on', async () => {
    world.server.setLocalApiEnabled(false);
    try {
      const found = await probeLocalWrites({ url: localUrl });
      expect(found.state).toBe('disabled');
      expect(found.hint).toMatch(/Settings → Advanced/);
    } finally {
      world.server.setLocalApiEnabled(true);
    }
  });

  it('nothing listening: not_running', async () => {
    const found = await probeLocalWrites({ url: 'http://127.0.0.1:9/api' });
    expect(found.state).toBe('not_running');
  });
});

describe('whoami says where writes go, and why', () => {
  type Libraries = Array<{ library: string; writes?: { to: string | null; reason: string } }>;
  const libraries = async (env: Record<string, string>) =>
    ((await zot(['whoami'], env)).json().data as { libraries: Libraries }).libraries;

  it('with a local key: the desktop, for the personal library and the groups it holds', async () => {
    const libs = await libraries(desktopEnv());
    expect(libs.map((l) => [l.library, l.writes?.to])).toEqual([
      ['users/0', 'desktop'],
      ['groups/10', 'desktop'],
    ]);
    expect(libs[0]?.writes?.reason).toMatch(/takes writes through its local API/);
    // Probed without the key: it is still there, unused.
    expect(world.server.log.filter((e) => e.headers['zotero-api-key'] !== undefined)).toEqual([]);
  });

  it('without a local key: not authorised, and the hint says how; with a Web API key, the cloud', async () => {
    const none = await libraries(desktopEnv({ ZOTEUS_LOCAL_API_KEY: undefined }));
    expect(none[0]?.writes?.to).toBeNull();
    expect(none[0]?.writes?.reason).toMatch(/no local API key is configured/);
    const cloudy = await libraries(
      desktopEnv({ ZOTEUS_LOCAL_API_KEY: undefined, ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678' }),
    );
    expect(cloudy[0]?.writes).toMatchObject({ to: 'cloud' });
    expect(cloudy[0]?.writes?.reason).toMatch(/no local API key is configured/);
  });

  it('the local API off, or ZOTEUS_WRITES=cloud: the cloud, and why', async () => {
    world.server.setLocalApiEnabled(false);
    try {
      const off = await libraries(desktopEnv({ ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678' }));
      expect(off[0]?.writes?.to).toBe('cloud');
      expect(off[0]?.writes?.reason).toMatch(/local API is disabled/);
    } finally {
      world.server.setLocalApiEnabled(true);
    }
    const forced = await libraries(
      desktopEnv({ ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678', ZOTEUS_WRITES: 'cloud' }),
    );
    expect(forced[0]?.writes).toEqual({
      to: 'cloud',
      reason: 'ZOTEUS_WRITES=cloud: writes go to the Web API.',
    });
  });
});

describe('writes through the desktop', () => {
  it('zot collection add: the membership change reaches the desktop, nothing the cloud; written_to desktop', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [coll] = lib.addCollections([{ name: 'Reading' }]);
    const keys = lib.addItems([{ title: 'A' }, { title: 'B' }, { title: 'C' }]);
    world.server.clearLog();
    const r = await zot(['collection', 'add', coll as string, ...keys]);
    expect(r.stderr).toContain('SYNC_REMINDER: the change is in the Zotero desktop app');
    const env = r.json() as { ok: boolean; data: Record<string, unknown> };
    expect(env.ok).toBe(true);
    expect(env.data.written_to).toBe('desktop');
    expect(env.data.sync_required).toBe(true);
    expect(env.data.updated).toEqual(keys);
    for (const key of keys) expect(lib.items.get(key)?.collections).toEqual([coll]);
    expect(world.server.log.filter(cloud)).toEqual([]);
    // One batch for three objects, with the server id and the key; each object its own version.
    const posts = localWrites().filter((e) => e.path === '/api/users/0/items');
    expect(posts.map((e) => e.method)).toEqual(['POST', 'POST']); // the probe's [] and the write
    expect(posts[1]?.headers['zotero-server-id']).toBe(writes.serverId);
    expect(posts[1]?.headers['zotero-api-key']).toBe(LOCAL_KEY);
    const versions = keys.map((k) => lib.items.get(k)?.version);
    expect(new Set(versions).size).toBe(3);
  });

  it('zot tag add, zot update, zot trash: each through the local API; trash is a deleted write, never a DELETE', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a, b] = lib.addItems([{ title: 'Tagged' }, { title: 'Trashed' }]);
    world.server.clearLog();
    const tagged = await zot(['tag', 'add', 'to-read', a as string]);
    expect(tagged.json().ok).toBe(true);
    expect(lib.items.get(a as string)?.tags).toEqual([{ tag: 'to-read' }]);

    const updated = await zot(['update', a as string, '--title', 'Renamed']);
    expect(updated.json().ok).toBe(true);
    expect((updated.json().data as Record<string, unknown>).written_to).toBe('desktop');
    expect(lib.items.get(a as string)?.title).toBe('Renamed');

    const trashed = await zot(['trash', b as string]);
    expect(trashed.json().ok).toBe(true);
    expect(lib.items.get(b as string)?.deleted).toBe(true);
    expect(world.server.log.filter(cloud)).toEqual([]);
    expect(world.server.log.filter((e) => e.method === 'DELETE')).toEqual([]);
  });

  it('zot create: items created on the desktop with the keys Zoteus chose', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const before = lib.items.size;
    const r = await zotAt(['create', '-', '--json'], {
      env: desktopEnv(),
      stdin: JSON.stringify([{ itemType: 'book', title: 'Made locally' }]),
    });
    const env = r.json() as { ok: boolean; data: { created?: Array<{ key: string }>; written_to?: string } };
    expect(env.ok).toBe(true);
    expect(env.data.written_to).toBe('desktop');
    expect(lib.items.size).toBe(before + 1);
    const key = env.data.created?.[0]?.key as string;
    expect(lib.items.get(key)?.title).toBe('Made locally');
    expect(world.server.log.filter(cloud)).toEqual([]);
  });

  it('read-your-writes: a read right after a local write sees it', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Before' }]);
    await zot(['update', a as string, '--title', 'After']);
    world.server.clearLog();
    const read = await zot(['read', a as string]);
    expect(JSON.stringify(read.json().data)).toContain('After');
    expect(world.server.log.filter(cloud)).toEqual([]);
  });
});

describe('every kind of write, through the desktop', () => {
  it('collections (create, rename, delete), notes, tag rename and delete, permanent deletion: each on the local API, none on the cloud', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [noted, doomed, tagged] = lib.addItems([
      { title: 'Noted' },
      { title: 'Doomed' },
      { title: 'Tagged', tags: [{ tag: 'old-name' }] },
    ]);
    world.server.clearLog();
    const steps: Array<{ argv: string[]; env?: Record<string, string> }> = [
      { argv: ['collection', 'create', 'Made on the desktop'] },
      { argv: ['note', 'add', noted as string, 'A local note'] },
      { argv: ['tag', 'rename', 'old-name', 'new-name'] },
      { argv: ['delete', doomed as string, '--yes'], env: desktopEnv({ ZOTEUS_ALLOW_DELETE: 'true' }) },
    ];
    const counts: Record<string, number> = {};
    for (const step of steps) {
      const before = world.server.log.length;
      const r = await zot(step.argv, step.env ?? desktopEnv());
      const env = r.json() as { ok: boolean; data: Record<string, unknown> };
      expect({ argv: step.argv, ok: env.ok }).toEqual({ argv: step.argv, ok: true });
      expect(env.data.written_to).toBe('desktop');
      counts[step.argv.slice(0, 2).join(' ')] = world.server.log.length - before;
    }
    const created = [...lib.collections.values()].find((c) => c.name === 'Made on the desktop');
    expect(created).toBeDefined();
    const renamed = await zot(['collection', 'rename', created?.key as string, 'Renamed locally']);
    expect(renamed.json().ok).toBe(true);
    expect(lib.collections.get(created?.key as string)?.name).toBe('Renamed locally');
    const removed = await zot(['collection', 'delete', created?.key as string, '--yes']);
    expect(removed.json().ok).toBe(true);
    expect(lib.collections.has(created?.key as string)).toBe(false);

    expect([...lib.items.values()].some((i) => i.parentItem === noted && i.itemType === 'note')).toBe(true);
    expect(lib.items.get(tagged as string)?.tags).toEqual([{ tag: 'new-name' }]);
    expect(lib.items.has(doomed as string)).toBe(false);
    expect(world.server.log.filter(cloud)).toEqual([]);
    // Each command: the write probe (2), the desktop's detection (2), then its own requests.
    // Each command: the write probe (GET /api/, POST []) and the desktop's detection (its
    // collections and groups), then its own requests.
    expect(counts).toEqual({
      'collection create': 4 + 1,
      'note add': 4 + 1,
      'tag rename': 4 + 3,
      [`delete ${doomed}`]: 4 + 2,
    });
  });
});

describe('what the local API would take silently', () => {
  it('an unknown field is refused by Zoteus before anything is written (the local API would move it into Extra)', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Strict' }]);
    world.server.clearLog();
    const r = await zot(['update', a as string, '--field', 'notAField=1']);
    expect(r.code).toBe(3);
    expect((r.json() as { error: { code: string } }).error.code).toBe('validation_error');
    // Nothing but (at most) the probe's empty batch reached the desktop.
    expect(localWrites().every((e) => Array.isArray(e.body) && e.body.length === 0)).toBe(true);
    expect(lib.items.get(a as string)?.extra ?? '').toBe('');
  });
});

describe('idempotency remembers the side', () => {
  it('a create whose first attempt went to the desktop never resumes on the cloud', async () => {
    const group = world.server.library('groups/10');
    const before = group.items.size;
    const item = JSON.stringify([{ itemType: 'book', title: 'Once only' }]);
    const create = (env: Record<string, string>) =>
      zotAt(['create', '-', '--library-id', '10', '--idempotency-key', 'side-1', '--json'], {
        env,
        stdin: item,
      });
    // The desktop's connection breaks on every send of the write: the outcome is unknown.
    world.server.faults.reset({ times: 20, match: { method: 'POST', path: '/api/groups/10/items' } });
    const first = await create(desktopEnv());
    world.server.faults.clear();
    expect((first.json() as { error: { code: string } }).error.code).toBe('network_error');
    expect(group.items.size).toBe(before);

    // The retry finds no local key and a Web API key: it is refused, not sent to the cloud.
    world.server.clearLog();
    const elsewhere = await create(
      desktopEnv({ ZOTEUS_LOCAL_API_KEY: undefined, ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678' }),
    );
    const error = (elsewhere.json() as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/wrote through the Zotero desktop app/);
    expect(world.server.log.filter((e) => cloud(e) && e.method === 'POST')).toEqual([]);

    // Back on the desktop, the same key resumes there: one item, the same key as the first attempt chose.
    const resumed = await create(desktopEnv());
    const env = resumed.json() as {
      ok: boolean;
      data: { created: Array<{ key: string }>; written_to: string };
    };
    expect(env.ok).toBe(true);
    expect(env.data.written_to).toBe('desktop');
    expect(group.items.size).toBe(before + 1);
  });
});

describe('over MCP', () => {
  it('a write through the desktop says so in _meta zoteus/written_to; the cloud is not asked', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Over MCP' }]);
    const env = desktopEnv();
    const mcp = await connect(tools, {
      ZOTERO_API_URL: env.ZOTERO_API_URL as string,
      ZOTEUS_LOCAL_API_URL: localUrl,
      ZOTEUS_LOCAL_API_KEY: LOCAL_KEY,
    });
    try {
      world.server.clearLog();
      const result = await mcp.client.callTool({
        name: 'zotero_manage_tags',
        arguments: { action: 'add_items', tag: 'mcp', item_keys: [a] },
      });
      expect(result.isError).toBeFalsy();
      expect(result._meta?.['zoteus/written_to']).toBe('desktop');
      expect(lib.items.get(a as string)?.tags).toEqual([{ tag: 'mcp' }]);
      expect(world.server.log.filter(cloud)).toEqual([]);
    } finally {
      await mcp.close();
    }
  });
});

describe('the local API rules', () => {
  it('a one-time key used up by a multi-request write: the rest fails as auth_missing, never reported as success', async () => {
    writes.keys.clear();
    writes.keys.set(ONCE_KEY, { remember: false, appName: 'Zoteus' });
    const lib = world.server.library(`users/${ALICE}`);
    const [coll] = lib.addCollections([{ name: 'Many' }]);
    const keys = lib.addItems(Array.from({ length: 60 }, (_, i) => ({ title: `Item ${i}` })));
    world.server.clearLog();
    const r = await zot(
      ['collection', 'add', coll as string, ...keys],
      desktopEnv({ ZOTEUS_LOCAL_API_KEY: ONCE_KEY }),
    );
    expect(r.code).toBe(7);
    const env = r.json() as {
      ok: string;
      data: { updated: string[]; failed: Array<Record<string, unknown>> };
    };
    expect(env.ok).toBe('partial');
    expect(env.data.updated).toHaveLength(50);
    expect(env.data.failed).toHaveLength(10);
    expect(env.data.failed[0]).toMatchObject({ code: 401, reason: 'auth_missing' });
    expect(String(env.data.failed[0]?.message)).toMatch(/one-time key already used/);
    expect(writes.used).toEqual([ONCE_KEY]);
    const inColl = keys.filter((k) => lib.items.get(k)?.collections.includes(coll as string));
    expect(inColl).toEqual(env.data.updated);
  });

  it('a missing key: auth_missing that says a person must authorise Zoteus', async () => {
    writes.keys.clear();
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'X' }]);
    const r = await zot(['tag', 'add', 'x', a as string]);
    expect(r.code).toBe(2);
    const error = (r.json() as { error: { code: string; hint: string } }).error;
    expect(error.code).toBe('auth_missing');
    expect(error.hint).toContain('zot auth local');
    expect(error.hint).toContain('Always Allow');
  });

  it('the server id changes mid-session (another database): refused, not re-applied, versions dropped', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Switch' }]);
    const old = writes.serverId;
    const deps = world.deps({ env: desktopEnv() });
    const { openWebLibrary } = await import('../../../src/core/library/web.js');
    const opened = await openWebLibrary(deps, {}, { access: 'write' });
    writes.serverId = 'NEWSERVER123';
    world.server.clearLog();
    const { applySetChange } = await import('../../../src/core/writes/engine.js');
    await expect(
      applySetChange(opened.client, {
        library: opened.prefix,
        kind: 'items',
        keys: [a as string],
        apply: (d) => ({ ...d, title: 'Never' }),
      }),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/another database/) });
    expect(lib.items.get(a as string)?.title).toBe('Switch');
    // One 412 for the read (the id is checked on every request), nothing re-sent.
    expect(world.server.log.map((e) => `${e.method} ${e.status}`)).toEqual(['GET 412']);
    writes.serverId = old;
    await deps.services.close();
  });

  it('a 412 version conflict on one object is re-read and re-applied', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Race' }]);
    const deps = world.deps({ env: desktopEnv() });
    const { openWebLibrary } = await import('../../../src/core/library/web.js');
    const opened = await openWebLibrary(deps, {}, { access: 'write' });
    world.server.clearLog();
    const { applySetChange } = await import('../../../src/core/writes/engine.js');
    let round = 0;
    const result = await applySetChange(opened.client, {
      library: opened.prefix,
      kind: 'items',
      keys: [a as string],
      apply: (d) => {
        // Someone else writes between our read and our write, once.
        if (round++ === 0) lib.editItem(a as string, { extra: 'theirs' });
        return { ...d, tags: [{ tag: 'ours' }] };
      },
    });
    expect(result.succeeded).toEqual([a]);
    expect(lib.items.get(a as string)?.tags).toEqual([{ tag: 'ours' }]);
    expect(lib.items.get(a as string)?.extra).toBe('theirs');
    expect(world.server.log.map((e) => `${e.method} ${e.path}`)).toEqual([
      'GET /api/users/0/items',
      'POST /api/users/0/items',
      'GET /api/users/0/items',
      'POST /api/users/0/items',
    ]);
    await deps.services.close();
  });

  it('ZOTEUS_WRITES=cloud: the Web API takes the write even with the desktop ready', async () => {
    const lib = world.server.library(`users/${ALICE}`);
    const [a] = lib.addItems([{ title: 'Cloudy' }]);
    world.server.clearLog();
    const r = await zot(
      ['tag', 'add', 'cloud', a as string],
      desktopEnv({ ZOTERO_API_KEY: 'Zk3yS3cr3tAbCdEf12345678', ZOTEUS_WRITES: 'cloud' }),
    );
    const env = r.json() as { ok: boolean; data: Record<string, unknown> };
    expect(env.ok).toBe(true);
    expect(env.data.written_to).toBe('cloud');
    expect(r.stderr).toContain('SYNC_REMINDER: the change is in the Zotero cloud');
    expect(localWrites()).toEqual([]);
    expect(world.server.log.filter((e) => cloud(e) && e.method === 'POST')).toHaveLength(1);
  });

  it('a browser-looking request is dropped without an answer; a write without Zotero-Server-ID gets 428', async () => {
    await expect(
      fetch(`${localUrl}/users/0/items`, { headers: { Origin: 'https://evil.example' } }),
    ).rejects.toThrow();
    const bare = await fetch(`${localUrl}/users/0/items`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Zotero-API-Key': LOCAL_KEY },
      body: '[]',
    });
    expect(bare.status).toBe(428);
    expect(bare.headers.get('zotero-server-id')).toBe(writes.serverId);
    // Zotero's server answers HTTP/1.0 and closes: the status line as it comes off the socket.
    const { connect } = await import('node:net');
    const target = new URL(localUrl);
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(target.port), target.hostname, () => {
        socket.write(`GET /api/users/0/items HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head.split('\r\n')[0]).toBe('HTTP/1.0 200 OK');
  });
});

describe('a library the desktop holds read-only', () => {
  it('whoami sends its writes to the cloud and says why; ZOTEUS_WRITES=desktop refuses with permission_denied', async () => {
    const { startDesktopWorld, GROUP_ID } = await import('./router-world.js');
    const { sampleLibrarySpec, SAMPLE_KEYS } = await import('../../support/zotero-sqlite/index.js');
    const spec = sampleLibrarySpec();
    const desk = await startDesktopWorld({
      localApi: true,
      spec: {
        ...spec,
        libraries: spec.libraries.map((l) => (l.type === 'group' ? { ...l, editable: false } : l)),
      },
    });
    try {
      const state = desk.server.serveLocalWrites();
      state.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
      const env = desk.env({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY });
      const who = await zotAt(['whoami', '--json'], { env });
      const libs = (
        who.json().data as {
          libraries: Array<{ library: string; writes?: { to: string | null; reason: string } }>;
        }
      ).libraries;
      const group = libs.find((l) => l.library === `groups/${GROUP_ID}`);
      // No Web API key in this world: the cloud cannot take it either.
      expect(group?.writes?.to).toBeNull();
      expect(group?.writes?.reason).toMatch(/does not let this account edit it/);
      expect(libs[0]?.writes?.to).toBe('desktop');

      desk.server.clearLog();
      const r = await zotAt(
        ['tag', 'add', 'x', SAMPLE_KEYS.group.items.groupArticle, '--library-id', String(GROUP_ID), '--json'],
        { env: desk.env({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY, ZOTEUS_WRITES: 'desktop' }) },
      );
      expect(r.code).toBe(2);
      expect((r.json() as { error: { code: string } }).error.code).toBe('permission_denied');
      expect(
        desk.server.log.filter((e) => e.method !== 'GET' && !(Array.isArray(e.body) && e.body.length === 0)),
      ).toEqual([]);
    } finally {
      await desk.close();
    }
  });
});
