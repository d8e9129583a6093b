/**
 * Both collection tools over MCP (the SDK client, in memory) against the test server:
 * listing, every write action, partial results, errors with `_meta`, read-only mode, the
 * warm listing, and the `zotero://collections` resource.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import collectionsResource from '../../../src/resources/collections.js';
import { resources } from '../../../src/resources/index.js';
import { tools } from '../../../src/tools/index.js';
import { KEY, startWorld, type World } from '../../core/library/world.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { membership, requests, seedItems, USER } from './fixtures.js';

let world: World;
let mcp: Awaited<ReturnType<typeof connect>>;

async function open(env: Record<string, string> = {}): Promise<void> {
  mcp = await connect(tools as readonly AnyTool[], {
    ZOTERO_API_URL: world.server.url,
    ZOTERO_API_KEY: KEY,
    ...env,
  });
}

beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await mcp?.close();
  await world.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

describe('zotero_list_collections over MCP', () => {
  it('answers a page with structuredContent and a one-line summary; warm calls cost one request', async () => {
    world.server.library(USER).addCollections(Array.from({ length: 230 }, (_, i) => ({ name: `C${i}` })));
    await open();
    const r = await call('zotero_list_collections', { limit: 10, start: 5 });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe('Showing 6–15 of 230 collections. Continue with start=15.');
    expect(r.structuredContent).toMatchObject({ totalResults: 230, start: 5, complete: true, nextStart: 15 });
    expect(JSON.parse((r.content[1] as { text: string }).text)).toEqual(r.structuredContent);
    expect((r.structuredContent as { collections: unknown[] }).collections).toHaveLength(10);

    world.server.clearLog();
    const warm = await call('zotero_list_collections', { q: 'C22' });
    expect(warm.structuredContent).toMatchObject({ totalResults: 11 });
    expect(world.server.log.map((e) => e.status)).toEqual([304]);
  });

  it('in read-only mode only the list tool is offered; manage is refused as a write tool', async () => {
    world.server.library(USER).addCollections([{ name: 'A' }]);
    await open({ ZOTEUS_READ_ONLY: 'true' });
    const { tools: listed } = await mcp.client.listTools();
    const names = listed.map((t) => t.name);
    expect(names).toContain('zotero_list_collections');
    expect(names).not.toContain('zotero_manage_collections');
    expect((await call('zotero_list_collections', {})).isError).toBeFalsy();
    const refused = await call('zotero_manage_collections', { action: 'create', name: 'B' });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.['zoteus/error']).toMatchObject({ code: 'permission_denied' });
    expect(world.server.library(USER).collections.size).toBe(1);
  });
});

describe('zotero_manage_collections over MCP', () => {
  beforeEach(async () => {
    await open();
  });

  it('create, list, rename, reparent, delete in the user library', async () => {
    const created = await call('zotero_manage_collections', { action: 'create', name: 'Parent' });
    expect(created.isError).toBeFalsy();
    const parent = (created.structuredContent as { created: string[] }).created[0] as string;
    expect(text(created)).toBe(`Created collection "Parent" (${parent}) at the top level.`);
    const child = (
      (
        await call('zotero_manage_collections', {
          action: 'create',
          name: 'Child',
          parent_collection: parent,
        })
      ).structuredContent as { created: string[] }
    ).created[0] as string;

    const listed = await call('zotero_manage_collections', { action: 'list', q: 'chi' });
    expect(listed.structuredContent).toEqual({
      collections: [{ key: child, name: 'Child', parentCollection: parent, numItems: 0 }],
      totalResults: 1,
      start: 0,
      complete: true,
    });

    const renamed = await call('zotero_manage_collections', {
      action: 'rename',
      collection_key: child,
      name: 'Kid',
    });
    expect(renamed.structuredContent).toEqual({
      collection_key: child,
      libraryVersion: world.server.library(USER).version,
    });
    const moved = await call('zotero_manage_collections', { action: 'reparent', collection_key: child });
    expect(text(moved)).toBe(`Moved collection ${child} to the top level.`);
    expect(world.server.library(USER).collections.get(child)).toMatchObject({
      name: 'Kid',
      parentCollection: false,
    });

    const deleted = await call('zotero_manage_collections', { action: 'delete', collection_key: parent });
    expect(deleted.structuredContent).toEqual({
      deleted: parent,
      deletedName: 'Parent',
      subcollectionsDeleted: 0,
      libraryVersion: world.server.library(USER).version,
    });
  });

  it('add_items with missing items: a partial result (not isError) carrying failed', async () => {
    const [coll] = world.server.library(USER).addCollections([{ name: 'T' }]) as [string];
    const keys = seedItems(world, 3);
    const r = await call('zotero_manage_collections', {
      action: 'add_items',
      collection_key: coll,
      item_keys: [...keys, 'MISS2345'],
    });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe(
      `Partial result: 3 landed, 1 failed: MISS2345 not_found (Item MISS2345 does not exist in library users/1.). Added 3 items to collection ${coll}; 1 failed (see failed).`,
    );
    expect(r.structuredContent).toMatchObject({
      updated: keys,
      unchanged: [],
      failed: [{ index: 3, key: 'MISS2345', code: 404, reason: 'not_found' }],
    });
    expect(membership(world, keys).every((c) => c[0] === coll)).toBe(true);
  });

  it('every item failed: an isError not_found result with the entries in _meta', async () => {
    const [coll] = world.server.library(USER).addCollections([{ name: 'T' }]) as [string];
    const r = await call('zotero_manage_collections', {
      action: 'remove_items',
      collection_key: coll,
      item_keys: ['MISS2345', 'ZZZZ2345'],
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^not_found: Nothing landed: all 2 entries failed/);
    const error = r._meta?.['zoteus/error'] as { failed: unknown[] };
    expect(error.failed).toHaveLength(2);
    expect(r.structuredContent).toBeUndefined();
  });

  it('all items already members: success with an empty updated', async () => {
    const [coll] = world.server.library(USER).addCollections([{ name: 'T' }]) as [string];
    const keys = seedItems(world, 2, USER, { collections: [coll] });
    const r = await call('zotero_manage_collections', {
      action: 'add_items',
      collection_key: coll,
      item_keys: keys,
    });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ updated: [], unchanged: keys, failed: [] });
  });

  it('a missing collection is a not_found error naming it', async () => {
    const keys = seedItems(world, 2);
    const r = await call('zotero_manage_collections', {
      action: 'add_items',
      collection_key: 'ZZZZ2345',
      item_keys: keys,
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      'not_found: Collection ZZZZ2345 does not exist in library users/1; no item was changed.\nHint: zotero_list_collections (q: TEXT) finds a collection by name and shows its key.',
    );
  });

  it('validation errors name the field; nothing is sent', async () => {
    world.server.clearLog();
    const r = await call('zotero_manage_collections', { action: 'create' });
    expect(r.isError).toBe(true);
    expect(r._meta?.['zoteus/error']).toMatchObject({ code: 'validation_error', field: 'name' });
    expect(text(r)).toBe(
      'validation_error: Invalid arguments for zotero_manage_collections: name: the name of the new collection is required for action "create" (1 to 255 characters), e.g. zotero_manage_collections (action: create, name: "Reading list").\nHint: Check the arguments against the tool\'s inputSchema.',
    );
    const bad = await call('zotero_manage_collections', { action: 'delete', collection_key: 'OOPS0000' });
    expect(bad._meta?.['zoteus/error']).toMatchObject({ code: 'validation_error', field: 'collection_key' });
    const group = await call('zotero_manage_collections', { action: 'list', library_type: 'group' });
    expect(group._meta?.['zoteus/error']).toMatchObject({ code: 'validation_error', field: 'library_id' });
    expect(world.server.log).toHaveLength(0);
  });

  it('group libraries are addressed like the user library', async () => {
    const created = await call('zotero_manage_collections', {
      action: 'create',
      name: 'Lab coll',
      library_id: 10,
    });
    const key = (created.structuredContent as { created: string[] }).created[0] as string;
    const [item] = world.server.library('groups/10').items.keys();
    const added = await call('zotero_manage_collections', {
      action: 'add_items',
      collection_key: key,
      item_keys: [item],
      library_id: 10,
      library_type: 'group',
    });
    expect(added.structuredContent).toMatchObject({ updated: [item] });
    const listed = await call('zotero_list_collections', { library_id: 10 });
    expect(listed.structuredContent).toMatchObject({
      collections: [{ key, name: 'Lab coll', parentCollection: false, numItems: 1 }],
    });
    expect(requests(world).every((e) => e.path.startsWith('/groups/10/'))).toBe(true);
  });

  it('the bulk threshold is confirmation_required, before credentials are used', async () => {
    await mcp.close();
    await open({ ZOTEUS_CONFIRM_BULK_WRITES: '1' });
    const [coll] = world.server.library(USER).addCollections([{ name: 'T' }]) as [string];
    const keys = seedItems(world, 2, USER, { collections: [coll] });
    world.server.clearLog();
    const r = await call('zotero_manage_collections', {
      action: 'remove_items',
      collection_key: coll,
      item_keys: keys,
    });
    expect(r.isError).toBe(true);
    expect(r._meta?.['zoteus/error']).toMatchObject({
      code: 'confirmation_required',
      field: 'confirm',
      hint: 'Call again with confirm: true to proceed, or remove at most 1 item per call.',
    });
    expect(world.server.log).toHaveLength(0);
    const ok = await call('zotero_manage_collections', {
      action: 'remove_items',
      collection_key: coll,
      item_keys: keys,
      confirm: true,
    });
    expect(ok.structuredContent).toMatchObject({ updated: keys });
  });
});

describe('the zotero://collections resource', () => {
  it('is declared once and reads the whole sorted listing of the default library with complete', async () => {
    expect(resources.map((r) => r.uri)).toContain('zotero://collections');
    const lib = world.server.library(USER);
    lib.addCollections(
      Array.from({ length: 150 }, (_, i) => ({ name: `R${String(149 - i).padStart(3, '0')}` })),
    );
    const deps = world.deps();
    const body = (await collectionsResource.read(deps)) as {
      library: string;
      collections: Array<{ name: string }>;
      totalResults: number;
      complete: boolean;
    };
    expect(body.library).toBe('users/1');
    expect(body.collections).toHaveLength(150);
    expect(body.collections[0]?.name).toBe('R000');
    expect(body.collections.at(-1)?.name).toBe('R149');
    expect(body).toMatchObject({ totalResults: 150, complete: true });
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);

    const capped = (await collectionsResource.read(
      world.deps({ env: { ZOTEUS_MAX_COLLECTIONS: '100' } }),
    )) as { complete: boolean; read: number; message: string };
    expect(capped).toMatchObject({ complete: false, read: 100 });
    expect(capped.message).toMatch(/^Read 100 of 150 collections/);
  });

  it('is listed and read over MCP by a client', async () => {
    world.server.library(USER).addCollections([{ name: 'Beta' }, { name: 'alpha' }]);
    await open();
    const { resources: listed } = await mcp.client.listResources();
    expect(listed.map((r) => r.uri)).toContain('zotero://collections');
    const read = await mcp.client.readResource({ uri: 'zotero://collections' });
    const content = read.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('application/json');
    const body = JSON.parse(content.text) as { collections: Array<{ name: string }>; complete: boolean };
    expect(body.collections.map((c) => c.name)).toEqual(['alpha', 'Beta']);
    expect(body.complete).toBe(true);
    expect(content.text).not.toContain(KEY);
  });
});
