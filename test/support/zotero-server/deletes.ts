/**
 * Permanent deletions and their cascades, recorded for `GET deleted?since=V`.
 */
import type { Store } from './mutate.js';
import type { DeletedKind } from './types.js';

function recordDeletion(store: Store, kind: DeletedKind, key: string, version: number): void {
  store.deletedLog = store.deletedLog.filter((d) => !(d.kind === kind && d.key === key));
  store.deletedLog.push({ kind, key, version });
}

/** The collection and all its descendants. */
export function collectionSubtree(store: Store, root: string): string[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    for (const c of store.collections.values()) {
      if (c.parentCollection === out[i] && !out.includes(c.key)) out.push(c.key);
    }
  }
  return out;
}

/**
 * Deletes collections with their whole subtrees. Items stay but lose membership of every
 * deleted collection, which is a change to those items (they get the new version).
 * Returns whether anything was deleted.
 */
export function deleteCollections(store: Store, keys: string[], version: number, now: string): boolean {
  const doomed = new Set<string>();
  for (const key of keys) {
    if (store.collections.has(key)) for (const k of collectionSubtree(store, key)) doomed.add(k);
  }
  for (const key of doomed) {
    store.collections.delete(key);
    recordDeletion(store, 'collections', key, version);
  }
  for (const item of store.items.values()) {
    if (item.collections.some((c) => doomed.has(c))) {
      item.collections = item.collections.filter((c) => !doomed.has(c));
      item.version = version;
      item.dateModified = now;
    }
  }
  return doomed.size > 0;
}

/** Deletes items; a parent's child notes and attachments go with it, as in Zotero. */
export function deleteItems(store: Store, keys: string[], version: number): boolean {
  const doomed = new Set(keys.filter((k) => store.items.has(k)));
  for (const item of store.items.values()) {
    if (item.parentItem && doomed.has(item.parentItem)) doomed.add(item.key);
  }
  for (const key of doomed) {
    store.items.delete(key);
    store.fulltext?.delete(key);
    recordDeletion(store, 'items', key, version);
  }
  return doomed.size > 0;
}

export function deleteSearches(store: Store, keys: string[], version: number): boolean {
  let any = false;
  for (const key of keys) {
    if (store.searches.delete(key)) {
      recordDeletion(store, 'searches', key, version);
      any = true;
    }
  }
  return any;
}

/** Removes the tags from every item that has them; the touched items get the new version. */
export function deleteTags(store: Store, names: string[], version: number, now: string): boolean {
  const wanted = new Set(names);
  const found = new Set<string>();
  for (const item of store.items.values()) {
    const kept = item.tags.filter((t) => !wanted.has(t.tag));
    if (kept.length === item.tags.length) continue;
    for (const t of item.tags) if (wanted.has(t.tag)) found.add(t.tag);
    item.tags = kept;
    item.version = version;
    item.dateModified = now;
  }
  for (const name of found) recordDeletion(store, 'tags', name, version);
  return found.size > 0;
}
