/**
 * A disk cache of the text extracted from PDFs and EPUBs, so that a second `zot pdf KEY` on
 * the same file (another process, another day) does not run pdfjs again.
 *
 * - Where: `$cacheDir/fulltext/<sha256>.json` (dir 0700, files 0600).
 * - Key: the SHA-256 of the cache format, the file's absolute path, its size and its mtime,
 *   so a changed file (new size or mtime) misses, and nothing is read to look an entry up.
 *   The entry repeats path, size and mtime, and must match them to count.
 * - Writes are atomic (a temporary file renamed over the entry): a concurrent reader sees
 *   the old entry or the new one. An entry that cannot be read or parsed, or that does not
 *   have the expected shape, is a miss: the text is extracted again and the entry rewritten.
 * - Bounded: after each write, when the entries add up to more than `maxBytes` (500 MB by
 *   default: about 400 books of 400 pages), the least recently used go first. A hit touches
 *   the entry's mtime, so "oldest" means least recently used.
 * - Best effort: an unwritable cache directory never fails a read (a debug log line says so).
 */
// fs.promises, not node:fs/promises: it loads on first use, not with this module.
import { promises as fsp } from 'node:fs';
import { randomHex, sha256 } from '../node-crypto.js';
import { join, resolve } from 'node:path';
import type { FullDocument, Heading } from './document.js';
import type { OutlineEntry } from './pdf.js';
import { ensureDir } from '../dirs.js';

/** Default bound of the whole cache, in bytes. */
export const EXTRACT_CACHE_MAX_BYTES = 500 * 1024 * 1024;
/** Bump when the extractors' output changes: old entries then miss (and age out). */
const FORMAT = 1;
/** A temporary file this old was left by a process that died mid-write. */
const STALE_TMP_MS = 60 * 60 * 1000;

/** A version of a file: what the cache is keyed by. */
export interface FileVersion {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface Extraction {
  source: 'pdf' | 'epub';
  doc: FullDocument;
  outline?: OutlineEntry[] | undefined;
}

export interface ExtractCache {
  readonly dir: string;
  get(file: FileVersion): Promise<Extraction | undefined>;
  put(file: FileVersion, value: Extraction): Promise<void>;
}

interface Entry extends FileVersion {
  format: number;
  source: Extraction['source'];
  doc: { text: string; pageStarts?: number[]; totalPages?: number | null; headings?: Heading[] };
  outline?: OutlineEntry[];
}

export function extractCacheDir(cacheDir: string): string {
  return join(cacheDir, 'fulltext');
}

/** The entry's file name: a hash of the file's version, never of its content. */
export function entryName(file: FileVersion): string {
  const digest = sha256()
    .update(`${FORMAT}\u0000${resolve(file.path)}\u0000${file.size}\u0000${file.mtimeMs}`)
    .digest('hex');
  return `${digest}.json`;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isNums = (v: unknown): v is number[] => Array.isArray(v) && v.every(isNum);

/** Whether parsed JSON is an entry of this format for this file version. */
function isEntry(v: unknown, file: FileVersion): v is Entry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Partial<Entry>;
  const doc = e.doc;
  return (
    e.format === FORMAT &&
    e.path === resolve(file.path) &&
    e.size === file.size &&
    e.mtimeMs === file.mtimeMs &&
    (e.source === 'pdf' || e.source === 'epub') &&
    typeof doc === 'object' &&
    doc !== null &&
    typeof doc.text === 'string' &&
    (doc.pageStarts === undefined || isNums(doc.pageStarts)) &&
    (doc.totalPages === undefined || doc.totalPages === null || isNum(doc.totalPages)) &&
    (doc.headings === undefined ||
      (Array.isArray(doc.headings) &&
        doc.headings.every((h) => isNum(h.offset) && typeof h.text === 'string'))) &&
    (e.outline === undefined ||
      (Array.isArray(e.outline) &&
        e.outline.every(
          (o) => typeof o.title === 'string' && (o.page === null || isNum(o.page)) && isNum(o.level),
        )))
  );
}

export function openExtractCache(
  dir: string,
  options: { maxBytes?: number; log?: (line: string) => void } = {},
): ExtractCache {
  const maxBytes = options.maxBytes ?? EXTRACT_CACHE_MAX_BYTES;
  const log = options.log ?? (() => {});

  /** Removes the least recently used entries until the rest fit in `maxBytes`. */
  async function evict(): Promise<void> {
    const now = Date.now();
    const entries: Array<{ path: string; size: number; mtimeMs: number }> = [];
    for (const name of await fsp.readdir(dir)) {
      const path = join(dir, name);
      const st = await fsp.stat(path).catch(() => undefined);
      if (!st?.isFile()) continue;
      if (name.endsWith('.tmp')) {
        if (now - st.mtimeMs > STALE_TMP_MS) await fsp.unlink(path).catch(() => {});
      } else if (name.endsWith('.json')) entries.push({ path, size: st.size, mtimeMs: st.mtimeMs });
    }
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const e of entries) {
      if (total <= maxBytes) break;
      await fsp.unlink(e.path).catch(() => {});
      total -= e.size;
    }
  }

  return {
    dir,
    async get(file) {
      const path = join(dir, entryName(file));
      let entry: Entry;
      try {
        const parsed: unknown = JSON.parse(await fsp.readFile(path, 'utf8'));
        if (!isEntry(parsed, file)) return undefined;
        entry = parsed;
      } catch {
        return undefined; // no entry, or an unreadable one: extract again (and rewrite it)
      }
      const now = new Date();
      await fsp.utimes(path, now, now).catch(() => {});
      const { source, doc, outline } = entry;
      return outline ? { source, doc, outline } : { source, doc };
    },
    async put(file, value) {
      const path = join(dir, entryName(file));
      const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
      const entry: Entry = {
        format: FORMAT,
        path: resolve(file.path),
        size: file.size,
        mtimeMs: file.mtimeMs,
        source: value.source,
        doc: {
          text: value.doc.text,
          ...(value.doc.pageStarts ? { pageStarts: value.doc.pageStarts } : {}),
          ...(value.doc.totalPages !== undefined ? { totalPages: value.doc.totalPages } : {}),
          ...(value.doc.headings ? { headings: value.doc.headings } : {}),
        },
        ...(value.outline ? { outline: value.outline } : {}),
      };
      try {
        const body = JSON.stringify(entry);
        // One entry larger than the whole bound would evict everything else and then itself.
        if (Buffer.byteLength(body) > maxBytes) return;
        ensureDir(dir);
        await fsp.chmod(dir, 0o700);
        await fsp.writeFile(tmp, body, { mode: 0o600 });
        await fsp.rename(tmp, path);
        await evict();
      } catch (error) {
        await fsp.rm(tmp, { force: true }).catch(() => {});
        log(`Could not write the full-text cache: ${(error as Error).message}`);
      }
    },
  };
}
