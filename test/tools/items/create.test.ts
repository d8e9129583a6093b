/** `zotero_create_items` / `zot create FILE|-` against the Zotero test server. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../../src/core/tool.js';
import createTool from '../../../src/tools/items/create-items.js';
import { READ_KEY } from '../../core/library/world.js';
import { envelope, LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await w.close();
});

const article = (i: number) => ({
  itemType: 'journalArticle',
  title: `Paper ${i}`,
  creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
  date: '2020',
  DOI: `10.1/p${i}`,
});

describe('zotero_create_items in process', () => {
  it('validates, then writes 50 items per request, with progress', async () => {
    const events: ProgressEvent[] = [];
    const items = Array.from({ length: 120 }, (_, i) => article(i));
    const out = await createTool.run({ items }, w.deps({ progress: events }));
    expect(createTool.output.safeParse(out).success).toBe(true);
    expect(out.created).toHaveLength(120);
    expect(out.failed).toEqual([]);
    expect(out.created[7]).toMatchObject({ index: 7, itemType: 'journalArticle', title: 'Paper 7' });
    expect(w.requests()).toEqual([
      'GET /keys/current',
      'GET /schema',
      `POST /${LIB}/items`,
      `POST /${LIB}/items`,
      `POST /${LIB}/items`,
    ]);
    // New objects go with a write token, never a guessed key.
    const posts = w.world.server.log.filter((e) => e.method === 'POST');
    expect(posts.every((e) => /^[0-9a-f]{32}$/.test(e.headers['zotero-write-token'] ?? ''))).toBe(true);
    expect(posts.map((e) => (e.body as unknown[]).length)).toEqual([50, 50, 20]);
    expect(w.world.server.library(LIB).items.size).toBe(120);
    expect(out.libraryVersion).toBe(w.world.server.library(LIB).version);
    expect(events.map((e) => `${e.event}:${e.done}`)).toEqual([
      'start:0',
      'progress:50',
      'progress:100',
      'progress:120',
      'complete:120',
    ]);
  });

  it('one invalid item refuses the batch, naming every problem, and sends nothing', async () => {
    const items = [
      article(1),
      { itemType: 'book', title: 'B', journalAbbreviation: 'x' },
      { itemType: 'thesis', creators: [{ creatorType: 'editor', name: 'E' }] },
    ];
    const error = await createTool.run({ items }, w.deps()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation_error', field: 'items' });
    expect((error as { failed: unknown[] }).failed).toEqual([
      expect.objectContaining({ index: 1, field: 'journalAbbreviation' }),
      expect.objectContaining({ index: 2, field: 'creators[0].creatorType' }),
    ]);
    expect(w.world.server.log).toHaveLength(0);
  });

  it('per-item refusals are failed entries; the others land', async () => {
    const items = [article(1), { ...article(2), collections: ['ZZZZ2345'] }, article(3)];
    const out = await createTool.run({ items }, w.deps());
    expect(out.created.map((c) => c.index)).toEqual([0, 2]);
    expect(out.failed).toEqual([
      {
        index: 1,
        key: expect.stringMatching(/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/),
        code: 409,
        message: expect.stringContaining('ZZZZ2345'),
        reason: 'conflict',
        retryable: false,
      },
    ]);
  });

  it('a read-only key is refused after the key check alone', async () => {
    const error = await createTool
      .run({ items: [article(1)] }, w.deps({ env: { ZOTERO_API_KEY: READ_KEY } }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'permission_denied' });
    expect(w.requests()).toEqual(['GET /keys/current']);
  });
});

describe('zot create', () => {
  it('FILE: created items in one envelope, sync reminder, next suggestions that parse', async () => {
    const file = join(w.world.box.dir, 'items.json');
    writeFileSync(file, JSON.stringify([article(1), article(2)]));
    const r = await w.zot(['create', file]);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.ok).toBe(true);
    expect(env.data.created).toHaveLength(2);
    expect(env.data.sync_required).toBe(true);
    expect(env.next?.[0]).toMatch(/^zot note add [A-Z0-9]{8} <text>$/);
    expect(r.stderr).toContain('SYNC_REMINDER');
    expect(r.stderr).not.toContain('dropped a follow-up');
  });

  it('- reads stdin; --json is the global flag: it forces JSON output over ZOT_FORMAT=table', async () => {
    const r = await w.zot(['create', '-'], {}, JSON.stringify([article(5)]));
    expect(r.code).toBe(0);
    expect((envelope(r).data.created as unknown[]).length).toBe(1);
    const table = await w.zot(['create', '-'], { ZOT_FORMAT: 'table' }, JSON.stringify([article(6)]));
    expect(table.code).toBe(0);
    expect(() => JSON.parse(table.stdout) as unknown).toThrow();
    const json = await w.zot(
      ['create', '--json', '-'],
      { ZOT_FORMAT: 'table' },
      JSON.stringify([article(7)]),
    );
    expect(() => JSON.parse(json.stdout) as unknown).not.toThrow();
  });

  it('schema problems: validation_error, exit 3, nothing sent', async () => {
    const r = await w.zot(['create', '-'], {}, JSON.stringify([{ itemType: 'magazineArticle', titel: 'x' }]));
    expect(r.code).toBe(3);
    const env = envelope(r);
    expect(env.error.code).toBe('validation_error');
    expect(env.error.message).toContain('items[0].titel');
    expect(w.world.server.log).toHaveLength(0);
  });

  it('--dry-run validates offline and sends nothing', async () => {
    const r = await w.zot(
      ['create', '-', '--dry-run'],
      { ZOTERO_API_KEY: undefined },
      JSON.stringify([article(1)]),
    );
    expect(r.code).toBe(0);
    expect(envelope(r).data.would).toMatchObject({
      command: 'create',
      items: 1,
      itemTypes: { journalArticle: 1 },
    });
    expect(w.world.server.log).toHaveLength(0);
  });

  it('partial: exit 7, then an idempotent re-run retries only the failed item and merges', async () => {
    const file = join(w.world.box.dir, 'items.json');
    writeFileSync(
      file,
      JSON.stringify([article(1), { ...article(2), collections: ['ZZZZ2345'] }, article(3)]),
    );
    const first = await w.zot(['create', file, '--idempotency-key', 'c1']);
    expect(first.code).toBe(7);
    const env = envelope(first);
    expect(env.ok).toBe('partial');
    expect(env.meta).toMatchObject({ total: 3, sync_required: true });
    expect(env.data.failed).toEqual([
      expect.objectContaining({ index: 1, code: 409, reason: 'conflict', retryable: false }),
    ]);

    w.world.server.library(LIB).addCollections([{ key: 'ZZZZ2345', name: 'Now exists' }]);
    w.world.server.clearLog();
    const second = await w.zot(['create', file, '--idempotency-key', 'c1']);
    expect(second.code).toBe(0);
    const merged = envelope(second);
    expect(merged.ok).toBe(true);
    expect((merged.data.created as Array<{ index: number }>).map((c) => c.index)).toEqual([0, 1, 2]);
    expect(merged.data.failed).toEqual([]);
    const posts = w.world.server.log.filter((e) => e.method === 'POST');
    expect(posts.map((e) => (e.body as Array<{ title: string }>).map((i) => i.title))).toEqual([['Paper 2']]);
    expect(w.world.server.library(LIB).items.size).toBe(3);
  });

  it('read-only mode refuses before any request', async () => {
    const r = await w.zot(['create', '-'], { ZOTEUS_READ_ONLY: 'true' }, JSON.stringify([article(1)]));
    expect(r.code).toBe(2);
    expect(envelope(r).error.code).toBe('permission_denied');
    expect(w.world.server.log).toHaveLength(0);
  });
});

describe('zotero_create_items over MCP', () => {
  it('creates, and an invalid batch is an isError result with the problems in _meta', async () => {
    const mcp = await mcpOf(w);
    try {
      const ok = await mcp.call('zotero_create_items', { items: [article(1)] });
      expect(ok.isError).toBeFalsy();
      expect((ok.structuredContent as { created: unknown[] }).created).toHaveLength(1);
      const bad = await mcp.call('zotero_create_items', { items: [{ itemType: 'nope' }] });
      expect(bad.isError).toBe(true);
      expect(bad._meta?.['zoteus/error']).toMatchObject({
        code: 'validation_error',
        failed: [{ index: 0, field: 'itemType' }],
      });
    } finally {
      await mcp.close();
    }
  });
});
