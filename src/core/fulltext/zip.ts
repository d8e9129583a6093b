/**
 * A small ZIP reader for EPUBs: the end-of-central-directory record, the central directory,
 * and each entry's data from its local header (stored, or deflated: `inflateRawSync`).
 * No ZIP64, no encryption: an EPUB needs neither.
 */
import { inflateRawSync } from 'node:zlib';
import { ZoteusError } from '../errors.js';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

export interface ZipArchive {
  entries: Map<string, ZipEntry>;
  read(name: string): Buffer | undefined;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** An entry larger than this (inflated) is refused: no EPUB chapter is that large. */
const MAX_ENTRY = 256 * 1024 * 1024;

function bad(what: string): ZoteusError {
  return new ZoteusError('validation_error', `The file is not a readable ZIP (EPUB) archive: ${what}.`);
}

export function openZip(buf: Buffer): ZipArchive {
  // The end record is in the last 22 + 65535 bytes (its comment is at most 64 KiB).
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad('no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map<string, ZipEntry>();
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CENTRAL) throw bad('a broken central directory');
    const flags = buf.readUInt16LE(p + 8);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const name = buf.toString(flags & 0x0800 ? 'utf8' : 'latin1', p + 46, p + 46 + nameLen);
    entries.set(name, {
      name,
      method: buf.readUInt16LE(p + 10),
      compressedSize: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      localOffset: buf.readUInt32LE(p + 42),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return {
    entries,
    read(name) {
      const e = entries.get(name);
      if (!e) return undefined;
      const l = e.localOffset;
      if (l + 30 > buf.length || buf.readUInt32LE(l) !== LOCAL) throw bad(`a broken entry ${name}`);
      const start = l + 30 + buf.readUInt16LE(l + 26) + buf.readUInt16LE(l + 28);
      const data = buf.subarray(start, start + e.compressedSize);
      if (e.method === 0) return Buffer.from(data);
      if (e.method === 8) return inflateRawSync(data, { maxOutputLength: MAX_ENTRY });
      throw bad(`entry ${name} uses compression method ${e.method}`);
    },
  };
}
