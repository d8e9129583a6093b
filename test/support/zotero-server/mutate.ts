/**
 * The write rules of a library, shared by the HTTP handlers and the seeding helpers so that
 * seeded data and client writes obey the same validation: building the next version of an
 * object from a JSON write (PATCH or PUT semantics). Deletions live in `deletes.ts`.
 */
import { retype } from './item-types.js';
import { isValidKey } from './keys.js';
import type {
  CollectionData,
  DeletedEntry,
  ItemData,
  ObjectKind,
  Relations,
  SearchData,
  Tag,
} from './types.js';

/** A per-object failure: `code` is the HTTP-like code the batch response reports. */
export class WriteError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type StoredObject = CollectionData | ItemData | SearchData;

/** What the rules need of a library. */
export interface Store {
  collections: Map<string, CollectionData>;
  items: Map<string, ItemData>;
  searches: Map<string, SearchData>;
  deletedLog: DeletedEntry[];
  /** Full text by attachment key: goes with its item when the item is deleted. */
  fulltext?: Map<string, unknown>;
}

export type WriteMode = 'patch' | 'put' | 'create';

/** Zotero's timestamp format: ISO 8601 without milliseconds. */
export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function singular(kind: ObjectKind): string {
  return kind === 'collections' ? 'collection' : kind === 'items' ? 'item' : 'search';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Builds the next state of one object from `input` (the JSON the client sent, `key` and
 * `version` already checked by the caller). Returns `changed: false` when no field differs,
 * which the batch response reports under `unchanged`. Throws WriteError on invalid data.
 */
export function buildObject(
  store: Store,
  kind: ObjectKind,
  key: string,
  current: StoredObject | undefined,
  input: Record<string, unknown>,
  mode: WriteMode,
  now: string,
): { changed: boolean; next: StoredObject } {
  const next =
    kind === 'collections'
      ? buildCollection(store, key, current as CollectionData | undefined, input, mode)
      : kind === 'items'
        ? buildItem(store, key, current as ItemData | undefined, input, mode, now)
        : buildSearch(key, current as SearchData | undefined, input, mode);
  if (!current) return { changed: true, next };
  const changed = canonical(withoutVolatile(next, input)) !== canonical(withoutVolatile(current, input));
  if (!changed) return { changed: false, next: current };
  if (kind === 'items' && !('dateModified' in input)) (next as ItemData).dateModified = now;
  return { changed: true, next };
}

/** Version and a server-set dateModified never make an object "changed" by themselves. */
function withoutVolatile(o: StoredObject, input: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...o };
  delete copy.version;
  if (!('dateModified' in input)) delete copy.dateModified;
  return copy;
}

/** Stable JSON for comparison: sorted object keys, set-like arrays sorted. */
function canonical(value: unknown, field = ''): string {
  if (Array.isArray(value)) {
    const parts = value.map((v) => canonical(v));
    if (field === 'collections' || field === 'tags') parts.sort();
    return `[${parts.join(',')}]`;
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k], k)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const COLLECTION_FIELDS = new Set(['key', 'version', 'name', 'parentCollection', 'relations', 'deleted']);

function buildCollection(
  store: Store,
  key: string,
  current: CollectionData | undefined,
  input: Record<string, unknown>,
  mode: WriteMode,
): CollectionData {
  for (const field of Object.keys(input)) {
    if (!COLLECTION_FIELDS.has(field)) throw new WriteError(400, `Invalid property '${field}'`);
  }
  const base: CollectionData =
    mode === 'patch' && current
      ? { ...current, relations: { ...current.relations } }
      : { key, version: current?.version ?? 0, name: '', parentCollection: false, relations: {} };

  if ('name' in input) {
    if (typeof input.name !== 'string') throw new WriteError(400, `'name' must be a string`);
    base.name = input.name;
  }
  if (base.name.trim() === '') throw new WriteError(400, 'Collection name cannot be empty');
  if (base.name.length > 255) {
    throw new WriteError(413, `Collection name '${base.name.slice(0, 50)}…' too long`);
  }

  if ('parentCollection' in input) {
    const parent = input.parentCollection;
    if (parent === false || parent === null || parent === '') base.parentCollection = false;
    else if (isValidKey(parent)) base.parentCollection = parent;
    else throw new WriteError(400, `'${String(parent)}' is not a valid collection key`);
  }
  if (base.parentCollection !== false) checkParentCollection(store, key, base.parentCollection);

  if ('relations' in input) base.relations = relations(input.relations);
  if ('deleted' in input) setDeleted(base, input.deleted);
  return base;
}

/** The parent must exist and must not be the collection itself or one of its descendants. */
function checkParentCollection(store: Store, key: string, parent: string): void {
  if (!store.collections.has(parent)) throw new WriteError(409, `Parent collection ${parent} not found`);
  const seen = new Set<string>();
  for (let at: string | false = parent; at !== false;) {
    if (at === key) throw new WriteError(409, `Cannot make collection ${key} its own ancestor`);
    if (seen.has(at)) break;
    seen.add(at);
    at = store.collections.get(at)?.parentCollection ?? false;
  }
}

function relations(value: unknown): Relations {
  if (!isPlainObject(value)) throw new WriteError(400, `'relations' must be an object`);
  const out: Relations = {};
  for (const [predicate, object] of Object.entries(value)) {
    const ok =
      typeof object === 'string' || (Array.isArray(object) && object.every((o) => typeof o === 'string'));
    if (!ok) throw new WriteError(400, `Invalid relation '${predicate}'`);
    out[predicate] = object as string | string[];
  }
  return out;
}

function setDeleted(target: { deleted?: boolean }, value: unknown): void {
  if (value === true || value === 1 || value === '1') target.deleted = true;
  else if (value === false || value === 0 || value === '0' || value === null) delete target.deleted;
  else throw new WriteError(400, `Invalid 'deleted' value`);
}

function buildItem(
  store: Store,
  key: string,
  current: ItemData | undefined,
  input: Record<string, unknown>,
  mode: WriteMode,
  now: string,
): ItemData {
  const base: ItemData =
    mode === 'patch' && current
      ? structuredClone(current)
      : {
          key,
          version: current?.version ?? 0,
          itemType: '',
          collections: [],
          tags: [],
          relations: {},
          dateAdded: current?.dateAdded ?? now,
          dateModified: current?.dateModified ?? now,
        };

  for (const [field, value] of Object.entries(input)) {
    if (field === 'key' || field === 'version' || value === undefined) continue;
    switch (field) {
      case 'itemType':
        if (typeof value !== 'string' || value === '') throw new WriteError(400, `Invalid 'itemType'`);
        base.itemType = value;
        break;
      case 'collections':
        base.collections = collectionList(store, value);
        break;
      case 'tags':
        base.tags = tagList(value);
        break;
      case 'relations':
        base.relations = relations(value);
        break;
      case 'deleted':
        setDeleted(base, value);
        break;
      case 'parentItem':
        if (value === false || value === null || value === '') delete base.parentItem;
        else if (!isValidKey(value) || value === key || !store.items.has(value)) {
          throw new WriteError(409, `Parent item ${String(value)} doesn't exist`);
        } else base.parentItem = value;
        break;
      default:
        // Other fields are served back as given; null clears one, as an empty string does in Zotero.
        if (value === null) delete base[field];
        else base[field] = value;
    }
  }
  if (!base.itemType) throw new WriteError(400, `'itemType' property not provided`);
  if (mode === 'patch' && current && current.itemType !== base.itemType) {
    retype(base as unknown as Record<string, unknown>, current.itemType, new Set(Object.keys(input)));
  }
  if (base.parentItem && base.collections.length > 0) {
    throw new WriteError(400, 'Child items cannot be assigned to collections');
  }
  return base;
}

function collectionList(store: Store, value: unknown): string[] {
  if (!Array.isArray(value)) throw new WriteError(400, `'collections' must be an array`);
  const out: string[] = [];
  for (const key of value) {
    if (!isValidKey(key)) throw new WriteError(400, `'${String(key)}' is not a valid collection key`);
    if (!store.collections.has(key)) throw new WriteError(409, `Collection ${key} doesn't exist`);
    if (!out.includes(key)) out.push(key);
  }
  return out;
}

function tagList(value: unknown): Tag[] {
  if (!Array.isArray(value)) throw new WriteError(400, `'tags' must be an array`);
  return value.map((t): Tag => {
    if (!isPlainObject(t) || typeof t.tag !== 'string' || t.tag.trim() === '') {
      throw new WriteError(400, 'Tag must be an object with a non-empty tag property');
    }
    const type = t.type === undefined ? 0 : Number(t.type);
    if (type !== 0 && type !== 1) throw new WriteError(400, `Invalid tag type '${String(t.type)}'`);
    // Zotero omits type 0 (manual) in JSON, so store it the same way.
    return type === 1 ? { tag: t.tag, type: 1 } : { tag: t.tag };
  });
}

const SEARCH_FIELDS = new Set(['key', 'version', 'name', 'conditions', 'deleted']);

function buildSearch(
  key: string,
  current: SearchData | undefined,
  input: Record<string, unknown>,
  mode: WriteMode,
): SearchData {
  for (const field of Object.keys(input)) {
    if (!SEARCH_FIELDS.has(field)) throw new WriteError(400, `Invalid property '${field}'`);
  }
  const base: SearchData =
    mode === 'patch' && current
      ? structuredClone(current)
      : { key, version: current?.version ?? 0, name: '', conditions: [] };
  if ('name' in input) {
    if (typeof input.name !== 'string') throw new WriteError(400, `'name' must be a string`);
    base.name = input.name;
  }
  if (base.name.trim() === '') throw new WriteError(400, 'Search name cannot be empty');
  if (base.name.length > 255) throw new WriteError(413, `Search name '${base.name.slice(0, 50)}…' too long`);
  if ('conditions' in input) {
    if (!Array.isArray(input.conditions) || !input.conditions.every(isPlainObject)) {
      throw new WriteError(400, `'conditions' must be an array of objects`);
    }
    base.conditions = structuredClone(input.conditions) as SearchData['conditions'];
  }
  if ('deleted' in input) setDeleted(base, input.deleted);
  return base;
}

/** Stores a written object; a re-created key leaves the deleted log, as in Zotero. */
export function storeObject(store: Store, kind: ObjectKind, obj: StoredObject): void {
  (store[kind] as Map<string, StoredObject>).set(obj.key, obj);
  store.deletedLog = store.deletedLog.filter((d) => !(d.kind === kind && d.key === obj.key));
}
