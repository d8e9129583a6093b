/**
 * An attachment's file: from this computer when it is there (the desktop's
 * `storage/<KEY>/<filename>` or a linked file's path), else from Zotero's cloud storage through
 * the Web API (`GET …/items/{key}/file`, whose redirect to the storage host is followed without
 * the key). The bytes are streamed, never held whole (except a text file returned as text),
 * their MD5 computed as they pass and compared with Zotero's: a cloud download that differs is
 * an error and is not kept at the save path; a local file that differs is read and said to
 * differ (it changed since Zotero synced it). Text files come back as text (a bounded slice);
 * any file can be saved through the caller's `save` (the tool layer's save rules); a binary
 * file otherwise is named by its resource (`zotero://attachments/{library}/{key}`), which
 * `attachmentBytes` serves within a size bound.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { ZoteusError, isZoteusError } from '../errors.js';
import { byteEnd, ROWS_BUDGET } from '../items/read/bounds.js';
import { onlyOn, paramRef, toolRef } from '../call/refs.js';
import type { Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import {
  describeAttachment,
  listAttachments,
  str,
  type AttachmentEntry,
  type ListAttachmentsInput,
  type ListedAttachments,
} from './list.js';

export const DEFAULT_MAX_CHARS = 10_000;
/** A text file larger than this is not returned as text (it would be held whole): save it. */
export const MAX_TEXT_BYTES = 32 * 1024 * 1024;
/**
 * The largest file `resources/read` embeds: its base64 (4/3 of the bytes) stays within the
 * ~100 KB answer bound of conventions.md.
 */
export const MAX_RESOURCE_BYTES = 75_000;

export interface GetAttachmentInput extends ListAttachmentsInput {
  save_path?: string | undefined;
  max_chars?: number | undefined;
  offset?: number | undefined;
}

export type FileSource = 'storage' | 'linked' | 'cloud';

export interface FileRead {
  key: string;
  source: FileSource;
  /** The file on this computer, or the Web API path it is downloaded from (`users/1/items/KEY/file`). */
  path: string;
  /** Bytes read; null when the file was not read (a binary file in the cloud, without a save path). */
  size: number | null;
  /** The MD5 of the bytes read; null when they were not read. */
  md5: string | null;
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
  /** A binary file not returned: the MCP resource that serves it (within its size bound). */
  resource?: { uri: string; name: string; mimeType: string };
  message?: string;
}

const RANK: Record<string, number> = { 'application/pdf': 0, 'application/epub+zip': 1 };

/** A content type whose bytes are text a reader can take as it is. */
export function isTextType(type: string | null): boolean {
  const t = (type ?? '').toLowerCase();
  return /^text\//.test(t) || /(json|xml|javascript|x-tex|x-bibtex)/.test(t);
}

/** Writes the bytes (as they come) under the save rules; a failure of the bytes leaves nothing. */
export type Save = (path: string, bytes: AsyncIterable<Uint8Array>) => Promise<string>;

/** `zotero://attachments/users/1/ABCD2345`: the resource that serves an attachment's file. */
export function attachmentUri(library: string, key: string): string {
  return `zotero://attachments/${library}/${key}`;
}

/** The library arguments a resource's `users/1` / `groups/5` names (`users/0`: the desktop's own). */
export function libraryArgsOf(library: string): LibraryArgs | undefined {
  const found = /^(users|groups)\/(\d+)$/.exec(library);
  if (!found) return undefined;
  if (found[1] === 'users' && found[2] === '0') return {};
  return { library_type: found[1] === 'users' ? 'user' : 'group', library_id: Number(found[2]) };
}

/** Where a file's bytes come from: opened lazily, read once. */
interface Origin {
  source: FileSource;
  path: string;
  /** The size before reading, when known (on disk, or the download's Content-Length). */
  size: number | null;
  /** The library of the resource URI. */
  library: string;
  open(): Promise<{ body: AsyncIterable<Uint8Array>; size: number | null; cancel(): Promise<void> }>;
}

/** The attachment asked for: the one named, or the item's best file (PDF first). */
function pick(listed: ListedAttachments, input: ListAttachmentsInput): WebApiItem {
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
  return att;
}

/** This computer's copy, else Zotero's cloud storage through the Web API; not_found when neither. */
async function originOf(
  deps: Deps,
  input: ListAttachmentsInput,
  listed: ListedAttachments,
  att: WebApiItem,
  entry: AttachmentEntry,
): Promise<Origin> {
  const local = entry.localPath;
  if (local) {
    return {
      source: entry.linkMode === 'linked_file' ? 'linked' : 'storage',
      path: local,
      size: entry.size,
      library: listed.library,
      open: () => {
        const stream = createReadStream(local);
        return Promise.resolve({
          body: stream,
          size: entry.size,
          cancel: () => Promise.resolve(void stream.destroy()),
        });
      },
    };
  }
  if (!entry.inCloud) {
    const where =
      entry.linkMode === 'linked_file'
        ? `the linked file ${str(att.data.path) ?? '(no path)'} is not on this computer`
        : 'neither this computer nor Zotero’s cloud holds it';
    throw new ZoteusError('not_found', `The file of attachment '${att.key}' cannot be read: ${where}.`, {
      field: 'item_key',
      hint: `${toolRef('zotero_get_attachment', { item_key: input.item_key, action: 'list' })} shows where each file is.`,
    });
  }
  if (deps.config.apiKey === undefined) {
    throw new ZoteusError(
      'not_found',
      `The file of attachment '${att.key}' cannot be read: it is only in Zotero’s cloud storage, and no Zotero API key is configured to download it.`,
      {
        field: 'item_key',
        hint: `Set ZOTERO_API_KEY${onlyOn('mcp', ' in the environment of the MCP server')} (a key with file access), or let the Zotero desktop app download the file (open the attachment there, or sync with files on), then ask again.`,
      },
    );
  }
  const { openWebLibrary } = await import('../library/web.js');
  const lib = await openWebLibrary(deps, input, { access: 'read' });
  const path = `${lib.prefix}/items/${att.key}/file`;
  return {
    source: 'cloud',
    path,
    size: entry.size,
    library: lib.prefix,
    open: async () => {
      try {
        const got = await lib.client.download(`/${path}`, { field: 'item_key' });
        return { body: got.body, size: got.size ?? null, cancel: () => got.body.cancel() };
      } catch (error) {
        if (isZoteusError(error) && error.code === 'not_found') {
          throw new ZoteusError(
            'not_found',
            `The file of attachment '${att.key}' is not in Zotero’s cloud storage (${lib.prefix} has none for it), though Zotero recorded one.`,
            {
              field: 'item_key',
              hint: 'The desktop that added it may not have synced its files yet: sync it with file syncing on, then ask again.',
            },
          );
        }
        throw error;
      }
    },
  };
}

function mismatch(key: string, md5: string, expected: string, saved: boolean): ZoteusError {
  return new ZoteusError(
    'api_error',
    `The file of attachment '${key}' downloaded from Zotero’s cloud storage has MD5 ${md5}, but Zotero recorded ${expected}: the copy is damaged or is not the one Zotero describes${saved ? ', so nothing was saved' : ''}.`,
    {
      field: 'item_key',
      retryable: true,
      hint: 'Ask again (a download broken on the way gives other bytes next time); if it persists, the file stored in the cloud differs from Zotero’s record: re-sync it from the desktop that has it.',
    },
  );
}

/**
 * The bytes as they pass, hashed; at the end `done` gets the MD5 and size. A cloud file whose
 * MD5 is not Zotero's throws there, before a save could keep it.
 */
async function* hashed(
  body: AsyncIterable<Uint8Array>,
  hash: Hash,
  done: (md5: string, bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  for await (const chunk of body) {
    const c = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    hash.update(c);
    bytes += c.byteLength;
    yield c;
  }
  done(hash.digest('hex'), bytes);
}

/** Drains `body` into memory, refusing past `max` bytes (after `tooLarge` says how). */
async function collect(
  body: AsyncIterable<Uint8Array>,
  max: number,
  tooLarge: (seen: number) => ZoteusError,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > max) throw tooLarge(bytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function getAttachment(
  deps: Deps,
  input: GetAttachmentInput,
  save: Save,
): Promise<GetAttachmentOutput> {
  const listed = await listAttachments(deps, input);
  const att = pick(listed, input);
  const entry = describeAttachment(listed.dataDir, att);
  const origin = await originOf(deps, input, listed, att, entry);
  const cloud = origin.source === 'cloud';
  const file: FileRead = {
    key: att.key,
    source: origin.source,
    path: origin.path,
    size: null,
    md5: null,
    expectedMd5: entry.md5,
    md5Matches: null,
  };
  const out: GetAttachmentOutput = {
    itemKey: listed.item.key,
    attachment: entry,
    file,
    backend: listed.backend,
    library: listed.library,
  };
  const notes: string[] = [];
  const text = isTextType(entry.contentType);
  const binaryOnly = input.save_path === undefined && !text;
  if (binaryOnly && cloud) {
    // Nothing to check the bytes against until someone takes them: they are not downloaded.
    out.resource = resourceOf(origin.library, entry);
    notes.push(
      `A binary file (${entry.contentType ?? 'unknown type'}) in Zotero’s cloud storage is not returned as text: ${paramRef('save_path', 'PATH')} downloads a copy (its MD5 checked)${onlyOn('mcp', `, and resources/read of ${out.resource.uri} returns it when it is at most ${MAX_RESOURCE_BYTES.toLocaleString('en-US')} bytes`)}.`,
    );
    out.message = notes.join(' ');
    return out;
  }

  // Opened lazily: a save refused (the target exists) downloads nothing.
  let opened: Awaited<ReturnType<Origin['open']>> | undefined;
  async function* source(): AsyncGenerator<Uint8Array> {
    opened = await origin.open();
    yield* opened.body;
  }
  const verify = (md5: string, bytes: number): void => {
    file.md5 = md5;
    file.size = bytes;
    file.md5Matches = entry.md5 === null ? null : entry.md5.toLowerCase() === md5;
    if (cloud && file.md5Matches === false)
      throw mismatch(att.key, md5, entry.md5 ?? '', input.save_path !== undefined);
  };
  const body = hashed(source(), createHash('md5'), verify);
  try {
    if (input.save_path !== undefined) {
      const path = await save(input.save_path, body);
      out.saved = { path, bytes: file.size ?? 0 };
    } else if (text) {
      const bytes = await collect(
        body,
        MAX_TEXT_BYTES,
        () =>
          new ZoteusError(
            'validation_error',
            `The text file of attachment '${att.key}' is larger than ${MAX_TEXT_BYTES / 1024 / 1024} MB, more than Zoteus returns as text.`,
            { field: 'item_key', hint: `${paramRef('save_path', 'PATH')} saves it.` },
          ),
      );
      sliceText(out, bytes.toString('utf8'), input, notes);
    } else {
      // A binary file on this computer: hashed as it streams past, not kept.
      for await (const chunk of body) void chunk.byteLength;
      out.resource = resourceOf(origin.library, entry);
      notes.push(
        `A binary file (${entry.contentType ?? 'unknown type'}, ${file.size ?? 0} bytes) is not returned as text: ${paramRef('save_path', 'PATH')} saves a copy${onlyOn('mcp', `; resources/read of ${out.resource.uri} returns it when it is at most ${MAX_RESOURCE_BYTES.toLocaleString('en-US')} bytes`)}.`,
      );
    }
  } finally {
    await opened?.cancel();
  }
  if (file.md5Matches === false) {
    notes.unshift(
      `The file on this computer differs from the one Zotero recorded (MD5 ${file.md5}, Zotero has ${entry.md5}): it changed since Zotero last synced it.`,
    );
  }
  if (notes.length) out.message = notes.join(' ');
  return out;
}

function resourceOf(
  library: string,
  entry: AttachmentEntry,
): { uri: string; name: string; mimeType: string } {
  return {
    uri: attachmentUri(library, entry.key),
    name: entry.filename ?? entry.title ?? entry.key,
    mimeType: entry.contentType ?? 'application/octet-stream',
  };
}

function sliceText(out: GetAttachmentOutput, text: string, input: GetAttachmentInput, notes: string[]): void {
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
}

export interface AttachmentBytes {
  key: string;
  mimeType: string;
  bytes: Buffer;
  source: FileSource;
}

/**
 * One attachment's whole file for `resources/read`: at most `max` bytes (else a
 * validation_error that says the size and how to save it instead), its MD5 checked against
 * Zotero's (a cloud copy that differs is an error).
 */
export async function attachmentBytes(
  deps: Deps,
  library: string,
  key: string,
  max = MAX_RESOURCE_BYTES,
): Promise<AttachmentBytes> {
  const args = libraryArgsOf(library);
  if (!args) {
    throw new ZoteusError(
      'not_found',
      `There is no attachment resource for library '${library}': it must be users/<id> or groups/<id>.`,
    );
  }
  const input: ListAttachmentsInput = { ...args, item_key: key };
  const listed = await listAttachments(deps, input);
  if (listed.item.data.itemType !== 'attachment') {
    throw new ZoteusError('not_found', `'${key}' in ${library} is not an attachment.`, {
      hint: `${toolRef('zotero_get_attachment', { item_key: key, action: 'list' })} lists its attachments and their keys.`,
    });
  }
  const att = pick(listed, input);
  const entry = describeAttachment(listed.dataDir, att);
  const origin = await originOf(deps, input, listed, att, entry);
  const tooLarge = (size: number, atLeast: boolean): ZoteusError =>
    new ZoteusError(
      'validation_error',
      `The file of attachment '${key}' is ${atLeast ? 'more than ' : ''}${size.toLocaleString('en-US')} bytes, more than a resource embeds (${max.toLocaleString('en-US')} bytes).`,
      { hint: `Save it instead: ${toolRef('zotero_get_attachment', { item_key: key, save_path: 'PATH' })}.` },
    );
  if (origin.size !== null && origin.size > max) throw tooLarge(origin.size, false);
  const opened = await origin.open();
  try {
    if (opened.size !== null && opened.size > max) throw tooLarge(opened.size, false);
    let md5 = '';
    const body = hashed(opened.body, createHash('md5'), (m) => (md5 = m));
    const bytes = await collect(body, max, (seen) => tooLarge(seen - 1, true));
    if (origin.source === 'cloud' && entry.md5 !== null && entry.md5.toLowerCase() !== md5)
      throw mismatch(key, md5, entry.md5, false);
    return { key, mimeType: entry.contentType ?? 'application/octet-stream', bytes, source: origin.source };
  } finally {
    await opened.cancel();
  }
}
