/**
 * A desktop data directory for the full-text tests: zotero.sqlite with items whose attachments
 * are PDFs, an EPUB and `.zotero-ft-cache` files, and those files in `storage/<attachmentKey>/`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDesktopWorld, type DesktopWorld } from '../../core/library/router-world.js';
import { makeEpub, makePdf, paperPages } from '../../support/documents/index.js';
import type { BuildSpec } from '../../support/zotero-sqlite/index.js';

export const K = {
  /** A paper whose PDF Zotero has not indexed: the text comes from the file. */
  paper: 'PAPR2345',
  paperPdf: 'PPDF2345',
  /** A report indexed completely (cache without page breaks), no file on this computer. */
  report: 'REPT2345',
  reportPdf: 'RPDF2345',
  /** A book indexed for 2 of 5 pages, its PDF here: the file answers. */
  book: 'BKQX2345',
  bookPdf: 'BPDF2345',
  /** Indexed for 1 of 3 pages, no file: the incomplete index answers. */
  partial: 'PART2345',
  partialPdf: 'PTPD2345',
  /** An EPUB, not indexed. */
  novel: 'NVLX2345',
  novelEpub: 'NEPB2345',
  /** An index with form feeds (pdftotext's page breaks). */
  paged: 'PGED2345',
  pagedPdf: 'PGPD2345',
  /** No attachment at all. */
  bare: 'BARE2345',
} as const;

/** The paper: 6 pages, an outline, and a known sentence on page 4. */
export const PAPER_PAGES = paperPages(6, {
  4: ['The calving front of Thwaites Glacier retreated by 14 kilometres.'],
  5: ['Café résumé naïve: accents are folded when searching.'],
});
export const PAPER_OUTLINE = [
  { title: 'Introduction', page: 1, children: [{ title: 'Background', page: 2 }] },
  { title: 'Results', page: 4 },
  { title: 'Conclusions', page: 6 },
];

/** The report's cache: 4 pages of 100 characters each, each ending a line (no page breaks). */
export const REPORT_TEXT = [
  'INTRODUCTION\nThe report opens here and says nothing about sea ice at all, just padding text.....',
  'Methods used: radar altimetry over the Amundsen Sea, with filler text to reach one hundred chars.',
  'RESULTS\nSea ice extent declined sharply in the Amundsen Sea sector; more padding text here....',
  'Closing remarks with more padding so that the fourth page is exactly one hundred characters.....',
]
  .map((p) => `${p.padEnd(99, '.').slice(0, 99)}\n`)
  .join('');

export const NOVEL = {
  title: 'The Fixture Novel',
  chapters: [
    {
      title: 'Chapter One',
      paragraphs: ['It was a dark and stormy night.', 'The lighthouse keeper & his cat waited.'],
    },
    {
      title: 'Chapter Two',
      paragraphs: ['Morning came.'],
      sections: [{ heading: 'The Harbour', paragraphs: ['Boats rocked in the harbour as the tide turned.'] }],
    },
  ],
};

export const PAGED_TEXT =
  '1 Alpha\nfirst page words\f2 Beta\nsecond page mentions krill\f3 Gamma\nthird page\f';

function pdfAttachment(key: string, filename: string) {
  return {
    key,
    title: 'Full Text PDF',
    contentType: 'application/pdf',
    filename,
    linkMode: 'imported_file' as const,
  };
}

export const SPEC: BuildSpec = {
  user: { userID: 8675309, username: 'sample-user' },
  libraries: [
    {
      type: 'user',
      items: [
        {
          key: K.paper,
          itemType: 'journalArticle',
          fields: { title: 'Glaciers' },
          attachments: [pdfAttachment(K.paperPdf, 'paper.pdf')],
        },
        {
          key: K.report,
          itemType: 'report',
          fields: { title: 'Sea ice report' },
          attachments: [
            {
              ...pdfAttachment(K.reportPdf, 'report.pdf'),
              fulltext: { content: REPORT_TEXT, indexedPages: 4, totalPages: 4 },
            },
          ],
        },
        {
          key: K.book,
          itemType: 'book',
          fields: { title: 'A book' },
          attachments: [
            { key: 'BNTE2345', title: 'Snapshot', contentType: 'text/html', filename: 'snap.html' },
            {
              ...pdfAttachment(K.bookPdf, 'book.pdf'),
              fulltext: { content: '1 Section 1\nonly the first pages', indexedPages: 2, totalPages: 5 },
            },
          ],
        },
        {
          key: K.partial,
          itemType: 'book',
          fields: { title: 'Partial' },
          attachments: [
            {
              ...pdfAttachment(K.partialPdf, 'partial.pdf'),
              fulltext: {
                content: 'Only the first page was indexed, about penguins.',
                indexedPages: 1,
                totalPages: 3,
              },
            },
          ],
        },
        {
          key: K.novel,
          itemType: 'book',
          fields: { title: 'Novel' },
          attachments: [
            { key: K.novelEpub, title: 'EPUB', contentType: 'application/epub+zip', filename: 'novel.epub' },
          ],
        },
        {
          key: K.paged,
          itemType: 'journalArticle',
          fields: { title: 'Paged' },
          attachments: [
            {
              ...pdfAttachment(K.pagedPdf, 'paged.pdf'),
              fulltext: { content: PAGED_TEXT, indexedPages: 3, totalPages: 3 },
            },
          ],
        },
        { key: K.bare, itemType: 'book', fields: { title: 'No files' } },
      ],
    },
  ],
};

export function storageFile(dataDir: string, key: string, name: string, data: Buffer | string): string {
  const dir = join(dataDir, 'storage', key);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, data);
  return path;
}

export async function startFulltextWorld(): Promise<DesktopWorld> {
  const world = await startDesktopWorld({ spec: SPEC });
  storageFile(
    world.dataDir,
    K.paperPdf,
    'paper.pdf',
    makePdf({ pages: PAPER_PAGES, outline: PAPER_OUTLINE }),
  );
  storageFile(world.dataDir, K.bookPdf, 'book.pdf', makePdf({ pages: paperPages(5) }));
  storageFile(world.dataDir, K.novelEpub, 'novel.epub', makeEpub({ ...NOVEL, deflate: true }));
  storageFile(
    world.dataDir,
    'BNTE2345',
    'snap.html',
    '<html><body><h1>Snapshot</h1><p>web page</p></body></html>',
  );
  return world;
}
