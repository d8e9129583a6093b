/**
 * `zot merge` / `zotero_merge_items` against the Zotero test server: the preview writes nothing
 * and keeps a plan; applying it moves every child (notes, an attachment whose annotation goes
 * with it) to the master, takes the union of tags, collections and relations, fills empty
 * fields with --fill, records dc:replaces for each other item, relates the others' related
 * items to the master, and trashes the others, in 2 writes' worth of requests; a re-run
 * changes nothing; a candidate changed since the preview is a conflict with nothing written;
 * bad input is refused offline. On the desktop's zotero.sqlite the preview needs no key, and a
 * key of another library is a validation_error. The CLI runs in process.
 */
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { SAMPLE_KEYS, startDesktopWorld } from '../../core/library/router-world.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
let k: Record<'master' | 'o1' | 'o2' | 'r0' | 'r1' | 'n1' | 'pdf' | 'ann' | 'n2' | 'c1' | 'c2', string>;
const uri = (key: string) => `http://zotero.org/${LIB}/items/${key}`;
const OLD = 'http://zotero.org/users/1/items/ZZZZ2345';

beforeEach(async () => {
  w = await startItemsWorld();
  const lib = w.world.server.library(LIB);
  const [c1, c2] = lib.addCollections([{ name: 'Wetlands' }, { name: 'Coasts' }]) as [string, string];
  const [r0, r1] = lib.addItems([{ title: 'Related to the master' }, { title: 'Related to an other' }]) as [
    string,
    string,
  ];
  const smith = [{ creatorType: 'author', firstName: 'Ann', lastName: 'Smith' }];
  const [master, o1, o2] = lib.addItems([
    {
      title: 'Coastal wetlands',
      creators: smith,
      date: '2019',
      tags: [{ tag: 'wetlands' }],
      collections: [c1],
      relations: { 'dc:relation': uri(r0) },
    },
    {
      title: 'Coastal Wetlands',
      creators: smith,
      DOI: '10.5555/w.1',
      volume: '7',
      tags: [{ tag: 'wetlands' }, { tag: 'coast', type: 1 }],
      collections: [c2],
      relations: { 'dc:relation': uri(r1), 'dc:replaces': OLD },
    },
    { title: 'Coastal wetlands.', pages: '1-9', volume: '8', tags: [{ tag: 'review' }] },
  ]) as [string, string, string];
  lib.editItem(r1, { relations: { 'dc:relation': uri(o1) } });
  const [n1, pdf, n2] = lib.addItems([
    { itemType: 'note', parentItem: o1, note: '<p>First note</p>' },
    {
      itemType: 'attachment',
      parentItem: o1,
      linkMode: 'imported_file',
      contentType: 'application/pdf',
      filename: 'w.pdf',
      title: 'PDF',
    },
    { itemType: 'note', parentItem: o2, note: '<p>Second note</p>' },
  ]) as [string, string, string];
  const [ann] = lib.addItems([
    { itemType: 'annotation', parentItem: pdf, annotationType: 'highlight', annotationText: 'marked' },
  ]) as [string];
  k = { master, o1, o2, r0, r1, n1, pdf, ann, n2, c1, c2 };
});
afterEach(async () => {
  await w.close();
});

async function zot(
  argv: string[],
  env: Record<string, string> = {},
  world: { env: (e: Record<string, string>) => Record<string, string> } = w,
) {
  let stdout = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end('');
  const code = await runCli({
    argv,
    env: world.env(env),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink(() => undefined), stdin },
    tools,
    groups,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  type Loose = any;
  return {
    code,
    env: JSON.parse(stdout) as {
      ok: boolean | 'partial';
      data: Loose;
      error: Loose;
      next?: string[];
      meta: Loose;
    },
  };
}

const item = (key: string) => w.world.server.library(LIB).items.get(key) as Record<string, unknown>;
const snapshot = () => JSON.stringify([...w.world.server.library(LIB).items.values()]);
const writes = () => w.world.server.log.filter((e) => e.method !== 'GET');

describe('zot merge: preview, then apply the plan', () => {
  it('the preview lists every change and writes nothing; the plan applies it exactly', async () => {
    const before = snapshot();
    w.world.server.clearLog();
    const preview = await zot(['merge', k.master, k.o1, k.o2, '--fill']);
    expect(preview.code).toBe(0);
    const p = preview.env.data;
    expect(p).toMatchObject({
      applied: false,
      planId: expect.stringMatching(/^p_[a-z2-7]{16}$/),
      master: { key: k.master, title: 'Coastal wetlands' },
      merged: [
        { key: k.o1, title: 'Coastal Wetlands', status: 'planned' },
        { key: k.o2, title: 'Coastal wetlands.', status: 'planned' },
      ],
      tagsAdded: ['coast', 'review'],
      collectionsAdded: [k.c2],
      relationsAdded: [
        { predicate: 'dc:relation', object: uri(k.r1) },
        { predicate: 'dc:replaces', object: OLD },
        { predicate: 'dc:replaces', object: uri(k.o1) },
        { predicate: 'dc:replaces', object: uri(k.o2) },
      ],
      totalChildren: 3,
      related: [k.r1],
      backend: 'web',
      library: LIB,
    });
    // The children of each other item (the server lists those added together in key order).
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect([...p.children].sort(byKey)).toEqual(
      [
        { key: k.n1, itemType: 'note', from: k.o1 },
        { key: k.pdf, itemType: 'attachment', from: k.o1 },
        { key: k.n2, itemType: 'note', from: k.o2 },
      ].sort(byKey),
    );
    // The master's own empty fields, first donor first: o1's volume, not o2's.
    expect(
      [...p.filled].sort((a: { field: string }, b: { field: string }) => a.field.localeCompare(b.field)),
    ).toEqual([
      { field: 'DOI', value: '10.5555/w.1', from: k.o1 },
      { field: 'pages', value: '1-9', from: k.o2 },
      { field: 'volume', value: '7', from: k.o1 },
    ]);
    expect(preview.env.next).toEqual([
      `zot merge ${k.master} ${k.o1} ${k.o2} --fill --apply --plan ${p.planId}`,
    ]);
    expect(snapshot()).toBe(before);
    expect(writes()).toEqual([]);

    w.world.server.clearLog();
    const applied = await zot(['merge', k.master, k.o1, k.o2, '--apply', '--plan', p.planId, '--yes']);
    expect(applied.code).toBe(0);
    expect(applied.env.data).toMatchObject({
      applied: true,
      planId: p.planId,
      merged: [
        { key: k.o1, status: 'trashed' },
        { key: k.o2, status: 'trashed' },
      ],
      failed: [],
      sync_required: true,
    });
    expect([...applied.env.data.succeeded].sort()).toEqual(
      [k.n1, k.pdf, k.n2, k.r1, k.master, k.o1, k.o2].sort(),
    );
    const m = item(k.master);
    expect(m).toMatchObject({
      title: 'Coastal wetlands',
      DOI: '10.5555/w.1',
      volume: '7',
      pages: '1-9',
      date: '2019',
      tags: [{ tag: 'wetlands' }, { tag: 'coast', type: 1 }, { tag: 'review' }],
      collections: [k.c1, k.c2],
      relations: {
        'dc:relation': [uri(k.r0), uri(k.r1)],
        'dc:replaces': [OLD, uri(k.o1), uri(k.o2)],
      },
    });
    expect(item(k.o1).deleted).toBe(true);
    expect(item(k.o2).deleted).toBe(true);
    expect([k.n1, k.pdf, k.n2].map((c) => item(c).parentItem)).toEqual([k.master, k.master, k.master]);
    // The annotation is the attachment's child: it moved with it, untouched.
    expect(item(k.ann).parentItem).toBe(k.pdf);
    expect(item(k.r1).relations).toEqual({ 'dc:relation': [uri(k.o1), uri(k.master)] });
    // The candidates read, each other's children listed, then the 7 objects read and written once.
    expect(w.work()).toEqual([
      `GET /${LIB}/items`,
      `GET /${LIB}/items/${k.o1}/children`,
      `GET /${LIB}/items/${k.o2}/children`,
      `GET /${LIB}/items`,
      `POST /${LIB}/items`,
    ]);

    // Again: everything is already merged, nothing is sent.
    w.world.server.clearLog();
    const again = await zot(['merge', k.master, k.o1, k.o2, '--apply', '--yes']);
    expect(again.code).toBe(0);
    expect(again.env.data).toMatchObject({
      succeeded: [],
      unchanged: [k.r1, k.master, k.o1, k.o2],
      children: [],
      merged: [
        { key: k.o1, status: 'unchanged' },
        { key: k.o2, status: 'unchanged' },
      ],
    });
    expect(writes()).toEqual([]);
  });

  it('zot undo of a merge restores the originals, object by object', async () => {
    const strip = () =>
      Object.fromEntries(
        [...w.world.server.library(LIB).items].map(([key, v]) => {
          const { version, dateModified, ...rest } = v as Record<string, unknown>;
          void version;
          void dateModified;
          return [key, Object.fromEntries(Object.entries(rest).filter(([, x]) => x !== ''))];
        }),
      );
    const before = strip();
    const merged = await zot(['merge', k.master, k.o1, k.o2, '--fill', '--apply', '--yes']);
    expect(merged.code).toBe(0);
    expect(strip()).not.toEqual(before);
    const undone = await zot(['undo', merged.env.meta.request_id, '--yes']);
    expect(undone.code).toBe(0);
    expect(strip()).toEqual(before);
  });

  it('60 children: the 62 objects are read and written 50 at a time (2·⌈62/50⌉ requests)', async () => {
    const lib = w.world.server.library(LIB);
    const [a, b] = lib.addItems([{ title: 'Many' }, { title: 'Many' }]) as [string, string];
    const notes = lib.addItems(
      Array.from({ length: 60 }, (_, i) => ({ itemType: 'note', parentItem: b, note: `<p>${i}</p>` })),
    );
    w.world.server.clearLog();
    const r = await zot(['merge', a, b, '--apply', '--yes']);
    expect(r.code).toBe(0);
    expect(r.env.data.totalChildren).toBe(60);
    expect(notes.every((n) => item(n).parentItem === a)).toBe(true);
    expect(w.work()).toEqual([
      `GET /${LIB}/items`,
      `GET /${LIB}/items/${b}/children`,
      `GET /${LIB}/items`,
      `GET /${LIB}/items`,
      `POST /${LIB}/items`,
      `POST /${LIB}/items`,
    ]);
  });

  it('without --fill the master keeps its empty fields empty', async () => {
    const r = await zot(['merge', k.master, k.o2, '--apply', '--yes']);
    expect(r.code).toBe(0);
    expect(r.env.data.filled).toEqual([]);
    expect(item(k.master).pages).toBeUndefined();
    expect(item(k.master).tags).toEqual([{ tag: 'wetlands' }, { tag: 'review' }]);
    expect(item(k.n2).parentItem).toBe(k.master);
    expect(item(k.o2).deleted).toBe(true);
  });

  it('a candidate changed since the preview: conflict (exit 6), nothing written', async () => {
    const preview = await zot(['merge', k.master, k.o1, k.o2]);
    const planned = item(k.o2).version as number;
    w.world.server.library(LIB).editItem(k.o2, { title: 'Edited elsewhere' });
    const version = item(k.o2).version as number;
    const before = snapshot();
    w.world.server.clearLog();
    const r = await zot([
      'merge',
      k.master,
      k.o1,
      k.o2,
      '--apply',
      '--plan',
      preview.env.data.planId,
      '--yes',
    ]);
    expect(r.code).toBe(6);
    expect(r.env.error).toMatchObject({ code: 'conflict', retryable: false, field: 'plan_id' });
    expect(r.env.error.message).toBe(
      `Changed since the preview: ${k.o2} (version ${planned}, now ${version}). Nothing was merged.`,
    );
    expect(writes()).toEqual([]);
    expect(snapshot()).toBe(before);
  });

  it('refuses an item merged with itself, a plan for other items, other item types and children', async () => {
    w.world.server.clearLog();
    const self = await zot(['merge', k.master, k.o1, k.master, '--apply', '--yes']);
    expect(self.code).toBe(3);
    expect(self.env.error).toMatchObject({ code: 'validation_error', field: 'item_keys' });
    expect(self.env.error.message).toContain('cannot be merged with itself');
    expect(w.world.server.log).toEqual([]);

    const preview = await zot(['merge', k.master, k.o1]);
    const other = await zot(['merge', k.master, k.o2, '--apply', '--plan', preview.env.data.planId, '--yes']);
    expect(other.code).toBe(3);
    expect(other.env.error).toMatchObject({ code: 'validation_error', field: 'plan_id' });

    const [book] = w.world.server
      .library(LIB)
      .addItems([{ itemType: 'book', title: 'Coastal wetlands' }]) as [string];
    const types = await zot(['merge', k.master, book]);
    expect(types.code).toBe(3);
    expect(types.env.error.message).toBe(
      `Merged items must be of one item type, as in Zotero: ${k.master} is a journalArticle, ${book} a book.`,
    );
    const child = await zot(['merge', k.master, k.n1]);
    expect(child.code).toBe(3);
    expect(child.env.error.message).toContain(`${k.n1} is a child note`);
    const missing = await zot(['merge', k.master, 'ZZZZ2345']);
    expect(missing.code).toBe(4);
    expect(missing.env.error).toMatchObject({ code: 'not_found', field: 'item_keys' });
  });

  it('MCP: a preview is a read (no confirmation); apply with the plan merges', async () => {
    const mcp = await mcpOf(w);
    try {
      const p = await mcp.call('zotero_merge_items', { master_key: k.master, item_keys: [k.o2] });
      expect(p.isError).toBeFalsy();
      const planId = (p.structuredContent as { planId: string }).planId;
      const a = await mcp.call('zotero_merge_items', {
        master_key: k.master,
        item_keys: [k.o2],
        apply: true,
        plan_id: planId,
      });
      expect(a.isError).toBeFalsy();
      expect(a.structuredContent).toMatchObject({
        applied: true,
        merged: [{ key: k.o2, status: 'trashed' }],
      });
      expect(item(k.o2).deleted).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});

describe('zot merge through the desktop’s local API (writes to the desktop)', () => {
  it('the same merge lands on the desktop: nothing is sent to the cloud', async () => {
    const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';
    const localUrl = w.world.server.serveLocalApi({ userID: 1, groups: [] });
    const localWrites = w.world.server.serveLocalWrites();
    localWrites.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
    localWrites.answer = 'always';
    const env = { ZOTERO_API_KEY: '', ZOTEUS_LOCAL_API_URL: localUrl, ZOTEUS_LOCAL_API_KEY: LOCAL_KEY };
    w.world.server.clearLog();
    const r = await zot(['merge', k.master, k.o2, '--apply', '--yes'], env);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      written_to: 'desktop',
      backend: 'localApi',
      merged: [{ status: 'trashed' }],
    });
    expect(w.world.server.log.filter((e) => !e.path.startsWith('/api'))).toEqual([]);
    expect(item(k.o2).deleted).toBe(true);
    expect(item(k.n2).parentItem).toBe(k.master);
    expect((item(k.master).relations as Record<string, string>)['dc:replaces']).toMatch(
      new RegExp(`^http://zotero\\.org/users/\\d+/items/${k.o2}$`),
    );
  });
});

describe('zot merge on the desktop’s zotero.sqlite', () => {
  it('previews without a key; a key of another library is a validation_error', async () => {
    const desk = await startDesktopWorld();
    try {
      const U = SAMPLE_KEYS.user.items;
      const r = await zot(['merge', U.seaLevelArticle, U.greenlandArticle], {}, desk);
      expect(r.code).toBe(0);
      expect(r.env.data).toMatchObject({
        applied: false,
        backend: 'sqlite',
        master: { key: U.seaLevelArticle },
      });
      const g = await zot(['merge', U.seaLevelArticle, SAMPLE_KEYS.group.items.groupArticle], {}, desk);
      expect(g.code).toBe(3);
      expect(g.env.error.code).toBe('validation_error');
      expect(g.env.error.message).toMatch(/^Items of different libraries cannot be merged: .*group 4711/);
      expect(desk.server.log).toEqual([]);
    } finally {
      await desk.close();
    }
  });
});
