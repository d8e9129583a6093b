/** `zotero_groups` / `zot groups` against the test server: in process, as a CLI subprocess, over MCP. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY_CHECK_TTL_MS } from '../../../src/core/library/keys.js';
import type { AnyTool } from '../../../src/core/tool.js';
import groupsTool from '../../../src/tools/library/groups.js';
import { tools } from '../../../src/tools/index.js';
import { runZot } from '../../support/cli.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { ALICE, BAD_KEY, KEY, READ_KEY, startWorld, type World } from '../../core/library/world.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.close();
});

type Groups = Awaited<ReturnType<typeof groupsTool.run>>;

describe('zotero_groups in process', () => {
  it('lists the groups the key reaches, sorted by name, with access and numItems', async () => {
    const out = await groupsTool.run({}, world.deps());
    expect(groupsTool.output.safeParse(out).success).toBe(true);
    // Bob's private group (40) is not alice's; the key reaches the others through `all`.
    expect(out.groups.map((g) => g.name)).toEqual(['Archive', 'Curated', 'Lab', 'Reading club']);
    expect(out.totalResults).toBe(4);
    expect(out.complete).toBe(true);
    const byId = new Map(out.groups.map((g) => [g.id, g]));
    expect(byId.get(10)).toEqual({
      id: 10,
      name: 'Lab',
      type: 'Private',
      numItems: 2,
      owner: 2,
      canRead: true,
      canWrite: true,
    });
    expect(byId.get(20)).toMatchObject({ type: 'PublicClosed', numItems: 0, canWrite: true });
    // Only admins edit: a plain member cannot write, an admin can.
    expect(byId.get(30)).toMatchObject({ canRead: true, canWrite: false });
    expect(byId.get(50)).toMatchObject({ canRead: true, canWrite: true });
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current', `/users/${ALICE}/groups`]);
  });

  it('a key with per-group access: only that group, readable but not writable', async () => {
    const out = await groupsTool.run({}, world.deps({ env: { ZOTERO_API_KEY: READ_KEY } }));
    expect(out.groups).toEqual([
      {
        id: 20,
        name: 'Reading club',
        type: 'PublicClosed',
        numItems: 0,
        owner: 2,
        canRead: true,
        canWrite: false,
      },
    ]);
  });

  it('reads every page: 230 groups, then pages them 100 at a time', async () => {
    for (let i = 0; i < 230; i++) {
      world.server.addGroup({
        id: 1000 + i,
        name: `G${String(i).padStart(3, '0')}`,
        owner: ALICE,
        members: [],
      });
    }
    world.server.clearLog();
    const out = await groupsTool.run({}, world.deps());
    expect(out.totalResults).toBe(234);
    expect(out.groups).toHaveLength(100);
    expect(out).toMatchObject({ start: 0, nextStart: 100, complete: true });
    const pages = world.server.log.filter((e) => e.path === `/users/${ALICE}/groups`);
    expect(pages.map((e) => e.query.start).sort()).toEqual(['0', '100', '200']);
    const rest = [...(await groupsTool.run({ start: 100, limit: 500 }, world.deps())).groups, ...out.groups];
    expect(new Set(rest.map((g) => g.id)).size).toBe(234);
    const last = await groupsTool.run({ start: 200 }, world.deps());
    expect(last.groups).toHaveLength(34);
    expect(last).not.toHaveProperty('nextStart');
  });

  it('omits numItems when the server does not give it', async () => {
    world.server.addGroup({ id: 60, name: 'Quiet', owner: ALICE, members: [], omitNumItems: true });
    const out = await groupsTool.run({}, world.deps());
    const quiet = out.groups.find((g) => g.id === 60);
    expect(quiet).toBeDefined();
    expect(quiet).not.toHaveProperty('numItems');
    expect(out.groups.find((g) => g.id === 10)).toHaveProperty('numItems', 2);
  });

  it('two calls on one deps check the key once', async () => {
    const deps = world.deps();
    await groupsTool.run({}, deps);
    await groupsTool.run({}, deps);
    expect(world.keyChecks()).toBe(1);
  });
});

describe('zot groups', () => {
  const zot = (args: string[], env: Record<string, string | undefined> = {}) =>
    runZot(args, { env: world.env(env) });

  it('prints the groups in one envelope; a second run within 10 minutes sends no key check', async () => {
    const first = await zot(['groups']);
    expect(first.code).toBe(0);
    const env = first.json() as { ok: boolean; data: Groups };
    expect(env.ok).toBe(true);
    expect(env.data.groups.map((g) => g.id)).toEqual([30, 50, 10, 20]);
    expect(env.data.totalResults).toBe(4);
    const second = await zot(['groups']);
    expect(second.code).toBe(0);
    expect(world.keyChecks()).toBe(1);
    expect(world.server.log.filter((e) => e.path.endsWith('/groups'))).toHaveLength(2);
    for (const r of [first, second]) expect(r.stdout + r.stderr).not.toContain(KEY);

    // The cache file holds no key; once it has expired, the next run checks again.
    const dir = join(world.box.env.ZOT_CACHE_DIR as string, 'keys');
    const [file] = readdirSync(dir);
    const path = join(dir, file as string);
    const body = JSON.parse(readFileSync(path, 'utf8')) as { checkedAt: number };
    expect(readFileSync(path, 'utf8')).not.toContain(KEY);
    writeFileSync(path, JSON.stringify({ ...body, checkedAt: Date.now() - KEY_CHECK_TTL_MS - 1 }));
    expect((await zot(['groups'])).code).toBe(0);
    expect(world.keyChecks()).toBe(2);
  });

  it('streams one line per group and renders a table', async () => {
    const stream = await zot(['groups', '--stream']);
    const lines = stream.lines();
    expect(lines).toHaveLength(5);
    expect(lines[4]).toMatchObject({ ok: true, summary: { count: 4, total: 4, has_more: false } });
    const table = await zot(['groups'], { ZOT_FORMAT: 'table' });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^id\s+name\s+type\s+numItems\s+owner\s+canRead\s+canWrite/m);
    expect(table.stdout).toContain('Reading club');
  });

  it('an invalid key is auth_invalid, exit 2, without the key anywhere', async () => {
    const r = await zot(['groups'], { ZOTERO_API_KEY: BAD_KEY });
    expect(r.code).toBe(2);
    expect((r.json() as { error: { code: string } }).error.code).toBe('auth_invalid');
    expect(r.stdout + r.stderr).not.toContain(BAD_KEY);
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current']);
  });

  it('no key is auth_missing, exit 2, with no request', async () => {
    const r = await zot(['groups'], { ZOTERO_API_KEY: undefined });
    expect(r.code).toBe(2);
    expect((r.json() as { error: { code: string; hint: string } }).error).toMatchObject({
      code: 'auth_missing',
    });
    expect(world.server.log).toHaveLength(0);
  });
});

describe('zotero_groups over MCP', () => {
  it('is listed, answers with structuredContent, and checks the key once per server', async () => {
    const mcp = await connect(tools as readonly AnyTool[], {
      ZOTERO_API_URL: world.server.url,
      ZOTERO_API_KEY: KEY,
    });
    try {
      const { tools: listed } = await mcp.client.listTools();
      const declared = listed.find((t) => t.name === 'zotero_groups');
      expect(declared?.annotations).toEqual({ readOnlyHint: true });
      const a = (await mcp.client.callTool({ name: 'zotero_groups', arguments: {} })) as CallToolResult;
      const b = (await mcp.client.callTool({ name: 'zotero_groups', arguments: {} })) as CallToolResult;
      expect(a.isError).toBeFalsy();
      expect((a.structuredContent as Groups).groups).toHaveLength(4);
      expect(b.structuredContent).toEqual(a.structuredContent);
      expect(world.keyChecks()).toBe(1);
      expect(JSON.stringify([a, b])).not.toContain(KEY);
    } finally {
      await mcp.close();
    }
  });

  it('an invalid key is an auth_invalid error result', async () => {
    const mcp = await connect(tools as readonly AnyTool[], {
      ZOTERO_API_URL: world.server.url,
      ZOTERO_API_KEY: BAD_KEY,
    });
    try {
      const r = (await mcp.client.callTool({ name: 'zotero_groups', arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(r._meta?.['zoteus/error']).toMatchObject({ code: 'auth_invalid' });
      expect(JSON.stringify(r)).not.toContain(BAD_KEY);
    } finally {
      await mcp.close();
    }
  });
});
