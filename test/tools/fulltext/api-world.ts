/**
 * A desktop whose items have no `.zotero-ft-cache`, and a test server (Web API, and the local
 * API on request) holding their full text: the API sources of zotero_get_fulltext.
 */
import { startDesktopWorld, USER_ID, type DesktopWorld } from '../../core/library/router-world.js';
import { makePdf, paperPages } from '../../support/documents/index.js';
import type { BuildSpec } from '../../support/zotero-sqlite/index.js';
import { PAGED_TEXT, REPORT_TEXT, storageFile } from './world.js';

export const A = {
  /** Indexed completely, no page breaks: pageApprox. */
  approx: 'APRX2345',
  approxPdf: 'APDF2345',
  /** Indexed with form feeds: exact pages. */
  paged: 'PAGD2345',
  pagedPdf: 'PGPF2345',
  /** Indexed for 1 of 3 pages, no file anywhere. */
  partial: 'PRTL2345',
  partialPdf: 'PRPF2345',
  /** Its PDF has no indexed text (404), but is on the desktop; its snapshot is indexed. */
  fallback: 'FLBK2345',
  fallbackPdf: 'FBPF2345',
  fallbackHtml: 'FBHT2345',
} as const;

export const PARTIAL_TEXT = 'Only the first page was indexed, about krill swarms.';
export const SNAPSHOT_TEXT = 'The web snapshot mentions polynyas once.';
/** The fallback PDF on the desktop: 3 pages, polynyas on page 2. */
export const FALLBACK_PAGES = paperPages(3, { 2: ['Coastal polynyas form where katabatic winds blow.'] });

const pdf = (key: string, filename: string) => ({
  key,
  title: 'Full Text PDF',
  contentType: 'application/pdf',
  filename,
  linkMode: 'imported_file' as const,
});

const SPEC: BuildSpec = {
  user: { userID: USER_ID, username: 'sample-user' },
  libraries: [
    {
      type: 'user',
      items: [
        {
          key: A.approx,
          itemType: 'report',
          fields: { title: 'Sea ice report' },
          attachments: [pdf(A.approxPdf, 'report.pdf')],
        },
        {
          key: A.paged,
          itemType: 'journalArticle',
          fields: { title: 'Paged' },
          attachments: [pdf(A.pagedPdf, 'paged.pdf')],
        },
        {
          key: A.partial,
          itemType: 'book',
          fields: { title: 'Partial' },
          attachments: [pdf(A.partialPdf, 'partial.pdf')],
        },
        {
          key: A.fallback,
          itemType: 'journalArticle',
          fields: { title: 'Fallback' },
          attachments: [
            pdf(A.fallbackPdf, 'fallback.pdf'),
            {
              key: A.fallbackHtml,
              title: 'Snapshot',
              contentType: 'text/html',
              filename: 'snap.html',
              linkMode: 'imported_url',
            },
          ],
        },
      ],
    },
  ],
};

export async function startApiWorld(): Promise<DesktopWorld> {
  const world = await startDesktopWorld({ spec: SPEC, localApi: true });
  const lib = world.server.library(`users/${USER_ID}`);
  lib.setFulltext(A.approxPdf, { content: REPORT_TEXT, indexedPages: 4, totalPages: 4 });
  lib.setFulltext(A.pagedPdf, { content: PAGED_TEXT, indexedPages: 3, totalPages: 3 });
  lib.setFulltext(A.partialPdf, { content: PARTIAL_TEXT, indexedPages: 1, totalPages: 3 });
  lib.setFulltext(A.fallbackHtml, {
    content: SNAPSHOT_TEXT,
    indexedChars: SNAPSHOT_TEXT.length,
    totalChars: SNAPSHOT_TEXT.length,
  });
  storageFile(world.dataDir, A.fallbackPdf, 'fallback.pdf', makePdf({ pages: FALLBACK_PAGES }));
  return world;
}
