/**
 * Collection membership (add_items / remove_items). Membership lives on each item
 * (`data.collections`), so this is the write engine's set-like change: items read 50 at a
 * time, those already in the wanted state skipped (reported unchanged, nothing sent), the
 * rest written 50 at a time with each item's version, re-read and re-applied on `412`. For n
 * items that is at most 2·⌈n/50⌉ requests (plus conflict rounds), never one per item, and
 * only `collections` travels, so no other field of an item changes.
 */
import { assertBulkConfirmed } from '../../call/bulk.js';
import { membershipBulk } from './constants.js';
import type { Deps } from '../../tool.js';
import { addToCollections, applySetChange, removeFromCollections } from '../../writes/index.js';
import type { FailedEntry } from '../../zotero/index.js';
import type { LibraryArgs } from '../address.js';
import { webClient } from '../keys.js';
import { openWebLibrary } from '../web.js';
import { collectionNotFound, unique } from './common.js';

export type MembershipMode = 'add' | 'remove';

export interface MembershipInput extends LibraryArgs {
  collection_key: string;
  item_keys: readonly string[];
  confirm?: boolean | undefined;
}

export interface MembershipResult {
  /** Item keys whose membership this call changed, in input order. */
  updated: string[];
  /** Item keys already in the wanted state: nothing was sent for them. */
  unchanged: string[];
  /** One entry per item that could not be changed (the others still landed). */
  failed: FailedEntry[];
  libraryVersion?: number;
}

export async function changeMembership(
  deps: Deps,
  input: MembershipInput,
  mode: MembershipMode,
): Promise<MembershipResult> {
  if (mode === 'remove') assertBulkConfirmed(deps, membershipBulk(input), input.confirm);
  const key = input.collection_key;
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const phase = mode === 'add' ? 'add_items' : 'remove_items';
  const total = unique(input.item_keys).length;
  deps.progress({ event: 'start', phase, done: 0, total });
  const result = await applySetChange(lib.client, {
    library: lib.prefix,
    kind: 'items',
    keys: input.item_keys,
    apply: mode === 'add' ? addToCollections([key]) : removeFromCollections([key]),
    call,
    progress: (done, all) => deps.progress({ event: 'progress', phase, done, total: all }),
  });
  // Nothing written proves nothing about the collection: an add the server refused for every
  // item, or a remove where no item was a member. One request settles whether it exists.
  const nothingWritten =
    result.succeeded.length === 0 && (mode === 'remove' || result.unchanged.length === 0);
  if (nothingWritten) {
    const found = await lib.client.getByKeys(lib.prefix, 'collections', [key], { call });
    if (found.missing.length > 0) {
      throw collectionNotFound(deps, key, lib.prefix, { tail: 'no item was changed' });
    }
  }
  deps.progress({
    event: 'complete',
    phase,
    done: total,
    total,
    succeeded: result.succeeded.length,
    failed: result.failed.length,
  });
  return {
    updated: result.succeeded,
    unchanged: result.unchanged,
    failed: result.failed,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
  };
}
