/**
 * Finding a quoted passage in a PDF's text layer and computing where Zotero's reader draws a
 * highlight of it (annotations.md, "PDF position" and "PDF sortIndex"): the page index, one
 * rect per line in PDF points (origin bottom-left), and the sort index `PPPPP|OOOOOO|TTTTT`.
 *
 * Stock pdfjs-dist gives text items (a run of text with its start, width and font size), not
 * characters: each character's advance is its glyph width (from the page's operator list, per
 * font) scaled to the item's width, so character boxes are exact for simple text and close for
 * text with character or word spacing. The match ignores whitespace and hyphens on both sides,
 * so a quote matches across line breaks and words split by hyphenation.
 */
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ZoteusError } from '../errors.js';

type PdfJs = typeof PdfJsModule;

export type Rect = [number, number, number, number];

export interface Glyph {
  c: string;
  rect: Rect;
  /** The text item (line run) it belongs to. */
  line: number;
}

export interface PageText {
  pageIndex: number;
  pageLabel: string;
  /** The page's `view` height, in points. */
  height: number;
  glyphs: Glyph[];
}

export interface Match {
  pageIndex: number;
  pageLabel: string;
  rects: Rect[];
  sortIndex: string;
  /** The matched text as it reads on the page. */
  text: string;
  /** Some text around the match, for telling candidates apart. */
  context: string;
}

let pdfjs: Promise<PdfJs> | undefined;

/** Characters the match ignores: whitespace, and hyphens (so hyphenated line breaks match). */
const IGNORED = /[\s\-\u00ad\u2010\u2011]/u;

const round = (n: number): number => Math.round(n * 1000) / 1000;

/** Each page's characters with their boxes, in the order of the text layer. */
export async function pdfPages(data: Uint8Array): Promise<PageText[]> {
  const lib = await (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));
  let doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
  try {
    doc = await lib.getDocument({
      data,
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
    }).promise;
  } catch (error) {
    throw new ZoteusError('validation_error', `The PDF cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const labels = await doc.getPageLabels().catch(() => null);
    const pages: PageText[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      // Glyph widths per font, from the text-showing operators.
      const widths = new Map<string, Map<string, number>>();
      const ops = await page.getOperatorList();
      let font = '';
      for (let k = 0; k < ops.fnArray.length; k++) {
        const fn = ops.fnArray[k];
        const args = ops.argsArray[k] as unknown[];
        if (fn === lib.OPS.setFont) font = String(args[0]);
        else if (fn === lib.OPS.showText || fn === lib.OPS.showSpacedText) {
          const map = widths.get(font) ?? new Map<string, number>();
          widths.set(font, map);
          for (const g of args[0] as unknown[]) {
            if (g && typeof g === 'object' && 'unicode' in g && 'width' in g) {
              const glyph = g as { unicode: string; width: number };
              if (!map.has(glyph.unicode)) map.set(glyph.unicode, glyph.width);
            }
          }
        }
      }
      const content = await page.getTextContent();
      const glyphs: Glyph[] = [];
      let line = 0;
      for (const item of content.items) {
        if (!('str' in item) || item.str === '') continue;
        const [a, b, , , x, y] = item.transform as number[];
        const size = Math.hypot(a ?? 0, b ?? 0) || item.height;
        const map = widths.get(item.fontName);
        const chars = [...item.str];
        const w = chars.map((c) => map?.get(c) ?? 500);
        const total = w.reduce((s, v) => s + v, 0) || 1;
        let at = 0;
        for (let i = 0; i < chars.length; i++) {
          const x1 = (x ?? 0) + (at / total) * item.width;
          at += w[i]!;
          const x2 = (x ?? 0) + (at / total) * item.width;
          // The glyph box: from the descender (a fifth of the size below the baseline) to the ascender.
          glyphs.push({ c: chars[i]!, rect: [x1, (y ?? 0) - 0.2 * size, x2, (y ?? 0) + 0.8 * size], line });
        }
        line++;
      }
      const [, vy1 = 0, , vy2 = 792] = page.view;
      pages.push({ pageIndex: n - 1, pageLabel: labels?.[n - 1] || String(n), height: vy2 - vy1, glyphs });
      page.cleanup();
    }
    return pages;
  } finally {
    await doc.destroy();
  }
}

/** The quote's characters as the match compares them. */
export function matchKey(text: string): string {
  return [...text.normalize('NFKC')].filter((c) => !IGNORED.test(c)).join('');
}

function pad(n: number, digits: number): string {
  return String(Math.max(0, Math.floor(n)))
    .slice(0, digits)
    .padStart(digits, '0');
}

/** Zotero's sort index of a PDF annotation: page, offset of the top line's first character, distance from the top. */
export function sortIndexOf(pageIndex: number, offset: number, pageHeight: number, topY2: number): string {
  return `${pad(pageIndex, 5)}|${pad(offset, 6)}|${pad(pageHeight - topY2, 5)}`;
}

/** Every place the quote occurs, one page at a time (a passage across a page break is not found). */
export function findQuote(pages: readonly PageText[], quote: string): Match[] {
  const key = matchKey(quote);
  if (key === '') return [];
  const matches: Match[] = [];
  for (const page of pages) {
    const kept: number[] = [];
    let hay = '';
    page.glyphs.forEach((g, i) => {
      const k = matchKey(g.c);
      for (const ch of k) {
        hay += ch;
        kept.push(i);
      }
    });
    for (let at = hay.indexOf(key); at !== -1; at = hay.indexOf(key, at + 1)) {
      const first = kept[at]!;
      const last = kept[at + key.length - 1]!;
      const span = page.glyphs.slice(first, last + 1);
      const rects: Rect[] = [];
      let topGlyph = first;
      let topY2 = -Infinity;
      let current: { line: number; rect: Rect } | undefined;
      span.forEach((g, j) => {
        if (IGNORED.test(g.c) && /\s/u.test(g.c)) return;
        if (!current || current.line !== g.line) {
          current = { line: g.line, rect: [...g.rect] };
          rects.push(current.rect);
          if (g.rect[3] > topY2) {
            topY2 = g.rect[3];
            topGlyph = first + j;
          }
        } else {
          const r = current.rect;
          r[0] = Math.min(r[0], g.rect[0]);
          r[1] = Math.min(r[1], g.rect[1]);
          r[2] = Math.max(r[2], g.rect[2]);
          r[3] = Math.max(r[3], g.rect[3]);
        }
      });
      const lineText = (from: number, to: number): string => {
        let s = '';
        for (let i = from; i < to; i++) {
          const g = page.glyphs[i]!;
          if (i > from && page.glyphs[i - 1]!.line !== g.line) s += ' ';
          s += g.c;
        }
        return s.replace(/\s+/gu, ' ');
      };
      matches.push({
        pageIndex: page.pageIndex,
        pageLabel: page.pageLabel,
        rects: rects.map((r) => r.map(round) as Rect),
        sortIndex: sortIndexOf(page.pageIndex, topGlyph, page.height, topY2),
        text: lineText(first, last + 1).trim(),
        context:
          `${lineText(Math.max(0, first - 30), first)}[${lineText(first, last + 1)}]${lineText(last + 1, Math.min(page.glyphs.length, last + 31))}`.trim(),
      });
    }
  }
  return matches;
}
