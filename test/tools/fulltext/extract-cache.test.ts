/**
 * The disk cache of text extracted from PDFs and EPUBs (`$ZOT_CACHE_DIR/fulltext/`): a second
 * `zot pdf` on the same file answers from it, which the test makes visible by replacing the
 * PDF's bytes with garbage of the same size and mtime (pdfjs would refuse them); a changed
 * file misses; a corrupt entry is ignored and rewritten; the store stays under its bound,
 * least recently used first out.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  entryName,
  openExtractCache,
  type Extraction,
  type FileVersion,
} from '../../../src/core/fulltext/extract-cache.js';
import type { Deps } from '../../../src/core/tool.js';
import tool from '../../../src/tools/fulltext/get-fulltext.js';
import type { DesktopWorld } from '../../core/library/router-world.js';
import { runZot } from '../../support/cli.js';
import { makePdf, paperPages } from '../../support/documents/index.js';
import { K, PAPER_PAGES, startFulltextWorld } from './world.js';

/** A fixed mtime (whole seconds), so a rewritten file can be given exactly the same one. */
const MTIME = 1_700_000_000;

let world: DesktopWorld;
let paperPdf: string;
let cacheDir: string;
const opened: Deps[] = [];

beforeEach(async () => {
  world = await startFulltextWorld();
  paperPdf = join(world.dataDir, 'storage', K.paperPdf, 'paper.pdf');
  utimesSync(paperPdf, MTIME, MTIME);
  cacheDir = join(world.box.env.ZOT_CACHE_DIR!, 'fulltext');
});
afterEach(async () => {
  for (const d of opened.splice(0)) await d.services.close();
  await world.close();
});

/** Each call with new deps, as a new process would: no in-memory cache. */
async function search(q: string, key: string = K.paper) {
  const deps = world.deps();
  opened.push(deps);
  return tool.run(tool.input.parse({ item_key: key, q }), deps);
}

/** Garbage of the file's size with its mtime: only the cache can still answer for it. */
function garble(path: string): void {
  const size = statSync(path).size;
  const mtime = statSync(path).mtimeMs / 1000;
  writeFileSync(path, Buffer.alloc(size, 'x'));
  utimesSync(path, mtime, mtime);
}

const entries = () => readdirSync(cacheDir).filter((n) => n.endsWith('.json'));

describe('zot pdf with the disk cache', () => {
  it('a second run answers from the cache: the PDF is not read again', async () => {
    const env = world.env();
    const first = await runZot(['pdf', K.paper, '--q', 'Thwaites'], { env });
    expect(first.code).toBe(0);
    expect((first.json() as { data: { passages: Array<{ page: number }> } }).data.passages[0]!.page).toBe(4);
    expect(entries()).toHaveLength(1);

    garble(paperPdf);
    const second = await runZot(['pdf', K.paper, '--q', 'Thwaites'], { env });
    expect(second.code).toBe(0);
    const data = (
      second.json() as { data: { source: string; passages: Array<{ page: number; text: string }> } }
    ).data;
    expect(data.source).toBe('pdf');
    expect(data.passages[0]).toMatchObject({ page: 4 });
    expect(data.passages[0]!.text).toContain('Thwaites Glacier retreated');

    // The control: without the cache the garbage is read, and pdfjs refuses it.
    const uncached = await runZot(['pdf', K.paper, '--q', 'Thwaites'], {
      env: world.env({ ZOT_CACHE_DIR: join(world.box.dir, 'other-cache') }),
    });
    expect(uncached.code).toBe(3);
    expect((uncached.json() as { error: { code: string } }).error.code).toBe('validation_error');
  });
});

describe('the extracted-text cache', () => {
  it('a changed file (new size or mtime) is extracted again', async () => {
    expect((await search('Thwaites')).passages![0]!.page).toBe(4);
    writeFileSync(paperPdf, makePdf({ pages: paperPages(3, { 2: ['Pine Island Glacier thinned fast.'] }) }));
    utimesSync(paperPdf, MTIME + 60, MTIME + 60);
    const out = await search('Pine Island');
    expect(out).toMatchObject({ totalPages: 3, matched: 1 });
    expect(out.passages![0]!.page).toBe(2);
    expect((await search('Thwaites')).matched).toBe(0);

    // Same size, new mtime: a miss too (the garbage is read, and refused).
    garble(paperPdf);
    utimesSync(paperPdf, MTIME + 120, MTIME + 120);
    await expect(search('Pine Island')).rejects.toMatchObject({ code: 'validation_error' });
  });

  it('a corrupt entry is ignored and rewritten', async () => {
    await search('Thwaites');
    const [name] = entries();
    writeFileSync(join(cacheDir, name!), '{"format":1,"doc":{"text":');
    const out = await search('Thwaites');
    expect(out.passages![0]!.page).toBe(4);
    const entry = JSON.parse(readFileSync(join(cacheDir, name!), 'utf8')) as { doc: { text: string } };
    expect(entry.doc.text).toBe(PAPER_PAGES.map((p) => p.join('\n')).join('\n\n'));
    // An entry of the wrong shape (valid JSON) is a miss as well.
    writeFileSync(join(cacheDir, name!), JSON.stringify({ ...entry, doc: { text: 42 } }));
    expect((await search('Thwaites')).passages![0]!.page).toBe(4);
    // Rewritten under the same name: the cache answers for the garbled file again.
    garble(paperPdf);
    expect((await search('Thwaites')).passages![0]!.page).toBe(4);
    expect(entries()).toEqual([name]);
  });

  it('EPUBs are cached too', async () => {
    const epub = join(world.dataDir, 'storage', K.novelEpub, 'novel.epub');
    utimesSync(epub, MTIME, MTIME);
    const first = await search('harbour', K.novel);
    expect(first.source).toBe('epub');
    garble(epub);
    const second = await search('harbour', K.novel);
    expect(second.passages![0]).toMatchObject({ heading: 'The Harbour' });
    expect(second.passages![0]!.text).toBe(first.passages![0]!.text);
  });
});

describe('the store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'zot-extract-cache-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (n: number): FileVersion => ({
    path: `/docs/${n}.pdf`,
    size: 1000 + n,
    mtimeMs: MTIME * 1000,
  });
  const value = (n: number): Extraction => ({
    source: 'pdf',
    doc: { text: `${n} `.repeat(2000), pageStarts: [0], totalPages: 1 },
  });
  const age = (n: number, secondsAgo: number) => {
    const t = Date.now() / 1000 - secondsAgo;
    utimesSync(join(dir, entryName(file(n))), t, t);
  };

  it('keeps the entries under the bound, the least recently used going first', async () => {
    const size = JSON.stringify({ format: 1, path: '', ...value(1) }).length;
    const cache = openExtractCache(dir, { maxBytes: Math.floor(size * 2.5) });
    await cache.put(file(1), value(1));
    age(1, 300);
    await cache.put(file(2), value(2));
    age(2, 200);
    await cache.put(file(3), value(3)); // three do not fit: 1, the oldest, goes
    expect(await cache.get(file(1))).toBeUndefined();
    age(3, 100);
    expect((await cache.get(file(2)))?.doc.text).toBe(value(2).doc.text); // used now
    await cache.put(file(4), value(4)); // 3 is now the least recently used
    expect(await cache.get(file(3))).toBeUndefined();
    expect(await cache.get(file(2))).toBeDefined();
    expect(await cache.get(file(4))).toBeDefined();
    expect(readdirSync(dir).sort()).toEqual([entryName(file(2)), entryName(file(4))].sort());
  });

  it('the key is the path, size and mtime: any of them changing misses', async () => {
    const cache = openExtractCache(dir);
    await cache.put(file(1), value(1));
    expect(await cache.get(file(1))).toEqual(value(1));
    expect(await cache.get({ ...file(1), size: 1 })).toBeUndefined();
    expect(await cache.get({ ...file(1), mtimeMs: 1 })).toBeUndefined();
    expect(await cache.get({ ...file(1), path: '/docs/other.pdf' })).toBeUndefined();
  });

  it('an unwritable cache directory costs the cache, never the answer', async () => {
    const blocker = join(dir, 'not-a-dir');
    writeFileSync(blocker, '');
    const logs: string[] = [];
    const cache = openExtractCache(join(blocker, 'fulltext'), { log: (l) => logs.push(l) });
    await expect(cache.put(file(1), value(1))).resolves.toBeUndefined();
    expect(await cache.get(file(1))).toBeUndefined();
    expect(logs.join('\n')).toMatch(/Could not write the full-text cache/);
  });
});
