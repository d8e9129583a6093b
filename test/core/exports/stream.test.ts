/**
 * A whole-library export from zotero.sqlite streams (issue 17, performance): the keys come
 * from one query of what keys are made of, the listing's keys from one more, then the items
 * are read by key a page at a time, and each page reaches the file before the next is read,
 * with a progress event per page. The library's items are never read whole, and the reader's
 * in-memory listing table is never built. The keys of that one query are the keys of the
 * items read whole.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exportItems, SQLITE_PAGE, type ExportOutput } from '../../../src/core/exports/export.js';
import { createKeyAssigner, keyFieldNames } from '../../../src/core/exports/keys.js';
import { localSchema } from '../../../src/core/items/schema.js';
import { desktop } from '../../../src/core/library/readers/desktop.js';
import type { ZoteroSqliteReader } from '../../../src/core/local/index.js';
import type { Deps, ProgressEvent } from '../../../src/core/tool.js';
import { sandbox } from '../../support/cli.js';
import { buildLargeLibrary } from '../../support/zotero-sqlite/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { depsFor } from '../../tools/items/read/setup.js';
import { buildExportLibrary } from './library-fixture.js';

let box: ReturnType<typeof sandbox>;
let env: Record<string, string>;
const opened: Deps[] = [];
beforeAll(async () => {
  box = sandbox();
  // 450 top-level items (a few of them in the trash): five pages of 100.
  await buildLargeLibrary(join(box.env.ZOTERO_DATA_DIR as string, 'zotero.sqlite'), {
    items: 450,
    collections: 10,
    groupItems: 0,
  });
  env = { ...box.env, ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0' };
}, 120_000);
afterAll(async () => {
  for (const d of opened) await d.services.close();
  box?.cleanup();
});

function deps(progress: ProgressEvent[], where = env): Deps {
  const d = depsFor(where, { progress });
  opened.push(d);
  return d;
}

async function sqliteOf(d: Deps): Promise<ZoteroSqliteReader> {
  const reader = (await (await desktop(d)).state()).sqlite.reader;
  if (!reader) throw new Error('the sandbox has no zotero.sqlite');
  return reader;
}

describe('a saved whole-library export', () => {
  it('writes each page to the file before reading the next, a progress event per page, in three kinds of read', async () => {
    const progress: ProgressEvent[] = [];
    const d = deps(progress);
    const sqlite = await sqliteOf(d);
    const calls = {
      citationKeyFacts: vi.spyOn(sqlite, 'citationKeyFacts'),
      exportListingKeys: vi.spyOn(sqlite, 'exportListingKeys'),
      itemsByKeys: vi.spyOn(sqlite, 'itemsByKeys'),
      items: vi.spyOn(sqlite, 'items'),
    };
    // What the file received, piece by piece, and the progress told when each piece arrived.
    const pieces: Array<{ entries: number; lastDone: number | undefined }> = [];
    let text = '';
    const out: ExportOutput = await exportItems(
      d,
      { all: true, save_path: 'library.bib' },
      async (path, chunks) => {
        for await (const chunk of chunks) {
          text += chunk;
          const last = progress.filter((e) => e.phase === 'export').at(-1);
          pieces.push({ entries: (chunk.match(/^@/gm) ?? []).length, lastDone: last?.done });
        }
        return path;
      },
    );

    const listed = out.totalResults as number;
    expect(listed).toBeGreaterThan(4 * SQLITE_PAGE);
    expect(listed).toBeLessThanOrEqual(5 * SQLITE_PAGE);
    const entries = (text.match(/^@/gm) ?? []).length;
    expect(out.succeeded).toHaveLength(entries);
    expect(out.saved?.bytes).toBe(Buffer.byteLength(text));

    // The header (empty for BibTeX), five pages, the footer (empty).
    const pages = pieces.slice(1, -1);
    expect(pages).toHaveLength(5);
    pages.forEach((page, i) => {
      expect(page.entries).toBeGreaterThan(0);
      expect(page.entries).toBeLessThanOrEqual(SQLITE_PAGE);
      // When page i arrived, the progress had told page i - 1 (the start: 0), no more.
      expect(page.lastDone).toBe(i * SQLITE_PAGE);
    });
    expect(pages.reduce((n, p) => n + p.entries, 0)).toBe(entries);

    expect(progress.filter((e) => e.phase === 'export').map((e) => [e.event, e.done, e.total])).toEqual([
      ['start', 0, listed],
      ['progress', 100, listed],
      ['progress', 200, listed],
      ['progress', 300, listed],
      ['progress', 400, listed],
      ['progress', listed, listed],
      ['complete', listed, listed],
    ]);

    // One pass for the keys, one for the listing, one read by key per page; no listing.
    expect(calls.citationKeyFacts).toHaveBeenCalledTimes(1);
    expect(calls.exportListingKeys).toHaveBeenCalledTimes(1);
    expect(calls.itemsByKeys).toHaveBeenCalledTimes(5);
    for (const [, keys] of calls.itemsByKeys.mock.calls) expect(keys.length).toBeLessThanOrEqual(SQLITE_PAGE);
    expect(calls.items).not.toHaveBeenCalled();
  });

  it('items by key are read by key too, never through the listing table', async () => {
    const d = deps([]);
    const sqlite = await sqliteOf(d);
    const keys = (await sqlite.exportListingKeys(1)) as string[];
    const items = vi.spyOn(sqlite, 'items');
    const byKeys = vi.spyOn(sqlite, 'itemsByKeys');
    const out = await exportItems(d, { item_keys: keys.slice(0, 3) });
    expect(out.succeeded).toEqual(keys.slice(0, 3));
    expect(byKeys).toHaveBeenCalledTimes(1);
    expect(items).not.toHaveBeenCalled();
  });

  it('a collection the library does not have is the listing’s not_found', async () => {
    const r = await zotAt(['export', '--collection', 'ZZZZ2345', '--save', join(box.dir, 'none.bib')], {
      env,
    });
    expect(r.code).toBe(4);
    const error = r.json().error as { code: string; message: string };
    expect(error.code).toBe('not_found');
    expect(error.message).toBe('No collection "ZZZZ2345" in users/424242.');
  });
});

describe('the key pass over zotero.sqlite', () => {
  it('gives every item of the library the key its whole item gives', async () => {
    const where = sandbox();
    try {
      await buildExportLibrary(where.env.ZOTERO_DATA_DIR as string);
      const d = deps([], { ...where.env, ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0' });
      const sqlite = await sqliteOf(d);
      const schema = localSchema(d.config);
      const fromFacts = createKeyAssigner({ schema, unique: 'library' });
      const facts = await sqlite.citationKeyFacts(1, keyFieldNames(schema), (f) => fromFacts.add(f));
      const whole = createKeyAssigner({ schema, unique: 'library' });
      const all = await sqlite.items(1, { includeTrashed: true, sort: 'dateAdded', direction: 'asc' });
      for (const item of all.items) whole.add(item);
      const a = fromFacts.assign();
      const b = whole.assign();
      expect(facts).toBe(b.size);
      expect([...a.entries()]).toEqual([...b.entries()]);
      expect(a.duplicates).toEqual(b.duplicates);
      // The crafted cases are among them: own keys, a taken key, a tie broken by the item key.
      expect(a.get('EXTRAKY2')).toEqual({ citationKey: 'smith2019own', source: 'extra' });
      expect(a.get('TAKENBY2')).toEqual({ citationKey: 'taken_taken_2020-1', source: 'generated' });
      expect(a.get('TIEBBBB2')).toEqual({ citationKey: 'twin_twin_2001-2', source: 'generated' });
    } finally {
      where.cleanup();
    }
  });
});
