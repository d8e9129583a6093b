/**
 * Where a document's text comes from, shared by `zotero_get_fulltext` (get.ts) and the search
 * indexer (item-text.ts). The sources, in this order:
 * 1. the desktop's `.zotero-ft-cache` (`storage/<attachmentKey>/`, with `fulltextItems` saying how
 *    much Zotero indexed), when the desktop serves the library and the index is complete;
 * 2. the local API's or the Web API's `items/{key}/fulltext`, when one of them serves it (a 404
 *    there means "no text": the next source is tried);
 * 3. the stored file itself (file-text.ts: PDF with pdfjs-dist, EPUB unzipped, both through the
 *    disk cache of extract-cache.ts; HTML and plain text read);
 * 4. an incomplete index (Zotero indexed only some pages) when the file is not on this computer.
 * Page ranges prefer exact pages (the file, or a cache with form feeds); the outline needs the PDF.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZoteusError } from '../errors.js';
import { openReader } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { LibraryRoute } from '../library/router.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import type { FullDocument } from './document.js';
import { fromFile } from './file-text.js';
import type { OutlineEntry } from './pdf.js';

export type FulltextSource = 'ftCache' | 'localApi' | 'web' | 'pdf' | 'epub' | 'file';
export type Mode = 'start' | 'search' | 'pages' | 'outline';

/** A loaded text and what is known of it. */
export interface Loaded {
  doc: FullDocument;
  source: FulltextSource;
  detail: string;
  complete: boolean;
  indexedPages: number | null;
  totalPages: number | null;
  outline?: OutlineEntry[];
}

export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
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

interface FulltextRow {
  indexedPages: number | null;
  totalPages: number | null;
  indexedChars: number | null;
  totalChars: number | null;
}

export interface SourceContext {
  deps: Deps;
  backend: LibraryRoute['backend'];
  library: string;
  args: LibraryArgs;
  sqlite?: { info(key: string): Promise<FulltextRow | undefined> };
  dataDir?: string | undefined;
}

async function desktopContext(ctx: SourceContext): Promise<void> {
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
async function fromCache(ctx: SourceContext, key: string): Promise<Loaded | undefined> {
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
async function fromApi(ctx: SourceContext, key: string): Promise<Loaded | undefined> {
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

/** The text of one attachment for this mode, from the best source; undefined when it has none. */
async function load(ctx: SourceContext, att: WebApiItem, mode: Mode): Promise<Loaded | undefined> {
  const index = (await fromCache(ctx, att.key)) ?? (await fromApi(ctx, att.key));
  if (mode === 'outline') return (await fromFile(ctx, att)) ?? index;
  if (mode === 'pages' && !index?.doc.pageStarts) return (await fromFile(ctx, att)) ?? index;
  if (index?.complete && index.doc.text.trim() !== '') return index;
  return (await fromFile(ctx, att)) ?? (index && index.doc.text.trim() !== '' ? index : undefined);
}

export interface Resolved {
  route: LibraryRoute;
  /** Undefined when the key names no item in the library. */
  item?: WebApiItem;
  /** The attachment whose text was loaded: undefined when no attachment has text. */
  attachment?: WebApiItem;
  loaded?: Loaded;
}

/**
 * An item's best document for a mode: the library opened through the router, the item (or
 * the attachment named), then its attachments best first until one has text.
 */
export async function resolveDocument(
  deps: Deps,
  args: LibraryArgs & { itemKey: string },
  mode: Mode,
): Promise<Resolved> {
  const { reader, route } = await openReader(deps, args);
  const item = await reader.item(args.itemKey);
  if (!item) return { route };
  const children = item.data.itemType === 'attachment' ? [] : await reader.children(item.key);
  const ctx: SourceContext = {
    deps,
    backend: route.backend,
    library: route.library,
    args: { library_id: args.library_id, library_type: args.library_type },
  };
  await desktopContext(ctx);
  for (const attachment of candidates(item, children)) {
    const loaded = await load(ctx, attachment, mode);
    if (loaded) return { route, item, attachment, loaded };
  }
  return { route, item };
}
