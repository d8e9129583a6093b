/**
 * The Web API file upload protocol (docs `zotero/file-uploads.md`): `POST {lib}/items/{key}/file`
 * asks for an upload authorization (md5, filename, filesize, mtime in ms; `If-None-Match: *` or
 * `If-Match: <md5>`) and registers an upload (`upload=<uploadKey>`); the bytes go to a separate
 * storage URL on this server (`/storage/upload/<uploadKey>`, no Zotero key needed, as on S3),
 * as `prefix` + file + `suffix`, which the server streams through an MD5 and never buffers.
 * `exists` when the server already holds those bytes, `412`, `413` with a per-library quota,
 * group `fileEditing`, and fault injection (a failed registration, a wrong stored md5, a
 * connection reset after the first N bytes of a storage upload).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError, send, type Ctx } from './http.js';
import type { Library, ServerState } from './state.js';
import type { TestLibrary } from './types.js';

export const STORAGE_PREFIX = '/storage/upload/';

const FILE_LINK_MODES = new Set(['imported_file', 'imported_url', 'embedded_image']);

interface PendingUpload {
  lib: string;
  itemKey: string;
  md5: string;
  filename: string;
  filesize: number;
  mtime: number;
  contentType: string;
  prefix: string;
  suffix: string;
  /** Set once the storage URL took the bytes with the right md5. */
  received: boolean;
}

export interface StoredFile {
  md5: string;
  filename: string;
  size: number;
  mtime: number;
  contentType: string;
}

/** What tests see and steer of the file side of the server. */
export interface FileStore {
  /** Stored files by `users/1/ITEMKEY`. */
  readonly files: Map<string, StoredFile>;
  /** Storage quota of a library (`users/1`), in MB; default unlimited. */
  setQuota(library: string, mb: number | undefined): void;
  /** Bytes the server already holds, found by md5 (any library): authorization answers `exists`. */
  addBlob(md5: string, size: number): void;
  /** The next `times` registrations answer `status` (default 400 "Remote file not found"). */
  failRegistration(o?: { status?: number; body?: string; times?: number }): void;
  /** The next `times` registrations store a wrong md5 (a corrupted copy). */
  corruptStoredMd5(times?: number): void;
  /**
   * The next `times` storage uploads have their connection reset (a TCP RST) once `bytes` of
   * the body arrived: the upload key stays unused, nothing is stored.
   */
  resetUploadAfter(bytes: number, times?: number): void;
  /** A file already stored for an attachment item: the item gets its md5, mtime and filename. */
  seedFile(library: TestLibrary, itemKey: string, file: StoredFile): void;
  /** Bytes of the storage upload bodies received so far (prefix and suffix included). */
  readonly bytesReceived: number;
}

export class Uploads implements FileStore {
  readonly files = new Map<string, StoredFile>();
  private readonly pending = new Map<string, PendingUpload>();
  private readonly blobs = new Map<string, number>();
  private readonly quotas = new Map<string, number>();
  private registrationFaults: Array<{ status: number; body: string }> = [];
  private corrupt = 0;
  private resets: number[] = [];
  bytesReceived = 0;

  setQuota(library: string, mb: number | undefined): void {
    if (mb === undefined) this.quotas.delete(library);
    else this.quotas.set(library, mb);
  }

  addBlob(md5: string, size: number): void {
    this.blobs.set(md5, size);
  }

  failRegistration(o: { status?: number; body?: string; times?: number } = {}): void {
    for (let i = 0; i < (o.times ?? 1); i++) {
      this.registrationFaults.push({ status: o.status ?? 400, body: o.body ?? 'Remote file not found' });
    }
  }

  corruptStoredMd5(times = 1): void {
    this.corrupt += times;
  }

  resetUploadAfter(bytes: number, times = 1): void {
    for (let i = 0; i < times; i++) this.resets.push(bytes);
  }

  seedFile(library: TestLibrary, itemKey: string, file: StoredFile): void {
    // The server's own library object (`server.library(prefix)`), typed for tests.
    const lib = library as Library;
    if (!lib.items.has(itemKey)) throw new Error(`No item ${itemKey} in ${lib.prefix}`);
    this.store(lib, itemKey, file);
  }

  private usageMb(library: string): number {
    let bytes = 0;
    for (const [where, f] of this.files) if (where.startsWith(`${library}/`)) bytes += f.size;
    return bytes / 1_000_000;
  }

  /** `POST {lib}/items/{key}/file`: authorization or registration. */
  handleFile(ctx: Ctx, state: ServerState, lib: Library, itemKey: string): true {
    const item = lib.items.get(itemKey);
    if (!item || item.deleted) throw new HttpError(404, 'Not found');
    if (item.itemType !== 'attachment' || !FILE_LINK_MODES.has(String(item.linkMode))) {
      throw new HttpError(400, 'Item is not a file attachment');
    }
    checkFileEditing(ctx, state, lib);
    const where = `${lib.prefix}/${itemKey}`;
    const current = this.files.get(where);
    const ifMatch = ctx.headers['if-match'];
    const ifNoneMatch = ctx.headers['if-none-match'];
    if (ifMatch === undefined && ifNoneMatch === undefined) {
      throw new HttpError(428, 'If-Match/If-None-Match header not provided');
    }
    if (ifNoneMatch !== undefined && ifNoneMatch !== '*')
      throw new HttpError(400, 'Invalid If-None-Match value');
    if (ifNoneMatch === '*' && current) throw new HttpError(412, 'If-None-Match: * set but file exists');
    if (ifMatch !== undefined && (!current || current.md5 !== ifMatch)) {
      throw new HttpError(
        412,
        current ? 'ETag does not match current version of file' : 'If-Match set but file does not exist',
      );
    }
    const form = new URLSearchParams(ctx.rawBody);
    const uploadKey = form.get('upload');
    if (uploadKey !== null) return this.register(ctx, lib, itemKey, uploadKey);
    return this.authorize(ctx, lib, itemKey, form);
  }

  private authorize(ctx: Ctx, lib: Library, itemKey: string, form: URLSearchParams): true {
    const md5 = form.get('md5') ?? '';
    const filename = form.get('filename') ?? '';
    const filesize = form.get('filesize') ?? '';
    const mtime = form.get('mtime') ?? '';
    if (!/^[0-9a-f]{32}$/.test(md5)) throw new HttpError(400, 'Invalid md5');
    if (!filename) throw new HttpError(400, 'Filename not provided');
    if (!/^\d+$/.test(filesize)) throw new HttpError(400, 'Invalid filesize');
    if (Number(filesize) > 4_000_000_000) throw new HttpError(400, 'File exceeds maximum size');
    if (!/^\d+$/.test(mtime)) throw new HttpError(400, 'Invalid mtime');
    const size = Number(filesize);
    const quota = this.quotas.get(lib.prefix);
    if (quota !== undefined) {
      const total = this.usageMb(lib.prefix) + size / 1_000_000;
      if (total > quota) {
        throw new HttpError(413, `File would exceed quota (${round(total)} > ${quota})`, {
          'Zotero-Storage-Usage': String(round(this.usageMb(lib.prefix))),
          'Zotero-Storage-Quota': String(quota),
          'Zotero-Storage-UserID': String(lib.id),
        });
      }
    }
    const contentType = form.get('contentType') ?? 'application/octet-stream';
    if (this.blobs.get(md5) === size) {
      this.store(lib, itemKey, { md5, filename, size, mtime: Number(mtime), contentType });
      send(ctx, 200, { exists: 1 });
      return true;
    }
    const uploadKey = randomBytes(16).toString('hex');
    const boundary = `----zotero-test-${randomBytes(8).toString('hex')}`;
    const prefix = `--${boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n${uploadKey}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`;
    const suffix = `\r\n--${boundary}--`;
    this.pending.set(uploadKey, {
      lib: lib.prefix,
      itemKey,
      md5,
      filename,
      filesize: size,
      mtime: Number(mtime),
      contentType,
      prefix,
      suffix,
      received: false,
    });
    send(ctx, 200, {
      url: `${ctx.base}${STORAGE_PREFIX}${uploadKey}`,
      contentType: `multipart/form-data; boundary=${boundary}`,
      prefix,
      suffix,
      uploadKey,
    });
    return true;
  }

  private register(ctx: Ctx, lib: Library, itemKey: string, uploadKey: string): true {
    const up = this.pending.get(uploadKey);
    if (!up || up.lib !== lib.prefix || up.itemKey !== itemKey)
      throw new HttpError(400, 'Upload key not found');
    const fault = this.registrationFaults.shift();
    if (fault) throw new HttpError(fault.status, fault.body);
    if (!up.received) throw new HttpError(400, 'Remote file not found');
    this.pending.delete(uploadKey);
    let md5 = up.md5;
    if (this.corrupt > 0) {
      this.corrupt--;
      md5 = createHash('md5').update(`corrupted ${md5}`).digest('hex');
    }
    this.blobs.set(up.md5, up.filesize);
    const version = this.store(lib, itemKey, {
      md5,
      filename: up.filename,
      size: up.filesize,
      mtime: up.mtime,
      contentType: up.contentType,
    });
    send(ctx, 204, undefined, { 'Last-Modified-Version': String(version) });
    return true;
  }

  /** Records the file and gives the item its new `filename`, `md5`, `mtime` and version. */
  private store(lib: Library, itemKey: string, file: StoredFile): number {
    this.files.set(`${lib.prefix}/${itemKey}`, file);
    const item = lib.items.get(itemKey);
    lib.version++;
    if (item) {
      item.md5 = file.md5;
      item.mtime = file.mtime;
      item.filename = file.filename;
      item.version = lib.version;
      item.dateModified = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
    return lib.version;
  }

  /** `POST /storage/upload/<uploadKey>`: the body streamed through an MD5, never held whole. */
  async receive(ctx: Ctx, req: IncomingMessage, uploadKey: string): Promise<void> {
    const up = this.pending.get(uploadKey);
    if (ctx.method !== 'POST' || !up) {
      req.resume();
      send(ctx, up ? 405 : 404, up ? 'Method not allowed' : 'NoSuchUpload');
      return;
    }
    const prefix = Buffer.from(up.prefix);
    const suffix = Buffer.from(up.suffix);
    const start = prefix.length;
    const end = start + up.filesize;
    const hash = createHash('md5');
    const head: Buffer[] = [];
    const tail: Buffer[] = [];
    let offset = 0;
    const resetAt = this.resets.shift();
    let reset = false;
    await new Promise<void>((resolve, reject) => {
      req.on('data', (chunk: Buffer) => {
        if (reset) return;
        const from = offset;
        offset += chunk.length;
        this.bytesReceived += chunk.length;
        if (resetAt !== undefined && offset >= resetAt) {
          // A connection lost mid-upload: a TCP RST, so the client sees ECONNRESET.
          reset = true;
          ctx.entry.status = 0;
          ctx.entry.fault = 'reset';
          req.socket.resetAndDestroy();
          resolve();
          return;
        }
        if (from < start) head.push(chunk.subarray(0, Math.min(chunk.length, start - from)));
        const a = Math.max(from, start);
        const b = Math.min(offset, end);
        if (b > a) hash.update(chunk.subarray(a - from, b - from));
        if (offset > end) tail.push(chunk.subarray(Math.max(0, end - from)));
      });
      req.on('end', resolve);
      req.on('error', (error) => (reset ? resolve() : reject(error)));
    });
    if (reset) return;
    if (!Buffer.concat(head).equals(prefix) || !Buffer.concat(tail).equals(suffix)) {
      send(ctx, 400, 'MalformedPOSTRequest: the body is not prefix + file + suffix');
      return;
    }
    if (offset !== end + suffix.length || hash.digest('hex') !== up.md5) {
      send(ctx, 400, 'BadDigest: the file does not match the authorized md5 and size');
      return;
    }
    up.received = true;
    send(ctx, 201, undefined);
  }
}

function round(mb: number): number {
  return Math.round(mb * 10) / 10;
}

/** A group's `fileEditing` (`members`, `admins`, `none`) with the member's role. */
function checkFileEditing(ctx: Ctx, state: ServerState, lib: Library): void {
  if (lib.type === 'user') {
    if (!ctx.key?.access.user?.files) throw new HttpError(403, 'File access denied');
    return;
  }
  const group = state.groups.get(lib.id);
  const userID = ctx.key?.userID ?? -1;
  const admin = group !== undefined && (group.owner === userID || group.admins.includes(userID));
  const editing = group?.fileEditing ?? 'members';
  if (editing === 'none' || (editing === 'admins' && !admin)) {
    throw new HttpError(403, 'File editing denied');
  }
}

/** Where the desktop's local API receives upload bodies (`/api/local/uploads/<uploadKey>`). */
export const LOCAL_UPLOAD_PREFIX = '/api/local/uploads/';
/** Local upload keys live in memory for an hour. */
const LOCAL_UPLOAD_TTL_MS = 60 * 60 * 1000;
const LOCAL_MAX_BYTES = 4 * 1024 ** 3;
const LOCAL_FILE_MODES = new Set(['imported_file', 'imported_url']);

/** A file in the desktop's `storage/<KEY>/` directory. */
export interface DiskFile {
  md5: string;
  filename: string;
  size: number;
  /** The file's mtime on disk, in ms (local JSON reports this, not the mtime sent). */
  mtime: number;
}

interface LocalPending {
  lib: string;
  itemKey: string;
  md5: string;
  filename: string;
  contentType: string;
  createdAt: number;
  /** Set once the receiver took bytes with the authorised md5. */
  received?: { size: number };
}

/**
 * The desktop's side of attachment files, as Zotero 10's local API keeps it
 * (`zotero/file-uploads.md`, "Local API"): files on disk (`disk`, whose md5 the item's JSON
 * reports) and the hash of the file last synced with zotero.org (`synced`, what `If-Match` and
 * `If-None-Match: *` are checked against). Upload keys live in memory for an hour.
 *
 * Modelled choices where Zotero's words leave room: `exists:1` and a registration both record
 * the new md5 as the synced hash (so a repeated `If-None-Match: *` gets 412, as on the Web API).
 */
export class LocalFiles {
  /** By `users/1/ITEMKEY`. */
  readonly disk = new Map<string, DiskFile>();
  /** The synced hash (`itemAttachments.storageHash`) by `users/1/ITEMKEY`. */
  readonly synced = new Map<string, string>();
  private readonly pending = new Map<string, LocalPending>();
  /** Bodies the receiver took (bytes after decoding), for tests. */
  received: Array<{ uploadKey: string; contentType: string; bytes: number }> = [];
  now: () => number = Date.now;

  /** A file already on disk for an attachment item; `synced`: it went through file sync. */
  seedDiskFile(library: TestLibrary, itemKey: string, bytes: Buffer, o: { synced?: boolean } = {}): string {
    const lib = library as Library;
    const item = lib.items.get(itemKey);
    if (!item) throw new Error(`No item ${itemKey} in ${lib.prefix}`);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const filename = typeof item.filename === 'string' && item.filename ? item.filename : 'file';
    this.putOnDisk(lib, itemKey, { md5, filename, size: bytes.length, mtime: this.now() }, false);
    if (o.synced) this.synced.set(`${lib.prefix}/${itemKey}`, md5);
    return md5;
  }

  /** `POST {lib}/items/{key}/file` after the key check: authorization or registration. */
  handleFile(ctx: Ctx, state: ServerState, lib: Library, itemKey: string, userID: number): void {
    const item = lib.items.get(itemKey);
    if (!item) throw new HttpError(404, 'Not found');
    if (item.itemType !== 'attachment') throw new HttpError(400, 'Item is not an attachment');
    if (!LOCAL_FILE_MODES.has(String(item.linkMode))) {
      throw new HttpError(400, `Cannot upload a file to a ${String(item.linkMode)} attachment`);
    }
    if (lib.type === 'group') {
      const group = state.groups.get(lib.id);
      const admin = group !== undefined && (group.owner === userID || group.admins.includes(userID));
      const editing = group?.fileEditing ?? 'members';
      if (editing === 'none' || (editing === 'admins' && !admin))
        throw new HttpError(403, 'File editing denied');
    }
    // Params come from the form body only.
    const form = new URLSearchParams(ctx.rawBody);
    const uploadKey = form.get('upload');
    if (uploadKey !== null) return this.register(ctx, lib, itemKey, uploadKey);
    this.checkPrecondition(ctx, lib, itemKey);
    this.authorize(ctx, lib, itemKey, form);
  }

  /** `If-Match` / `If-None-Match: *` against the synced hash, never the file on disk. */
  private checkPrecondition(ctx: Ctx, lib: Library, itemKey: string): void {
    const ifMatch = ctx.headers['if-match'];
    const ifNoneMatch = ctx.headers['if-none-match'];
    if (ifMatch === undefined && ifNoneMatch === undefined) {
      throw new HttpError(428, 'If-Match/If-None-Match header not provided');
    }
    const synced = this.synced.get(`${lib.prefix}/${itemKey}`);
    if (ifNoneMatch !== undefined) {
      if (ifNoneMatch !== '*') throw new HttpError(400, 'Invalid If-None-Match value');
      if (synced !== undefined) throw new HttpError(412, 'If-None-Match: * set but file exists');
    }
    if (ifMatch !== undefined && ifMatch !== synced) {
      throw new HttpError(
        412,
        synced ? 'ETag does not match current version of file' : 'If-Match set but file does not exist',
      );
    }
  }

  private authorize(ctx: Ctx, lib: Library, itemKey: string, form: URLSearchParams): void {
    const md5 = form.get('md5') ?? '';
    const filename = form.get('filename') ?? '';
    const filesize = form.get('filesize') ?? '';
    const mtime = form.get('mtime') ?? '';
    if (!/^[0-9a-f]{32}$/.test(md5)) throw new HttpError(400, 'Invalid md5');
    if (!filename) throw new HttpError(400, 'Filename not provided');
    if (/[/\\]/.test(filename) || filename === '.' || filename === '..')
      throw new HttpError(400, 'Invalid filename');
    if (!/^\d+$/.test(filesize)) throw new HttpError(400, 'Invalid filesize');
    if (Number(filesize) > LOCAL_MAX_BYTES) throw new HttpError(400, 'File is too large');
    // Milliseconds: a value in seconds is refused.
    if (!/^\d+$/.test(mtime) || Number(mtime) < 1e10) throw new HttpError(400, 'Invalid mtime');
    const where = `${lib.prefix}/${itemKey}`;
    if (this.disk.get(where)?.md5 === md5) {
      // The file on disk already has these bytes: Zotero records the hash and mtime.
      this.synced.set(where, md5);
      send(ctx, 200, { exists: 1 });
      return;
    }
    const uploadKey = randomBytes(16).toString('hex');
    this.pending.set(uploadKey, {
      lib: lib.prefix,
      itemKey,
      md5,
      filename,
      contentType: form.get('contentType') ?? 'application/octet-stream',
      createdAt: this.now(),
    });
    const host = ctx.headers.host ?? '127.0.0.1';
    const answer: Record<string, unknown> = {
      url: `http://${host}${LOCAL_UPLOAD_PREFIX}${uploadKey}`,
      contentType: 'application/octet-stream',
      prefix: '',
      suffix: '',
      uploadKey,
    };
    if (form.get('params') === '1') {
      delete answer.prefix;
      delete answer.suffix;
      delete answer.contentType;
      answer.params = { key: md5 };
    }
    send(ctx, 200, answer);
  }

  private register(ctx: Ctx, lib: Library, itemKey: string, uploadKey: string): void {
    const up = this.live(uploadKey);
    if (!up || up.lib !== lib.prefix || up.itemKey !== itemKey)
      throw new HttpError(400, 'Upload key not found');
    if (!up.received) throw new HttpError(400, 'File not yet uploaded');
    try {
      this.checkPrecondition(ctx, lib, itemKey);
    } catch (error) {
      // The recheck failed: the upload is discarded, the old file left alone.
      if (error instanceof HttpError && error.status === 412) this.pending.delete(uploadKey);
      throw error;
    }
    this.pending.delete(uploadKey);
    const where = `${lib.prefix}/${itemKey}`;
    // The stored file's mtime is the upload time, not the mtime sent.
    this.putOnDisk(
      lib,
      itemKey,
      { md5: up.md5, filename: up.filename, size: up.received.size, mtime: this.now() },
      true,
    );
    this.synced.set(where, up.md5);
    send(ctx, 204, undefined);
  }

  /** The file on disk, and the item's JSON (`md5`, `mtime`, `filename` from disk). */
  private putOnDisk(lib: Library, itemKey: string, file: DiskFile, save: boolean): void {
    this.disk.set(`${lib.prefix}/${itemKey}`, file);
    const item = lib.items.get(itemKey);
    if (!item) return;
    item.md5 = file.md5;
    item.mtime = file.mtime;
    item.filename = file.filename;
    if (save) {
      lib.version++;
      item.version = lib.version;
      item.dateModified = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
  }

  private live(uploadKey: string): LocalPending | undefined {
    const up = this.pending.get(uploadKey);
    if (up && this.now() - up.createdAt > LOCAL_UPLOAD_TTL_MS) {
      this.pending.delete(uploadKey);
      return undefined;
    }
    return up;
  }

  /**
   * `POST /api/local/uploads/<uploadKey>` (no key, no server id needed): the body raw
   * (`application/octet-stream`) or a multipart `file` part, with `Content-Length`. Only the
   * md5 is checked: `201`; a mismatch `400` and the key discarded; an unknown key `404`.
   */
  async receive(ctx: Ctx, uploadKey: string): Promise<void> {
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      ctx.req.on('data', (c: Buffer) => chunks.push(c));
      ctx.req.on('end', resolve);
      ctx.req.on('error', reject);
    });
    if (ctx.method !== 'POST') throw new HttpError(400, 'Endpoint does not support method');
    const up = this.live(uploadKey);
    if (!up) throw new HttpError(404, 'Upload key not found');
    if (
      /chunked/i.test(ctx.headers['transfer-encoding'] ?? '') ||
      ctx.headers['content-length'] === undefined
    ) {
      throw new HttpError(400, 'Content-Length is required');
    }
    const type = (ctx.headers['content-type'] ?? '').toLowerCase();
    let bytes: Buffer = Buffer.concat(chunks);
    if (type.startsWith('multipart/form-data')) {
      const part = multipartFile(bytes, type);
      if (!part) throw new HttpError(400, "No 'file' part");
      bytes = part;
    } else if (type.startsWith('text/plain')) {
      // Decoded as UTF-8: binary bytes do not survive.
      bytes = Buffer.from(bytes.toString('utf8'), 'utf8');
    } else if (type.startsWith('application/json') || type.startsWith('application/x-www-form-urlencoded')) {
      throw new HttpError(400, `Invalid content type '${type}'`);
    }
    this.received.push({ uploadKey, contentType: type, bytes: bytes.length });
    if (createHash('md5').update(bytes).digest('hex') !== up.md5) {
      this.pending.delete(uploadKey);
      throw new HttpError(400, 'File hash does not match');
    }
    up.received = { size: bytes.length };
    send(ctx, 201, undefined);
  }
}

/** The `file` part of a multipart body. */
function multipartFile(body: Buffer, type: string): Buffer | undefined {
  const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next < 0) return undefined;
    const part = body.subarray(at + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0 && /name="file"/.test(part.subarray(0, split).toString('latin1')))
      return part.subarray(split + 4);
    at = next;
  }
  return undefined;
}
