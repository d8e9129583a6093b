/**
 * An attachment's file from this computer: the desktop's `storage/<KEY>/<filename>` or a linked
 * file's path, read once, its MD5 computed and compared with Zotero's synced hash. Text files
 * come back as text (a bounded slice); any file can be saved through the caller's `save`
 * (the tool layer's save rules). A file only in the cloud is refused with where it is.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ZoteusError } from '../errors.js';
import { byteEnd, ROWS_BUDGET } from '../items/read/bounds.js';
import { paramRef, toolRef } from '../call/refs.js';
import type { Answered } from '../items/read/common.js';
import type { Deps } from '../tool.js';
import {
  describeAttachment,
  listAttachments,
  str,
  type AttachmentEntry,
  type ListAttachmentsInput,
} from './list.js';

export const DEFAULT_MAX_CHARS = 10_000;

export interface GetAttachmentInput extends ListAttachmentsInput {
  save_path?: string | undefined;
  max_chars?: number | undefined;
  offset?: number | undefined;
}

export interface FileRead {
  key: string;
  source: 'storage' | 'linked';
  path: string;
  size: number;
  md5: string;
  /** Zotero's synced hash of the file, when it has one. */
  expectedMd5: string | null;
  /** The file's MD5 equals Zotero's hash; null when Zotero has none (a linked file). */
  md5Matches: boolean | null;
}

export interface GetAttachmentOutput extends Answered {
  itemKey: string;
  attachment: AttachmentEntry;
  file: FileRead;
  text?: string;
  start?: number;
  end?: number;
  totalChars?: number;
  truncated?: boolean;
  saved?: { path: string; bytes: number };
  message?: string;
}

const RANK: Record<string, number> = { 'application/pdf': 0, 'application/epub+zip': 1 };

/** A content type whose bytes are text a reader can take as it is. */
export function isTextType(type: string | null): boolean {
  const t = (type ?? '').toLowerCase();
  return /^text\//.test(t) || /(json|xml|javascript|x-tex|x-bibtex)/.test(t);
}

export type Save = (path: string, bytes: Uint8Array) => Promise<string>;

export async function getAttachment(
  deps: Deps,
  input: GetAttachmentInput,
  save: Save,
): Promise<GetAttachmentOutput> {
  const listed = await listAttachments(deps, input);
  const files = listed.attachments.filter((a) => str(a.data.linkMode) !== 'linked_url');
  const rank = (a: (typeof files)[number]) =>
    RANK[(str(a.data.contentType) ?? '').toLowerCase()] ?? (isTextType(str(a.data.contentType)) ? 2 : 3);
  const att = [...files].sort((a, b) => rank(a) - rank(b))[0];
  if (!att) {
    throw new ZoteusError('not_found', `Item '${input.item_key}' has no attachment with a file.`, {
      field: 'item_key',
      hint: `${toolRef('zotero_get_item', { item_key: input.item_key })} shows the item and its children.`,
    });
  }
  const entry = describeAttachment(listed.dataDir, att);
  if (!entry.localPath) {
    const where = entry.inCloud
      ? 'it is only in Zotero’s cloud storage, and this version of Zoteus reads attachment files only from this computer'
      : entry.linkMode === 'linked_file'
        ? `the linked file ${str(att.data.path) ?? '(no path)'} is not on this computer`
        : 'neither this computer nor Zotero’s cloud holds it';
    throw new ZoteusError('not_found', `The file of attachment '${att.key}' cannot be read: ${where}.`, {
      field: 'item_key',
      hint: entry.inCloud
        ? 'Let the Zotero desktop app download it (open the attachment there, or sync with files on), then ask again.'
        : `${toolRef('zotero_get_attachment', { item_key: input.item_key, action: 'list' })} shows where each file is.`,
    });
  }
  const bytes = await readFile(entry.localPath);
  const md5 = createHash('md5').update(bytes).digest('hex');
  const file: FileRead = {
    key: att.key,
    source: entry.linkMode === 'linked_file' ? 'linked' : 'storage',
    path: entry.localPath,
    size: bytes.byteLength,
    md5,
    expectedMd5: entry.md5,
    md5Matches: entry.md5 === null ? null : entry.md5.toLowerCase() === md5,
  };
  const out: GetAttachmentOutput = {
    itemKey: listed.item.key,
    attachment: entry,
    file,
    backend: listed.backend,
    library: listed.library,
  };
  const notes: string[] = [];
  if (file.md5Matches === false) {
    notes.push(
      `The file on this computer differs from the one Zotero recorded (MD5 ${md5}, Zotero has ${entry.md5}): it changed since Zotero last synced it.`,
    );
  }
  if (input.save_path !== undefined) {
    const path = await save(input.save_path, bytes);
    out.saved = { path, bytes: bytes.byteLength };
  } else if (isTextType(entry.contentType)) {
    const text = bytes.toString('utf8');
    const start = Math.min(input.offset ?? 0, text.length);
    // max_chars, and never more than the answer's size bound in bytes (JSON escapes included).
    const end = byteEnd(
      text,
      start,
      Math.min(text.length, start + (input.max_chars ?? DEFAULT_MAX_CHARS)),
      ROWS_BUDGET,
    );
    out.text = text.slice(start, end);
    out.start = start;
    out.end = end;
    out.totalChars = text.length;
    if (end < text.length) {
      out.truncated = true;
      notes.push(`The text goes on: ${paramRef('offset', String(end))} reads the next part.`);
    }
  } else {
    notes.push(
      `A binary file (${entry.contentType ?? 'unknown type'}, ${bytes.byteLength} bytes) is not returned as text: ${paramRef('save_path', 'PATH')} saves a copy.`,
    );
  }
  if (notes.length) out.message = notes.join(' ');
  return out;
}
