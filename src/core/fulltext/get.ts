/**
 * `zotero_get_fulltext`: a document's text from the best source available (sources.ts says
 * which, in what order), cut for one mode: the passages matching a query, a page range, the
 * outline, or the start of the text.
 */
import { ZoteusError } from '../errors.js';
import { byteEnd, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, assertKeysWellFormed, itemNotFound, type Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import { cutAt, headingsOf, locate, searchPassages, type Passage } from './document.js';
import type { OutlineEntry } from './pdf.js';
import { resolveDocument, str, type FulltextSource, type Mode } from './sources.js';
import { paramRef, toolRef } from '../call/refs.js';

export { fromIndexText, type FulltextSource, type Mode } from './sources.js';

export interface GetFulltextInput extends LibraryArgs {
  item_key: string;
  q?: string | undefined;
  page_range?: string | undefined;
  outline?: boolean | undefined;
  max_chars?: number | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

export interface PageText {
  page: number;
  start: number;
  end: number;
  text: string;
}

export interface GetFulltextOutput extends Answered {
  itemKey: string;
  attachment: { key: string; title: string; contentType: string | null; filename: string | null };
  source: FulltextSource;
  sourceDetail: string;
  complete: boolean;
  indexedPages: number | null;
  totalPages: number | null;
  totalChars: number;
  pageLocator: 'exact' | 'approximate' | 'none';
  mode: Mode;
  text?: string;
  start?: number;
  end?: number;
  truncated?: boolean;
  passages?: Passage[];
  matched?: number;
  pages?: PageText[];
  outline?: OutlineEntry[];
  message?: string;
}

export const DEFAULT_MAX_CHARS = 10_000;
export const DEFAULT_PASSAGES = 5;

function parseRange(range: string): { from: number; to: number } {
  const m = /^\s*(\d+)\s*(?:[-–]\s*(\d+)?\s*)?$/.exec(range);
  const from = m ? Number(m[1]) : NaN;
  const to = m
    ? m[2] !== undefined
      ? Number(m[2])
      : range.includes('-') || range.includes('–')
        ? Infinity
        : from
    : NaN;
  const example = `e.g. ${paramRef('page_range', '7')} or ${paramRef('page_range', '3-5')}`;
  if (m && from >= 1 && to < from) {
    throw new ZoteusError(
      'validation_error',
      `${paramRef('page_range')} "${range}" ends before it starts: give the first page, then the last ("${to}-${from}").`,
      { field: 'page_range', hint: `A page, or the first and the last page of a range: ${example}.` },
    );
  }
  if (!m || from < 1) {
    throw new ZoteusError(
      'validation_error',
      `${paramRef('page_range')} must be a page or a range of pages, counted from 1; got "${range}".`,
      { field: 'page_range', hint: `A page, or the first and the last page of a range: ${example}.` },
    );
  }
  return { from, to };
}

function modeOf(input: GetFulltextInput): Mode {
  const modes: Mode[] = [];
  if (input.q !== undefined && input.q.trim() !== '') modes.push('search');
  if (input.page_range !== undefined) modes.push('pages');
  if (input.outline) modes.push('outline');
  if (modes.length > 1) {
    throw new ZoteusError(
      'validation_error',
      `Give at most one of ${paramRef('q')}, ${paramRef('page_range')} and ${paramRef('outline')}: one mode per call.`,
      {
        field: modes.includes('outline') ? 'outline' : 'page_range',
        hint: `Ask one at a time: ${paramRef('q')} for the passages that match, ${paramRef('page_range')} for pages, ${paramRef('outline', 'true')} for the table of contents.`,
      },
    );
  }
  return modes[0] ?? 'start';
}

export async function getFulltext(deps: Deps, input: GetFulltextInput): Promise<GetFulltextOutput> {
  assertKeysWellFormed(deps, [input.item_key]);
  const mode = modeOf(input);
  const range = mode === 'pages' ? parseRange(input.page_range!) : undefined;
  const maxChars = input.max_chars ?? DEFAULT_MAX_CHARS;
  const {
    route,
    item,
    attachment: att,
    loaded,
  } = await resolveDocument(
    deps,
    { itemKey: input.item_key, library_id: input.library_id, library_type: input.library_type },
    mode,
  );
  if (!item) throw itemNotFound(deps, [input.item_key], route.library);
  if (!att || !loaded) {
    throw new ZoteusError(
      'not_found',
      `Item '${input.item_key}' has no attachment with text${route.backend === 'web' ? ' indexed by Zotero' : ' (no Zotero index and no PDF, EPUB, HTML or text file on this computer)'}.`,
      {
        field: 'item_key',
        hint: `${toolRef('zotero_get_item', { item_key: input.item_key })} lists its attachments.`,
      },
    );
  }

  const doc = loaded.doc;
  const exact = !!doc.pageStarts && doc.pageStarts.length > 0;
  const out: GetFulltextOutput = {
    itemKey: item.key,
    attachment: {
      key: att.key,
      title: str(att.data.title) ?? '',
      contentType: str(att.data.contentType),
      filename: str(att.data.filename) ?? str(att.data.path)?.replace(/^storage:/, '') ?? null,
    },
    source: loaded.source,
    sourceDetail: loaded.detail,
    complete: loaded.complete,
    indexedPages: loaded.indexedPages,
    totalPages: loaded.totalPages,
    totalChars: doc.text.length,
    pageLocator: exact ? 'exact' : doc.totalPages ? 'approximate' : 'none',
    mode,
    ...answered(route),
  };
  const notes: string[] = [];
  if (!loaded.complete) {
    notes.push(
      `Zotero indexed ${loaded.indexedPages ?? '?'} of ${loaded.totalPages ?? '?'} pages and the file is not on this computer: the text is incomplete.`,
    );
  }
  if (out.pageLocator === 'approximate') {
    notes.push(
      'Page numbers are approximate (pageApprox: character position × pages / characters), as the indexed text has no page breaks.',
    );
  }

  if (mode === 'search') {
    const limit = input.limit ?? DEFAULT_PASSAGES;
    const { passages, matched } = searchPassages(doc, input.q!, limit);
    // max_chars of text, and never more than the answer's size bound in bytes.
    let budget = maxChars;
    let bytes = ROWS_BUDGET;
    out.passages = [];
    for (const p of passages) {
      if (budget <= 0 || bytes <= 0) break;
      const size = Buffer.byteLength(p.text, 'utf8');
      if (p.text.length > budget || size > bytes) {
        const end = byteEnd(doc.text, p.start, cutAt(doc.text, p.start, budget), bytes);
        out.passages.push({ ...p, end, text: doc.text.slice(p.start, end) });
        budget = 0;
      } else {
        out.passages.push(p);
        budget -= p.text.length;
        bytes -= size;
      }
    }
    out.matched = matched;
    if (matched === 0) notes.push('No passage matches the query words.');
  } else if (mode === 'pages') {
    const { from, to } = range!;
    const pageCount = exact ? doc.pageStarts!.length : (doc.totalPages ?? 0);
    if (pageCount === 0) {
      throw new ZoteusError(
        'validation_error',
        `This text has no pages (an EPUB, HTML or text file): read it without ${paramRef('page_range')}, or search it with ${paramRef('q')}.`,
        {
          field: 'page_range',
        },
      );
    }
    if (!exact) {
      // Pages cut by character position are no pages: a short index gives a few letters each.
      throw new ZoteusError(
        'validation_error',
        `The text of this document has no page breaks (Zotero’s index of it has none, and the file itself is not on this computer), so ${paramRef('page_range')} cannot pick its pages.`,
        {
          field: 'page_range',
          hint: `Search it with ${paramRef('q')} (each passage gives its estimated page, pageApprox), or read it from the start without ${paramRef('page_range')} (${doc.text.length.toLocaleString('en-US')} characters).`,
        },
      );
    }
    if (from > pageCount) {
      throw new ZoteusError(
        'validation_error',
        `${paramRef('page_range')} starts at page ${from}, but the document has ${pageCount} ${pageCount === 1 ? 'page' : 'pages'}.`,
        {
          field: 'page_range',
          hint: `Its pages are 1 to ${pageCount}: e.g. ${paramRef('page_range', pageCount === 1 ? '1' : `1-${pageCount}`)}.`,
        },
      );
    }
    const last = Math.min(to, pageCount);
    const startOf = (p: number): number => doc.pageStarts![p - 1]!;
    const endOf = (p: number): number => (p >= pageCount ? doc.text.length : startOf(p + 1));
    out.pages = [];
    let budget = maxChars;
    let bytes = ROWS_BUDGET;
    let bound = false;
    for (let p = from; p <= last && budget > 0 && bytes > 0; p++) {
      const s = startOf(p);
      let e = endOf(p);
      while (e > s && /\s/.test(doc.text[e - 1]!)) e--;
      if (e - s > budget) {
        e = cutAt(doc.text, s, budget);
        out.truncated = true;
      }
      const fit = byteEnd(doc.text, s, e, bytes);
      if (fit < e) {
        e = fit;
        out.truncated = true;
        bound = true;
      }
      out.pages.push({ page: p, start: s, end: e, text: doc.text.slice(s, e) });
      budget -= e - s;
      bytes -= Buffer.byteLength(doc.text.slice(s, e), 'utf8');
      if (bound) break;
    }
    if (out.pages.length < last - from + 1) out.truncated = true;
    if (out.truncated)
      notes.push(
        bound
          ? `Cut at the answer’s size bound (about ${ROWS_BUDGET / 1000} KB of text): ask for fewer pages.`
          : `Cut at ${paramRef('max_chars')} (${maxChars}): ask for fewer pages or a larger ${paramRef('max_chars')}.`,
      );
  } else if (mode === 'outline') {
    if (loaded.outline) out.outline = loaded.outline;
    else {
      out.outline = headingsOf(doc).map((h) => ({
        title: h.text,
        page: locate(doc, h.offset).page ?? null,
        level: h.level ?? 1,
      }));
      notes.push(
        'The PDF is not on this computer: the outline lists heading-like lines of the indexed text instead of the PDF’s bookmarks.',
      );
    }
    if (out.outline.length === 0) notes.push('The document has no outline (table of contents).');
  } else {
    const length = doc.text.length;
    if ((input.offset ?? 0) > length) {
      throw new ZoteusError(
        'validation_error',
        `${paramRef('offset', String(input.offset))} is past the end of the text: it is ${length.toLocaleString('en-US')} ${length === 1 ? 'character' : 'characters'} long.`,
        {
          field: 'offset',
          hint: `Read from an offset of 0 to ${length}, or search the text with ${paramRef('q')}.`,
        },
      );
    }
    const offset = input.offset ?? 0;
    // max_chars, and never more than the answer's size bound in bytes.
    const end = byteEnd(doc.text, offset, cutAt(doc.text, offset, maxChars), ROWS_BUDGET);
    out.text = doc.text.slice(offset, end);
    out.start = offset;
    out.end = end;
    out.truncated = end < doc.text.length;
    if (out.truncated) {
      notes.push(
        `Characters ${offset}–${end} of ${doc.text.length}: pass ${paramRef('offset', String(end))} for more, or search with ${paramRef('q')}.`,
      );
    } else if (offset === length && offset > 0) {
      notes.push(
        `Nothing after ${paramRef('offset', String(offset))}: the text ends there (${length.toLocaleString('en-US')} characters).`,
      );
    }
  }
  if (notes.length > 0) out.message = notes.join(' ');
  return out;
}
