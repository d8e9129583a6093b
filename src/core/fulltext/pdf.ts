/**
 * PDF text and outline with pdfjs-dist (legacy build, loaded on first use so the CLI starts
 * fast): each page's text items joined (a line break where pdfjs ends a line), pages joined by
 * a blank line, with the offset where each page starts: exact page locators.
 */
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ZoteusError } from '../errors.js';
import type { FullDocument } from './document.js';

export interface OutlineEntry {
  title: string;
  /** 1-based page the entry points at; null when its destination cannot be resolved. */
  page: number | null;
  level: number;
}

type PdfJs = typeof PdfJsModule;
type PdfDoc = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;

let pdfjs: Promise<PdfJs> | undefined;

async function open(data: Uint8Array): Promise<PdfDoc> {
  const lib = await (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));
  try {
    return await lib.getDocument({
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
}

/** The text of every page (pages joined by a blank line) and where each starts. */
export async function extractPdf(
  data: Uint8Array,
  options: { outline?: boolean } = {},
): Promise<FullDocument & { outline?: OutlineEntry[] }> {
  const doc = await open(data);
  try {
    let text = '';
    const pageStarts: number[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      if (n > 1) text += '\n\n';
      pageStarts.push(text.length);
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let pageText = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        pageText += item.str;
        if (item.hasEOL) pageText += '\n';
      }
      text += pageText.replace(/[ \t]+\n/g, '\n').trimEnd();
      page.cleanup();
    }
    const result: FullDocument & { outline?: OutlineEntry[] } = {
      text,
      pageStarts,
      totalPages: doc.numPages,
    };
    if (options.outline) {
      // A broken outline must not cost the text: the document then has none.
      result.outline = await outlineOf(doc).catch(() => []);
    }
    return result;
  } finally {
    await doc.destroy();
  }
}

interface RawOutline {
  title: string;
  dest: string | unknown[] | null;
  items: RawOutline[];
}

async function outlineOf(doc: PdfDoc): Promise<OutlineEntry[]> {
  const raw = ((await doc.getOutline()) ?? []) as unknown as RawOutline[];
  const out: OutlineEntry[] = [];
  const walk = async (entries: RawOutline[], level: number) => {
    for (const e of entries) {
      out.push({ title: e.title.trim(), page: await destPage(doc, e.dest), level });
      if (e.items.length > 0) await walk(e.items, level + 1);
    }
  };
  await walk(raw, 1);
  return out;
}

async function destPage(doc: PdfDoc, dest: RawOutline['dest']): Promise<number | null> {
  try {
    const explicit = typeof dest === 'string' ? await doc.getDestination(dest) : dest;
    const ref = explicit?.[0];
    if (typeof ref === 'number') return ref + 1;
    if (ref && typeof ref === 'object')
      return (await doc.getPageIndex(ref as { num: number; gen: number })) + 1;
  } catch {
    // an unresolvable destination: no page
  }
  return null;
}
