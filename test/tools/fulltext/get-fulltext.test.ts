/**
 * zotero_get_fulltext against a desktop data directory (zotero.sqlite + storage/): which source
 * answers, passages with exact offsets, headings and page locators, page ranges, the outline,
 * the document's start; and `zot pdf` end to end. The local and Web API sources:
 * api-sources.test.ts; the disk cache of extracted text: extract-cache.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/core/tool.js';
import tool from '../../../src/tools/fulltext/get-fulltext.js';
import { PROVENANCE } from '../../../src/tools/shared/params.js';
import type { DesktopWorld } from '../../core/library/router-world.js';
import { runZot } from '../../support/cli.js';
import { K, PAGED_TEXT, PAPER_PAGES, REPORT_TEXT, startFulltextWorld } from './world.js';

let world: DesktopWorld;
let deps: Deps;
beforeAll(async () => {
  world = await startFulltextWorld();
  deps = world.deps();
});
afterAll(async () => {
  await deps?.services.close();
  await world?.close();
});

type Out = Awaited<ReturnType<typeof tool.run>>;
async function call(input: Parameters<typeof tool.run>[0]): Promise<Out> {
  const out = await tool.run(tool.input.parse(input), deps);
  expect(tool.output.safeParse(out).success).toBe(true);
  return out;
}

/** The paper's text as the PDF extraction builds it: lines by \n, pages by a blank line. */
const PAPER_TEXT = PAPER_PAGES.map((lines) => lines.join('\n')).join('\n\n');

describe('zotero_get_fulltext from the desktop', () => {
  it('no index: the PDF in storage answers, exact pages, the start with the total length', async () => {
    const out = await call({ item_key: K.paper, max_chars: 200 });
    expect(out).toMatchObject({
      itemKey: K.paper,
      attachment: { key: K.paperPdf, contentType: 'application/pdf', filename: 'paper.pdf' },
      source: 'pdf',
      complete: true,
      indexedPages: 6,
      totalPages: 6,
      totalChars: PAPER_TEXT.length,
      pageLocator: 'exact',
      mode: 'start',
      start: 0,
      truncated: true,
      backend: 'sqlite',
      provenance: PROVENANCE,
    });
    expect(out.sourceDetail).toBe(`${world.dataDir}/storage/${K.paperPdf}/paper.pdf`);
    expect(PAPER_TEXT.startsWith(out.text!)).toBe(true);
    expect(out.text!.length).toBeLessThanOrEqual(200);
    expect(out.end).toBe(out.text!.length);
    // Reading on from the end.
    const next = await call({ item_key: K.paper, offset: out.end!, max_chars: 100_000 });
    expect(out.text! + next.text!).toBe(PAPER_TEXT);
    expect(next.truncated).toBe(false);
  });

  it('q: passages with exact offsets, the nearest heading and the exact page', async () => {
    const out = await call({ item_key: K.paper, q: 'Thwaites calving' });
    const sentence = 'The calving front of Thwaites Glacier retreated by 14 kilometres.';
    const best = out.passages![0]!;
    expect(best.page).toBe(4);
    expect(best.pageApprox).toBeUndefined();
    expect(best.heading).toBe('4 Section 4');
    expect(PAPER_TEXT.slice(best.start, best.end)).toBe(best.text);
    expect(best.text).toContain(sentence);
    expect(best.start).toBe(PAPER_TEXT.indexOf('4 Section 4'));
    expect(out.matched).toBe(1);
    // Accent- and case-insensitive.
    const accents = await call({ item_key: K.paper, q: 'CAFE resume' });
    expect(accents.passages![0]).toMatchObject({ page: 5, heading: '5 Section 5' });
    // Words on every page: a limit, best first.
    const many = await call({ item_key: K.paper, q: 'glaciers', limit: 2 });
    expect(many.passages).toHaveLength(2);
    expect(many.matched).toBe(6);
    const none = await call({ item_key: K.paper, q: 'zebra' });
    expect(none.passages).toEqual([]);
    expect(none.message).toContain('No passage');
  });

  it('page_range returns those pages exactly; the outline has the PDF’s bookmarks with pages', async () => {
    const out = await call({ item_key: K.paper, page_range: '3-4' });
    expect(out.pages!.map((p) => p.page)).toEqual([3, 4]);
    expect(out.pages![0]!.text).toBe(PAPER_PAGES[2]!.join('\n'));
    expect(out.pages![1]!.text).toBe(PAPER_PAGES[3]!.join('\n'));
    expect(PAPER_TEXT.slice(out.pages![1]!.start, out.pages![1]!.end)).toBe(out.pages![1]!.text);
    expect((await call({ item_key: K.paper, page_range: '6' })).pages!.map((p) => p.page)).toEqual([6]);
    expect((await call({ item_key: K.paper, page_range: '5-99' })).pages!.map((p) => p.page)).toEqual([5, 6]);
    await expect(call({ item_key: K.paper, page_range: '9' })).rejects.toMatchObject({
      code: 'validation_error',
    });
    await expect(call({ item_key: K.paper, page_range: '4-2' })).rejects.toMatchObject({
      code: 'validation_error',
    });

    const outline = await call({ item_key: K.paper, outline: true });
    expect(outline.outline).toEqual([
      { title: 'Introduction', page: 1, level: 1 },
      { title: 'Background', page: 2, level: 2 },
      { title: 'Results', page: 4, level: 1 },
      { title: 'Conclusions', page: 6, level: 1 },
    ]);
  });

  it('the attachment key works as well as the item key', async () => {
    const out = await call({ item_key: K.paperPdf, q: 'Thwaites' });
    expect(out).toMatchObject({ itemKey: K.paperPdf, attachment: { key: K.paperPdf } });
    expect(out.passages![0]!.page).toBe(4);
  });

  it('a complete .zotero-ft-cache answers, with pageApprox = position × pages / characters', async () => {
    const out = await call({ item_key: K.report, q: 'sea ice extent' });
    expect(out).toMatchObject({
      source: 'ftCache',
      complete: true,
      indexedPages: 4,
      totalPages: 4,
      totalChars: 400,
      pageLocator: 'approximate',
    });
    expect(out.sourceDetail).toBe(`${world.dataDir}/storage/${K.reportPdf}/.zotero-ft-cache`);
    const best = out.passages![0]!;
    expect(best.text).toContain('Sea ice extent declined');
    expect(REPORT_TEXT.slice(best.start, best.end)).toBe(best.text);
    expect(best.start).toBe(REPORT_TEXT.indexOf('RESULTS'));
    expect(best.pageApprox).toBe(Math.floor((best.start * 4) / 400) + 1);
    expect(best.pageApprox).toBe(3);
    expect(best.page).toBeUndefined();
    expect(best.heading).toBe('RESULTS');
    expect(out.message).toContain('approximate');
    // No page breaks and no PDF here: pages cut by character position would be no pages.
    await expect(call({ item_key: K.report, page_range: '2' })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'page_range',
    });
    // No PDF here: the outline falls back to heading-like lines.
    const outline = await call({ item_key: K.report, outline: true });
    expect(outline.outline).toEqual([
      { title: 'INTRODUCTION', page: null, level: 1 },
      { title: 'RESULTS', page: null, level: 1 },
    ]);
    expect(outline.message).toContain('not on this computer');
  });

  it('an index with form feeds gives exact pages', async () => {
    const out = await call({ item_key: K.paged, q: 'krill' });
    expect(out).toMatchObject({ source: 'ftCache', pageLocator: 'exact' });
    expect(out.passages![0]).toMatchObject({
      page: 2,
      heading: '2 Beta',
      start: PAGED_TEXT.indexOf('2 Beta'),
    });
    const pages = await call({ item_key: K.paged, page_range: '3' });
    expect(pages.pages![0]).toMatchObject({ page: 3, text: '3 Gamma\nthird page' });
  });

  it('an incomplete index with the PDF here: the PDF answers, complete', async () => {
    const out = await call({ item_key: K.book, q: 'page 5' });
    expect(out).toMatchObject({ source: 'pdf', complete: true, attachment: { key: K.bookPdf } });
    expect(out.passages![0]!.page).toBe(5);
  });

  it('an incomplete index without the file: the index answers, complete: false', async () => {
    const out = await call({ item_key: K.partial });
    expect(out).toMatchObject({ source: 'ftCache', complete: false, indexedPages: 1, totalPages: 3 });
    expect(out.text).toBe('Only the first page was indexed, about penguins.');
    expect(out.message).toContain('1 of 3 pages');
  });

  it('an EPUB: unzipped, headings from h1–h6, no page locator', async () => {
    const out = await call({ item_key: K.novel, q: 'harbour tide' });
    expect(out).toMatchObject({ source: 'epub', pageLocator: 'none', complete: true });
    const best = out.passages![0]!;
    expect(best.heading).toBe('The Harbour');
    expect(best.text).toContain('Boats rocked in the harbour as the tide turned.');
    expect(best.page).toBeUndefined();
    expect(best.pageApprox).toBeUndefined();
    const start = await call({ item_key: K.novel });
    expect(start.text).toBe(
      'Chapter One\nIt was a dark and stormy night.\nThe lighthouse keeper & his cat waited.\n\nChapter Two\nMorning came.\nThe Harbour\nBoats rocked in the harbour as the tide turned.',
    );
    const outline = await call({ item_key: K.novel, outline: true });
    expect(outline.outline).toEqual([
      { title: 'Chapter One', page: null, level: 1 },
      { title: 'Chapter Two', page: null, level: 1 },
      { title: 'The Harbour', page: null, level: 2 },
    ]);
    await expect(call({ item_key: K.novel, page_range: '1' })).rejects.toMatchObject({
      code: 'validation_error',
    });
  });

  it('not_found: no attachment with text, an unknown key, a malformed key; one mode at a time', async () => {
    await expect(call({ item_key: K.bare })).rejects.toMatchObject({ code: 'not_found' });
    await expect(call({ item_key: 'ZZZZ2345' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(call({ item_key: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(call({ item_key: K.paper, q: 'x', outline: true })).rejects.toMatchObject({
      code: 'validation_error',
    });
  });
});

describe('zot pdf', () => {
  it('searches the stored PDF offline (ZOTERO_DATA_DIR), exit 4 for an item without text', async () => {
    const r = await runZot(['pdf', K.paper, '--q', 'Thwaites', '--max-chars', '5000'], { env: world.env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const data = (r.json() as { data: Out }).data;
    expect(data.source).toBe('pdf');
    expect(data.passages![0]).toMatchObject({ page: 4, heading: '4 Section 4' });
    const pages = await runZot(['pdf', K.paper, '--page-range', '2-3'], { env: world.env() });
    expect((pages.json() as { data: Out }).data.pages!.map((p) => p.page)).toEqual([2, 3]);
    const missing = await runZot(['pdf', K.bare], { env: world.env() });
    expect(missing.code).toBe(4);
    expect((missing.json() as { error: { code: string } }).error.code).toBe('not_found');
  });
});
