/**
 * itemFulltext, the search indexer's entry point: the whole text of an item's best document
 * from the same sources, in the same order, as zotero_get_fulltext, through the disk cache of
 * extracted text; undefined when there is no text. (The API sources: test/tools/fulltext/api-sources.)
 */
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemFulltext } from '../../../src/core/fulltext/item-text.js';
import type { DesktopWorld } from '../library/router-world.js';
import { K, PAGED_TEXT, PAPER_PAGES, REPORT_TEXT, startFulltextWorld } from '../../tools/fulltext/world.js';

let world: DesktopWorld;
beforeAll(async () => {
  world = await startFulltextWorld();
});
afterAll(async () => {
  await world?.close();
});

/** With new deps per call, as a new process: nothing cached in memory. */
async function text(input: Parameters<typeof itemFulltext>[1]): ReturnType<typeof itemFulltext> {
  const deps = world.deps();
  try {
    return await itemFulltext(deps, input);
  } finally {
    await deps.services.close();
  }
}

const PAPER_TEXT = PAPER_PAGES.map((lines) => lines.join('\n')).join('\n\n');

describe('itemFulltext', () => {
  it('the PDF in storage: its whole text, exact page count', async () => {
    expect(await text({ itemKey: K.paper })).toEqual({
      text: PAPER_TEXT,
      source: 'pdf',
      attachmentKey: K.paperPdf,
      pages: 6,
    });
    // The attachment's own key names the same document.
    expect(await text({ itemKey: K.paperPdf })).toMatchObject({ attachmentKey: K.paperPdf });
  });

  it('a complete desktop index answers before the file; an incomplete one only without the file', async () => {
    expect(await text({ itemKey: K.report })).toEqual({
      text: REPORT_TEXT,
      source: 'ftCache',
      attachmentKey: K.reportPdf,
      pages: 4,
    });
    expect(await text({ itemKey: K.paged })).toMatchObject({
      text: PAGED_TEXT.replace(/\f/g, '\n'),
      source: 'ftCache',
      pages: 3,
    });
    // 2 of 5 pages indexed, the PDF here: the PDF, all 5 pages.
    expect(await text({ itemKey: K.book })).toMatchObject({
      source: 'pdf',
      attachmentKey: K.bookPdf,
      pages: 5,
    });
    // 1 of 3 pages indexed, no file: the part Zotero indexed is all there is.
    expect(await text({ itemKey: K.partial })).toMatchObject({
      text: 'Only the first page was indexed, about penguins.',
      source: 'ftCache',
      pages: 3,
    });
  });

  it('an EPUB has no pages', async () => {
    const out = await text({ itemKey: K.novel });
    expect(out).toMatchObject({ source: 'epub', attachmentKey: K.novelEpub, pages: null });
    expect(out!.text).toContain('Boats rocked in the harbour as the tide turned.');
  });

  it('undefined: no attachment with text, an unknown key, a malformed key', async () => {
    expect(await text({ itemKey: K.bare })).toBeUndefined();
    expect(await text({ itemKey: 'ZZZZ2345' })).toBeUndefined();
    expect(await text({ itemKey: 'nope' })).toBeUndefined();
  });

  it('reads the extracted text from the disk cache', async () => {
    const pdf = join(world.dataDir, 'storage', K.paperPdf, 'paper.pdf');
    // A whole-second mtime, so the garbled file below can be given exactly the same one.
    utimesSync(pdf, 1_700_000_000, 1_700_000_000);
    const before = await text({ itemKey: K.paper });
    // Same size and mtime, unreadable bytes: only the cache can answer.
    writeFileSync(pdf, Buffer.alloc(statSync(pdf).size, 'x'));
    utimesSync(pdf, 1_700_000_000, 1_700_000_000);
    expect(await text({ itemKey: K.paper })).toEqual(before);
  });
});
