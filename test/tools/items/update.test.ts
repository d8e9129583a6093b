/** `zotero_update_item` / `zot update KEY` against the Zotero test server: diffs, dry runs, 412 handling. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import updateTool from '../../../src/tools/items/update-item.js';
import { envelope, LIB, mcpOf, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
let key: string;
beforeEach(async () => {
  w = await startItemsWorld();
  [key] = w.world.server
    .library(LIB)
    .addItems([{ title: 'Old title', date: '2019', volume: '1', extra: '' }]) as [string];
});
afterEach(async () => {
  await w.close();
});

const item = () => w.world.server.library(LIB).items.get(key)!;

describe('zot update', () => {
  it('PATCHes only the changed fields under the item version; --title, --date and --field', async () => {
    const version = item().version;
    const r = await w.zot([
      'update',
      key,
      '--title',
      'New title',
      '--date',
      '2019',
      '--field',
      'volume=2',
      '--field',
      'pages=1-10',
    ]);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.data).toMatchObject({
      key,
      itemType: 'journalArticle',
      changes: [
        { field: 'volume', from: '1', to: '2' },
        { field: 'pages', from: '', to: '1-10' },
        { field: 'title', from: 'Old title', to: 'New title' },
      ],
      unchanged: ['date'],
      dryRun: false,
      reapplied: 0,
      sync_required: true,
    });
    expect(env.next).toEqual([`zot note ${key}`]);
    const patch = w.world.server.log.find((e) => e.method === 'PATCH');
    expect(patch?.path).toBe(`/${LIB}/items/${key}`);
    expect(patch?.headers['if-unmodified-since-version']).toBe(String(version));
    expect(patch?.body).toEqual({ volume: '2', pages: '1-10', title: 'New title' });
    expect(item()).toMatchObject({ title: 'New title', volume: '2', pages: '1-10', date: '2019' });
    expect(env.data.version).toBe(item().version);
    expect(w.work()).toEqual([`GET /${LIB}/items`, `PATCH /${LIB}/items/${key}`]);
  });

  it('--dry-run prints the new values offline, without credentials', async () => {
    const r = await w.zot(['update', key, '--title', 'X', '--field', 'DOI=10.1/x', '--dry-run'], {
      ZOTERO_API_KEY: undefined,
    });
    expect(r.code).toBe(0);
    expect(envelope(r).data.would).toMatchObject({
      command: 'update',
      item_key: key,
      set: { DOI: '10.1/x', title: 'X' },
    });
    expect(w.world.server.log).toHaveLength(0);
  });

  it('refuses unknown fields offline, fields of another type after reading, and a missing item with exit 4', async () => {
    const unknown = await w.zot(['update', key, '--field', 'colour=red']);
    expect(unknown.code).toBe(3);
    expect(w.world.server.log).toHaveLength(0);
    const otherType = await w.zot(['update', key, '--field', 'bookTitle=B']);
    expect(otherType.code).toBe(3);
    expect(envelope(otherType).error.message).toContain("'bookTitle' is not a field of journalArticle");
    expect(w.world.server.log.some((e) => e.method === 'PATCH')).toBe(false);
    const missing = await w.zot(['update', 'ZZZZ2345', '--title', 'x']);
    expect(missing.code).toBe(4);
    expect(envelope(missing).error.code).toBe('not_found');
    const badKey = await w.zot(['update', 'nope', '--title', 'x']);
    expect(badKey.code).toBe(3);
  });

  it('a base field name lands on the type’s own field (title is caseName for a case)', async () => {
    const [caseKey] = w.world.server.library(LIB).addItems([{ itemType: 'case', caseName: 'A v. B' }]);
    const out = await updateTool.run(
      { item_key: caseKey!, title: 'A v. C', fields: { date: '1990' } },
      w.deps(),
    );
    expect(out.changes).toEqual([
      { field: 'dateDecided', from: '', to: '1990' },
      { field: 'caseName', from: 'A v. B', to: 'A v. C' },
    ]);
    expect(w.world.server.library(LIB).items.get(caseKey!)).toMatchObject({
      caseName: 'A v. C',
      dateDecided: '1990',
    });
  });
});

describe('concurrent edits', () => {
  it('someone else changed another field: re-read and re-apply to their version', async () => {
    w.world.server.faults.concurrentEdit({
      match: { method: 'PATCH' },
      apply: (s) => s.library(LIB).editItem(key, { extra: 'their note' }),
    });
    const out = await updateTool.run({ item_key: key, title: 'Mine' }, w.deps());
    expect(out).toMatchObject({ reapplied: 1, changes: [{ field: 'title', from: 'Old title', to: 'Mine' }] });
    expect(item()).toMatchObject({ title: 'Mine', extra: 'their note' });
    expect(w.work()).toEqual([
      `GET /${LIB}/items`,
      `PATCH /${LIB}/items/${key}`,
      `GET /${LIB}/items`,
      `PATCH /${LIB}/items/${key}`,
    ]);
  });

  it('someone else changed a field being updated: conflict naming it, exit 6, their value kept', async () => {
    w.world.server.faults.concurrentEdit({
      match: { method: 'PATCH' },
      apply: (s) => s.library(LIB).editItem(key, { title: 'Their title' }),
    });
    const r = await w.zot(['update', key, '--title', 'Mine', '--field', 'volume=9']);
    expect(r.code).toBe(6);
    const env = envelope(r);
    expect(env.error).toMatchObject({ code: 'conflict', field: 'title', retryable: false });
    expect(env.error.message).toContain('title (was "Old title", now "Their title", you asked for "Mine")');
    expect(env.error.failed).toEqual([
      expect.objectContaining({ key, field: 'title', code: 412, reason: 'conflict' }),
    ]);
    expect(item()).toMatchObject({ title: 'Their title', volume: '1' });
    expect(w.world.server.log.filter((e) => e.method === 'PATCH' && e.status === 204)).toHaveLength(0);
  });

  it('someone else set the same value: nothing left to write, not a conflict', async () => {
    w.world.server.faults.concurrentEdit({
      match: { method: 'PATCH' },
      apply: (s) => s.library(LIB).editItem(key, { title: 'Same' }),
    });
    const out = await updateTool.run({ item_key: key, title: 'Same' }, w.deps());
    expect(out).toMatchObject({ changes: [], unchanged: ['title'], reapplied: 1 });
  });
});

describe('zotero_update_item over MCP', () => {
  it('dry_run: true reads the live item and returns the diff without writing', async () => {
    const mcp = await mcpOf(w);
    try {
      const r = await mcp.call('zotero_update_item', {
        item_key: key,
        fields: { volume: '5', date: '2019' },
        dry_run: true,
      });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        dryRun: true,
        changes: [{ field: 'volume', from: '1', to: '5' }],
        unchanged: ['date'],
      });
      expect(w.world.server.log.some((e) => e.method === 'PATCH')).toBe(false);
      expect(item().volume).toBe('1');
    } finally {
      await mcp.close();
    }
  });
});
