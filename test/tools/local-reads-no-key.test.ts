/**
 * Issue 16, point 17: every read works on every backend that holds the library. With no API key
 * and the desktop's zotero.sqlite (the sample library: user 8675309, group 4711), every
 * read-only tool of the one tool list answers, without a request to the cloud; only the tools
 * that exist in the cloud alone say auth_missing, and they are listed here with the reason.
 * `zot note KEY` and `zot groups` are the two that used to refuse for want of a key.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../src/tools/index.js';
import { runZot } from '../support/cli.js';
import { connect } from '../surfaces/mcp/harness.js';
import { KEY, SAMPLE_KEYS, startDesktopWorld, type DesktopWorld } from '../core/library/router-world.js';

const I = SAMPLE_KEYS.user.items;
const LIB = `users/${SAMPLE_KEYS.user.userID}`;

/** A call of each read: what a person would ask first. */
const READS: Record<string, Record<string, unknown>> = {
  zotero_whoami: {},
  zotero_groups: {},
  zotero_list_collections: {},
  zotero_schema: {},
  zotero_search_items: { q: 'sea level' },
  zotero_get_item: { item_key: I.seaLevelArticle },
  zotero_get_fulltext: { item_key: I.seaLevelArticle },
  zotero_semantic_search: { q: 'sea level rise' },
  zotero_list_tags: {},
  zotero_stats: {},
  zotero_summarize: { item_keys: [I.seaLevelArticle] },
  zotero_list_notes: { item_key: I.seaLevelArticle },
  zotero_list_annotations: { item_key: I.seaLevelArticle },
  zotero_tag_audit: { vocabulary: ['sea level'] },
  zotero_attachment_audit: {},
  zotero_format_bibliography: { item_keys: [I.seaLevelArticle] },
  zotero_styles: {},
  zotero_history: {},
  // A book without a DOI: listed as not checked online, so nothing leaves the machine.
  zotero_check_retractions: { item_keys: [I.deepLearningBook] },
  zotero_find_duplicates: {},
  zotero_saved_searches: { action: 'list' },
};
/** Read actions of tools that otherwise write. */
const READ_ACTIONS: Record<string, Record<string, unknown>> = {
  zotero_manage_collections: { action: 'list' },
  zotero_get_attachment: { action: 'list', item_key: I.seaLevelArticle },
};
/** Reads that exist only in the cloud, and why. */
const CLOUD_ONLY: Record<string, { input: Record<string, unknown>; why: string }> = {
  zotero_sync: {
    input: { since: 0 },
    why: 'changes since a library version, deletions included, come from the Web API: the desktop keeps no deletion log for others',
  },
};

let world: DesktopWorld;
beforeAll(async () => {
  world = await startDesktopWorld();
});
afterAll(async () => {
  await world.close();
});

type Mcp = Awaited<ReturnType<typeof connect>>;
const call = async (mcp: Mcp, name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
const errorOf = (r: CallToolResult) =>
  r._meta?.['zoteus/error'] as { code: string; message: string; hint?: string } | undefined;

describe('no API key, the desktop’s zotero.sqlite: every read answers', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await connect(tools, world.env());
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('the sweep has a call for every read-only tool of the tool list', () => {
    const reads = tools.filter((t) => t.tier === 'read').map((t) => t.name);
    expect(reads.filter((name) => !(name in READS) && !(name in CLOUD_ONLY))).toEqual([]);
    expect([...Object.keys(READS), ...Object.keys(CLOUD_ONLY)].sort()).toEqual([...reads].sort());
  });

  it.each(Object.entries({ ...READS, ...READ_ACTIONS }))(
    '%s answers from the desktop',
    async (name, input) => {
      const before = world.server.log.length;
      const r = await call(mcp, name, input);
      expect(errorOf(r), JSON.stringify(errorOf(r))).toBeUndefined();
      expect(r.isError).toBeFalsy();
      const out = r.structuredContent as { backend?: unknown; library?: unknown };
      if (typeof out.backend === 'string') expect(out.backend).toBe('sqlite');
      if (typeof out.library === 'string') expect(out.library).toBe(LIB);
      // Nothing of the library is asked of the cloud; only Zotero's public schema may be.
      expect(world.server.log.slice(before).map((e) => e.path)).toEqual(
        name === 'zotero_schema' ? ['/schema'] : [],
      );
    },
  );

  it.each(Object.entries(CLOUD_ONLY).map(([name, c]) => [name, c.why, c.input] as const))(
    '%s exists only in the cloud (%s): auth_missing',
    async (name, _why, input) => {
      const before = world.server.log.length;
      expect(errorOf(await call(mcp, name, input))).toMatchObject({ code: 'auth_missing' });
      expect(world.server.log.slice(before)).toEqual([]);
    },
  );

  it('zotero_groups lists the groups of zotero.sqlite: readable, not writable without a key', async () => {
    const r = await call(mcp, 'zotero_groups', {});
    expect(r.structuredContent).toEqual({
      groups: [
        {
          id: SAMPLE_KEYS.group.groupID,
          name: 'Ocean Lab (shared)',
          numItems: expect.any(Number),
          canRead: true,
          canWrite: false,
        },
      ],
      totalResults: 1,
      complete: true,
      backend: 'sqlite',
      start: 0,
    });
    // The count the cloud gives for the same group (the test server mirrors the desktop).
    const cloud = await connect(tools, world.env({ ZOTERO_API_KEY: KEY }));
    try {
      const web = (await call(cloud, 'zotero_groups', {})).structuredContent as {
        groups: Array<{ id: number; numItems?: number }>;
        backend: string;
      };
      const local = (r.structuredContent as { groups: Array<{ numItems: number }> }).groups[0];
      expect(web.backend).toBe('web');
      expect(local?.numItems).toBeGreaterThan(0);
      expect(web.groups.find((g) => g.id === SAMPLE_KEYS.group.groupID)?.numItems).toBe(local?.numItems);
    } finally {
      await cloud.close();
    }
    expect((r.content[0] as { text: string }).text).toBe(
      "1 group in the desktop app's Zotero (read-only: no API key).",
    );
  });

  it('zotero_list_notes reads a group item’s notes too, from the group library', async () => {
    const r = await call(mcp, 'zotero_list_notes', {
      item_key: SAMPLE_KEYS.group.items.groupArticle,
      library_id: SAMPLE_KEYS.group.groupID,
    });
    expect(errorOf(r)).toBeUndefined();
    expect(r.structuredContent).toMatchObject({
      backend: 'sqlite',
      library: `groups/${SAMPLE_KEYS.group.groupID}`,
    });
  });
});

describe('the CLI: `zot note KEY` and `zot groups` without a key (needs `npm run build`)', () => {
  it('`zot note KEY` shows the note `zot read KEY` shows, from zotero.sqlite', async () => {
    const note = await runZot(['note', I.seaLevelArticle], { env: world.env() });
    expect(note.code).toBe(0);
    const data = note.json().data as { notes: Array<{ title: string; text: string }>; backend: string };
    expect(data).toMatchObject({ backend: 'sqlite', library: LIB, totalResults: 1 });
    expect(data.notes.map((n) => n.title)).toEqual(['Reading notes']);
    const read = await runZot(['read', I.seaLevelArticle], { env: world.env() });
    const children = (read.json().data as { children: Array<{ itemType: string; key: string }> }).children;
    expect(data.notes.map((n) => (n as unknown as { key: string }).key)).toEqual(
      children.filter((c) => c.itemType === 'note').map((c) => c.key),
    );
  });

  it('`zot groups` lists the desktop’s groups; with ZOTEUS_LOCAL=off it still needs a key', async () => {
    const before = world.server.log.length;
    const r = await runZot(['groups'], { env: world.env() });
    expect(r.code).toBe(0);
    expect(r.json().data).toMatchObject({
      backend: 'sqlite',
      groups: [{ id: SAMPLE_KEYS.group.groupID, name: 'Ocean Lab (shared)', canWrite: false }],
    });
    const off = await runZot(['groups'], { env: world.env({ ZOTEUS_LOCAL: 'off' }) });
    expect(off.code).toBe(2);
    expect(off.json().error).toMatchObject({ code: 'auth_missing' });
    expect(world.server.log.slice(before)).toEqual([]);
  });
});

describe('the desktop’s local API serves them too', () => {
  let local: DesktopWorld;
  beforeAll(async () => {
    local = await startDesktopWorld({ localApi: true });
  });
  afterAll(async () => {
    await local.close();
  });

  it('zotero_list_notes through the local API, no key', async () => {
    const mcp = await connect(tools, local.env());
    try {
      const r = await call(mcp, 'zotero_list_notes', { item_key: I.seaLevelArticle });
      expect(errorOf(r)).toBeUndefined();
      expect(r.structuredContent).toMatchObject({
        backend: 'localApi',
        notes: [{ title: 'Reading notes' }],
        totalResults: 1,
      });
      // Only the desktop was asked: its local API, never the cloud's paths.
      expect(local.server.log.every((e) => e.path.startsWith('/api/'))).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});
