/** `zotero_whoami` / `zot whoami` with and without a key, against the test server. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkKey, keyCachePath } from '../../../src/core/library/keys.js';
import type { AnyTool } from '../../../src/core/tool.js';
import whoamiTool from '../../../src/tools/library/whoami.js';
import { tools } from '../../../src/tools/index.js';
import { runZot } from '../../support/cli.js';
import { startZoteroServer } from '../../support/zotero-server/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { ALICE, BAD_KEY, KEY, READ_KEY, startWorld, type World } from '../../core/library/world.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.close();
});

type Whoami = Awaited<ReturnType<typeof whoamiTool.run>>;

const ALICE_KEY = {
  userID: ALICE,
  username: 'alice',
  displayName: 'Alice Liddell',
  access: {
    user: { library: true, files: true, notes: true, write: true },
    groups: { all: { library: true, write: true } },
  },
};

describe('zotero_whoami in process', () => {
  it('without a key makes no request and reports no key', async () => {
    const out = await whoamiTool.run({}, world.deps({ env: { ZOTERO_API_KEY: undefined } }));
    expect(whoamiTool.output.safeParse(out).success).toBe(true);
    expect(out.key).toBeNull();
    expect(out.backends.web).toMatchObject({ configured: false, available: null });
    expect(out.library).toMatchObject({ type: 'user', id: null, source: 'desktop' });
    expect(world.server.log).toHaveLength(0);
  });

  it("with a key: the key's user, its access as the server gives it, the library id from the key", async () => {
    // No desktop app here: the sandbox's Zotero data directory is empty, nothing listens on port 9.
    const out = await whoamiTool.run(
      {},
      world.deps({ env: { ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api' } }),
    );
    expect(whoamiTool.output.safeParse(out).success).toBe(true);
    expect(out.key).toEqual(ALICE_KEY);
    expect(out.library).toEqual({
      type: 'user',
      id: ALICE,
      source: 'key',
      description: "users/1 (the API key's user library)",
    });
    expect(out.backends.web).toMatchObject({ configured: true, available: true });
    expect(out.backends.web).not.toHaveProperty('error');
    expect(out.backends.localApi).toMatchObject({ configured: true, available: false, state: 'not_running' });
    expect(out.backends.sqlite).toMatchObject({
      configured: true,
      available: false,
      path: expect.any(String),
    });
    // The key's library is not on the desktop: the Web API serves it.
    expect(out.libraries).toEqual([expect.objectContaining({ library: `users/${ALICE}`, backend: 'web' })]);
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it('a configured group stays the default library', async () => {
    const out = await whoamiTool.run(
      {},
      world.deps({ env: { ZOTERO_LIBRARY_ID: '20', ZOTERO_LIBRARY_TYPE: 'group' } }),
    );
    expect(out.library).toEqual({ type: 'group', id: 20, source: 'config', description: 'groups/20' });
    expect(out.key?.userID).toBe(ALICE);
  });

  it('a key with narrower access is mirrored as given', async () => {
    const out = await whoamiTool.run({}, world.deps({ env: { ZOTERO_API_KEY: READ_KEY } }));
    expect(out.key?.access).toEqual({ user: { library: true }, groups: { '20': { library: true } } });
  });

  it('an invalid key: the call succeeds, key null, web available with error auth_invalid', async () => {
    const out = await whoamiTool.run({}, world.deps({ env: { ZOTERO_API_KEY: BAD_KEY } }));
    expect(out.key).toBeNull();
    expect(out.library.id).toBeNull();
    expect(out.backends.web).toMatchObject({
      configured: true,
      available: true,
      error: { code: 'auth_invalid' },
    });
    expect(out.backends.web.detail).toContain('refused the API key');
    expect(JSON.stringify(out)).not.toContain(BAD_KEY);
  });

  it('an unreachable server: the call succeeds, web not available, error network_error', async () => {
    const gone = await startZoteroServer();
    await gone.close();
    const out = await whoamiTool.run({}, world.deps({ env: { ZOTERO_API_URL: gone.url } }));
    expect(out.key).toBeNull();
    expect(out.backends.web).toMatchObject({
      configured: true,
      available: false,
      error: { code: 'network_error' },
    });
    expect(out.backends.web.detail).toContain('could not be checked');
  });

  it('always asks the server, and a refused key drops a cached entry', async () => {
    // A cached check of a key the server no longer knows (revoked since).
    const deps = world.deps({ surface: 'cli', env: { ZOTERO_API_KEY: BAD_KEY } });
    const path = keyCachePath(deps.config, BAD_KEY);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify({ checkedAt: Date.now(), ...ALICE_KEY }));
    expect((await checkKey(deps)).source).toBe('disk');
    expect(world.keyChecks()).toBe(0);
    const out = await whoamiTool.run({}, deps);
    expect(world.keyChecks()).toBe(1);
    expect(out.backends.web.error?.code).toBe('auth_invalid');
    expect(existsSync(path)).toBe(false);
  });
});

describe('zot whoami', () => {
  it('with a key, through the CLI', async () => {
    const r = await runZot(['whoami'], { env: world.env() });
    expect(r.code).toBe(0);
    const data = (r.json() as { data: Whoami }).data;
    expect(data.key).toEqual(ALICE_KEY);
    expect(data.library).toMatchObject({ id: ALICE, source: 'key' });
    expect(data.backends.web.available).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    expect(world.keyChecks()).toBe(1);
  });

  it('with an invalid key exits 0 and says so', async () => {
    const r = await runZot(['whoami'], { env: world.env({ ZOTERO_API_KEY: BAD_KEY }) });
    expect(r.code).toBe(0);
    const data = (r.json() as { data: Whoami }).data;
    expect(data.key).toBeNull();
    expect(data.backends.web.error?.code).toBe('auth_invalid');
    expect(r.stdout + r.stderr).not.toContain(BAD_KEY);
  });

  it('without a key sends nothing', async () => {
    const r = await runZot(['whoami'], { env: world.env({ ZOTERO_API_KEY: undefined }) });
    expect(r.code).toBe(0);
    expect((r.json() as { data: Whoami }).data.key).toBeNull();
    expect(world.server.log).toHaveLength(0);
  });
});

describe('zotero_whoami over MCP', () => {
  it('with a key, in memory', async () => {
    const mcp = await connect(tools as readonly AnyTool[], {
      ZOTERO_API_URL: world.server.url,
      ZOTERO_API_KEY: KEY,
    });
    try {
      const { tools: listed } = await mcp.client.listTools();
      expect(listed.find((t) => t.name === 'zotero_whoami')?.annotations).toEqual({ readOnlyHint: true });
      const r = (await mcp.client.callTool({ name: 'zotero_whoami', arguments: {} })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      const out = r.structuredContent as Whoami;
      expect(out.key).toEqual(ALICE_KEY);
      expect(out.library.id).toBe(ALICE);
      expect(JSON.stringify(r)).not.toContain(KEY);
      // whoami asks afresh; the library tools after it reuse its check.
      await mcp.client.callTool({ name: 'zotero_groups', arguments: {} });
      expect(world.keyChecks()).toBe(1);
    } finally {
      await mcp.close();
    }
  });
});
