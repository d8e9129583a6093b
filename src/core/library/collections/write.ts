/**
 * Collection structure: create, rename, reparent, delete. Every write is conflict-safe: the
 * collection is read with its version and written with it; a `412` (someone wrote first)
 * means read again and write again, a bounded number of rounds. A missing collection or
 * parent is `not_found` before anything is written.
 */
import { paramRef } from '../../call/refs.js';
import { ZoteusError } from '../../errors.js';
import type { Deps } from '../../tool.js';
import { createObjects, DEFAULT_MAX_ROUNDS } from '../../writes/index.js';
import type { CallContext, ZoteroObject } from '../../zotero/index.js';
import type { LibraryArgs } from '../address.js';
import { webClient } from '../keys.js';
import { openWebLibrary, type WebLibrary } from '../web.js';
import { collectionNotFound, collectionWriteError, keptChanging } from './common.js';
import { readCollections, type CollectionRow } from './list.js';

type CollectionObject = ZoteroObject<{ name?: unknown; parentCollection?: unknown }>;

export interface CreateInput extends LibraryArgs {
  name: string;
  parent_collection?: string | undefined;
}

export interface UpdateInput extends LibraryArgs {
  collection_key: string;
}

export interface CreateResult {
  created: string[];
  libraryVersion?: number;
}

export interface UpdateResult {
  collection_key: string;
  libraryVersion?: number;
}

export interface DeleteResult {
  deleted: string;
  deletedName: string;
  subcollectionsDeleted: number;
  libraryVersion?: number;
}

/** Names are trimmed; the tools' schemas refuse empty and over-long ones before this. */
export function cleanName(name: string): string {
  return name.trim();
}

function withVersion<T extends object>(
  result: T,
  version: number | undefined,
): T & { libraryVersion?: number } {
  return version === undefined ? result : { ...result, libraryVersion: version };
}

function parentOf(object: CollectionObject | undefined): string | false {
  const parent = object?.data?.parentCollection;
  return typeof parent === 'string' && parent !== '' ? parent : false;
}

/** One call context for the key check and every request of the action. */
async function openForWrite(deps: Deps, args: LibraryArgs): Promise<{ lib: WebLibrary; call: CallContext }> {
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, args, { access: 'write', call });
  return { lib, call };
}

export async function createCollection(deps: Deps, input: CreateInput): Promise<CreateResult> {
  const name = cleanName(input.name);
  const parent = input.parent_collection;
  const { lib, call } = await openForWrite(deps, input);
  if (parent !== undefined) {
    const read = await lib.client.getByKeys(lib.prefix, 'collections', [parent], { call });
    if (read.missing.length > 0) {
      throw collectionNotFound(deps, parent, lib.prefix, {
        field: 'parent_collection',
        role: 'Parent collection',
        tail: 'nothing was created',
      });
    }
  }
  // A client-generated key and a write token: a resend, or a retry with the same idempotency
  // key, finds the collection instead of creating a second one.
  const written = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'collections',
    objects: [{ name, parentCollection: parent ?? false }],
    labels: ['collection'],
    ids: deps.writeIds,
    call,
  });
  const failure = written.failed[0];
  if (failure) throw collectionWriteError(deps, failure, { prefix: lib.prefix, parent });
  const key = written.successful[0]?.key;
  if (!key) {
    throw new ZoteusError(
      'api_error',
      'The Zotero API accepted the new collection but did not say its key.',
      {
        hint: 'List the collections to find it before creating it again.',
      },
    );
  }
  return withVersion({ created: [key] }, written.libraryVersion);
}

/**
 * Refuses a move of `key` under `parent` when `parent` is `key` or lies inside it: walks up
 * from the parent, one request per ancestor not yet read (leaf collections cost nothing).
 */
async function assertNotUnderItself(
  lib: WebLibrary,
  call: CallContext,
  key: string,
  parent: CollectionObject,
): Promise<void> {
  const refuse = (): ZoteusError =>
    new ZoteusError(
      'validation_error',
      `Collection ${parent.key} is inside collection ${key}: a collection cannot be moved under itself or one of its own subcollections.`,
      {
        field: 'parent_collection',
        hint: `Choose a parent outside the collection, or omit ${paramRef('parent_collection')} to move it to the top level.`,
      },
    );
  const seen = new Set([parent.key]);
  for (let at = parentOf(parent); at !== false;) {
    if (at === key) throw refuse();
    if (seen.has(at)) return; // a cycle the server let in: not ours to resolve
    seen.add(at);
    const read = await lib.client.getByKeys<CollectionObject>(lib.prefix, 'collections', [at], { call });
    at = parentOf(read.byKey.get(at));
  }
}

/** Rename or reparent: read with the version, write with it, re-read on `412`. */
async function updateCollection(
  deps: Deps,
  input: UpdateInput,
  change: { name?: string; parent?: string | false },
): Promise<UpdateResult> {
  const key = input.collection_key;
  if (change.parent === key) {
    throw new ZoteusError('validation_error', `Collection ${key} cannot be its own parent.`, {
      field: 'parent_collection',
      hint: `Choose another parent, or omit ${paramRef('parent_collection')} to move it to the top level.`,
    });
  }
  const { lib, call } = await openForWrite(deps, input);
  let last: string | undefined;
  for (let round = 1; round <= DEFAULT_MAX_ROUNDS; round++) {
    const wanted = typeof change.parent === 'string' ? [key, change.parent] : [key];
    const read = await lib.client.getByKeys<CollectionObject>(lib.prefix, 'collections', wanted, { call });
    const current = read.byKey.get(key);
    if (!current) throw collectionNotFound(deps, key, lib.prefix, { tail: 'nothing was written' });
    if (typeof change.parent === 'string') {
      const parent = read.byKey.get(change.parent);
      if (!parent) {
        throw collectionNotFound(deps, change.parent, lib.prefix, {
          field: 'parent_collection',
          role: 'Parent collection',
          tail: 'nothing was moved',
        });
      }
      // A collection without subcollections cannot have the new parent inside it.
      if (current.meta?.numCollections !== 0) await assertNotUnderItself(lib, call, key, parent);
    }
    const fields: Record<string, unknown> = {};
    if (change.name !== undefined && current.data?.name !== change.name) fields.name = change.name;
    if (change.parent !== undefined && parentOf(current) !== change.parent)
      fields.parentCollection = change.parent;
    // Already as wanted: nothing to write, and the read's version is the library's.
    if (Object.keys(fields).length === 0) return withVersion({ collection_key: key }, read.libraryVersion);

    const written = await lib.client.writeBatch(
      lib.prefix,
      'collections',
      [{ key, version: current.version, ...fields }],
      { call },
    );
    const failure = written.failed[0];
    if (!failure) return withVersion({ collection_key: key }, written.libraryVersion);
    if (failure.code !== 412) {
      throw collectionWriteError(deps, failure, { key, prefix: lib.prefix, parent: change.parent });
    }
    last = failure.message;
  }
  throw keptChanging(key, DEFAULT_MAX_ROUNDS, last);
}

export function renameCollection(deps: Deps, input: UpdateInput & { name: string }): Promise<UpdateResult> {
  return updateCollection(deps, input, { name: cleanName(input.name) });
}

/** No `parent_collection`: to the top level. */
export function reparentCollection(
  deps: Deps,
  input: UpdateInput & { parent_collection?: string | undefined },
): Promise<UpdateResult> {
  return updateCollection(deps, input, { parent: input.parent_collection ?? false });
}

/** The keys of every collection below `key` (not `key` itself). */
export function descendantsOf(rows: readonly CollectionRow[], key: string): string[] {
  const children = new Map<string, string[]>();
  for (const row of rows) {
    if (row.parentCollection === false) continue;
    const list = children.get(row.parentCollection);
    if (list) list.push(row.key);
    else children.set(row.parentCollection, [row.key]);
  }
  const out: string[] = [];
  const seen = new Set([key]);
  for (let queue = [key]; queue.length > 0;) {
    const next: string[] = [];
    for (const at of queue) {
      for (const child of children.get(at) ?? []) {
        if (seen.has(child)) continue;
        seen.add(child);
        out.push(child);
        next.push(child);
      }
    }
    queue = next;
  }
  return out;
}

/**
 * Deletes a collection with its whole subtree (the server does the cascade; items stay in the
 * library and lose the membership). The result names it and counts the subcollections, read
 * from the cached listing only when the collection has any.
 */
export async function deleteCollection(deps: Deps, input: UpdateInput): Promise<DeleteResult> {
  const key = input.collection_key;
  const { lib, call } = await openForWrite(deps, input);
  let last: string | undefined;
  for (let round = 1; round <= DEFAULT_MAX_ROUNDS; round++) {
    // By key through a multi-object request: its Last-Modified-Version is the library's.
    const read = await lib.client.getByKeys<CollectionObject>(lib.prefix, 'collections', [key], { call });
    const current = read.byKey.get(key);
    if (!current) throw collectionNotFound(deps, key, lib.prefix, { tail: 'nothing was deleted' });
    const name = typeof current.data?.name === 'string' ? current.data.name : '';
    let subcollections = 0;
    if (current.meta?.numCollections !== 0) {
      const { rows } = await readCollections(deps, input, { lib, call });
      subcollections = descendantsOf(rows, key).length;
    }
    try {
      const result = await lib.client.deleteBatch(lib.prefix, 'collections', [key], {
        libraryVersion: read.libraryVersion,
        call,
      });
      return withVersion(
        { deleted: key, deletedName: name, subcollectionsDeleted: subcollections },
        result.libraryVersion,
      );
    } catch (error) {
      // The library moved since the read: read again (the subtree may have changed too).
      if (!(error instanceof ZoteusError && error.status === 412)) throw error;
      last = error.message;
    }
  }
  throw keptChanging(key, DEFAULT_MAX_ROUNDS, last);
}
