/**
 * Attaching files through the Web API's upload protocol (docs `zotero/file-uploads.md`), one
 * file at a time and never claiming a file landed unless the server says so: create the
 * `imported_file` attachment item (keyed creates, `writes/create.ts`), ask for an upload
 * authorization (md5, filename, filesize, mtime in ms; `If-None-Match: *`), stream prefix +
 * file + suffix to the storage URL (no Zotero headers there), register the upload, then read
 * the item back and compare its md5. `exists` skips the upload. A file that fails after its
 * item was created has the item moved to the trash (conventions.md allows it for an object the
 * same request created), or its key reported when even that fails.
 *
 * When `parent_item` is itself a stored-file attachment (`imported_file`, `imported_url`), its
 * one file is uploaded as a new version of that attachment instead: `If-Match` with the stored
 * md5, registration, the md5 read back, then its filename, title and content type brought in
 * line. The same bytes as stored are `exists` with nothing sent; a `412` (another version stored
 * meanwhile) is re-read and reported, never overwritten; no item is created and, on a failure,
 * none is trashed: the previous version stays.
 *
 * When writes go to the desktop (write-route.ts), the same three calls go to Zotero 10's local
 * API with its differences (`zotero/file-uploads.md`, "Local API"): authorization and
 * registration are writes (the local key and `Zotero-Server-ID`, from the local write client);
 * the bytes go raw as `application/octet-stream` to its upload receiver, with no Zotero
 * headers; its `If-Match` / `If-None-Match: *` are checked against the hash of the file last
 * synced with zotero.org, not the file on disk whose md5 its JSON reports, so `If-None-Match: *`
 * comes first (an attachment never synced has no such hash) and `If-Match` with the md5 on disk
 * second (one synced since); when neither holds (the file changed on disk since it last synced)
 * nothing is sent and the conflict says so. A filename Zotero refuses there (`\`) and a file
 * over 4 GiB are refused before anything is created. Nothing goes to the Web API.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readLocalFile } from './local-file.js';
import { Readable } from 'node:stream';
import { paramRef } from '../call/refs.js';
import { outcomeUnknown, toZoteusError, ZoteusError, type ErrorCode } from '../errors.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary, type WebLibrary } from '../library/web.js';
import { isServerMismatch } from '../local/local-writes.js';
import type { Deps } from '../tool.js';
import type { CallContext, WriteBatchResult, ZoteroObject } from '../zotero/index.js';
import { createObjects } from '../writes/index.js';
import { detectContentType } from './content-type.js';
import { PROGRESS_FROM_BYTES, sendToStorage } from './storage.js';
import {
  checkAttachInput,
  MAX_INLINE_BYTES,
  type AttachFileInput,
  type AttachFileOutput,
  type FailedFile,
} from './attach-plan.js';

export {
  checkAttachInput,
  MAX_INLINE_BYTES,
  mergeAttachRetry,
  planAttach,
  retryAttachInput,
  type AttachedFile,
  type AttachFileInput,
  type AttachFileOutput,
  type FailedFile,
} from './attach-plan.js';

/** The largest file the desktop's local API takes (4 GiB). */
const LOCAL_MAX_BYTES = 4 * 1024 ** 3;

export { PROGRESS_FROM_BYTES } from './storage.js';

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
    const local = await readLocalFile(file);
    out.push({
      file,
      filename: local.filename,
      size: local.size,
      mtime: Math.round(local.mtimeMs),
      md5: local.md5,
      contentType: local.contentType,
      open: () => createReadStream(local.path),
    });
  }
  return out;
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
    /** The desktop now serves another database (its Zotero-Server-ID changed): touch nothing more. */
    readonly serverChanged = false,
  ) {
    super(message);
  }
}

/** The local API's "another database" refusal (local-writes.ts keeps it as the cause). */
function serverChanged(err: ZoteusError): boolean {
  return isServerMismatch(err.cause);
}

export async function attachFiles(deps: Deps, input: AttachFileInput): Promise<AttachFileOutput> {
  checkAttachInput(deps, input);
  const list = await sources(input);
  const client = await webClient(deps);
  const call = client.newCall();
  // The Web API's upload, or the desktop's local API (write-route.ts decides).
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  if (lib.side === 'desktop') {
    checkLocalFiles(list);
    // The desktop's database says whether files may be edited: refused before an item is made.
    if (lib.ref.type === 'group') await checkDesktopFileEditing(deps, lib);
  } else if (lib.ref.type === 'group') await checkGroupFileEditing(lib, call);
  const target = await readTarget(lib, input.parent_item, call);
  if (target.data.itemType === 'attachment') return attachNewVersion(deps, lib, input, target, list, call);

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
      } else if (e.serverChanged) {
        // Not written to another database: the item stays where it was made.
        entry.key = made.key;
        entry.message += ` The empty attachment item ${made.key} stays in the database the desktop served before: delete it there.`;
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

/** Attachments whose file lives in Zotero storage: the ones a new version can be uploaded to. */
const NEW_VERSION_MODES: ReadonlySet<string> = new Set(['imported_file', 'imported_url']);

/** The item named as `parent_item`: a regular item gets new attachments, an attachment a new version. */
async function readTarget(lib: WebLibrary, key: string, call: CallContext): Promise<ZoteroObject> {
  const item = (await lib.client.getByKeys(lib.prefix, 'items', [key], { call })).byKey.get(key);
  if (!item) {
    throw new ZoteusError(
      'not_found',
      `The parent item ${key} does not exist in library ${lib.prefix}: nothing was attached.`,
      { field: 'parent_item' },
    );
  }
  const type = item.data.itemType;
  if (type === 'note' || type === 'annotation') {
    throw new ZoteusError(
      'validation_error',
      `${key} is ${type === 'note' ? 'a note' : 'an annotation'}: files are attached to a regular item, or uploaded as a new version of a stored-file attachment.`,
      { field: 'parent_item' },
    );
  }
  return item;
}

/**
 * One file as a new version of the attachment `target`: uploaded with `If-Match` (its stored
 * md5), registered, read back, then its filename, title and content type brought in line. The
 * same bytes as stored are `exists` with nothing uploaded. Nothing is created, nothing trashed.
 */
async function attachNewVersion(
  deps: Deps,
  lib: WebLibrary,
  input: AttachFileInput,
  target: ZoteroObject,
  list: readonly Source[],
  call: CallContext,
): Promise<AttachFileOutput> {
  const key = target.key;
  const data = target.data;
  const linkMode = typeof data.linkMode === 'string' ? data.linkMode : '';
  const parent = typeof data.parentItem === 'string' && data.parentItem ? data.parentItem : undefined;
  const beside = parent ? ` To add files beside it, attach them to its parent item ${parent}.` : '';
  if (!NEW_VERSION_MODES.has(linkMode)) {
    const what =
      linkMode === 'linked_file'
        ? 'a linked file (the file stays where it is on a computer, outside Zotero storage)'
        : linkMode === 'linked_url'
          ? 'a link to a web page (it has no file)'
          : linkMode === 'embedded_image'
            ? 'an image embedded in a note'
            : `an attachment of link mode '${linkMode}'`;
    throw new ZoteusError(
      'validation_error',
      `${key} is ${what}: only a file stored in Zotero (imported_file, imported_url) can get a new version.${beside}`,
      { field: 'parent_item' },
    );
  }
  if (data.deleted) {
    throw new ZoteusError(
      'validation_error',
      `The attachment ${key} is in the trash: restore it before uploading a new version of its file.`,
      { field: 'parent_item' },
    );
  }
  if (list.length !== 1) {
    throw new ZoteusError(
      'validation_error',
      `${key} is an attachment, so the file becomes a new version of it: give exactly one file, not ${list.length}.${beside}`,
      { field: 'path' },
    );
  }
  const s = list[0] as Source;
  const previous = storedMd5(target);
  const out: AttachFileOutput = { parentItem: input.parent_item, succeeded: [], failed: [] };
  let upload: 'uploaded' | 'exists' = 'exists';
  let item = target;
  let registered = false;
  try {
    if (previous !== s.md5) {
      upload = await uploadOne(deps, lib, key, s, call, 0, 1, previous ?? null);
      registered = true;
      item = await readItem(lib, key, call);
      if (storedMd5(item) !== s.md5) {
        throw new StepError(
          0,
          'api_error',
          `After the upload the library reports md5 ${storedMd5(item) ?? 'none'} for ${key}, not the file's ${s.md5}: the stored file is not this file.`,
        );
      }
    }
    item = await alignMetadata(lib, target, item, input, s, call);
  } catch (error) {
    const e = stepError(error);
    const kept =
      registered || e.reason === 'conflict'
        ? ''
        : ` The attachment ${key} keeps its previous ${previous ? `version (md5 ${previous})` : 'state (no file)'}; nothing was trashed.`;
    out.failed.push({
      index: 0,
      file: s.file,
      key,
      code: e.code,
      reason: e.reason,
      message: e.message + kept,
    });
    if (item.version > target.version) out.libraryVersion = item.version;
    return out;
  }
  out.succeeded.push({
    file: s.file,
    key,
    filename: s.filename,
    title: typeof item.data.title === 'string' ? item.data.title : s.filename,
    contentType: s.contentType,
    size: s.size,
    md5: s.md5,
    upload,
    version: 'new',
    ...(previous ? { previousMd5: previous } : {}),
  });
  // Only a write moved the library on; the same bytes with nothing to change sent nothing.
  if (item.version > target.version) out.libraryVersion = item.version;
  return out;
}

/**
 * A new version's filename, title and content type: the file's name and detected type; the
 * title follows the new name when it was the old name (Zotero's default), stays when it was a
 * title of its own, and is `title` when one was given. One PATCH when anything differs.
 */
async function alignMetadata(
  lib: WebLibrary,
  before: ZoteroObject,
  item: ZoteroObject,
  input: AttachFileInput,
  s: Source,
  call: CallContext,
): Promise<ZoteroObject> {
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const oldTitle = text(before.data.title);
  const title =
    input.title ?? (oldTitle === '' || oldTitle === text(before.data.filename) ? s.filename : oldTitle);
  const change: Record<string, unknown> = {};
  if (text(item.data.filename) !== s.filename) change.filename = s.filename;
  if (text(item.data.title) !== title) change.title = title;
  if (text(item.data.contentType) !== s.contentType) change.contentType = s.contentType;
  if (Object.keys(change).length === 0) return item;
  const patch = (version: number) =>
    lib.client.patch(lib.prefix, 'items', item.key, change, version, { call });
  let version: number | undefined;
  try {
    try {
      ({ version } = await patch(item.version));
    } catch (error) {
      if (toZoteusError(error).status !== 412) throw error;
      ({ version } = await patch((await readItem(lib, item.key, call)).version));
    }
  } catch (error) {
    const err = toZoteusError(error);
    const landed = storedMd5(item) === s.md5 && storedMd5(before) !== s.md5;
    throw new StepError(
      err.status ?? 0,
      err.code,
      `${landed ? `The new version of ${item.key} is stored (md5 ${s.md5}), but its` : `The attachment ${item.key}'s`} ${Object.keys(change).join(', ')} could not be updated: ${err.message}`,
    );
  }
  return { ...item, version: version ?? item.version, data: { ...item.data, ...change } };
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

function stepError(error: unknown): StepError {
  if (error instanceof StepError) return error;
  const err = toZoteusError(error);
  return new StepError(err.status ?? 0, err.code, err.message, serverChanged(err));
}

/** What the desktop's local API refuses of a file, refused before anything is created. */
function checkLocalFiles(list: readonly Source[]): void {
  for (const s of list) {
    if (/[/\\]/.test(s.filename) || s.filename === '.' || s.filename === '..') {
      throw new ZoteusError(
        'validation_error',
        `The Zotero desktop app does not take a file named '${s.filename}' (a name with / or \\, or . or ..): nothing was attached.`,
        { field: 'path', hint: 'Rename the file, then attach it again.' },
      );
    }
    if (s.size > LOCAL_MAX_BYTES) {
      throw new ZoteusError(
        'validation_error',
        `${s.file} has ${s.size} bytes; the Zotero desktop app takes files of at most 4 GiB (${LOCAL_MAX_BYTES} bytes): nothing was attached.`,
        { field: 'path' },
      );
    }
  }
}

/** A group lets members, only admins, or nobody edit files (`fileEditing` of its metadata). */
async function checkDesktopFileEditing(deps: Deps, lib: WebLibrary): Promise<void> {
  const { desktopLibrary } = await import('../library/router.js');
  const held = await desktopLibrary(deps, lib.ref);
  if ('lib' in held && held.lib.filesEditable === false) {
    throw new ZoteusError(
      'permission_denied',
      `Zotero does not let this account edit the files of ${lib.prefix} (${held.lib.name}): nothing was attached.`,
      { hint: "Ask the group's owner to allow file editing, or attach to an item of another library." },
    );
  }
}

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
    // The local API's JSON has a boolean; the Web API writes 1 for items.
    const deleted = lib.side === 'desktop' ? true : 1;
    try {
      await lib.client.patch(lib.prefix, 'items', key, { deleted }, version, { call });
    } catch (error) {
      if (toZoteusError(error).status !== 412) throw error;
      // The upload steps moved the item on: trash it at its current version.
      await lib.client.patch(
        lib.prefix,
        'items',
        key,
        { deleted },
        (await readItem(lib, key, call)).version,
        { call },
      );
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Authorization, upload and registration of one file; `exists` when the server had the bytes.
 * `replacing`: undefined for the file of an item this call created (`If-None-Match: *`; a `412`
 * there is an earlier attempt's file, re-read and taken over); for a new version, the md5 it
 * replaces (`If-Match`), or null when the attachment had no file yet. A new version's `412` is
 * another version stored meanwhile: re-read and reported, never overwritten.
 */
async function uploadOne(
  deps: Deps,
  lib: WebLibrary,
  key: string,
  s: Source,
  call: CallContext,
  index: number,
  total: number,
  replacing?: string | null,
): Promise<'uploaded' | 'exists'> {
  const path = `/${lib.prefix}/items/${key}/file`;
  const newVersion = replacing !== undefined;
  const desktop = lib.side === 'desktop';
  // The desktop checks against the synced hash, which a file never synced lacks: `*` first.
  let precondition: Record<string, string> =
    typeof replacing === 'string' && !desktop ? { 'If-Match': replacing } : { 'If-None-Match': '*' };
  const tried = new Set<string>();
  const form = {
    md5: s.md5,
    filename: s.filename,
    filesize: String(s.size),
    mtime: String(s.mtime),
    contentType: s.contentType,
  };
  let auth: UploadAuth | undefined;
  for (let attempt = 0; auth === undefined; attempt++) {
    tried.add(JSON.stringify(precondition));
    try {
      auth =
        (await lib.client.request<UploadAuth>('POST', path, { form, headers: precondition, call })).data ??
        {};
    } catch (error) {
      const err = toZoteusError(error);
      if (err.status === 412 && desktop) {
        // Not the synced hash Zotero holds: the item says what is on disk now.
        const stored = storedMd5(await readItem(lib, key, call));
        if (stored === s.md5) return 'exists';
        if (newVersion && stored !== (replacing ?? undefined)) {
          throw versionConflict(key, s, replacing ?? undefined, stored, 'nothing was sent');
        }
        const next: Record<string, string> | undefined =
          'If-None-Match' in precondition
            ? stored
              ? { 'If-Match': stored }
              : undefined
            : { 'If-None-Match': '*' };
        if (next === undefined || tried.has(JSON.stringify(next))) throw unsynced(key, s, stored);
        precondition = next;
        continue;
      }
      if (err.status === 412 && (newVersion || attempt === 0)) {
        // The file changed meanwhile (an earlier attempt, another client): read what is stored.
        const stored = storedMd5(await readItem(lib, key, call));
        if (stored === s.md5) return 'exists';
        if (newVersion) throw versionConflict(key, s, replacing ?? undefined, stored, 'nothing was sent');
        if (stored) precondition = { 'If-Match': stored };
        continue;
      }
      throw authFailure(lib, err, s);
    }
  }
  if (auth.exists) return 'exists';
  if (typeof auth.url !== 'string' || typeof auth.uploadKey !== 'string') {
    throw new StepError(0, 'api_error', `The upload authorization for ${s.file} gave no upload address.`);
  }
  try {
    await sendToStorage(
      deps,
      {
        url: auth.url,
        contentType: typeof auth.contentType === 'string' ? auth.contentType : '',
        prefix: typeof auth.prefix === 'string' ? auth.prefix : '',
        suffix: typeof auth.suffix === 'string' ? auth.suffix : '',
      },
      s,
      call,
      s.size >= PROGRESS_FROM_BYTES ? { phase: `upload ${index + 1}/${total}` } : undefined,
      // The desktop's receiver takes raw bytes as octet-stream (text/plain would be decoded).
      !desktop && typeof auth.contentType === 'string' ? auth.contentType : 'application/octet-stream',
    );
  } catch (error) {
    const err = toZoteusError(error);
    throw new StepError(err.status ?? 0, err.code, err.message);
  }
  try {
    await lib.client.request('POST', path, { form: { upload: auth.uploadKey }, headers: precondition, call });
  } catch (error) {
    const err = toZoteusError(error);
    if (outcomeUnknown(err)) {
      // No answer (or a 5xx): the registration may have landed all the same. The item says.
      const stored = await readItem(lib, key, call).then(storedMd5, () => null);
      if (stored === s.md5) return 'uploaded';
      if (stored === null) {
        throw new StepError(
          err.status ?? 0,
          err.code,
          `The file reached the storage server, but whether Zotero registered it is not known (${err.message}; the item could not be read back).`,
        );
      }
    }
    if (err.status === 412) {
      // Another file was stored between the authorization and the registration.
      const stored = storedMd5(await readItem(lib, key, call));
      if (stored === s.md5) return 'exists';
      throw versionConflict(
        key,
        s,
        newVersion ? (replacing ?? undefined) : undefined,
        stored,
        'the bytes sent were not registered',
      );
    }
    throw new StepError(
      err.status ?? 0,
      err.code,
      `The file reached the storage server but Zotero did not register it: ${err.message}`,
      serverChanged(err),
    );
  }
  if (desktop) {
    // Registration is no batch write: later reads still go where the file now is.
    const { noteDesktopWrite } = await import('../library/write-route.js');
    await noteDesktopWrite(deps, lib.prefix);
  }
  return 'uploaded';
}

/**
 * The desktop refused both preconditions: the file it last synced with zotero.org is neither
 * absent nor the file on disk, and its local API does not say which it is.
 */
function unsynced(key: string, s: Source, stored: string | undefined): StepError {
  return new StepError(
    412,
    'conflict',
    `The Zotero desktop app would not replace the file of attachment ${key} (HTTP 412): it checks a new file against the one it last synced with zotero.org, and that is not the file on disk now (${stored ? `md5 ${stored}` : 'no file'}), which is all its local API shows. No file was uploaded. Let Zotero sync this attachment's file, then attach ${s.file} again (or set ZOTEUS_WRITES=cloud to upload it through the Web API).`,
  );
}

function storedMd5(item: ZoteroObject): string | undefined {
  const md5 = item.data.md5;
  return typeof md5 === 'string' && md5 ? md5 : undefined;
}

/** A `412` whose re-read shows a file other than this one: someone stored another version. */
function versionConflict(
  key: string,
  s: Source,
  replacing: string | undefined,
  stored: string | undefined,
  what: string,
): StepError {
  const was = replacing ? `the version with md5 ${replacing} that this upload was to replace` : 'no file';
  const now = stored ? `a file with md5 ${stored}` : 'no file';
  return new StepError(
    412,
    'conflict',
    `The file of attachment ${key} changed while ${s.file} was being attached: it now has ${now}, where it had ${was} (another client stored it meanwhile). That version was not overwritten; ${what}. Check it, then attach ${s.file} again to replace it.`,
  );
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
  return new StepError(err.status ?? 0, err.code, err.message, serverChanged(err));
}
