/**
 * A file on this computer as an attachment needs it: that it exists and is a file, its size,
 * modification time, MD5 and content type (sniffed from its first 4 KB). Read once for an upload
 * and for a link alike, streamed so a large file is never held in memory.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { ZoteusError } from '../errors.js';
import { detectContentType } from './content-type.js';

export interface LocalFile {
  /** As the caller wrote it. */
  file: string;
  /** Absolute. */
  path: string;
  filename: string;
  size: number;
  mtimeMs: number;
  md5: string;
  contentType: string;
}

/** `missing`: what to add to "No such file: F" (a link must point at a file that exists). */
export async function readLocalFile(file: string, missing = ''): Promise<LocalFile> {
  const path = resolve(file);
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ZoteusError(
      code === 'ENOENT' ? 'not_found' : 'validation_error',
      code === 'ENOENT'
        ? `No such file: ${file}${missing}.`
        : `Cannot read ${file}: ${(error as Error).message}.`,
      { field: 'path' },
    );
  }
  if (!info.isFile()) throw new ZoteusError('validation_error', `${file} is not a file.`, { field: 'path' });
  const handle = await open(path, 'r');
  const head = Buffer.alloc(4096);
  let read: number;
  try {
    ({ bytesRead: read } = await handle.read(head, 0, head.length, 0));
  } finally {
    await handle.close();
  }
  const md5 = await md5OfFile(path);
  const filename = basename(path);
  return {
    file,
    path,
    filename,
    size: info.size,
    mtimeMs: info.mtimeMs,
    md5,
    contentType: detectContentType(head.subarray(0, read), filename),
  };
}

/** The MD5 of a file, read as a stream: a file of any size, never held whole in memory. */
export async function md5OfFile(path: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}
