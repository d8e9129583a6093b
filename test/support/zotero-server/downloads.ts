/**
 * The Web API's file downloads (docs `zotero/file-uploads.md`, "Download"): `GET
 * {lib}/items/{key}/file` answers `302` with `Zotero-File-MD5`, `-Size`, `-Modification-Time`
 * and `-Compressed` to a URL on a separate storage host (another port of 127.0.0.1, so another
 * origin, as S3 is: a client that sends Zotero's key or headers there is seen doing so in the
 * log), which serves the bytes with an `ETag` of their MD5, streamed from disk.
 *
 * The bytes come from the upload route (each storage upload body is kept, on disk, and found
 * again by the MD5 of its file part, so `exists` and re-uploads serve the same bytes) or from
 * `putFile`, which records a file as a finished upload would (and may record a wrong MD5: a
 * corrupted copy in the cloud). Test code only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Faults } from './faults.js';
import { headerRecord, HttpError, queryRecord, send, type Ctx } from './http.js';
import type { Library, ServerState } from './state.js';
import type { RequestLogEntry } from './types.js';
import type { Uploads } from './uploads.js';

export const DOWNLOAD_PREFIX = '/storage/download/';

const FILE_LINK_MODES = new Set(['imported_file', 'imported_url', 'embedded_image']);

/** Bytes on disk: `size` bytes of `path` from `start`. */
interface Blob {
  path: string;
  start: number;
  size: number;
  /** The MD5 of those bytes. */
  md5: string;
}

/** What tests see and steer of the download side of the server. */
export interface DownloadStore {
  /** The storage host's origin: `http://127.0.0.1:PORT`, another port than the API's. */
  readonly url: string;
  /**
   * Stores `bytes` as the attachment's file, as a finished upload would: the item gets the
   * file's `md5` (or `o.md5`, a wrong record: the cloud's copy differs), `filename`, `mtime`,
   * `contentType` and a new version.
   */
  putFile(
    library: string,
    itemKey: string,
    bytes: Buffer,
    o?: { md5?: string; filename?: string; contentType?: string; mtime?: number },
  ): void;
  /** The next `times` storage answers send `bytes` bytes of the file, then reset the connection. */
  cutAfter(bytes: number, times?: number): void;
}

export class Downloads implements DownloadStore {
  url = '';
  private readonly dir = mkdtempSync(join(tmpdir(), 'zt-files-'));
  private readonly byMd5 = new Map<string, Blob>();
  private readonly byItem = new Map<string, Blob>();
  private readonly links = new Map<string, Blob>();
  private readonly capturing = new Set<Promise<void>>();
  private readonly server = createServer((req, res) => void this.serve(req, res));
  private count = 0;
  private cuts: number[] = [];

  constructor(
    private readonly state: ServerState,
    private readonly uploads: Uploads,
    private readonly log: RequestLogEntry[],
    private readonly faults: Faults,
  ) {}

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.capturing]);
    rmSync(this.dir, { recursive: true, force: true });
  }

  cutAfter(bytes: number, times = 1): void {
    for (let i = 0; i < times; i++) this.cuts.push(bytes);
  }

  putFile(
    library: string,
    itemKey: string,
    bytes: Buffer,
    o: { md5?: string; filename?: string; contentType?: string; mtime?: number } = {},
  ): void {
    const lib = this.state.library(library);
    const item = lib.items.get(itemKey);
    if (!item) throw new Error(`putFile: no item ${itemKey} in ${library}`);
    const path = join(this.dir, `put-${this.count++}`);
    writeFileSync(path, bytes);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const blob = { path, start: 0, size: bytes.length, md5 };
    this.byMd5.set(md5, blob);
    this.byItem.set(`${lib.prefix}/${itemKey}`, blob);
    const filename = o.filename ?? (typeof item.filename === 'string' ? item.filename : 'file');
    const contentType =
      o.contentType ?? (typeof item.contentType === 'string' ? item.contentType : 'application/octet-stream');
    const mtime = o.mtime ?? 1_700_000_000_000;
    const recorded = o.md5 ?? md5;
    this.uploads.files.set(`${lib.prefix}/${itemKey}`, {
      md5: recorded,
      filename,
      size: bytes.length,
      mtime,
      contentType,
    });
    lib.version++;
    Object.assign(item, { md5: recorded, mtime, filename, contentType, version: lib.version });
  }

  /**
   * Keeps a storage upload's body (`POST /storage/upload/<key>`, read alongside the upload
   * route, which hashes it) on disk, found later by the MD5 of its file part.
   */
  capture(req: IncomingMessage): void {
    const path = join(this.dir, `upload-${this.count++}`);
    const out = createWriteStream(path);
    out.on('error', () => undefined);
    let total = 0;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (!out.destroyed) out.write(chunk);
    });
    const done = new Promise<void>((resolve) => {
      req.on('end', () => {
        ended = true;
        out.end(
          () =>
            void this.index(path, total)
              .catch(() => undefined)
              .finally(resolve),
        );
      });
      // A reset mid-upload: nothing to keep.
      req.on('close', () => {
        if (ended) return;
        out.destroy();
        resolve();
      });
    });
    this.capturing.add(done);
    void done.finally(() => this.capturing.delete(done));
  }

  /** The file part of a kept body: after the multipart prefix, before `\r\n--boundary--`. */
  private async index(path: string, total: number): Promise<void> {
    const handle = await open(path, 'r');
    const head = Buffer.alloc(Math.min(total, 4096));
    await handle.read(head, 0, head.length, 0);
    await handle.close();
    let start = 0;
    let size = total;
    const text = head.toString('latin1');
    const boundary = /^--([^\r\n]+)\r\n/.exec(text)?.[1];
    const part = text.indexOf('name="file"');
    const body = part < 0 ? -1 : text.indexOf('\r\n\r\n', part);
    if (boundary !== undefined && body >= 0) {
      start = body + 4;
      size = total - start - Buffer.byteLength(`\r\n--${boundary}--`, 'latin1');
    }
    if (size < 0) return;
    const hash = createHash('md5');
    if (size > 0) {
      for await (const chunk of createReadStream(path, { start, end: start + size - 1 }))
        hash.update(chunk as Buffer);
    }
    const md5 = hash.digest('hex');
    this.byMd5.set(md5, { path, start, size, md5 });
  }

  /** `GET {lib}/items/{key}/file`: a 302 to the storage host, or 404 when there is no file. */
  async redirect(ctx: Ctx, lib: Library, itemKey: string): Promise<void> {
    await Promise.all([...this.capturing]);
    const item = lib.items.get(itemKey);
    if (!item || item.deleted) throw new HttpError(404, 'Not found');
    if (item.itemType !== 'attachment' || !FILE_LINK_MODES.has(String(item.linkMode))) {
      throw new HttpError(400, 'Item is not a file attachment');
    }
    if (lib.type === 'user' && !ctx.key?.access.user?.files) throw new HttpError(403, 'File access denied');
    const where = `${lib.prefix}/${itemKey}`;
    const stored = this.uploads.files.get(where);
    const blob = this.byItem.get(where) ?? (stored ? this.byMd5.get(stored.md5) : undefined);
    if (!stored || !blob) throw new HttpError(404, 'File not found');
    const token = randomBytes(16).toString('hex');
    this.links.set(token, blob);
    send(ctx, 302, undefined, {
      Location: `${this.url}${DOWNLOAD_PREFIX}${token}?filename=${encodeURIComponent(stored.filename)}`,
      'Zotero-File-MD5': stored.md5,
      'Zotero-File-Modification-Time': String(stored.mtime),
      'Zotero-File-Size': String(stored.size),
      'Zotero-File-Compressed': 'No',
    });
  }

  /** The storage host: `GET /storage/download/<token>`, the bytes streamed from disk. */
  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryRecord(url.searchParams),
      headers: headerRecord(req),
      status: 0,
      startedAt: Date.now(),
      endedAt: 0,
    };
    this.log.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
      entry.endedAt = Date.now();
    });
    const plan = this.faults.take(entry.method, url.pathname + url.search);
    if (plan.kind) entry.fault = plan.kind;
    if (plan.slowMs > 0) await new Promise((resolve) => setTimeout(resolve, plan.slowMs));
    if (plan.replace?.kind === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (plan.replace) {
      res.writeHead(plan.replace.status, { 'Content-Type': 'text/plain' }).end(plan.replace.body ?? 'Error');
      return;
    }
    const blob = url.pathname.startsWith(DOWNLOAD_PREFIX)
      ? this.links.get(url.pathname.slice(DOWNLOAD_PREFIX.length))
      : undefined;
    if (entry.method !== 'GET' || !blob) {
      res.writeHead(404, { 'Content-Type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(blob.size),
      ETag: `"${blob.md5}"`,
    });
    if (blob.size === 0) {
      res.end();
      return;
    }
    const cut = this.cuts.shift();
    if (cut !== undefined) {
      // Part of the body, then a TCP RST: the client sees the download break off.
      const head = createReadStream(blob.path, { start: blob.start, end: blob.start + Math.max(0, cut - 1) });
      head.on('data', (chunk) => res.write(chunk));
      head.on('end', () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
      return;
    }
    createReadStream(blob.path, { start: blob.start, end: blob.start + blob.size - 1 })
      .on('error', () => res.destroy())
      .pipe(res);
  }
}
