/**
 * Write handlers under a library prefix: batch POST, single-object PUT/PATCH and DELETE,
 * with Zotero's version preconditions (412 stale, 428 missing) and write tokens; and the PUT
 * of an attachment's full text (`routes-fulltext.ts`).
 */
import { HttpError, send, versionHeader, type Ctx } from './http.js';
import { isValidKey, randomKey } from './keys.js';
import { keyList } from './listing.js';
import { buildObject, nowIso, singular, storeObject, WriteError, type StoredObject } from './mutate.js';
import { deleteCollections, deleteItems, deleteSearches, deleteTags } from './deletes.js';
import { collectionJson, itemJson, searchJson, type RenderCtx } from './render.js';
import { putItemFulltext } from './routes-fulltext.js';
import type { LibraryRoute } from './routes-read.js';
import type { Library } from './state.js';
import type { ObjectKind } from './types.js';

export const MAX_WRITE_OBJECTS = 50;

const KINDS: ReadonlySet<string> = new Set(['collections', 'items', 'searches']);
const KEY_PARAM: Record<ObjectKind, string> = {
  collections: 'collectionKey',
  items: 'itemKey',
  searches: 'searchKey',
};

/** Answers a POST/PUT/PATCH/DELETE; returns false when no route matches. */
export function handleWrite(r: LibraryRoute): boolean {
  const [head, key] = r.segments;
  const n = r.segments.length;
  const method = r.ctx.method;
  if (head === 'items' && n === 3 && key && r.segments[2] === 'fulltext' && method === 'PUT') {
    return putItemFulltext(r, key);
  }
  if (head && KINDS.has(head)) {
    const kind = head as ObjectKind;
    if (n === 1 && method === 'POST') return batchWrite(r, kind);
    if (n === 1 && method === 'DELETE') return deleteMany(r, kind);
    if (n === 2 && key && (method === 'PUT' || method === 'PATCH')) return writeOne(r, kind, key);
    if (n === 2 && key && method === 'DELETE') return deleteOne(r, kind, key);
  }
  if (head === 'tags' && n === 1 && method === 'DELETE') return deleteTagList(r);
  return false;
}

function renderer(r: LibraryRoute, kind: ObjectKind): (o: StoredObject) => unknown {
  const rc: RenderCtx = { base: r.ctx.base, state: r.state, lib: r.lib };
  if (kind === 'collections') return (o) => collectionJson(rc, o as never);
  if (kind === 'items') return (o) => itemJson(rc, o as never);
  return (o) => searchJson(rc, o as never);
}

function mapOf(lib: Library, kind: ObjectKind): Map<string, StoredObject> {
  return lib[kind] as Map<string, StoredObject>;
}

/** `If-Unmodified-Since-Version` as a library-version precondition for the whole request. */
function checkLibraryVersion(lib: Library, expected: number): void {
  if (lib.version > expected) {
    throw new HttpError(
      412,
      `Library has been modified since specified version (expected ${expected}, found ${lib.version})`,
    );
  }
}

function batchWrite(r: LibraryRoute, kind: ObjectKind): true {
  const { ctx, lib } = r;
  const body = ctx.body;
  if (!Array.isArray(body)) throw new HttpError(400, 'Uploaded data must be a JSON array');
  if (body.length > MAX_WRITE_OBJECTS) {
    throw new HttpError(413, `Only ${MAX_WRITE_OBJECTS} objects can be saved in a single request`);
  }
  const token = writeToken(ctx);
  if (token !== undefined && lib.writeTokens.has(token)) throw new HttpError(412, 'Write token already used');
  const libraryVersion = versionHeader(ctx, 'If-Unmodified-Since-Version');
  if (libraryVersion !== undefined) checkLibraryVersion(lib, libraryVersion);

  // Every object this request writes gets the same new version.
  const version = lib.version + 1;
  const now = nowIso();
  const successful: Record<string, string> = {};
  const unchanged: Record<string, string> = {};
  const failed: Record<string, { key: string; code: number; message: string }> = {};

  body.forEach((input: unknown, i) => {
    let key = '';
    try {
      if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        throw new WriteError(
          400,
          `Invalid value for index ${i} in uploaded data; expected JSON ${singular(kind)} object`,
        );
      }
      const obj = input as Record<string, unknown>;
      if (obj.key !== undefined && !isValidKey(obj.key)) {
        throw new WriteError(400, `'${String(obj.key)}' is not a valid ${singular(kind)} key`);
      }
      key = (obj.key as string | undefined) ?? '';
      const result = writeObject(r, kind, obj, { libraryVersion, version, now });
      key = result.key;
      if (result.changed) successful[i] = key;
      else unchanged[i] = key;
    } catch (e) {
      if (!(e instanceof WriteError)) throw e;
      failed[i] = { key, code: e.code, message: e.message };
    }
  });

  if (Object.keys(successful).length > 0) lib.version = version;
  if (token !== undefined) lib.writeTokens.add(token);
  // Rendered after all writes so meta counts reflect the whole batch.
  const render = renderer(r, kind);
  const map = mapOf(lib, kind);
  const successfulJson: Record<string, unknown> = {};
  for (const [i, key] of Object.entries(successful)) successfulJson[i] = render(map.get(key) as StoredObject);
  send(
    ctx,
    200,
    { successful: successfulJson, success: successful, unchanged, failed },
    { 'Last-Modified-Version': String(lib.version) },
  );
  return true;
}

function writeToken(ctx: Ctx): string | undefined {
  const token = ctx.headers['zotero-write-token'];
  if (token === undefined) return undefined;
  // The dataserver accepts 5-32 characters; clients send 32 hex characters.
  if (token.length < 5 || token.length > 32) {
    throw new HttpError(400, 'Write token must be 5-32 characters in length');
  }
  return token;
}

/** One object of a batch: create, or PATCH an existing one under its version precondition. */
function writeObject(
  r: LibraryRoute,
  kind: ObjectKind,
  obj: Record<string, unknown>,
  o: { libraryVersion: number | undefined; version: number; now: string },
): { key: string; changed: boolean } {
  const noun = singular(kind);
  const label = noun[0]!.toUpperCase() + noun.slice(1);
  const given = obj.version;
  if (given !== undefined && (typeof given !== 'number' || !Number.isInteger(given) || given < 0)) {
    throw new WriteError(400, `'version' must be an integer`);
  }
  if (given !== undefined && obj.key === undefined) {
    throw new WriteError(400, `'version' is valid only with 'key' property`);
  }
  const key = (obj.key as string | undefined) ?? randomKey();
  const current = mapOf(r.lib, kind).get(key);
  if (current) {
    if (given !== undefined) {
      // An object already written by this same request is not stale.
      if (current.version > given && current.version !== o.version) {
        throw new WriteError(
          412,
          `${label} has been modified since specified version (expected ${given}, found ${current.version})`,
        );
      }
    } else if (o.libraryVersion === undefined) {
      throw new WriteError(
        428,
        `Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes`,
      );
    }
  } else if (given !== undefined && given > 0) {
    throw new WriteError(404, `${label} doesn't exist (expected version ${given}; use 0 instead)`);
  }
  const input = { ...obj };
  delete input.version;
  const { changed, next } = buildObject(
    r.lib,
    kind,
    key,
    current,
    input,
    current ? 'patch' : 'create',
    o.now,
  );
  if (changed) {
    next.version = o.version;
    storeObject(r.lib, kind, next);
  }
  return { key, changed };
}

/** PUT replaces the object, PATCH merges; the version precondition is the object's version. */
function writeOne(r: LibraryRoute, kind: ObjectKind, key: string): true {
  const { ctx, lib } = r;
  const noun = singular(kind);
  const body = ctx.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, `Uploaded data must be a JSON object`);
  }
  const input = { ...(body as Record<string, unknown>) };
  if (input.key !== undefined && input.key !== key) {
    throw new HttpError(409, `'key' property in JSON does not match ${noun} key of request`);
  }
  const headerVersion = versionHeader(ctx, 'If-Unmodified-Since-Version');
  const bodyVersion = typeof input.version === 'number' ? input.version : undefined;
  const expected = headerVersion ?? bodyVersion;
  delete input.version;
  const current = mapOf(lib, kind).get(key);
  if (expected === undefined) {
    throw new HttpError(
      428,
      `Either If-Unmodified-Since-Version or 'version' property must be provided for single-${noun} writes`,
    );
  }
  if (!current && expected > 0) throw new HttpError(404, `${noun} doesn't exist`);
  if (current && current.version > expected) {
    throw new HttpError(
      412,
      `${noun[0]!.toUpperCase()}${noun.slice(1)} has been modified since specified version (expected ${expected}, found ${current.version})`,
    );
  }
  const mode = !current ? 'create' : ctx.method === 'PATCH' ? 'patch' : 'put';
  let result: { changed: boolean; next: StoredObject };
  try {
    result = buildObject(lib, kind, key, current, input, mode, nowIso());
  } catch (e) {
    if (e instanceof WriteError) throw new HttpError(e.code, e.message);
    throw e;
  }
  if (result.changed) {
    result.next.version = ++lib.version;
    storeObject(lib, kind, result.next);
  }
  send(ctx, 204, undefined, { 'Last-Modified-Version': String(result.next.version) });
  return true;
}

function requireLibraryPrecondition(r: LibraryRoute): void {
  const expected = versionHeader(r.ctx, 'If-Unmodified-Since-Version');
  if (expected === undefined) throw new HttpError(428, 'If-Unmodified-Since-Version not provided');
  checkLibraryVersion(r.lib, expected);
}

function applyDelete(r: LibraryRoute, kind: ObjectKind, keys: string[]): void {
  const version = r.lib.version + 1;
  const changed =
    kind === 'collections'
      ? deleteCollections(r.lib, keys, version, nowIso())
      : kind === 'items'
        ? deleteItems(r.lib, keys, version)
        : deleteSearches(r.lib, keys, version);
  if (changed) r.lib.version = version;
  send(r.ctx, 204, undefined, { 'Last-Modified-Version': String(r.lib.version) });
}

/** `DELETE collections?collectionKey=…` etc.: library-version precondition, unknown keys ignored. */
function deleteMany(r: LibraryRoute, kind: ObjectKind): true {
  const param = KEY_PARAM[kind];
  const keys = keyList(r.ctx, param);
  if (!keys) throw new HttpError(400, `'${param}' not provided`);
  requireLibraryPrecondition(r);
  applyDelete(r, kind, keys);
  return true;
}

/** `DELETE collections/{key}`: the precondition is the object's version. */
function deleteOne(r: LibraryRoute, kind: ObjectKind, key: string): true {
  const noun = singular(kind);
  const current = mapOf(r.lib, kind).get(key);
  if (!current) throw new HttpError(404, `${noun[0]!.toUpperCase()}${noun.slice(1)} not found`);
  const expected = versionHeader(r.ctx, 'If-Unmodified-Since-Version');
  if (expected === undefined) throw new HttpError(428, 'If-Unmodified-Since-Version not provided');
  if (current.version > expected) {
    throw new HttpError(
      412,
      `${noun[0]!.toUpperCase()}${noun.slice(1)} has been modified since specified version (expected ${expected}, found ${current.version})`,
    );
  }
  applyDelete(r, kind, [key]);
  return true;
}

/** `DELETE tags?tag=a || b`: removes the tags from every item. */
function deleteTagList(r: LibraryRoute): true {
  const names = r.ctx.params
    .getAll('tag')
    .flatMap((t) => t.split(/\s+\|\|\s+/))
    .filter((t) => t !== '');
  if (names.length === 0) throw new HttpError(400, "'tag' not provided");
  if (names.length > MAX_WRITE_OBJECTS)
    throw new HttpError(413, `Cannot delete more than ${MAX_WRITE_OBJECTS} tags`);
  requireLibraryPrecondition(r);
  const version = r.lib.version + 1;
  if (deleteTags(r.lib, names, version, nowIso())) r.lib.version = version;
  send(r.ctx, 204, undefined, { 'Last-Modified-Version': String(r.lib.version) });
  return true;
}
