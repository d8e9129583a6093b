/**
 * Attaching files through the Web API's upload protocol (docs `zotero/file-uploads.md`), one
 * file at a time and never claiming a file landed unless the server says so: create the
 * `imported_file` attachment item (keyed creates, `writes/create.ts`), ask for an upload
 * authorization (md5, filename, filesize, mtime in ms; `If-None-Match: *`), stream prefix +
 * file + suffix to the storage URL (no Zotero headers there), register the upload, then read
 * the item back and compare its md5. `exists` skips the upload. A file that fails after its
 * item was created has the item moved to the trash (conventions.md allows it for an object the
 * same request created), or its key reported when even that fails.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { paramRef } from '../call/refs.js';
import { toZoteusError, ZoteusError, type ErrorCode } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary, type WebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import type { CallContext, WriteBatchResult, ZoteroObject } from '../zotero/index.js';
import { createObjects } from '../writes/index.js';
import { detectContentType } from './content-type.js';

/** At most this many decoded bytes of `content_base64` (keeps an MCP message under 10 MB). */
export const MAX_INLINE_BYTES = 7 * 1024 * 1024;
/** Files from this size on report their upload's progress. */
export const PROGRESS_FROM_BYTES = 8 * 1024 * 1024;
const STORAGE_TIMEOUT_MS = 120_000;

export interface AttachFileInput extends LibraryArgs {
  parent_item: string;
  path?: readonly string[] | undefined;
  content_base64?: string | undefined;
  filename?: string | undefined;
  title?: string | undefined;
}

/** One file to attach: where its bytes come from, with what the protocol needs to know. */
interface Source {
  /** What the user named: the path, or the filename of inline content. */
  file: string;
  filename: string;
  size: number;
  /** Modification time in milliseconds. */
  mtime: number;
  md5: string;
  contentType: string;
  open(): Readable;
}

export interface AttachedFile {
  file: string;
  key: string;
  filename: string;
  title: string;
  contentType: string;
  size: number;
  md5: string;
  /** `uploaded`: the bytes were sent; `exists`: the server already had them. */
  upload: 'uploaded' | 'exists';
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
  if (paths.length > 0 && deps.fileRoot !== undefined) {
    throw new ZoteusError(
      'permission_denied',
      `This is a shared deployment: ${paramRef('path')} would read a file on the server's own machine, which callers may not do.`,
      {
        field: 'path',
        hint: `Send the bytes as ${paramRef('content_base64')} with ${paramRef('filename')}.`,
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

/** Reads each file once (md5, first bytes) to know what will be sent; no network. */
async function sources(input: AttachFileInput): Promise<Source[]> {
  if (input.content_base64 !== undefined) {
    const bytes = Buffer.from(input.content_base64, 'base64');
    if (bytes.length > MAX_INLINE_BYTES) {
      throw new ZoteusError(
        'validation_error',
        `${paramRef('content_base64')} decodes to ${bytes.length} bytes; at most ${MAX_INLINE_BYTES} (7 MB) fit in one message.`,
        { field: 'content_base64' },
      );
    }
    const filename = input.filename as string;
    return [
      {
        file: filename,
        filename,
        size: bytes.length,
        mtime: Date.now(),
        md5: createHash('md5').update(bytes).digest('hex'),
        contentType: detectContentType(bytes.subarray(0, 4096), filename),
        open: () => Readable.from([bytes]),
      },
    ];
  }
  const out: Source[] = [];
  for (const file of input.path ?? []) {
    const full = resolve(file);
    let info;
    try {
      info = await stat(full);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ZoteusError(
        code === 'ENOENT' ? 'not_found' : 'validation_error',
        code === 'ENOENT' ? `No such file: ${file}.` : `Cannot read ${file}: ${(error as Error).message}.`,
        { field: 'path' },
      );
    }
    if (!info.isFile())
      throw new ZoteusError('validation_error', `${file} is not a file.`, { field: 'path' });
    const filename = basename(full);
    const handle = await open(full, 'r');
    const head = Buffer.alloc(4096);
    let read: number;
    try {
      ({ bytesRead: read } = await handle.read(head, 0, head.length, 0));
    } finally {
      await handle.close();
    }
    const hash = createHash('md5');
    for await (const chunk of createReadStream(full)) hash.update(chunk as Buffer);
    out.push({
      file,
      filename,
      size: info.size,
      mtime: Math.round(info.mtimeMs),
      md5: hash.digest('hex'),
      contentType: detectContentType(head.subarray(0, read), filename),
      open: () => createReadStream(full),
    });
  }
  return out;
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
  return { parent_item: input.parent_item, files };
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

interface UploadAuth {
  exists?: unknown;
  url?: unknown;
  contentType?: unknown;
  prefix?: unknown;
  suffix?: unknown;
  uploadKey?: unknown;
}

/** A file's failure at one step, with what the user should know. */
class StepError extends Error {
  constructor(
    readonly code: number,
    readonly reason: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export async function attachFiles(deps: Deps, input: AttachFileInput): Promise<AttachFileOutput> {
  checkAttachInput(deps, input);
  const list = await sources(input);
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  if (lib.ref.type === 'group') await checkGroupFileEditing(lib, call);

  const created = await createItems(deps, lib, input, list, call);
  const out: AttachFileOutput = { parentItem: input.parent_item, succeeded: [], failed: [] };
  let libraryVersion = created.libraryVersion;
  const noteVersion = (v: number | undefined): void => {
    if (v !== undefined) libraryVersion = Math.max(libraryVersion ?? 0, v);
  };
  for (const f of created.failed) {
    const s = list[f.index] as Source;
    const parent = (f.code === 409 || f.code === 404) && /parent/i.test(f.message);
    out.failed.push({
      index: f.index,
      file: s.file,
      code: f.code,
      reason: parent ? 'not_found' : (f.reason as ErrorCode),
      message: parent
        ? `The parent item ${input.parent_item} does not exist in library ${lib.prefix}: nothing was attached.`
        : `Zotero refused the attachment item (HTTP ${f.code}): ${f.message}`,
    });
  }
  for (const made of created.successful) {
    const s = list[made.index] as Source;
    const title = input.title ?? s.filename;
    try {
      const upload = await uploadOne(deps, lib, made.key, s, call, made.index, list.length);
      const item = await readItem(lib, made.key, call);
      noteVersion(item.version);
      if (item.data?.md5 !== s.md5) {
        throw new StepError(
          0,
          'api_error',
          `After the upload the library reports md5 ${String(item.data?.md5 ?? 'none')} for ${made.key}, not the file's ${s.md5}: the stored file is not this file.`,
        );
      }
      out.succeeded.push({
        file: s.file,
        key: made.key,
        filename: s.filename,
        title,
        contentType: s.contentType,
        size: s.size,
        md5: s.md5,
        upload,
      });
    } catch (error) {
      const e = stepError(error);
      const mismatch = e.reason === 'api_error' && e.code === 0 && /not the file's/.test(e.message);
      const entry: FailedFile = {
        index: made.index,
        file: s.file,
        code: e.code,
        reason: e.reason,
        message: e.message,
      };
      if (mismatch) {
        entry.key = made.key;
      } else if (await trash(lib, made.key, made.object, call)) {
        entry.trashed = true;
        entry.message += ` The empty attachment item ${made.key} was moved to the trash.`;
      } else {
        entry.key = made.key;
        entry.message += ` The empty attachment item ${made.key} could not be moved to the trash: delete it.`;
      }
      out.failed.push(entry);
    }
  }
  out.failed.sort((a, b) => a.index - b.index);
  if (libraryVersion !== undefined) out.libraryVersion = libraryVersion;
  return out;
}

/** Generations of keys one file may use: a later one when an earlier attempt's item is in the trash. */
const GENERATIONS = 3;

/**
 * Creates the attachment items, one per file, with keys derived from each file (md5, name, its
 * occurrence), so a retry of the same request finds its items. An item an earlier attempt of
 * this request moved to the trash (its upload failed) is not reused: the file gets a new key.
 */
async function createItems(
  deps: Deps,
  lib: WebLibrary,
  input: AttachFileInput,
  list: readonly Source[],
  call: CallContext,
): Promise<WriteBatchResult<ZoteroObject>> {
  const seen = new Map<string, number>();
  const labels = list.map((s) => {
    const base = `attach/${s.md5}/${s.filename}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return `${base}#${n}`;
  });
  const all: WriteBatchResult<ZoteroObject> = {
    successful: [],
    unchanged: [],
    failed: [],
    libraryVersion: undefined,
  };
  let pending = list.map((_, i) => i);
  for (let generation = 0; pending.length > 0 && generation < GENERATIONS; generation++) {
    const result = await createObjects(lib.client, {
      library: lib.prefix,
      kind: 'items',
      objects: pending.map((i) => {
        const s = list[i] as Source;
        return {
          itemType: 'attachment',
          linkMode: 'imported_file',
          parentItem: input.parent_item,
          title: input.title ?? s.filename,
          filename: s.filename,
          contentType: s.contentType,
          md5: null,
          mtime: null,
          tags: [],
          relations: {},
        };
      }),
      labels: pending.map((i) => `${labels[i] as string}/${generation}`),
      ids: deps.writeIds,
      call,
    });
    if (result.libraryVersion !== undefined)
      all.libraryVersion = Math.max(all.libraryVersion ?? 0, result.libraryVersion);
    const again: number[] = [];
    for (const f of result.failed) all.failed.push({ ...f, index: pending[f.index] as number });
    for (const made of result.successful) {
      const index = pending[made.index] as number;
      if ((made.object?.data as { deleted?: unknown } | undefined)?.deleted) again.push(index);
      else all.successful.push({ ...made, index });
    }
    pending = again;
  }
  for (const index of pending) {
    all.failed.push({
      index,
      key: undefined,
      code: 0,
      reason: 'conflict',
      message: `Earlier attempts of this request left ${GENERATIONS} attachment items in the trash; call again without the same idempotency key.`,
    } as never);
  }
  all.successful.sort((x, y) => x.index - y.index);
  return all;
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

function stepError(error: unknown): StepError {
  if (error instanceof StepError) return error;
  const err = toZoteusError(error);
  return new StepError(err.status ?? 0, err.code, err.message);
}

/** A group lets members, only admins, or nobody edit files (`fileEditing` of its metadata). */
async function checkGroupFileEditing(lib: WebLibrary, call: CallContext): Promise<void> {
  const answer = await lib.client.request<{ data?: Record<string, unknown> }>(
    'GET',
    `/groups/${lib.ref.id}`,
    {
      call,
    },
  );
  const data = answer.data?.data ?? {};
  const name = typeof data.name === 'string' ? data.name : `group ${lib.ref.id}`;
  const editing = typeof data.fileEditing === 'string' ? data.fileEditing : 'members';
  const user = lib.keyInfo.userID;
  const admins = Array.isArray(data.admins) ? data.admins : [];
  const admin = data.owner === user || admins.includes(user);
  if (editing === 'none' || (editing === 'admins' && !admin)) {
    throw new ZoteusError(
      'permission_denied',
      `The group '${name}' (${lib.ref.id}) lets ${editing === 'none' ? 'nobody' : 'only its admins'} edit files, so no file can be attached there: nothing was created.`,
      {
        hint: 'Ask a group admin to change the group’s file editing setting, or attach the file in your own library.',
      },
    );
  }
}

async function readItem(lib: WebLibrary, key: string, call: CallContext): Promise<ZoteroObject> {
  const read = await lib.client.getByKeys(lib.prefix, 'items', [key], { call });
  const item = read.byKey.get(key);
  if (!item) throw new StepError(404, 'not_found', `The attachment item ${key} is gone from the library.`);
  return item;
}

async function trash(
  lib: WebLibrary,
  key: string,
  object: ZoteroObject | undefined,
  call: CallContext,
): Promise<boolean> {
  try {
    const version = object?.version ?? (await readItem(lib, key, call)).version;
    try {
      await lib.client.patch(lib.prefix, 'items', key, { deleted: 1 }, version, { call });
    } catch (error) {
      if (toZoteusError(error).status !== 412) throw error;
      // The upload steps moved the item on: trash it at its current version.
      await lib.client.patch(
        lib.prefix,
        'items',
        key,
        { deleted: 1 },
        (await readItem(lib, key, call)).version,
        { call },
      );
    }
    return true;
  } catch {
    return false;
  }
}

/** Authorization, upload and registration of one file; `exists` when the server had the bytes. */
async function uploadOne(
  deps: Deps,
  lib: WebLibrary,
  key: string,
  s: Source,
  call: CallContext,
  index: number,
  total: number,
): Promise<'uploaded' | 'exists'> {
  const path = `/${lib.prefix}/items/${key}/file`;
  let precondition: Record<string, string> = { 'If-None-Match': '*' };
  const form = {
    md5: s.md5,
    filename: s.filename,
    filesize: String(s.size),
    mtime: String(s.mtime),
    contentType: s.contentType,
  };
  let auth: UploadAuth | undefined;
  for (let attempt = 0; auth === undefined; attempt++) {
    try {
      auth =
        (await lib.client.request<UploadAuth>('POST', path, { form, headers: precondition, call })).data ??
        {};
    } catch (error) {
      const err = toZoteusError(error);
      if (err.status === 412 && attempt === 0) {
        // The file changed meanwhile (an earlier attempt, another client): read what is stored.
        const item = await readItem(lib, key, call);
        const stored = item.data?.md5;
        if (stored === s.md5) return 'exists';
        if (typeof stored === 'string' && stored) precondition = { 'If-Match': stored };
        continue;
      }
      throw authFailure(lib, err, s);
    }
  }
  if (auth.exists) return 'exists';
  if (typeof auth.url !== 'string' || typeof auth.uploadKey !== 'string') {
    throw new StepError(0, 'api_error', `The upload authorization for ${s.file} gave no upload address.`);
  }
  await sendToStorage(deps, auth, s, index, total);
  try {
    await lib.client.request('POST', path, { form: { upload: auth.uploadKey }, headers: precondition, call });
  } catch (error) {
    const err = toZoteusError(error);
    throw new StepError(
      err.status ?? 0,
      err.code,
      `The file reached the storage server but Zotero did not register it: ${err.message}`,
    );
  }
  return 'uploaded';
}

function authFailure(lib: WebLibrary, err: ZoteusError, s: Source): StepError {
  if (err.status === 413) {
    const m = /File would exceed quota \((\d+(?:\.\d+)?) > (\d+(?:\.\d+)?)\)/.exec(err.message);
    let free = '';
    if (m) {
      const quota = Number(m[2]);
      const freeMb = Math.max(0, quota - (Number(m[1]) - s.size / 1_000_000));
      free = ` (${Math.round(freeMb * 10) / 10} MB free of ${quota} MB)`;
    }
    return new StepError(
      413,
      'validation_error',
      `${s.file} (${s.size} bytes) does not fit in the library's file storage${free}: Zotero refused it as over quota.`,
    );
  }
  if (err.status === 403 && /file editing denied/i.test(err.message)) {
    return new StepError(
      403,
      'permission_denied',
      `${lib.ref.type === 'group' ? `The group ${lib.ref.id}` : 'This library'} does not let this key edit files (Zotero: File editing denied).`,
    );
  }
  return new StepError(err.status ?? 0, err.code, err.message);
}

/** POSTs prefix + file + suffix to the storage URL, streamed from disk, with no Zotero headers. */
function sendToStorage(deps: Deps, auth: UploadAuth, s: Source, index: number, total: number): Promise<void> {
  const prefix = Buffer.from(typeof auth.prefix === 'string' ? auth.prefix : '');
  const suffix = Buffer.from(typeof auth.suffix === 'string' ? auth.suffix : '');
  const url = new URL(auth.url as string);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const length = prefix.length + s.size + suffix.length;
  const report = s.size >= PROGRESS_FROM_BYTES;
  const phase = `upload ${index + 1}/${total}`;
  if (report) deps.progress({ event: 'start', phase, done: 0, total: s.size });
  return new Promise<void>((done, fail) => {
    const req = send(url, {
      method: 'POST',
      headers: {
        'Content-Type': typeof auth.contentType === 'string' ? auth.contentType : 'application/octet-stream',
        'Content-Length': String(length),
      },
      timeout: STORAGE_TIMEOUT_MS,
    });
    const failWith = (message: string, code = 0): void => {
      req.destroy();
      fail(new StepError(code, code === 0 ? 'network_error' : 'api_error', message));
    };
    req.on('timeout', () =>
      failWith(`The upload of ${s.file} to the storage server stalled; nothing was registered.`),
    );
    req.on('error', (error) =>
      failWith(
        `The upload of ${s.file} to the storage server failed (${error.message}); nothing was registered.`,
      ),
    );
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        if (chunks.length < 4) chunks.push(c);
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          if (report) deps.progress({ event: 'complete', phase, done: s.size, total: s.size });
          done();
          return;
        }
        const said = Buffer.concat(chunks).toString('utf8').slice(0, 200).trim();
        failWith(
          `The storage server refused ${s.file} (HTTP ${status})${said ? `: ${said}` : ''}; nothing was registered.`,
          status,
        );
      });
    });
    req.write(prefix);
    const body = s.open();
    let sent = 0;
    let lastReported = 0;
    body.on('data', (chunk: Buffer | string) => {
      sent += chunk.length;
      if (report && sent - lastReported >= PROGRESS_FROM_BYTES) {
        lastReported = sent;
        deps.progress({ event: 'progress', phase, done: sent, total: s.size });
      }
      if (!req.write(chunk)) {
        body.pause();
        req.once('drain', () => body.resume());
      }
    });
    body.on('error', (error) => failWith(`Reading ${s.file} failed during the upload: ${error.message}.`));
    body.on('end', () => {
      if (sent !== s.size) {
        failWith(
          `${s.file} changed during the upload (${sent} bytes read, ${s.size} expected); nothing was registered.`,
        );
        return;
      }
      req.end(suffix);
    });
  });
}
