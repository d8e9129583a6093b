/**
 * The large benchmark library's generator (`src/demo/sample/large.ts`): its options for a more
 * realistic library (more PDFs, many annotations per PDF, keyword tags) leave the default
 * output as it was, since the benches compare their figures with libraries built before them.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDatabaseClass } from '../../src/core/sqlite-driver.js';
import { buildLargeLibrary, largeLibrarySpec, type ItemSpec } from '../support/zotero-sqlite/index.js';

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** The user library's top-level items of a spec. */
const userItems = (options: Parameters<typeof largeLibrarySpec>[0]): ItemSpec[] =>
  largeLibrarySpec(options).libraries[0]!.items ?? [];

describe('largeLibrarySpec', () => {
  it('gives the same spec as before the realistic-share options, with them omitted or at their defaults', () => {
    // Hashes of the spec the generator gave before those options existed (commit 2d97eca).
    const small = { items: 300, collections: 30, groupItems: 50 };
    const seeded = { items: 2000, collections: 100, groupItems: 10, seed: 7 };
    expect(hash(largeLibrarySpec(small))).toBe(
      'b54b074a578bd686a2bec2861afb3bd96a1fa2489cb61eec248df53cb2bac1e0',
    );
    expect(hash(largeLibrarySpec(seeded))).toBe(
      '7b681855d8ee24c0f416d33f64c2a0b3604b745db907ac9e00094cb63e041632',
    );
    expect(hash(largeLibrarySpec({ items: 500, fulltextShare: 0.5 }))).toBe(
      '3e81461284b1932b29f7d3d6f7177f085bb96a68cc6ada20e9c6c8419d821c34',
    );
    const defaults = {
      attachmentShare: 0.3,
      annotatedShare: 0.1,
      annotationsPerAttachment: 1,
      automaticTagShare: 0,
    };
    expect(hash(largeLibrarySpec({ ...small, ...defaults }))).toBe(hash(largeLibrarySpec(small)));
  });

  it('gives more PDFs, several annotations per annotated PDF and keyword tags when asked', () => {
    const options = { items: 2000, collections: 100, groupItems: 0 };
    const plain = userItems(options);
    const rich = userItems({
      ...options,
      attachmentShare: 0.7,
      annotatedShare: 0.25,
      annotationsPerAttachment: 12,
      automaticTagShare: 0.4,
    });
    const withPdf = (items: ItemSpec[]) => items.filter((i) => i.attachments?.length).length / items.length;
    expect(withPdf(plain)).toBeCloseTo(0.3, 1);
    expect(withPdf(rich)).toBeCloseTo(0.7, 1);
    const annotations = (items: ItemSpec[]) =>
      items.flatMap((i) => i.attachments ?? []).flatMap((a) => (a.annotations ? [a.annotations.length] : []));
    expect(Math.max(...annotations(plain))).toBe(1);
    expect(Math.max(...annotations(rich))).toBe(12);
    expect(Math.min(...annotations(rich))).toBe(1);
    const tagNames = (items: ItemSpec[]) =>
      new Set(items.flatMap((i) => (i.tags ?? []).map((t) => (typeof t === 'string' ? t : t.tag))));
    const automatic = rich.flatMap((i) => (i.tags ?? []).filter((t) => typeof t !== 'string'));
    expect(automatic.length).toBeGreaterThan(0);
    expect(automatic.every((t) => t.type === 1)).toBe(true);
    // The keyword tags come from a vocabulary of thousands: the distinct names grow with the library.
    expect(tagNames(plain).size).toBeLessThan(1100);
    expect(tagNames(rich).size).toBeGreaterThan(tagNames(plain).size + 500);
  });
});

describe('buildLargeLibrary with the realistic shares', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the extra annotations and the automatic tags as Zotero stores them', async () => {
    dir = mkdtempSync(join(tmpdir(), 'zoteus-large-'));
    const path = join(dir, 'zotero.sqlite');
    const built = await buildLargeLibrary(path, {
      items: 300,
      collections: 20,
      groupItems: 0,
      attachmentShare: 0.7,
      annotatedShare: 0.3,
      annotationsPerAttachment: 10,
      automaticTagShare: 0.5,
    });
    const spec = userItems({
      items: 300,
      collections: 20,
      groupItems: 0,
      attachmentShare: 0.7,
      annotatedShare: 0.3,
      annotationsPerAttachment: 10,
      automaticTagShare: 0.5,
    });
    const Database = loadDatabaseClass();
    const db = new Database(path, { readonly: true });
    try {
      const count = (sql: string) => db.prepare(sql).pluck().get() as number;
      const expected = spec
        .flatMap((i) => i.attachments ?? [])
        .reduce((n, a) => n + (a.annotations?.length ?? 0), 0);
      expect(count('SELECT count(*) FROM itemAnnotations')).toBe(expected);
      expect(built.items.filter((i) => i.itemType === 'annotation')).toHaveLength(expected);
      // Highlights (1), notes (2) and underlines (5).
      expect(
        (
          db.prepare('SELECT DISTINCT type FROM itemAnnotations ORDER BY type').pluck().all() as number[]
        ).sort(),
      ).toEqual([1, 2, 5]);
      expect(count('SELECT count(*) FROM itemTags WHERE type = 1')).toBe(
        spec.flatMap((i) => (i.tags ?? []).filter((t) => typeof t !== 'string')).length,
      );
    } finally {
      db.close();
    }
  });
});
