/**
 * An attachment's content type, judged from its first bytes (magic numbers) before its name:
 * a PDF called `paper.txt` is still `application/pdf`. The extension only decides among formats
 * the bytes cannot tell apart (ZIP containers, text formats).
 */
import { extname } from 'node:path';

const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.pdf': 'application/pdf',
  '.epub': 'application/epub+zip',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.zip': 'application/zip',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.tex': 'text/x-tex',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.bib': 'application/x-bibtex',
  '.ris': 'application/x-research-info-systems',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
};

/** The media type a file's name says (`tables/a.md` → text/markdown), if it says one. */
export function contentTypeByName(name: string): string | undefined {
  return BY_EXTENSION[extname(name).toLowerCase()];
}

const ZIP_FAMILY = new Set(['.epub', '.docx', '.xlsx', '.pptx', '.odt', '.zip']);

function startsWith(head: Uint8Array, bytes: readonly number[], at = 0): boolean {
  return bytes.every((b, i) => head[at + i] === b);
}

/** The content type of a file from its first bytes (at least 512 when the file has them) and name. */
export function detectContentType(head: Uint8Array, filename: string): string {
  const ext = extname(filename).toLowerCase();
  if (startsWith(head, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'application/pdf'; // %PDF-
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, [0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (startsWith(head, [0x52, 0x49, 0x46, 0x46]) && startsWith(head, [0x57, 0x45, 0x42, 0x50], 8))
    return 'image/webp';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) {
    return ZIP_FAMILY.has(ext) ? (BY_EXTENSION[ext] as string) : 'application/zip';
  }
  if (startsWith(head, [0x1f, 0x8b])) return 'application/gzip';
  if (head.includes(0)) return 'application/octet-stream';
  const text = new TextDecoder('utf-8')
    .decode(head)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (text.startsWith('<!doctype html') || text.startsWith('<html')) return 'text/html';
  if (ext in BY_EXTENSION) {
    const byName = BY_EXTENSION[ext] as string;
    // A name that promises a binary format the bytes do not have is not believed.
    if (
      byName.startsWith('text/') ||
      (byName.startsWith('application/') && !ZIP_FAMILY.has(ext) && ext !== '.pdf')
    )
      return byName;
    if (byName === 'image/svg+xml') return byName;
  }
  return 'text/plain';
}
