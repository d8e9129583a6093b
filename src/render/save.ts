/**
 * Saving a rendered file: atomic (a temporary file in the same folder, then a rename or a
 * hard link), parents created, an existing file refused unless `overwrite`.
 *
 * Locally (`fileRoot` undefined) any path the user can write works, relative to the working
 * directory, and `~` is the home directory. On a shared deployment (`fileRoot` set: the
 * caller's own folder) every path is confined to that folder, and these are refused with
 * `permission_denied` before anything is written: a `..` segment, `~`, an absolute path
 * outside the folder, and a path that reaches outside it through a symlink (checked on the
 * real path of the deepest part that exists, and again after the parents are created).
 *
 * There, the caller's saved files are also bounded by a quota (ZOTEUS_TENANT_QUOTA_MB,
 * default 100): a save that would pass it is refused with what is used and free, and nothing
 * is written (a stream of unknown length is counted as it is written, and its temporary file
 * removed when it passes). Each saved file is served back to its owner only, as the MCP
 * resource `fileResourceUri` names (src/resources/files.ts).
 *
 * A tenant's call on a deployment with a state database (`sharedState` with `fileRoot`)
 * keeps the file in that database instead (core/store/tenant-files.ts), so any replica serves
 * it: the same path rules, refusals and quota (counted from the database, in the transaction
 * that writes, so two saves at once cannot both pass it), nothing on the replica's disk but a
 * stream's temporary file while it is counted.
 */
import { randomHex } from '../core/node-crypto.js';
import { constants, existsSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import {
  copyFile,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  rm,
  type FileHandle,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { homeDir } from '../core/paths.js';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ZoteusError } from '../core/errors.js';
import { paramRef } from '../core/call/refs.js';
import type { SqlClient } from '../core/store/sql.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface SavePathOptions {
  /** The caller's own folder on a shared deployment; undefined locally. */
  fileRoot?: string | undefined;
  env: Env;
  /** Base of relative paths locally; default the process' working directory. */
  cwd?: string;
  /** The input field named in errors (default `save_path`). */
  field?: string;
}

export interface SaveOptions extends SavePathOptions {
  overwrite: boolean;
  /**
   * A tenant's state database (Deps.sharedState): with `fileRoot`, the file is kept there as
   * the owner's row rather than on this replica's disk.
   */
  sharedState?: { db: SqlClient; owner: string } | undefined;
}

/** `~` as the platform means it (USERPROFILE on Windows, where Git Bash sets HOME too). */
function homeOf(env: Env): string {
  return homeDir(env);
}

function denied(field: string, message: string): ZoteusError {
  return new ZoteusError('permission_denied', message, {
    field,
    hint: 'On this shared server files are saved only under your own folder: give a relative path such as tables/evidence.md (no "..", no "~").',
  });
}

function invalid(field: string, message: string, hint?: string): ZoteusError {
  return new ZoteusError('validation_error', message, { field, ...(hint ? { hint } : {}) });
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function insideOrEqual(root: string, path: string): boolean {
  return path === root || inside(root, path);
}

/**
 * The absolute path a `save_path` names, checked lexically without touching the disk: `~`
 * expanded locally; confined to `fileRoot` on a shared deployment (symlinks are checked by
 * `saveFile`).
 */
export function resolveSavePath(raw: string, options: SavePathOptions): string {
  const field = options.field ?? 'save_path';
  if (raw.trim() === '') throw invalid(field, `${field} must name a file; got an empty path.`);
  if (raw.includes('\0')) throw invalid(field, `${field} must not contain a NUL character.`);
  if (options.fileRoot === undefined) {
    const home = homeOf(options.env);
    const expanded =
      raw === '~' ? home : raw.startsWith('~/') || raw.startsWith('~\\') ? join(home, raw.slice(2)) : raw;
    const target = resolve(options.cwd ?? process.cwd(), expanded);
    if (target === resolve(sep)) throw invalid(field, `${field} must name a file, not the root folder.`);
    return target;
  }
  const root = resolve(options.fileRoot);
  if (raw === '~' || raw.startsWith('~/') || raw.startsWith('~\\')) {
    throw denied(
      field,
      `${field} may not use "~" on this shared server: there is no home folder to write to.`,
    );
  }
  if (raw.split(/[\\/]+/).includes('..')) {
    throw denied(
      field,
      `${field} may not contain ".." on this shared server: files stay inside your own folder.`,
    );
  }
  const target = isAbsolute(raw) ? resolve(raw) : resolve(root, raw);
  if (target === root) throw invalid(field, `${field} names your folder itself; give a file name inside it.`);
  if (!inside(root, target)) {
    throw denied(
      field,
      `${field} is outside your own folder on this shared server; absolute paths must lie inside it.`,
    );
  }
  return target;
}

/** The deepest part of `path` that exists (possibly `path` itself), without following a final symlink. */
async function deepestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    try {
      await lstat(current);
      return current;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const parent = dirname(current);
    if (parent === current) return current;
    current = parent;
  }
}

/** Refuses a path whose real location (through any symlink) lies outside the real root. */
async function assertConfined(path: string, realRoot: string, field: string): Promise<void> {
  const existing = await deepestExisting(path);
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    // A dangling symlink: where it leads cannot be checked, so it is not followed.
    throw denied(
      field,
      `${field} goes through a symlink that cannot be resolved; it is refused on this shared server.`,
    );
  }
  if (!insideOrEqual(realRoot, real)) {
    throw denied(
      field,
      `${field} leads outside your own folder through a symlink; it is refused on this shared server.`,
    );
  }
}

function fsError(error: unknown, field: string, path: string): ZoteusError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new ZoteusError(
      'permission_denied',
      `Cannot write ${path} (${code}): no permission to write there.`,
      {
        field,
        hint: 'Choose a folder you can write to.',
      },
    );
  }
  if (['ENOTDIR', 'EEXIST', 'EISDIR', 'ENAMETOOLONG', 'EINVAL', 'ENOENT', 'ELOOP'].includes(code)) {
    return invalid(
      field,
      `Cannot write ${path} (${code}): a part of the path is not a folder, or the name is not usable.`,
    );
  }
  return new ZoteusError('api_error', `Writing ${path} failed (${code}).`, { field, cause: error });
}

function existsError(field: string, path: string): ZoteusError {
  return new ZoteusError('conflict', `${path} already exists; it was left untouched.`, {
    field,
    retryable: false,
    hint: `Pass ${paramRef('overwrite', 'true')} to replace it, or choose another ${paramRef('save_path')}.`,
  });
}

/**
 * Writes `content` (UTF-8 text or bytes, or a stream of them; a stream that throws leaves nothing) to the file `raw` names, atomically, and returns its absolute
 * path. Without `overwrite` an existing file is refused with `conflict` and left untouched,
 * even when it appears while this call runs (the final step is a hard link, which fails if
 * the name exists). No temporary file is left behind, whatever happens.
 */
export async function saveFile(
  raw: string,
  content: string | Uint8Array | AsyncIterable<string | Uint8Array>,
  options: SaveOptions,
): Promise<string> {
  const field = options.field ?? 'save_path';
  let target = resolveSavePath(raw, options);
  if (options.sharedState !== undefined && options.fileRoot !== undefined) {
    return saveShared(target, content, { ...options, fileRoot: options.fileRoot }, options.sharedState);
  }
  let realRoot: string | undefined;
  if (options.fileRoot !== undefined) {
    const root = resolve(options.fileRoot);
    try {
      await mkdir(root, { recursive: true, mode: 0o700 });
      realRoot = await realpath(root);
    } catch (error) {
      throw fsError(error, field, root);
    }
    await assertConfined(target, realRoot, field);
  }

  // An existing symlink as the target: write where it points (locally, or inside the root).
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isSymbolicLink()) {
    const real = await realpath(target).catch(() => undefined);
    if (real !== undefined) target = real;
    if (realRoot !== undefined && (real === undefined || !inside(realRoot, real))) {
      throw denied(
        field,
        `${field} is a symlink that leads outside your own folder; it is refused on this shared server.`,
      );
    }
  }

  const dir = dirname(target);
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw fsError(error, field, dir);
  }
  if (realRoot !== undefined) await assertConfined(dir, realRoot, field);

  const now = await lstat(target).catch(() => undefined);
  if (now?.isDirectory()) throw invalid(field, `${target} is a folder; ${field} must name a file.`);
  if (now !== undefined && !options.overwrite) throw existsError(field, target);

  // On a shared deployment: what this file may take (the file it replaces is given back).
  let room = Infinity;
  if (realRoot !== undefined) {
    const quota = tenantQuotaBytes(options.env);
    const used = await usedBytes(realRoot);
    const replaced = now?.isFile() ? now.size : 0;
    room = quota - used + replaced;
    const size =
      typeof content === 'string'
        ? Buffer.byteLength(content, 'utf8')
        : content instanceof Uint8Array
          ? content.byteLength
          : undefined;
    if ((size ?? 0) > room) throw overQuota(field, quota, used, size);
    if (size === undefined) {
      const limit = room;
      const source = content as AsyncIterable<string | Uint8Array>;
      content = (async function* counted() {
        let written = 0;
        for await (const chunk of source) {
          written += typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.byteLength;
          if (written > limit) throw overQuota(field, quota, used, undefined);
          yield chunk;
        }
      })();
    }
  }

  const { temp, handle } = await openTemp(dir).catch((error: unknown) => {
    throw fsError(error, field, target);
  });
  try {
    try {
      // A stream of text (a whole-library export) is written as it comes: memory stays flat.
      if (typeof content === 'string') await handle.writeFile(content, 'utf8');
      else if (content instanceof Uint8Array) await handle.writeFile(content);
      else
        for await (const chunk of content)
          await (typeof chunk === 'string' ? handle.write(chunk, null, 'utf8') : handle.write(chunk));
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.overwrite) {
      await rename(temp, target);
    } else {
      await linkExclusive(temp, target);
    }
  } catch (error) {
    if (error instanceof ZoteusError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && !options.overwrite) {
      throw existsError(field, target);
    }
    throw fsError(error, field, target);
  } finally {
    await rm(temp, { force: true });
  }
  return target;
}

/** A saved file's path in its owner's folder, `/`-separated: its key in the state database. */
export function pathInFolder(root: string, target: string): string {
  return relative(resolve(root), target).split(sep).join('/');
}

function stateDatabaseError(error: unknown, field: string, target: string): ZoteusError {
  if (error instanceof ZoteusError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new ZoteusError('network_error', `Saving ${target} in the state database failed: ${why}.`, {
    field,
    retryable: true,
    cause: error,
    hint: 'Try again in a moment; nothing was saved.',
  });
}

/**
 * saveFile for a tenant's call with a state database: the file becomes the owner's row of
 * `tenant_files`. A stream is counted into a temporary file (removed whatever happens) and
 * stored once whole; the quota and an existing file are checked first, and again in the
 * transaction that writes.
 */
async function saveShared(
  target: string,
  content: string | Uint8Array | AsyncIterable<string | Uint8Array>,
  options: SaveOptions & { fileRoot: string },
  state: { db: SqlClient; owner: string },
): Promise<string> {
  const field = options.field ?? 'save_path';
  const { contentTypeOf, sqlTenantFileStore } = await import('../core/store/tenant-files.js');
  const store = sqlTenantFileStore(state.db, state.owner);
  const path = pathInFolder(options.fileRoot, target);
  const quota = tenantQuotaBytes(options.env);
  const folder = () => invalid(field, `${target} is a folder; ${field} must name a file.`);
  const database = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error: unknown) => {
      throw stateDatabaseError(error, field, target);
    });
  let temp: string | undefined;
  try {
    const now = await database(store.stat(path));
    if (now?.kind === 'folder') throw folder();
    if (now !== undefined && !options.overwrite) throw existsError(field, target);
    const used = await database(store.used());
    const room = quota - used + (now?.kind === 'file' ? now.size : 0);
    let bytes: Uint8Array;
    if (typeof content === 'string' || content instanceof Uint8Array) {
      bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      if (bytes.byteLength > room) throw overQuota(field, quota, used, bytes.byteLength);
    } else {
      // Counted as it comes, into a temporary file: memory stays flat until the bytes are whole.
      const opened = await openTemp(tmpdir()).catch((error: unknown) => {
        throw fsError(error, field, tmpdir());
      });
      temp = opened.temp;
      try {
        let written = 0;
        for await (const chunk of content) {
          const piece = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
          written += piece.byteLength;
          if (written > room) throw overQuota(field, quota, used, undefined);
          await opened.handle.write(piece);
        }
      } finally {
        await opened.handle.close();
      }
      const { readFile } = await import('node:fs/promises');
      bytes = await readFile(temp);
    }
    const put = await database(
      store.put(path, bytes, { overwrite: options.overwrite, quota, contentType: contentTypeOf(path) }),
    );
    if (put.stored) return target;
    if (put.reason === 'exists') throw existsError(field, target);
    if (put.reason === 'folder') throw folder();
    if (put.reason === 'under_file') {
      throw invalid(
        field,
        `Cannot write ${target}: ${join(resolve(options.fileRoot), ...put.at.split('/'))} is a file, not a folder.`,
      );
    }
    throw overQuota(field, quota, put.used, bytes.byteLength);
  } catch (error) {
    // A stream that failed, or the temporary file: as a save to disk says it.
    if (error instanceof ZoteusError) throw error;
    throw fsError(error, field, target);
  } finally {
    if (temp !== undefined) await rm(temp, { force: true });
  }
}

/** The quota of a caller's saved files on a shared deployment, default 100 MB. */
export function tenantQuotaBytes(env: Env): number {
  const raw = env.ZOTEUS_TENANT_QUOTA_MB?.trim();
  if (raw === undefined || raw === '') return 100 * MB;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb <= 0) {
    throw new ZoteusError(
      'validation_error',
      `ZOTEUS_TENANT_QUOTA_MB must be a positive number of megabytes; got ${JSON.stringify(raw)}.`,
      { field: 'ZOTEUS_TENANT_QUOTA_MB', hint: 'Set it to e.g. 100, or unset it for the default of 100 MB.' },
    );
  }
  return Math.floor(mb * MB);
}

const MB = 1024 * 1024;

/**
 * Whether a path relative to the caller's folder is Zoteus' own state kept there (plans
 * awaiting apply, the write journal) rather than one of the caller's saved files: neither
 * counted in the quota nor served as a file.
 */
export function isStateFile(relativePath: string): boolean {
  const first = relativePath.split(/[\\/]/)[0] ?? '';
  return first === 'plans' || /^journal\.db(-wal|-shm|-journal)?$/.test(first);
}

/** The bytes of the caller's saved files under `root` (symlinks not followed, state files left out). */
export async function usedBytes(root: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (rel === '' && isStateFile(childRel)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, childRel);
      else if (entry.isFile()) total += (await lstat(path).catch(() => undefined))?.size ?? 0;
    }
  };
  await walk(root, '');
  return total;
}

/** `30,012 bytes` under a megabyte, else `12.5 MB`. */
function megabytes(bytes: number): string {
  if (bytes < MB) return `${bytes.toLocaleString('en-US')} ${bytes === 1 ? 'byte' : 'bytes'}`;
  return `${(bytes / MB).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;
}

function overQuota(field: string, quota: number, used: number, size: number | undefined): ZoteusError {
  const free = Math.max(0, quota - used);
  const what = size === undefined ? 'This file' : `This file (${megabytes(size)})`;
  return new ZoteusError(
    'validation_error',
    `${what} would pass your quota of ${megabytes(quota)} on this shared server: ${megabytes(used)} used, ${megabytes(free)} free. Nothing was written.`,
    {
      field,
      hint: `Save a smaller file, or replace one of your files you no longer need (${paramRef('overwrite', 'true')}).`,
    },
  );
}

/**
 * `zotero://files/tables/evidence.md`: the MCP resource that serves a file saved under the
 * caller's folder `root` back to them (each segment percent-encoded); undefined for a path
 * outside it.
 */
export function fileResourceUri(root: string, path: string): string | undefined {
  const candidates = [resolve(root)];
  try {
    candidates.push(realpathSync(root));
  } catch {
    // The folder does not exist: the path is not in it.
  }
  for (const base of candidates) {
    if (!inside(base, path)) continue;
    return savedFileUri(relative(base, path).split(sep).join('/'));
  }
  return undefined;
}

/** The resource of a saved file by its path in the caller's folder (`a/b.md`), each segment percent-encoded. */
export function savedFileUri(pathInFolder: string): string {
  return `zotero://files/${pathInFolder.split('/').map(encodeURIComponent).join('/')}`;
}

/** `out` with `saved.resource` (its fileResourceUri) on a shared deployment; as it is otherwise. */
export function savedWithResource<T extends { saved?: { path: string } | undefined }>(
  out: T,
  fileRoot: string | undefined,
): T {
  if (fileRoot === undefined || out.saved === undefined) return out;
  const resource = fileResourceUri(fileRoot, out.saved.path);
  return resource === undefined ? out : { ...out, saved: { ...out.saved, resource } };
}

/**
 * A new, empty temporary file in `dir`, named `.zt-<8 hex>.tmp`: a short name of its own
 * rather than the target's name plus a suffix, so that it fits wherever the target's name
 * fits (a 255-byte name is valid, 18 bytes more are not). A name another write holds is
 * skipped, never reused or removed.
 */
async function openTemp(dir: string): Promise<{ temp: string; handle: FileHandle }> {
  for (let attempt = 1; ; attempt += 1) {
    const temp = join(dir, `.zt-${randomHex(4)}.tmp`);
    try {
      return { temp, handle: await open(temp, 'wx', 0o666) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt === 5) throw error;
    }
  }
}

/**
 * `temp` to `target` only if `target` does not exist: a hard link fails with EEXIST when
 * the name is taken, so two callers racing for one name cannot both win. File systems
 * without hard links get an exclusive copy instead (atomic against an existing file, not
 * against a reader of the new one).
 */
async function linkExclusive(temp: string, target: string): Promise<void> {
  try {
    await link(temp, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS' || code === 'EOPNOTSUPP') {
      await copyFile(temp, target, constants.COPYFILE_EXCL);
      return;
    }
    throw error;
  }
}

/** Whether the file a path names exists now (for `--dry-run` plans; never writes). */
export function fileExists(path: string): boolean {
  return existsSync(path);
}
