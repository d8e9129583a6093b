/**
 * What attaching a file checks, plans and retries offline (light: the tool declaration loads
 * it, so it imports nothing that reaches the network; upload.ts does the sending): the input's
 * refusals, the dry-run plan (each file read once from disk for its size, MD5 and type), and
 * how a partial result's retry runs only its failed files.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { paramRef } from '../call/refs.js';
import { ZoteusError, type ErrorCode } from '../errors.js';
import type { Config } from '../config.js';
import { resolveLibrary, type LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import { detectContentType } from './content-type.js';

/** At most this many decoded bytes of `content_base64` (keeps an MCP message under 10 MB). */
export const MAX_INLINE_BYTES = 7 * 1024 * 1024;
export interface AttachFileInput extends LibraryArgs {
  parent_item: string;
  path?: readonly string[] | undefined;
  content_base64?: string | undefined;
  filename?: string | undefined;
  title?: string | undefined;
  /** Link each file where it is (a `linked_file` attachment) instead of uploading a copy. */
  link?: boolean | undefined;
}

export interface AttachedFile {
  file: string;
  key: string;
  filename: string;
  title: string;
  contentType: string;
  size: number;
  md5: string;
  /** `uploaded`: the bytes were sent; `exists`: the server already had them; `linked`: none sent. */
  upload: 'uploaded' | 'exists' | 'linked';
  /** A linked file: the absolute path the attachment points at. */
  path?: string;
  /** `new`: a new version of the attachment `key` (parent_item was that attachment). */
  version?: 'new';
  /** The md5 of the version this one replaced (a new version; absent when it had no file). */
  previousMd5?: string;
}

export interface FailedFile {
  index: number;
  file: string;
  /** The attachment item, when it was created and could not be moved to the trash. */
  key?: string;
  /** HTTP status of the failing step (0 without an answer). */
  code: number;
  reason: ErrorCode;
  message: string;
  /** The created attachment item was moved to the trash. */
  trashed?: boolean;
}

export interface AttachFileOutput {
  parentItem: string;
  succeeded: AttachedFile[];
  failed: FailedFile[];
  libraryVersion?: number;
}

/** Refusals of the input itself, before anything is read or sent. */
export function checkAttachInput(deps: Pick<Deps, 'fileRoot'>, input: AttachFileInput): void {
  const paths = input.path ?? [];
  if (paths.length > 0 && input.content_base64 !== undefined) {
    throw new ZoteusError(
      'validation_error',
      `Give either ${paramRef('path')} or ${paramRef('content_base64')}, not both.`,
      {
        field: 'content_base64',
      },
    );
  }
  if (paths.length === 0 && input.content_base64 === undefined) {
    throw new ZoteusError(
      'validation_error',
      `Name a file to attach: ${paramRef('path')}, or ${paramRef('content_base64')} with ${paramRef('filename')}.`,
      {
        field: 'path',
      },
    );
  }
  if (input.content_base64 !== undefined && !input.filename) {
    throw new ZoteusError(
      'validation_error',
      `${paramRef('content_base64')} needs ${paramRef('filename')}: the name the file is stored under.`,
      {
        field: 'filename',
      },
    );
  }
  if (input.filename !== undefined && /[/\\]/.test(input.filename)) {
    throw new ZoteusError(
      'validation_error',
      `${paramRef('filename')} is a name, not a path: '${input.filename}'.`,
      {
        field: 'filename',
      },
    );
  }
}

/**
 * Refusals of a link (`link: true`) before anything is read or sent: it needs files by path
 * (no inline bytes), on this machine, and the user's own library (Zotero keeps linked files
 * only there).
 */
export function checkLinkInput(
  config: Pick<Config, 'libraryId' | 'libraryType' | 'apiKey'>,
  input: AttachFileInput,
): void {
  if (!input.link) return;
  if (input.content_base64 !== undefined || input.filename !== undefined) {
    const field = input.content_base64 !== undefined ? 'content_base64' : 'filename';
    throw new ZoteusError(
      'validation_error',
      `${paramRef('link', 'true')} links a file where it is on this computer, so it takes ${paramRef('path')}, not ${paramRef(field)}.`,
      { field },
    );
  }
  const ref = resolveLibrary(input, config);
  if (ref.type === 'group') {
    throw new ZoteusError(
      'validation_error',
      `Zotero keeps linked files only in your own library ("My Library"), so group ${ref.id} cannot hold a link to a file on this computer: nothing was attached.`,
      {
        field: ref.source === 'argument' ? 'library_id' : 'link',
        hint: `Attach a copy to the group instead (without ${paramRef('link')}), or link the file under an item of your own library.`,
      },
    );
  }
}

/** The dry-run plan: what each file is and where it would go, read from disk only (streamed). */
export function planAttach(deps: Pick<Deps, 'fileRoot'>, input: AttachFileInput): Record<string, unknown> {
  checkAttachInput(deps, input);
  const files: Array<Record<string, unknown>> = [];
  if (input.content_base64 !== undefined) {
    const bytes = Buffer.from(input.content_base64, 'base64');
    const filename = input.filename as string;
    files.push(
      planned(input, filename, filename, bytes.length, createHash('md5').update(bytes).digest('hex'), bytes),
    );
  }
  for (const file of input.path ?? []) {
    const full = resolve(file);
    let fd: number;
    try {
      fd = openSync(full, 'r');
    } catch {
      throw new ZoteusError('not_found', `No such file: ${file}.`, { field: 'path' });
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile())
        throw new ZoteusError('validation_error', `${file} is not a file.`, { field: 'path' });
      const hash = createHash('md5');
      const buffer = Buffer.alloc(1024 * 1024);
      let head: Buffer | undefined;
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, null);
        if (n === 0) break;
        head ??= Buffer.from(buffer.subarray(0, Math.min(n, 4096)));
        hash.update(buffer.subarray(0, n));
      }
      files.push(
        planned(input, file, basename(full), info.size, hash.digest('hex'), head ?? Buffer.alloc(0)),
      );
    } finally {
      closeSync(fd);
    }
  }
  const k = input.parent_item;
  if (input.link) {
    return {
      parent_item: k,
      link: true,
      target: `${files.length === 1 ? 'A linked-file attachment' : `${files.length} linked-file attachments`} under ${k}, pointing at ${files.length === 1 ? 'the file' : 'each file'} where it is (its absolute path): nothing is uploaded, and Zotero opens the file from there.`,
      files: files.map((f) => ({ ...f, path: resolve(f.file as string) })),
    };
  }
  return {
    parent_item: k,
    target:
      files.length === 1
        ? `A new attachment item under ${k}; or, if ${k} is itself a stored-file attachment, a new version of attachment ${k} (its previous file replaced, no item created). A dry run reads no library, so which one is decided when it runs.`
        : `${files.length} new attachment items under ${k} (refused if ${k} is itself an attachment: a new version of attachment ${k} takes exactly one file).`,
    files,
  };
}

function planned(
  input: AttachFileInput,
  file: string,
  filename: string,
  size: number,
  md5: string,
  head: Uint8Array,
): Record<string, unknown> {
  return {
    file,
    filename,
    title: input.title ?? filename,
    size,
    md5,
    contentType: detectContentType(head.subarray(0, 4096), filename),
  };
}

/** The input that retries only the files of `previous.failed` (idempotency retries). */
export function retryAttachInput(input: AttachFileInput, previous: AttachFileOutput): AttachFileInput | null {
  const failed = [...previous.failed].sort((a, b) => a.index - b.index);
  if (failed.length === 0) return null;
  if (input.content_base64 !== undefined) return input;
  const paths = input.path ?? [];
  return { ...input, path: failed.map((f) => paths[f.index] as string) };
}

/** A retry's output merged into the earlier one, its failures at the earlier input's indexes. */
export function mergeAttachRetry(previous: AttachFileOutput, retry: AttachFileOutput): AttachFileOutput {
  const at = [...previous.failed].sort((a, b) => a.index - b.index).map((f) => f.index);
  const out: AttachFileOutput = {
    parentItem: previous.parentItem,
    succeeded: [...previous.succeeded, ...retry.succeeded],
    failed: retry.failed.map((f) => ({ ...f, index: at[f.index] ?? f.index })),
  };
  const v = Math.max(previous.libraryVersion ?? 0, retry.libraryVersion ?? 0);
  if (v > 0) out.libraryVersion = v;
  return out;
}
