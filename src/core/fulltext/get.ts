/**
 * `zotero_get_fulltext`: a document's text from the best source available, in this order:
 * 1. the desktop's `.zotero-ft-cache` (`storage/<attachmentKey>/`, with `fulltextItems` saying how
 *    much Zotero indexed), when the desktop serves the library and the index is complete;
 * 2. the local API's or the Web API's `items/{key}/fulltext`, when one of them serves it;
 * 3. the stored file itself (`storage/<attachmentKey>/<filename>`, or a linked file): PDF with
 *    pdfjs-dist, EPUB unzipped, HTML and plain text read;
 * 4. an incomplete index (Zotero indexed only some pages) when the file is not on this computer.
 * Page ranges prefer exact pages (the file, or a cache with form feeds); the outline needs the PDF.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ZoteusError } from '../errors.js';
import {
  answered,
  assertKeysWellFormed,
  itemNotFound,
  openReader,
  type Answered,
} from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { cutAt, headingsOf, locate, searchPassages, type FullDocument, type Passage } from './document.js';
import type { OutlineEntry } from './pdf.js';

export interface GetFulltextInput extends LibraryArgs {
  item_key: string;
  q?: string | undefined;
  page_range?: string | undefined;
  outline?: boolean | undefined;
  max_chars?: number | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

export type FulltextSource = 'ftCache' | 'localApi' | 'web' | 'pdf' | 'epub' | 'file';
export type Mode = 'start' | 'search' | 'pages' | 'outline';

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

/** A loaded text and what is known of it. */
interface Loaded {
  doc: FullDocument;
  source: FulltextSource;
  detail: string;
  complete: boolean;
  indexedPages: number | null;
  totalPages: number | null;
  outline?: OutlineEntry[];
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const RANK: Record<string, number> = {
  'application/pdf': 0,
  'application/epub+zip': 1,
  'text/html': 2,
  'application/xhtml+xml': 2,
  'text/plain': 3,
};

/** The attachments to read, best first: the item itself if it is one, else PDF, EPUB, HTML, text, others. */
function candidates(item: WebApiItem, children: WebApiItem[]): WebApiItem[] {
  const isFile = (i: WebApiItem) => i.data.itemType === 'attachment' && str(i.data.linkMode) !== 'linked_url';
  if (item.data.itemType === 'attachment') return isFile(item) ? [item] : [];
  const rank = (i: WebApiItem) => RANK[(str(i.data.contentType) ?? '').toLowerCase()] ?? 9;
  return children
    .filter(isFile)
    .map((i, n) => ({ i, n }))
    .sort((a, b) => rank(a.i) - rank(b.i) || a.n - b.n)
    .map((e) => e.i);
}

/** Text with form feeds (pdftotext's page ends) as exact pages; the form feeds become line breaks. */
export function fromIndexText(content: string, pages: number | null): FullDocument {
  if (content.includes('\f')) {
    const pageStarts = [0];
    for (let i = content.indexOf('\f'); i >= 0; i = content.indexOf('\f', i + 1)) {
      if (i + 1 < content.length) pageStarts.push(i + 1);
    }
    return { text: content.replace(/\f/g, '\n'), pageStarts, totalPages: pageStarts.length };
  }
  return { text: content, totalPages: pages };
}

interface Context {
  deps: Deps;
  backend: Answered['backend'];
  library: string;
  args: LibraryArgs;
  sqlite?: {
    info(key: string): Promise<
      | {
          indexedPages: number | null;
          totalPages: number | null;
          indexedChars: number | null;
          totalChars: number | null;
        }
      | undefined
    >;
  };
  dataDir?: string | undefined;
}

async function desktopContext(ctx: Context): Promise<void> {
  if (ctx.backend === 'web') return;
  const { desktop } = await import('../library/readers/desktop.js');
  const state = await (await desktop(ctx.deps)).state();
  const reader = state.sqlite.reader;
  if (reader) {
    ctx.dataDir = reader.dataDir;
    const group = /^groups\/(\d+)$/.exec(ctx.library);
    let libraryID: number | undefined;
    try {
      libraryID = await reader.libraryIdFor(
        group ? { type: 'group', groupID: Number(group[1]) } : { type: 'user' },
      );
    } catch {
      libraryID = undefined;
    }
    if (libraryID !== undefined) {
      const id = libraryID;
      ctx.sqlite = {
        info: async (key) => {
          const rows = await reader.fulltextInfo(id, key).catch(() => []);
          return rows.find((r) => r.key === key);
        },
      };
    }
  } else {
    const { discoverZoteroDataDir } = await import('../local/index.js');
    ctx.dataDir = discoverZoteroDataDir({ env: ctx.deps.env, config: ctx.deps.config }).dataDir;
  }
}

/** The desktop's `.zotero-ft-cache` of an attachment, with the index's page counts. */
async function fromCache(ctx: Context, key: string): Promise<Loaded | undefined> {
  if (!ctx.dataDir) return undefined;
  const file = join(ctx.dataDir, 'storage', key, '.zotero-ft-cache');
  if (!existsSync(file)) return undefined;
  const content = readFileSync(file, 'utf8');
  const info = await ctx.sqlite?.info(key);
  const indexedPages = info?.indexedPages ?? null;
  const totalPages = info?.totalPages ?? null;
  return {
    doc: fromIndexText(content, indexedPages ?? totalPages),
    source: 'ftCache',
    detail: file,
    complete: isComplete(indexedPages, totalPages, info?.indexedChars ?? null, info?.totalChars ?? null),
    indexedPages,
    totalPages,
  };
}

function isComplete(ip: number | null, tp: number | null, ic: number | null, tc: number | null): boolean {
  if (ip !== null && tp !== null) return ip >= tp;
  if (ic !== null && tc !== null) return ic >= tc;
  return true;
}

/** `items/{key}/fulltext` of the local API or the Web API (whichever serves the library). */
async function fromApi(ctx: Context, key: string): Promise<Loaded | undefined> {
  let client;
  let prefix: string;
  if (ctx.backend === 'web') {
    const { openWebLibrary } = await import('../library/web.js');
    const lib = await openWebLibrary(ctx.deps, ctx.args, { access: 'read' });
    client = lib.client;
    prefix = lib.prefix;
  } else if (ctx.backend === 'localApi') {
    const { localApi } = await import('../local/local-api.js');
    client = (await localApi(ctx.deps)).client;
    prefix = ctx.library.startsWith('groups/') ? ctx.library : 'users/0';
  } else return undefined;
  const path = `/${prefix}/items/${key}/fulltext`;
  let data: Record<string, unknown>;
  try {
    const response = await client.request('GET', path);
    data = (response.data ?? {}) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ZoteusError && error.code === 'not_found') return undefined;
    throw error;
  }
  const content = str(data.content);
  if (content === null) return undefined;
  const indexedPages = num(data.indexedPages);
  const totalPages = num(data.totalPages);
  return {
    doc: fromIndexText(content, indexedPages ?? totalPages),
    source: ctx.backend === 'web' ? 'web' : 'localApi',
    detail: `GET ${path}`,
    complete: isComplete(indexedPages, totalPages, num(data.indexedChars), num(data.totalChars)),
    indexedPages,
    totalPages,
  };
}

/** Where the attachment's file is on this computer, when it is. */
function filePath(ctx: Context, att: WebApiItem): string | undefined {
  const d = att.data;
  const linkMode = str(d.linkMode);
  const path = str(d.path);
  const filename = str(d.filename) ?? (path?.startsWith('storage:') ? path.slice('storage:'.length) : null);
  const candidates: string[] = [];
  if (linkMode === 'linked_file' && path && isAbsolute(path)) candidates.push(path);
  if (ctx.dataDir && filename) candidates.push(join(ctx.dataDir, 'storage', att.key, filename));
  return candidates.find((p) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  });
}

/** Extracted documents, per file and version (size, mtime), for the life of the deps. */
const EXTRACTED = 'fulltext-extracted';

async function fromFile(ctx: Context, att: WebApiItem, outline: boolean): Promise<Loaded | undefined> {
  const path = filePath(ctx, att);
  if (!path) return undefined;
  const type = (str(att.data.contentType) ?? '').toLowerCase();
  const lower = path.toLowerCase();
  const kind: FulltextSource =
    type === 'application/pdf' || lower.endsWith('.pdf')
      ? 'pdf'
      : type === 'application/epub+zip' || lower.endsWith('.epub')
        ? 'epub'
        : 'file';
  if (kind === 'file' && !/^text\/|xhtml|xml/.test(type) && !/\.(html?|xhtml|txt|md)$/.test(lower))
    return undefined;
  const st = statSync(path);
  const cacheKey = `${path}\u0000${st.size}\u0000${st.mtimeMs}\u0000${outline ? 1 : 0}`;
  const cache = await ctx.deps.services.get(EXTRACTED, () => new Map<string, Loaded>());
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const buf = readFileSync(path);
  let loaded: Loaded;
  if (kind === 'pdf') {
    const { extractPdf } = await import('./pdf.js');
    const doc = await extractPdf(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), { outline });
    const pages = doc.totalPages ?? null;
    loaded = { doc, source: 'pdf', detail: path, complete: true, indexedPages: pages, totalPages: pages };
    if (doc.outline) loaded.outline = doc.outline;
  } else if (kind === 'epub') {
    const { extractEpub } = await import('./epub.js');
    const doc = extractEpub(buf);
    loaded = { doc, source: 'epub', detail: path, complete: true, indexedPages: null, totalPages: null };
    loaded.outline = (doc.headings ?? []).map((h) => ({ title: h.text, page: null, level: h.level ?? 1 }));
  } else {
    const raw = buf.toString('utf8');
    let doc: FullDocument;
    if (/html|xml/.test(type) || /\.x?html?$/.test(lower)) {
      const { appendXhtml } = await import('./epub.js');
      const out = { text: '', headings: [] as Array<{ offset: number; text: string; level?: number }> };
      appendXhtml(raw, out);
      doc = { text: out.text, headings: out.headings };
    } else doc = { text: raw };
    loaded = { doc, source: 'file', detail: path, complete: true, indexedPages: null, totalPages: null };
  }
  cache.set(cacheKey, loaded);
  return loaded;
}

/** The text of one attachment for this mode, from the best source; undefined when it has none. */
async function load(ctx: Context, att: WebApiItem, mode: Mode): Promise<Loaded | undefined> {
  const index = (await fromCache(ctx, att.key)) ?? (await fromApi(ctx, att.key));
  if (mode === 'outline') return (await fromFile(ctx, att, true)) ?? index;
  if (mode === 'pages' && !index?.doc.pageStarts) return (await fromFile(ctx, att, false)) ?? index;
  if (index?.complete && index.doc.text.trim() !== '') return index;
  return (await fromFile(ctx, att, false)) ?? (index && index.doc.text.trim() !== '' ? index : undefined);
}

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
  if (!m || from < 1 || to < from) {
    throw new ZoteusError(
      'validation_error',
      `page_range must be a page or a range like "3-5" (first ≤ last, from 1); got "${range}".`,
      {
        field: 'page_range',
      },
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
    throw new ZoteusError('validation_error', 'Give at most one of q, page_range and outline.', {
      field: modes.includes('outline') ? 'outline' : 'page_range',
    });
  }
  return modes[0] ?? 'start';
}

export async function getFulltext(deps: Deps, input: GetFulltextInput): Promise<GetFulltextOutput> {
  assertKeysWellFormed(deps, [input.item_key]);
  const mode = modeOf(input);
  const range = mode === 'pages' ? parseRange(input.page_range!) : undefined;
  const maxChars = input.max_chars ?? DEFAULT_MAX_CHARS;
  const { reader, route } = await openReader(deps, input);
  const item = await reader.item(input.item_key);
  if (!item) throw itemNotFound(deps, [input.item_key], route.library);
  const children = item.data.itemType === 'attachment' ? [] : await reader.children(item.key);
  const ctx: Context = {
    deps,
    backend: route.backend,
    library: route.library,
    args: { library_id: input.library_id, library_type: input.library_type },
  };
  await desktopContext(ctx);

  let att: WebApiItem | undefined;
  let loaded: Loaded | undefined;
  for (const c of candidates(item, children)) {
    loaded = await load(ctx, c, mode);
    if (loaded) {
      att = c;
      break;
    }
  }
  if (!att || !loaded) {
    throw new ZoteusError(
      'not_found',
      `Item '${input.item_key}' has no attachment with text${route.backend === 'web' ? ' indexed by Zotero' : ' (no Zotero index and no PDF, EPUB, HTML or text file on this computer)'}.`,
      {
        field: 'item_key',
        hint:
          deps.surface === 'cli'
            ? `'zot read ${input.item_key}' lists its attachments.`
            : 'zotero_get_item lists its attachments.',
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
    let budget = maxChars;
    out.passages = [];
    for (const p of passages) {
      if (budget <= 0) break;
      if (p.text.length > budget) {
        const end = cutAt(doc.text, p.start, budget);
        out.passages.push({ ...p, end, text: doc.text.slice(p.start, end) });
        budget = 0;
      } else {
        out.passages.push(p);
        budget -= p.text.length;
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
        'This text has no pages (an EPUB, HTML or text file): read it without page_range, or search it with q.',
        {
          field: 'page_range',
        },
      );
    }
    if (from > pageCount) {
      throw new ZoteusError(
        'validation_error',
        `page_range starts at page ${from}, but the document has ${pageCount} pages.`,
        {
          field: 'page_range',
        },
      );
    }
    const last = Math.min(to, pageCount);
    const startOf = (p: number): number =>
      exact ? doc.pageStarts![p - 1]! : Math.round(((p - 1) * doc.text.length) / pageCount);
    const endOf = (p: number): number => (p >= pageCount ? doc.text.length : startOf(p + 1));
    out.pages = [];
    let budget = maxChars;
    for (let p = from; p <= last && budget > 0; p++) {
      const s = startOf(p);
      let e = endOf(p);
      while (e > s && /\s/.test(doc.text[e - 1]!)) e--;
      if (e - s > budget) {
        e = cutAt(doc.text, s, budget);
        out.truncated = true;
      }
      out.pages.push({ page: p, start: s, end: e, text: doc.text.slice(s, e) });
      budget -= e - s;
    }
    if (out.pages.length < last - from + 1) out.truncated = true;
    if (out.truncated)
      notes.push(`Cut at max_chars (${maxChars}): ask for fewer pages or a larger max_chars.`);
    if (!exact)
      notes.push(
        'The pages are cut from the indexed text by character position: their bounds are approximate.',
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
    const offset = Math.min(input.offset ?? 0, doc.text.length);
    const end = cutAt(doc.text, offset, maxChars);
    out.text = doc.text.slice(offset, end);
    out.start = offset;
    out.end = end;
    out.truncated = end < doc.text.length;
    if (out.truncated) {
      notes.push(
        `Characters ${offset}–${end} of ${doc.text.length}: pass offset ${end} for more, or search with q.`,
      );
    }
  }
  if (notes.length > 0) out.message = notes.join(' ');
  return out;
}
