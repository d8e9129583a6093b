/**
 * The set-like changes the write engine applies. Each is pure and returns null when the
 * object is already in the wanted state, so no-ops cost no write.
 */
import type { ObjectData } from './engine.js';

export interface Tag {
  tag: string;
  /** 0 manual (usually omitted), 1 automatic. */
  type?: number;
}

function collectionsOf(data: ObjectData): string[] {
  return Array.isArray(data.collections)
    ? (data.collections as unknown[]).filter((c): c is string => typeof c === 'string')
    : [];
}

function tagsOf(data: ObjectData): Tag[] {
  return Array.isArray(data.tags)
    ? (data.tags as Tag[]).filter((t) => t !== null && typeof t?.tag === 'string')
    : [];
}

/** Adds the item to collections (arrays are replaced whole by the API, so send the full list). */
export function addToCollections(collectionKeys: readonly string[]) {
  return <D extends ObjectData>(data: D): D | null => {
    const current = collectionsOf(data);
    const missing = collectionKeys.filter((k, i) => !current.includes(k) && collectionKeys.indexOf(k) === i);
    return missing.length === 0 ? null : { ...data, collections: [...current, ...missing] };
  };
}

export function removeFromCollections(collectionKeys: readonly string[]) {
  return <D extends ObjectData>(data: D): D | null => {
    const current = collectionsOf(data);
    const kept = current.filter((k) => !collectionKeys.includes(k));
    return kept.length === current.length ? null : { ...data, collections: kept };
  };
}

/** Adds tags (manual unless `type` says otherwise); a tag already present under any type is kept as is. */
export function addTags(tags: readonly string[], type?: number) {
  return <D extends ObjectData>(data: D): D | null => {
    const current = tagsOf(data);
    const names = new Set(current.map((t) => t.tag));
    const added: Tag[] = [];
    for (const tag of tags) {
      if (names.has(tag)) continue;
      names.add(tag);
      added.push(type ? { tag, type } : { tag });
    }
    return added.length === 0 ? null : { ...data, tags: [...current, ...added] };
  };
}

export function removeTags(tags: readonly string[]) {
  return <D extends ObjectData>(data: D): D | null => {
    const current = tagsOf(data);
    const kept = current.filter((t) => !tags.includes(t.tag));
    return kept.length === current.length ? null : { ...data, tags: kept };
  };
}
