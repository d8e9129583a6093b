/**
 * Fixture documents with known text on known pages, and a desktop data directory holding them:
 * made by the project's own code (no external files).
 */
export { makePdf, type PdfOutlineEntry, type PdfSpec } from './pdf.js';
export { crc32, makeEpub, makeZip, type EpubChapter, type EpubSpec } from './epub.js';

/** A paper of `pages` pages: page n starts with a numbered section heading and carries known sentences. */
export function paperPages(pages: number, extra: Record<number, string[]> = {}): string[][] {
  return Array.from({ length: pages }, (_, i) => {
    const n = i + 1;
    return [
      `${n} Section ${n}`,
      `This is page ${n} of the fixture paper, about glaciers and ocean warming.`,
      `Filler sentence number ${n} keeps the page from being empty.`,
      ...(extra[n] ?? []),
    ];
  });
}
