/**
 * Every mutating tool, attacked as issue 13 describes: a proxy loses the answer of its first
 * write after the server applied it. The call either settles that itself or fails retryable;
 * the retry with the same idempotency_key (as the guidance says: check retryable, then retry
 * with the same key) succeeds, a third call replays it byte for byte, and the library holds
 * exactly one copy of the change. A mutating tool without a case here fails the sweep.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../src/core/tool.js';
import { tools } from '../../src/tools/index.js';
import { KEY, startWorld, type World } from '../core/library/world.js';
import { makePdf } from '../support/documents/index.js';
import { openJournal } from '../../src/core/journal/store.js';
import { startDroppingProxy, type DroppingProxy } from '../support/dropping-proxy.js';
import { crossrefWork, startMetadataFakes, type MetadataFakes } from '../support/metadata-services/index.js';
import { connect } from '../surfaces/mcp/harness.js';

const LIB = 'users/1';

interface Case {
  /** Seeds the library; returns the tool's arguments. */
  seed(world: World): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Which answer the proxy loses (default: the first request that is not a GET). */
  drop?: { method?: string; path?: RegExp };
  /** The library after the change: exactly one copy of it. */
  check(world: World, args: Record<string, unknown>, result: CallToolResult): void;
}

const lib = (world: World) => world.server.library(LIB);
const itemsTitled = (world: World, title: string) =>
  [...lib(world).items.values()].filter((i) => i.title === title);
const structured = (r: CallToolResult) => r.structuredContent as Record<string, unknown>;

/** One case per mutating tool (and per action of a family); the key is `tool` or `tool:action`. */
const CASES: Record<string, Case> = {
  zotero_create_items: {
    seed: () => ({
      items: [
        { itemType: 'book', title: 'Sweep book' },
        { itemType: 'book', title: 'Sweep two' },
      ],
    }),
    check(world, _args, result) {
      expect(itemsTitled(world, 'Sweep book')).toHaveLength(1);
      expect(itemsTitled(world, 'Sweep two')).toHaveLength(1);
      const created = structured(result).created as Array<{ key: string }>;
      expect(created.map((c) => c.key).sort()).toEqual(
        [...itemsTitled(world, 'Sweep book'), ...itemsTitled(world, 'Sweep two')].map((i) => i.key).sort(),
      );
    },
  },
  zotero_create_note: {
    seed: (world) => {
      const [parent] = lib(world).addItems([{ title: 'Note parent' }]);
      return { parent_item: parent, text: 'Sweep note text' };
    },
    check(world, args) {
      const notes = [...lib(world).items.values()].filter(
        (i) => i.itemType === 'note' && i.parentItem === args.parent_item,
      );
      expect(notes).toHaveLength(1);
    },
  },
  zotero_create_annotation: {
    // The PDF is in this computer's storage folder; the annotation is created once.
    seed: (world) => {
      const [parent] = lib(world).addItems([{ title: 'Annotation parent' }]);
      const [pdf] = lib(world).addItems([
        {
          itemType: 'attachment',
          parentItem: parent,
          linkMode: 'imported_file',
          contentType: 'application/pdf',
          filename: 'swept.pdf',
        },
      ]);
      const dir = join(world.box.dir, 'Zotero', 'storage', pdf!);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'swept.pdf'), makePdf({ pages: [['Swept highlight text']] }));
      return { attachment_key: pdf, quote: 'highlight text' };
    },
    check(world, args) {
      const made = [...lib(world).items.values()].filter(
        (i) => i.itemType === 'annotation' && i.parentItem === args.attachment_key,
      );
      expect(made).toHaveLength(1);
      expect(made[0]).toMatchObject({ annotationText: 'highlight text', annotationPageLabel: '1' });
    },
  },
  zotero_update_status: {
    // A preprint whose published version the Crossref fake knows; apply without a plan.
    seed: (world) => {
      const doi = '10.1101/2021.03.03.123456';
      meta.addCrossref(
        crossrefWork({
          doi,
          title: 'Sweep preprint',
          type: 'posted-content',
          relation: {
            'is-preprint-of': [{ 'id-type': 'doi', id: '10.5555/sweep.1', 'asserted-by': 'subject' }],
          },
        }),
      );
      meta.addCrossref({ ...crossrefWork({ doi: '10.5555/sweep.1', title: 'Sweep preprint' }), volume: '5' });
      const [key] = lib(world).addItems([{ itemType: 'preprint', title: 'Sweep preprint', DOI: doi }]);
      return { item_keys: [key], apply: true };
    },
    check(world, args) {
      const item = lib(world).items.get((args.item_keys as string[])[0] as string);
      expect(item).toMatchObject({ itemType: 'journalArticle', DOI: '10.5555/sweep.1', volume: '5' });
      expect(itemsTitled(world, 'Sweep preprint')).toHaveLength(1);
    },
  },
  zotero_enrich: {
    // An article whose empty pages and publisher the Crossref fake knows; apply without a plan.
    seed: (world) => {
      const doi = '10.5555/sweep.enrich';
      meta.addCrossref({ ...crossrefWork({ doi, title: 'Sweep enrich' }), page: '3-4' });
      const [key] = lib(world).addItems([{ itemType: 'journalArticle', title: 'Sweep enrich', DOI: doi }]);
      return { item_keys: [key], fields: ['pages', 'publisher'], apply: true };
    },
    check(world, args) {
      const item = lib(world).items.get((args.item_keys as string[])[0] as string);
      expect(item).toMatchObject({ pages: '3-4', publisher: 'Test Publisher' });
      expect(itemsTitled(world, 'Sweep enrich')).toHaveLength(1);
    },
  },
  zotero_merge_items: {
    // A duplicate with a child note and a tag merged into the master, applied without a plan.
    seed: (world) => {
      const [master, other] = lib(world).addItems([
        { title: 'Sweep merge', tags: [{ tag: 'kept' }] },
        { title: 'Sweep merge', tags: [{ tag: 'taken' }] },
      ]) as [string, string];
      lib(world).addItems([{ itemType: 'note', parentItem: other, note: '<p>Sweep merge note</p>' }]);
      return { master_key: master, item_keys: [other], apply: true };
    },
    check(world, args) {
      const master = lib(world).items.get(args.master_key as string);
      const other = (args.item_keys as string[])[0] as string;
      expect(master?.tags.map((t) => t.tag)).toEqual(['kept', 'taken']);
      expect(master?.relations['dc:replaces']).toBe(`http://zotero.org/${LIB}/items/${other}`);
      expect(lib(world).items.get(other)?.deleted).toBe(true);
      const notes = [...lib(world).items.values()].filter((i) => i.itemType === 'note' && i.parentItem);
      expect(notes.filter((n) => n.parentItem === master?.key)).toHaveLength(1);
      expect(itemsTitled(world, 'Sweep merge')).toHaveLength(2);
    },
  },
  zotero_import: {
    seed: () => ({
      records: '@article{sweep1, title={Sweep imported}, author={Doe, Jane}, journal={J}, year={2001}}',
      format: 'bibtex',
      allow_duplicates: true,
    }),
    check(world) {
      expect(itemsTitled(world, 'Sweep imported')).toHaveLength(1);
    },
  },
  'zotero_manage_saved_searches:create': {
    seed: () => ({ action: 'create', name: 'Sweep search', conditions: ['title contains sweep'] }),
    check(world, _args, result) {
      const named = [...lib(world).searches.values()].filter((s) => s.name === 'Sweep search');
      expect(named).toHaveLength(1);
      expect(structured(result).created).toEqual([named[0]?.key]);
    },
  },
  'zotero_manage_saved_searches:delete': {
    seed: (world) => {
      const [key] = lib(world).addSearches([{ name: 'Doomed search', conditions: [] }]);
      return { action: 'delete', search_key: key };
    },
    drop: { method: 'DELETE' },
    check(world, args) {
      expect(lib(world).searches.has(args.search_key as string)).toBe(false);
    },
  },
  'zotero_manage_collections:create': {
    seed: () => ({ action: 'create', name: 'Sweep collection' }),
    check(world, _args, result) {
      const named = [...lib(world).collections.values()].filter((c) => c.name === 'Sweep collection');
      expect(named).toHaveLength(1);
      expect(structured(result).created).toEqual([named[0]?.key]);
    },
  },
  'zotero_manage_collections:rename': {
    seed: (world) => {
      const [key] = lib(world).addCollections([{ name: 'Old name' }]);
      return { action: 'rename', collection_key: key, name: 'New name' };
    },
    check(world, args) {
      expect(lib(world).collections.get(args.collection_key as string)?.name).toBe('New name');
    },
  },
  'zotero_manage_collections:reparent': {
    seed: (world) => {
      const [child, parent] = lib(world).addCollections([{ name: 'Child' }, { name: 'Parent' }]);
      return { action: 'reparent', collection_key: child, parent_collection: parent };
    },
    check(world, args) {
      expect(lib(world).collections.get(args.collection_key as string)?.parentCollection).toBe(
        args.parent_collection,
      );
    },
  },
  'zotero_manage_collections:delete': {
    seed: (world) => {
      const [key] = lib(world).addCollections([{ name: 'Doomed' }]);
      return { action: 'delete', collection_key: key };
    },
    drop: { method: 'DELETE' },
    check(world, args) {
      expect(lib(world).collections.has(args.collection_key as string)).toBe(false);
    },
  },
  'zotero_manage_collections:add_items': {
    seed: (world) => {
      const [collection] = lib(world).addCollections([{ name: 'Members' }]);
      const items = lib(world).addItems([{ title: 'm1' }, { title: 'm2' }]);
      return { action: 'add_items', collection_key: collection, item_keys: items };
    },
    check(world, args, result) {
      for (const key of args.item_keys as string[]) {
        expect(lib(world).items.get(key)?.collections).toEqual([args.collection_key]);
      }
      expect(structured(result).failed).toEqual([]);
    },
  },
  'zotero_manage_collections:remove_items': {
    seed: (world) => {
      const [collection] = lib(world).addCollections([{ name: 'Leaving' }]);
      const items = lib(world).addItems([{ title: 'r1', collections: [collection as string] }]);
      return { action: 'remove_items', collection_key: collection, item_keys: items };
    },
    check(world, args) {
      for (const key of args.item_keys as string[])
        expect(lib(world).items.get(key)?.collections).toEqual([]);
    },
  },
  'zotero_manage_tags:add_items': {
    seed: (world) => ({
      action: 'add_items',
      tag: 'swept',
      item_keys: lib(world).addItems([{ title: 't1' }]),
    }),
    check(world, args) {
      const tags = lib(world).items.get((args.item_keys as string[])[0] as string)?.tags ?? [];
      expect(tags.filter((t) => t.tag === 'swept')).toHaveLength(1);
    },
  },
  'zotero_manage_tags:remove_items': {
    seed: (world) => ({
      action: 'remove_items',
      tag: 'gone',
      item_keys: lib(world).addItems([{ title: 't2', tags: [{ tag: 'gone' }, { tag: 'kept' }] }]),
    }),
    check(world, args) {
      const tags = lib(world).items.get((args.item_keys as string[])[0] as string)?.tags ?? [];
      expect(tags.map((t) => t.tag)).toEqual(['kept']);
    },
  },
  'zotero_manage_tags:rename': {
    seed: (world) => {
      lib(world).addItems([{ title: 't3', tags: [{ tag: 'before' }] }]);
      return { action: 'rename', tag: 'before', new_name: 'after' };
    },
    check(world) {
      const tags = itemsTitled(world, 't3')[0]?.tags ?? [];
      expect(tags.map((t) => t.tag)).toEqual(['after']);
    },
  },
  'zotero_manage_tags:delete': {
    seed: (world) => {
      lib(world).addItems([{ title: 't4', tags: [{ tag: 'deleteme' }, { tag: 'stay' }] }]);
      return { action: 'delete', tags: ['deleteme'] };
    },
    drop: { method: 'DELETE' },
    check(world) {
      expect((itemsTitled(world, 't4')[0]?.tags ?? []).map((t) => t.tag)).toEqual(['stay']);
    },
  },
  zotero_undo: {
    // A journaled tag addition (written to the journal here, as the tag tool would): undone once.
    seed: async (world) => {
      const [key] = lib(world).addItems([{ title: 'Sweep undo', tags: [{ tag: 'sweep-added' }] }]);
      const item = lib(world).items.get(key as string) as unknown as Record<string, unknown>;
      const journal = openJournal(join(world.box.env.ZOTEUS_DATA_DIR as string, 'journal.db'));
      const requestId = 'sweepundo001';
      await journal.beginRequest({
        requestId,
        tool: 'zotero_manage_tags',
        args: {},
        library: LIB,
        createdAt: Date.now(),
        undoOf: undefined,
        undo: { restores: 'the tags' },
      });
      const [id] = await journal.record(requestId, [
        {
          library: LIB,
          kind: 'items',
          key: key as string,
          op: 'update',
          before: { key, version: item.version, data: { ...item, tags: [] } },
          sent: { tags: [{ tag: 'sweep-added' }] },
        },
      ]);
      await journal.settle([{ id: id as number, status: 'done', afterVersion: item.version as number }]);
      await journal.finishRequest(requestId, 'done');
      await journal.close();
      return { request_id: requestId };
    },
    check(world) {
      expect(itemsTitled(world, 'Sweep undo')).toHaveLength(1);
      expect(itemsTitled(world, 'Sweep undo')[0]?.tags ?? []).toEqual([]);
    },
  },
  'zotero_trash_items:trash': {
    seed: (world) => ({ action: 'trash', item_keys: lib(world).addItems([{ title: 'to trash' }]) }),
    check(world, args) {
      expect(lib(world).items.get((args.item_keys as string[])[0] as string)?.deleted).toBe(true);
    },
  },
  'zotero_trash_items:restore': {
    seed: (world) => ({
      action: 'restore',
      item_keys: lib(world).addItems([{ title: 'to restore', deleted: true }]),
    }),
    check(world, args) {
      expect(lib(world).items.get((args.item_keys as string[])[0] as string)?.deleted ?? false).toBe(false);
    },
  },
  zotero_delete_items: {
    seed: (world) => ({ item_keys: lib(world).addItems([{ title: 'to delete' }]) }),
    drop: { method: 'DELETE' },
    check(world, args) {
      expect(lib(world).items.has((args.item_keys as string[])[0] as string)).toBe(false);
    },
  },
  zotero_update_item: {
    seed: (world) => ({
      item_key: lib(world).addItems([{ title: 'Before update' }])[0],
      title: 'After update',
    }),
    drop: { method: 'PATCH' },
    check(world, args) {
      expect(lib(world).items.get(args.item_key as string)?.title).toBe('After update');
      expect(itemsTitled(world, 'After update')).toHaveLength(1);
    },
  },
  zotero_evidence_table: {
    // Writes only a local file: nothing to drop; the retry must still answer once, the same.
    seed: (world) => ({
      question: 'Does the sweep hold?',
      rows: [
        {
          item_key: lib(world).addItems([{ title: 'Evidence' }])[0],
          study: 'Sweep 2026',
          finding: 'It holds.',
          coverage: 'abstract-only',
          support: 'supported',
        },
      ],
      save_path: join(world.box.dir, 'sweep-table.md'),
      format: 'markdown',
    }),
    drop: { method: 'NONE' },
    check(world) {
      expect(readdirSync(world.box.dir).filter((f) => f.startsWith('sweep-table'))).toEqual([
        'sweep-table.md',
      ]);
    },
  },
  zotero_export: {
    // Reads the library, writes only a local file: the retry answers once, one file.
    seed: (world) => ({
      item_keys: lib(world).addItems([{ title: 'Exported', extra: 'Citation Key: swept2026' }]),
      save_path: join(world.box.dir, 'sweep-export.bib'),
    }),
    drop: { method: 'NONE' },
    check(world) {
      expect(readdirSync(world.box.dir).filter((f) => f.startsWith('sweep-export'))).toEqual([
        'sweep-export.bib',
      ]);
      expect(readFileSync(join(world.box.dir, 'sweep-export.bib'), 'utf8')).toContain('{swept2026,');
    },
  },
  'zotero_get_attachment:get': {
    // Reads a file from this computer's storage, writes only a local copy: one file, the bytes.
    seed: (world) => {
      const [parent] = lib(world).addItems([{ title: 'With a file' }]);
      const [att] = lib(world).addItems([
        {
          itemType: 'attachment',
          parentItem: parent,
          linkMode: 'imported_file',
          title: 'Notes',
          contentType: 'text/plain',
          filename: 'swept.txt',
        },
      ]);
      const dir = join(world.box.dir, 'Zotero', 'storage', att!);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'swept.txt'), 'swept attachment bytes');
      return { action: 'get', item_key: att, save_path: join(world.box.dir, 'sweep-attachment.txt') };
    },
    drop: { method: 'NONE' },
    check(world) {
      expect(readdirSync(world.box.dir).filter((f) => f.startsWith('sweep-attachment'))).toEqual([
        'sweep-attachment.txt',
      ]);
      expect(readFileSync(join(world.box.dir, 'sweep-attachment.txt'), 'utf8')).toBe(
        'swept attachment bytes',
      );
    },
  },
  zotero_attach_file: {
    // The create's answer is lost: the item is found by its key, the file uploaded once.
    seed: (world) => {
      const [parent] = lib(world).addItems([{ title: 'Attach parent' }]);
      return {
        parent_item: parent,
        content_base64: Buffer.from('swept file bytes').toString('base64'),
        filename: 'swept.txt',
      };
    },
    check(world, args) {
      const attachments = [...lib(world).items.values()].filter(
        (i) => i.itemType === 'attachment' && i.parentItem === args.parent_item && !i.deleted,
      );
      expect(attachments).toHaveLength(1);
      expect(attachments[0]?.md5).toBe('ca56724eaa4b020137932863e4373d6e');
      expect([...world.server.files.files.keys()]).toEqual([`${LIB}/${attachments[0]?.key}`]);
    },
  },
  zotero_check_citations: {
    seed: (world) => {
      lib(world).addItems([{ title: 'Cited', extra: 'Citation Key: cited2026' }]);
      return { text: '\\cite{cited2026}', kind: 'tex', write_bib: join(world.box.dir, 'sweep-cited.bib') };
    },
    drop: { method: 'NONE' },
    check(world) {
      expect(readdirSync(world.box.dir).filter((f) => f.startsWith('sweep-cited'))).toEqual([
        'sweep-cited.bib',
      ]);
      expect(readFileSync(join(world.box.dir, 'sweep-cited.bib'), 'utf8')).toContain('{cited2026,');
    },
  },
  'zotero_index:build': {
    // The local index: reads the library (GETs), writes only its own file.
    seed: (world) => {
      lib(world).addItems([{ title: 'Indexed' }]);
      return { action: 'build' };
    },
    drop: { method: 'NONE' },
    check(world) {
      expect(existsSync(join(world.box.dir, 'data', 'index'))).toBe(true);
    },
  },
  'zotero_index:update': {
    seed: () => ({ action: 'update' }),
    drop: { method: 'NONE' },
    check(world) {
      expect(existsSync(join(world.box.dir, 'data', 'index'))).toBe(true);
    },
  },
};

/** `tool` or `tool:action` for every mutating tool and mutating action the declarations offer. */
function mutatingCalls(list: readonly AnyTool[]): string[] {
  const out = new Set<string>();
  for (const tool of list) {
    for (const command of tool.cli) {
      const tier = command.tier ?? tool.tier;
      if (tier === 'read') continue;
      const action = command.preset?.action;
      out.add(
        typeof action === 'string' && 'action' in tool.input.shape ? `${tool.name}:${action}` : tool.name,
      );
    }
  }
  return [...out].sort();
}

let world: World;
let proxy: DroppingProxy;
let meta: MetadataFakes;
let mcp: Awaited<ReturnType<typeof connect>>;
beforeAll(async () => {
  world = await startWorld();
  proxy = await startDroppingProxy(world.server.url);
  meta = await startMetadataFakes();
  mcp = await connect(tools as readonly AnyTool[], {
    ...world.env(),
    ...meta.env(),
    ZOTERO_API_URL: proxy.url,
    ZOTERO_API_KEY: KEY,
    ZOTEUS_ALLOW_DELETE: 'true',
  });
});
afterAll(async () => {
  await mcp.close();
  await meta.close();
  await proxy.close();
  await world.close();
});

describe('retry safety of every mutating tool', () => {
  it('every mutating tool and action has a case (a new tool cannot skip the sweep)', () => {
    expect(mutatingCalls(tools as readonly AnyTool[]).filter((name) => !(name in CASES))).toEqual([]);
    expect(Object.keys(CASES).sort()).toEqual(mutatingCalls(tools as readonly AnyTool[]));
  });

  it.each(Object.keys(CASES))('%s: a lost answer never doubles the write', async (name) => {
    const c = CASES[name] as Case;
    const tool = name.split(':')[0] as string;
    const args = await c.seed(world);
    proxy.clear();
    const drop = c.drop ?? {};
    if (drop.method !== 'NONE')
      proxy.drop({ method: drop.method ?? 'POST', ...(drop.path ? { path: drop.path } : {}) });
    // Whatever the tool sends first of that method, its answer is lost; POSTs also match PATCH-less writes.
    const key = `sweep-${name}`;
    const call = async () =>
      (await mcp.client.callTool({
        name: tool,
        arguments: { ...args, idempotency_key: key },
      })) as CallToolResult;
    let result = await call();
    if (result.isError) {
      const error = (result._meta as Record<string, { retryable: boolean; code: string }>)['zoteus/error'];
      // A failure after a lost answer must say it can be retried, never claim a final outcome.
      expect(error?.retryable, JSON.stringify(result.content)).toBe(true);
      result = await call();
    }
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    if (drop.method !== 'NONE') expect(proxy.dropped.length).toBeGreaterThan(0);
    c.check(world, args, result);
    // A third call with the same key replays the answer exactly and sends nothing.
    world.server.clearLog();
    const replay = await call();
    expect(JSON.stringify(replay)).toBe(JSON.stringify(result));
    expect(world.server.log).toEqual([]);
    c.check(world, args, result);
  });
});
