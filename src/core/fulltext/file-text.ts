/**
 * Text from the attachment's file on this computer (`storage/<attachmentKey>/<filename>`, or a
 * linked file): PDF with pdfjs-dist and EPUB unzipped, both through the disk cache of
 * extract-cache.ts; HTML stripped; plain text as is. Kept in memory per file version too, for
 * the life of the deps (one MCP server reads a document many times).
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { WebApiItem } from '../library/port.js';
import type { FullDocument } from './document.js';
import type { Extraction, FileVersion } from './extract-cache.js';
import type { FulltextSource, Loaded, SourceContext } from './sources.js';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Where the attachment's file is on this computer, when it is. */
function filePath(ctx: SourceContext, att: WebApiItem): string | undefined {
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
/** The disk cache of extracted text, opened once per deps. */
const EXTRACT_CACHE = 'fulltext-extract-cache';

/**
 * A PDF's or EPUB's text: from the disk cache when this version of the file was extracted
 * before, else extracted (a PDF's outline with it, so one entry serves every mode) and cached.
 */
async function extract(ctx: SourceContext, kind: 'pdf' | 'epub', version: FileVersion): Promise<Extraction> {
  const { path } = version;
  const { openExtractCache, extractCacheDir } = await import('./extract-cache.js');
  const cache = await ctx.deps.services.get(EXTRACT_CACHE, () =>
    openExtractCache(extractCacheDir(ctx.deps.config.cacheDir), { log: (l) => ctx.deps.log.debug(l) }),
  );
  const hit = await cache.get(version);
  if (hit?.source === kind) return hit;
  const buf = readFileSync(path);
  let value: Extraction;
  if (kind === 'pdf') {
    const { extractPdf } = await import('./pdf.js');
    const { outline, ...doc } = await extractPdf(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), {
      outline: true,
    });
    value = { source: 'pdf', doc, outline };
  } else {
    const { extractEpub } = await import('./epub.js');
    value = { source: 'epub', doc: extractEpub(buf) };
  }
  // A file rewritten while it was read must not be cached under the version seen before.
  const after = statSync(path);
  if (after.size === version.size && after.mtimeMs === version.mtimeMs) await cache.put(version, value);
  return value;
}

export async function fromFile(ctx: SourceContext, att: WebApiItem): Promise<Loaded | undefined> {
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
  const version: FileVersion = { path, size: st.size, mtimeMs: st.mtimeMs };
  const memoryKey = `${path}\u0000${st.size}\u0000${st.mtimeMs}`;
  const memory = await ctx.deps.services.get(EXTRACTED, () => new Map<string, Loaded>());
  const hit = memory.get(memoryKey);
  if (hit) return hit;
  let loaded: Loaded;
  if (kind === 'pdf') {
    const { doc, outline } = await extract(ctx, 'pdf', version);
    const pages = doc.totalPages ?? null;
    loaded = { doc, source: 'pdf', detail: path, complete: true, indexedPages: pages, totalPages: pages };
    if (outline) loaded.outline = outline;
  } else if (kind === 'epub') {
    const { doc } = await extract(ctx, 'epub', version);
    loaded = { doc, source: 'epub', detail: path, complete: true, indexedPages: null, totalPages: null };
    loaded.outline = (doc.headings ?? []).map((h) => ({ title: h.text, page: null, level: h.level ?? 1 }));
  } else {
    const raw = readFileSync(path, 'utf8');
    let doc: FullDocument;
    if (/html|xml/.test(type) || /\.x?html?$/.test(lower)) {
      const { appendXhtml } = await import('./epub.js');
      const out = { text: '', headings: [] as Array<{ offset: number; text: string; level?: number }> };
      appendXhtml(raw, out);
      doc = { text: out.text, headings: out.headings };
    } else doc = { text: raw };
    loaded = { doc, source: 'file', detail: path, complete: true, indexedPages: null, totalPages: null };
  }
  memory.set(memoryKey, loaded);
  return loaded;
}
