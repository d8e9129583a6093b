/**
 * Undo of every mutating declaration against the Zotero test server. Each case makes a library,
 * snapshots it (every item, collection and saved search as the server holds it, without version
 * and dateModified), runs one write through the CLI, undoes it by the request id of its answer
 * and compares the library object by object with the snapshot. Created items are in the trash
 * afterwards (nothing else differs); what a declaration says undo cannot restore is asserted as
 * its `undo` text and history say it. The list of mutating tools comes from `tools` by tier, so
 * a new write tool without a case here fails the sweep, and so does a new CLI command of one
 * (checked last, from the commands the cases ran).
 */
import { createHash } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changesLibrary, commandTier } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { makePdf } from '../../support/documents/index.js';
import { fakeClock } from '../../support/metadata-services/clock.js';
import {
  crossrefWork,
  startMetadataFakes,
  type MetadataFakes,
} from '../../support/metadata-services/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { LIB, startItemsWorld, type ItemsWorld } from '../../tools/items/setup.js';

let w: ItemsWorld;
let meta: MetadataFakes | undefined;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await meta?.close();
  meta = undefined;
  await w.close();
});

const lib = () => w.world.server.library(LIB);

type Snapshot = Record<'items' | 'collections' | 'searches', Record<string, Record<string, unknown>>>;

/** Every object of the library without what the server keeps itself; an empty field is an absent one. */
function snapshot(): Snapshot {
  const strip = (o: object): Record<string, unknown> => {
    const { version, dateModified, ...rest } = o as Record<string, unknown>;
    void version;
    void dateModified;
    return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== ''));
  };
  const all = (map: Map<string, object>) =>
    Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, strip(v)]));
  return {
    items: all(lib().items),
    collections: all(lib().collections),
    searches: all(lib().searches),
  };
}

/** The library as `before`, except the items the write created, which are in the trash now. */
function expectRestored(before: Snapshot, created: readonly string[] = []): void {
  const now = snapshot();
  for (const key of created) {
    expect(now.items[key], `created item ${key}`).toMatchObject({ deleted: true });
    delete now.items[key];
  }
  expect(now).toEqual(before);
}

type Envelope = {
  ok: boolean | 'partial';
  meta: { request_id: string };
  data: Record<string, unknown>;
  error?: { code: string; message: string };
};

async function zot(args: string[], env: Record<string, string> = {}): Promise<Envelope & { code: number }> {
  const r = await zotAt(args, {
    env: w.env({ ...(meta ? meta.env() : {}), ZOTEUS_CROSSREF_MAILTO: 'tests@example.org', ...env }),
    clock: fakeClock(),
  });
  return { ...(r.json() as Envelope), code: r.code };
}

/** The CLI commands the cases ran, as `tool: zot words`. */
const ran = new Set<string>();
function noteCommand(args: readonly string[]): void {
  let best: { name: string; path: readonly string[] } | undefined;
  for (const tool of tools) {
    for (const command of tool.cli) {
      const matches = command.path.every((word, i) => args[i] === word);
      if (matches && command.path.length > (best?.path.length ?? 0))
        best = { name: tool.name, path: command.path };
    }
  }
  if (best) ran.add(`${best.name}: zot ${best.path.join(' ')}`);
}

/** Runs a write (it must succeed), then its undo; both answers. */
async function writeThenUndo(
  tool: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ write: Envelope; undo: Envelope & { code: number } }> {
  noteCommand(args);
  const write = await zot([...args, '--yes'], env);
  expect(write.code, JSON.stringify(write.error ?? write.data)).toBe(0);
  const undo = await zot(['undo', write.meta.request_id, '--yes']);
  expect(undo.code, JSON.stringify(undo.error ?? undo.data)).toBe(0);
  // The case drives the tool it is filed under.
  expect(undo.data).toMatchObject({ requestId: write.meta.request_id, tool, conflicts: [], failed: [] });
  return { write, undo };
}

/** Keys in the library now that `before` did not hold. */
function added(before: Snapshot, kind: keyof Snapshot = 'items'): string[] {
  return Object.keys(snapshot()[kind]).filter((k) => !(k in before[kind]));
}

const covered = new Set<string>();
/** One case of the sweep, filed under the tool it drives. */
function sweep(tool: string, title: string, body: () => Promise<void>): void {
  covered.add(tool);
  it(`${tool}: ${title}`, body);
}

const declared = (name: string) => tools.find((t) => t.name === name)?.undo;

describe('undo of every mutating tool, the library compared object by object', () => {
  it('every declaration that changes the library has a case, and says what undo restores', () => {
    const mutating = tools.filter((t) => changesLibrary(t, t.tier)).map((t) => t.name);
    expect(mutating.filter((name) => !covered.has(name))).toEqual([]);
    expect(mutating.filter((name) => declared(name) === undefined)).toEqual([]);
  });

  sweep('zotero_create_items', 'created items go to the trash', async () => {
    lib().addItems([{ title: 'Existing' }]);
    const before = snapshot();
    const file = join(w.world.box.dir, 'items.json');
    writeFileSync(
      file,
      JSON.stringify([
        { itemType: 'book', title: 'New one', tags: [{ tag: 'fresh' }] },
        { itemType: 'book', title: 'New two' },
      ]),
    );
    const { undo } = await writeThenUndo('zotero_create_items', ['create', file]);
    const made = added(before);
    expect(made).toHaveLength(2);
    expect([...(undo.data.trashed as string[])].sort()).toEqual([...made].sort());
    expectRestored(before, made);
  });

  sweep('zotero_import', 'imported items go to the trash', async () => {
    const before = snapshot();
    const file = join(w.world.box.dir, 'refs.bib');
    writeFileSync(file, '@article{one, title={Imported one}, author={Doe, Jane}, journal={J}, year={2001}}');
    await writeThenUndo('zotero_import', ['add', '--from-file', file]);
    const made = added(before);
    expect(made).toHaveLength(1);
    expectRestored(before, made);
  });

  sweep('zotero_update_item', 'fields, creators and tags come back as they were', async () => {
    const [a] = lib().addItems([
      { title: 'Old title', date: '2001', creators: [{ creatorType: 'author', lastName: 'Doe' }] },
    ]) as [string];
    const before = snapshot();
    await writeThenUndo('zotero_update_item', [
      'update',
      a,
      '--title',
      'New title',
      '--field',
      'extra=Note',
      '--field',
      'date=',
    ]);
    expectRestored(before);
  });

  sweep('zotero_create_note', 'the created note goes to the trash', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const before = snapshot();
    await writeThenUndo('zotero_create_note', ['note', 'add', parent, 'A note to take back']);
    const made = added(before);
    expect(made).toHaveLength(1);
    expectRestored(before, made);
  });

  sweep(
    'zotero_attach_file',
    'the attachment goes to the trash; the upload is listed as not undoable',
    async () => {
      const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
      const before = snapshot();
      const path = join(w.world.box.dir, 'paper.pdf');
      writeFileSync(path, makePdf({ pages: [['A page']] }));
      const { write, undo } = await writeThenUndo('zotero_attach_file', ['attach', parent, '--file', path]);
      const made = added(before);
      expect(made).toHaveLength(1);
      expect(undo.data.trashed).toEqual(made);
      // The file's upload is no object: undo says so, and the declaration says what it cannot restore.
      expect(undo.data.notUndoable).toEqual([
        {
          key: `POST /${LIB}/items/${made[0]}/file`,
          reason: "a file's bytes, uploaded to Zotero's file storage: undo does not restore files",
        },
      ]);
      expect(declared('zotero_attach_file')?.cannot).toBe(
        "the file's earlier bytes, once a new version replaced them",
      );
      const h = await zot(['history', '--tool', 'zotero_attach_file']);
      expect((h.data.requests as unknown[])[0]).toMatchObject({
        requestId: write.meta.request_id,
        cannot: "the file's earlier bytes, once a new version replaced them",
        undoneBy: [undo.meta.request_id],
      });
      expectRestored(before, made);
    },
  );

  sweep(
    'zotero_attach_file',
    'a new version of a stored file: title and filename as they were; the new bytes stay, as the declaration says',
    async () => {
      // Titled as its file (the title follows the new file's name) and titled on its own.
      for (const title of ['paper.pdf', 'My own title']) await newVersion(title);
    },
  );
  async function newVersion(title: string): Promise<void> {
    {
      const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
      const [att] = lib().addItems([
        {
          itemType: 'attachment',
          parentItem: parent,
          linkMode: 'imported_file',
          title,
          filename: 'paper.pdf',
          contentType: 'application/pdf',
        },
      ]) as [string];
      const old = makePdf({ pages: [['First version']] });
      w.world.server.files.seedFile(lib(), att, {
        md5: createHash('md5').update(old).digest('hex'),
        filename: 'paper.pdf',
        size: old.length,
        mtime: 1_600_000_000_000,
        contentType: 'application/pdf',
      });
      const before = snapshot();
      const path = join(w.world.box.dir, 'paper-v2.pdf');
      const bytes = makePdf({ pages: [['Second version']] });
      writeFileSync(path, bytes);
      const { write, undo } = await writeThenUndo('zotero_attach_file', ['attach', att, '--file', path]);
      // Undoable from its upload's entries alone (no field written when the title is its own).
      const h = await zot(['history', '--tool', 'zotero_attach_file', '--limit', '1']);
      expect((h.data.requests as unknown[])[0]).toMatchObject({
        requestId: write.meta.request_id,
        objects: { changed: title === 'My own title' ? 0 : 1, created: 0 },
        undoable: false,
        reason: `already undone by ${undo.meta.request_id}`,
      });
      const fresh = createHash('md5').update(bytes).digest('hex');
      expect(write.data.succeeded).toMatchObject([{ key: att, filename: 'paper-v2.pdf', md5: fresh }]);
      const now = snapshot();
      const { md5, mtime, ...rest } = now.items[att] as Record<string, unknown>;
      // The file fields describe the bytes stored now: the new version's.
      expect(md5).toBe(fresh);
      expect(mtime).not.toBe(before.items[att]?.mtime);
      expect(w.world.server.files.files.get(`${LIB}/${att}`)).toMatchObject({ md5: fresh });
      const { md5: oldMd5, mtime: oldMtime, ...was } = before.items[att] as Record<string, unknown>;
      expect([oldMd5, oldMtime]).not.toEqual([undefined, undefined]);
      expect(rest).toEqual(was);
      expect({ ...now, items: { ...now.items, [att]: before.items[att] } }).toEqual(before);
    }
  }

  sweep('zotero_create_annotation', 'the created annotation goes to the trash', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const [pdf] = lib().addItems([
      {
        itemType: 'attachment',
        parentItem: parent,
        linkMode: 'imported_file',
        contentType: 'application/pdf',
        filename: 'paper.pdf',
        title: 'PDF',
      },
    ]) as [string];
    const dir = join(w.world.box.env.ZOTERO_DATA_DIR as string, 'storage', pdf);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'paper.pdf'), makePdf({ pages: [['The tide gauges show a rate of 3 mm.']] }));
    const before = snapshot();
    await writeThenUndo('zotero_create_annotation', ['annotation', 'add', pdf, '--quote', 'tide gauges']);
    const made = added(before);
    expect(made).toHaveLength(1);
    expect(lib().items.get(made[0] as string)).toMatchObject({ itemType: 'annotation', parentItem: pdf });
    expectRestored(before, made);
  });

  describe('zotero_manage_tags', () => {
    const tagged = () =>
      lib().addItems([
        { title: 'A', tags: [{ tag: 'one' }, { tag: 'two' }] },
        { title: 'B', tags: [{ tag: 'two', type: 1 }] },
        { title: 'C' },
      ]) as [string, string, string];
    sweep('zotero_manage_tags', 'add', async () => {
      const [a, , c] = tagged();
      const before = snapshot();
      await writeThenUndo('zotero_manage_tags', ['tag', 'add', 'three', a, c]);
      expectRestored(before);
    });
    sweep('zotero_manage_tags', 'remove', async () => {
      const [a, b] = tagged();
      const before = snapshot();
      await writeThenUndo('zotero_manage_tags', ['tag', 'remove', 'two', a, b]);
      expectRestored(before);
    });
    sweep('zotero_manage_tags', 'rename (each tag’s type kept)', async () => {
      tagged();
      const before = snapshot();
      await writeThenUndo('zotero_manage_tags', ['tag', 'rename', 'two', 'deux']);
      expectRestored(before);
    });
    sweep('zotero_manage_tags', 'delete across the library', async () => {
      tagged();
      const before = snapshot();
      await writeThenUndo('zotero_manage_tags', ['tag', 'delete', 'two']);
      expectRestored(before);
    });
  });

  describe('zotero_manage_collections', () => {
    sweep('zotero_manage_collections', 'create (deleted again)', async () => {
      const [p] = lib().addCollections([{ name: 'Parent' }]) as [string];
      const before = snapshot();
      const { undo } = await writeThenUndo('zotero_manage_collections', [
        'collection',
        'create',
        'Fresh',
        '--parent',
        p,
      ]);
      expect(undo.data.deleted).toHaveLength(1);
      expectRestored(before);
    });
    sweep('zotero_manage_collections', 'rename and move', async () => {
      const [a, b] = lib().addCollections([{ name: 'A' }, { name: 'B' }]) as [string, string];
      const before = snapshot();
      await writeThenUndo('zotero_manage_collections', ['collection', 'rename', a, 'A renamed']);
      expectRestored(before);
      await writeThenUndo('zotero_manage_collections', ['collection', 'move', a, '--parent', b]);
      expectRestored(before);
    });
    sweep('zotero_manage_collections', 'add and remove items', async () => {
      const [c] = lib().addCollections([{ name: 'Reading' }]) as [string];
      const [a, b] = lib().addItems([{ title: 'A' }, { title: 'B', collections: [c] }]) as [string, string];
      const before = snapshot();
      await writeThenUndo('zotero_manage_collections', ['collection', 'add', c, a]);
      expectRestored(before);
      await writeThenUndo('zotero_manage_collections', ['collection', 'remove', c, b]);
      expectRestored(before);
    });
    sweep(
      'zotero_manage_collections',
      'delete: the collection, its subcollections and the memberships it dropped come back',
      async () => {
        const [top, other] = lib().addCollections([{ name: 'Top' }, { name: 'Other' }]) as [string, string];
        const [sub] = lib().addCollections([{ name: 'Sub', parentCollection: top }]) as [string];
        const [leaf, empty] = lib().addCollections([
          { name: 'Leaf', parentCollection: sub },
          { name: 'Only trash', parentCollection: sub },
        ]) as [string, string];
        const [, , , alone] = lib().addItems([
          { title: 'In top', collections: [top, other] },
          { title: 'In leaf', collections: [leaf] },
          { title: 'In trash, in sub', collections: [sub], deleted: true },
          { title: 'Alone in the trash', collections: [empty], deleted: true },
          { title: 'In sub', collections: [sub] },
          { title: 'Elsewhere', collections: [other] },
        ]) as string[];
        const before = snapshot();
        const { undo } = await writeThenUndo('zotero_manage_collections', ['collection', 'delete', top]);
        expect([...(undo.data.created as string[])].sort()).toEqual([top, sub, leaf, empty].sort());
        // What the declaration says undo cannot restore: a trashed item's membership of a
        // collection the server counted no items in (it was not read before the deletion).
        expect(declared('zotero_manage_collections')?.cannot).toBe(
          'the membership of an item in the trash in a deleted collection the server counted no items in (not read first)',
        );
        const now = snapshot();
        expect(now.items[alone as string]).toEqual({ ...before.items[alone as string], collections: [] });
        now.items[alone as string] = before.items[alone as string] as Record<string, unknown>;
        expect(now).toEqual(before);
      },
    );
  });

  describe('zotero_trash_items', () => {
    sweep('zotero_trash_items', 'trash', async () => {
      const keys = lib().addItems([{ title: 'A' }, { title: 'B' }]);
      const before = snapshot();
      await writeThenUndo('zotero_trash_items', ['trash', ...keys]);
      expectRestored(before);
    });
    sweep('zotero_trash_items', 'restore from the trash', async () => {
      const keys = lib().addItems([
        { title: 'A', deleted: true },
        { title: 'B', deleted: true },
      ]);
      const before = snapshot();
      await writeThenUndo('zotero_trash_items', ['trash', 'restore', ...keys]);
      expectRestored(before);
    });
  });

  sweep(
    'zotero_delete_items',
    'the items come back under their keys; their children (as the declaration says) do not',
    async () => {
      const [a, b] = lib().addItems([
        { title: 'Doomed', date: '1999', tags: [{ tag: 'keep' }] },
        { title: 'Doomed too' },
      ]) as [string, string];
      const [child] = lib().addItems([{ itemType: 'note', parentItem: a, note: '<p>Gone with it</p>' }]) as [
        string,
      ];
      const before = snapshot();
      const { write, undo } = await writeThenUndo('zotero_delete_items', ['delete', a, b], {
        ZOTEUS_ALLOW_DELETE: 'true',
      });
      expect([...(undo.data.created as string[])].sort()).toEqual([a, b].sort());
      expect(declared('zotero_delete_items')?.cannot).toBe(
        'their child notes and attachments deleted with them, and files',
      );
      const h = await zot(['history', '--tool', 'zotero_delete_items']);
      expect((h.data.requests as unknown[])[0]).toMatchObject({
        requestId: write.meta.request_id,
        cannot: 'their child notes and attachments deleted with them, and files',
      });
      expect(lib().items.has(child)).toBe(false);
      const { [child]: gone, ...rest } = before.items;
      expect(gone).toBeDefined();
      expect(snapshot()).toEqual({ ...before, items: rest });
    },
  );

  sweep('zotero_merge_items', 'master, children, related items and the others as they were', async () => {
    const [c1, c2] = lib().addCollections([{ name: 'C1' }, { name: 'C2' }]) as [string, string];
    const [r] = lib().addItems([{ title: 'Related' }]) as [string];
    const uri = (key: string) => `http://zotero.org/${LIB}/items/${key}`;
    const [master, other] = lib().addItems([
      { title: 'Coastal wetlands', date: '2019', tags: [{ tag: 'a' }], collections: [c1] },
      {
        title: 'Coastal Wetlands',
        DOI: '10.5555/w.1',
        tags: [{ tag: 'b' }],
        collections: [c2],
        relations: { 'dc:relation': uri(r) },
      },
    ]) as [string, string];
    lib().editItem(r, { relations: { 'dc:relation': uri(other) } });
    lib().addItems([{ itemType: 'note', parentItem: other, note: '<p>Moves</p>' }]);
    const before = snapshot();
    await writeThenUndo('zotero_merge_items', ['merge', master, other, '--fill', '--apply']);
    expectRestored(before);
  });

  describe('zotero_manage_saved_searches', () => {
    sweep('zotero_manage_saved_searches', 'create (deleted again)', async () => {
      const before = snapshot();
      const { undo } = await writeThenUndo('zotero_manage_saved_searches', [
        'saved-search',
        'create',
        'Oceans',
        '--condition',
        'title contains ocean',
      ]);
      expect(undo.data.deleted).toHaveLength(1);
      expectRestored(before);
    });
    sweep('zotero_manage_saved_searches', 'delete (created again under its key)', async () => {
      const [s] = lib().addSearches([
        { name: 'Seas', conditions: [{ condition: 'title', operator: 'contains', value: 'sea' }] },
      ]) as [string];
      const before = snapshot();
      const { undo } = await writeThenUndo('zotero_manage_saved_searches', ['saved-search', 'delete', s]);
      expect(undo.data.created).toEqual([s]);
      expectRestored(before);
    });
  });

  sweep('zotero_update_status', 'applied: the preprint’s type and fields as they were', async () => {
    meta = await startMetadataFakes();
    const DOI = '10.1101/2020.01.01.111111';
    const [bio] = lib().addItems([
      {
        itemType: 'preprint',
        title: 'Sea level rise and coastal flooding in estuaries',
        DOI,
        repository: 'bioRxiv',
        date: '2020-01-01',
        tags: [{ tag: 'mine' }],
      },
    ]) as [string];
    meta.addCrossref({
      ...crossrefWork({
        doi: DOI,
        title: 'Sea level rise and coastal flooding in estuaries',
        type: 'posted-content',
        relation: { 'is-preprint-of': [{ 'id-type': 'doi', id: '10.5555/pub.1', 'asserted-by': 'subject' }] },
      }),
      subtype: 'preprint',
    });
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/pub.1', title: 'Sea Level Rise and Coastal Flooding in Estuaries' }),
      'container-title': ['Journal of Coasts'],
      volume: '12',
      issue: '3',
      page: '100-110',
      issued: { 'date-parts': [[2021, 5, 4]] },
    });
    const before = snapshot();
    // With a child note of the evidence: the note goes to the trash, the item's fields come back.
    const { write } = await writeThenUndo('zotero_update_status', [
      'update-status',
      bio,
      '--apply',
      '--note',
    ]);
    expect(write.data).toMatchObject({ applied: true });
    const made = added(before);
    expect(made.map((k) => lib().items.get(k))).toMatchObject([{ itemType: 'note', parentItem: bio }]);
    expectRestored(before, made);
  });

  sweep('zotero_enrich', 'applied: the filled fields empty again', async () => {
    meta = await startMetadataFakes();
    const [bare] = lib().addItems([
      { itemType: 'journalArticle', title: 'Sea level rise in estuaries', DOI: '10.5555/bare.1' },
    ]) as [string];
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/bare.1', title: 'Sea level rise in estuaries' }),
      abstract: '<jats:p>Rising seas.</jats:p>',
      ISSN: ['1234-5678'],
      page: '100-110',
      publisher: 'Coastal Press',
    });
    const before = snapshot();
    const { write } = await writeThenUndo('zotero_enrich', ['enrich', bare, '--apply']);
    expect(write.data).toMatchObject({ applied: true });
    expect(lib().items.get(bare)?.pages).toBe('');
    expectRestored(before);
  });

  sweep('zotero_undo', 'the undo of an undo puts back what the undone request had done', async () => {
    const keys = lib().addItems([{ title: 'A' }, { title: 'B', tags: [{ tag: 'x' }] }]);
    const trashed = await zot(['trash', ...keys, '--yes']);
    expect(trashed.code).toBe(0);
    // The write undone here is the undo of the trashing: its undo trashes them again.
    const before = snapshot();
    await writeThenUndo('zotero_undo', ['undo', trashed.meta.request_id]);
    expectRestored(before);
  });

  // Last: the cases above ran their commands.
  it('every CLI command that changes the library ran in a case', () => {
    const wanted = tools.flatMap((t) =>
      t.cli
        .filter((c) => changesLibrary(t, commandTier(t, c)))
        .map((c) => `${t.name}: zot ${c.path.join(' ')}`),
    );
    expect(wanted.length).toBeGreaterThan(20);
    expect(wanted.filter((c) => !ran.has(c))).toEqual([]);
  });
});
