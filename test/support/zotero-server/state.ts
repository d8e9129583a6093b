/**
 * The server's world: users, API keys, groups and their libraries. Everything lives in one
 * ServerState per started server, so parallel tests never share state.
 */
import { isValidKey, KEY_CHARS, randomKey } from './keys.js';
import { buildObject, nowIso, storeObject, WriteError, type Store, type StoredObject } from './mutate.js';
import { deleteCollections, deleteItems } from './deletes.js';
import { parseFulltext, storeFulltext } from './fulltext.js';
import type {
  CollectionData,
  CollectionSeed,
  DeletedEntry,
  FulltextData,
  FulltextInput,
  ItemData,
  ItemSeed,
  KeyAccess,
  ObjectKind,
  SearchData,
  TestLibrary,
  ZoteroTestServer,
} from './types.js';

export interface UserRecord {
  userID: number;
  username: string;
  displayName: string;
}

export interface KeyRecord {
  key: string;
  userID: number;
  access: KeyAccess;
}

export type GroupInput = Parameters<ZoteroTestServer['addGroup']>[0];

export interface GroupRecord {
  id: number;
  name: string;
  owner: number;
  members: number[];
  admins: number[];
  type: string;
  description: string;
  libraryEditing: 'members' | 'admins';
  libraryReading: 'members' | 'all';
  fileEditing: 'members' | 'admins' | 'none';
  omitNumItems: boolean;
  /** Version of the group's metadata, not of its library. */
  version: number;
  created: string;
}

export class Library implements TestLibrary, Store {
  version = 0;
  collections = new Map<string, CollectionData>();
  items = new Map<string, ItemData>();
  searches = new Map<string, SearchData>();
  deletedLog: DeletedEntry[] = [];
  fulltext = new Map<string, FulltextData>();
  /** Zotero-Write-Token values already used in this library. */
  writeTokens = new Set<string>();

  constructor(
    readonly type: 'user' | 'group',
    readonly id: number,
  ) {}

  /** `users/1` or `groups/2`. */
  get prefix(): string {
    return `${this.type === 'user' ? 'users' : 'groups'}/${this.id}`;
  }

  addCollections(list: CollectionSeed[]): string[] {
    return this.seed('collections', list);
  }

  addItems(list: ItemSeed[]): string[] {
    return this.seed(
      'items',
      list.map((i) => ({ itemType: 'journalArticle', ...i })),
    );
  }

  addSearches(list: Array<{ key?: string; name: string; conditions?: SearchData['conditions'] }>): string[] {
    return this.seed('searches', list);
  }

  editItem(key: string, patch: Record<string, unknown>): void {
    this.edit('items', key, patch);
  }

  editCollection(key: string, patch: Record<string, unknown>): void {
    this.edit('collections', key, patch);
  }

  deleteCollection(key: string): void {
    if (!this.collections.has(key)) throw new Error(`No collection ${key} in ${this.prefix}`);
    deleteCollections(this, [key], ++this.version, nowIso());
  }

  deleteItem(key: string): void {
    if (!this.items.has(key)) throw new Error(`No item ${key} in ${this.prefix}`);
    deleteItems(this, [key], ++this.version);
  }

  setFulltext(key: string, data: FulltextInput): number {
    const version = this.version + 1;
    this.guard(() => storeFulltext(this, key, parseFulltext(data), version));
    this.version = version;
    return version;
  }

  /** Seeds go through the same validation as client writes, so a test cannot build an impossible library. */
  private seed(kind: ObjectKind, list: ReadonlyArray<object>): string[] {
    const version = this.version + 1;
    const now = nowIso();
    const map = this[kind] as Map<string, StoredObject>;
    const stored: string[] = [];
    try {
      for (const entry of list) {
        const input = { ...(entry as Record<string, unknown>) };
        const key = input.key === undefined ? randomKey() : input.key;
        if (!isValidKey(key))
          throw new Error(`Seed key '${String(key)}' is not 8 characters of ${KEY_CHARS}`);
        if (map.has(key)) throw new Error(`Seed key ${key} already exists in ${this.prefix}`);
        delete input.version;
        const { next } = this.guard(() => buildObject(this, kind, key, undefined, input, 'create', now));
        next.version = version;
        storeObject(this, kind, next);
        stored.push(key);
      }
    } catch (e) {
      // All or nothing, so a failed seed leaves no object ahead of the library version.
      for (const key of stored) map.delete(key);
      throw e;
    }
    this.version = version;
    return stored;
  }

  private edit(kind: ObjectKind, key: string, patch: Record<string, unknown>): void {
    const current = (this[kind] as Map<string, StoredObject>).get(key);
    if (!current) throw new Error(`No ${kind} object ${key} in ${this.prefix}`);
    const { next } = this.guard(() => buildObject(this, kind, key, current, patch, 'patch', nowIso()));
    // Another client's write always moves the version, even if it set the same values.
    next.version = ++this.version;
    storeObject(this, kind, next);
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof WriteError) throw new Error(`Invalid seed for ${this.prefix}: ${e.message}`);
      throw e;
    }
  }
}

export class ServerState {
  /** What `GET /schema` serves (set with `setSchema`); unset: 404, as a server without it. */
  schema: { json: unknown; etag: string } | undefined;
  users = new Map<number, UserRecord>();
  keys = new Map<string, KeyRecord>();
  groups = new Map<number, GroupRecord>();
  private libraries = new Map<string, Library>();

  addUser(u: { userID: number; username: string; displayName?: string }): void {
    this.users.set(u.userID, { displayName: u.username, ...u } as UserRecord);
    this.library(`users/${u.userID}`);
  }

  addKey(k: KeyRecord): void {
    this.keys.set(k.key, structuredClone(k));
  }

  addGroup(g: GroupInput): void {
    this.groups.set(g.id, {
      id: g.id,
      name: g.name,
      owner: g.owner,
      members: g.members,
      admins: g.admins ?? [],
      type: g.type ?? 'Private',
      description: g.description ?? '',
      libraryEditing: g.libraryEditing ?? 'members',
      libraryReading: g.libraryReading ?? 'members',
      fileEditing: g.fileEditing ?? 'members',
      omitNumItems: g.omitNumItems ?? false,
      version: 1,
      created: nowIso(),
    });
    this.library(`groups/${g.id}`);
  }

  /** Creates the library on first use (tests may seed before registering the owner). */
  library(prefix: string): Library {
    const m = /^\/?(users|groups)\/(\d+)\/?$/.exec(prefix);
    if (!m) throw new Error(`Library prefix must be users/ID or groups/ID, got '${prefix}'`);
    const normalized = `${m[1]}/${m[2]}`;
    let lib = this.libraries.get(normalized);
    if (!lib) {
      lib = new Library(m[1] === 'users' ? 'user' : 'group', Number(m[2]));
      this.libraries.set(normalized, lib);
    }
    return lib;
  }

  /** Only libraries that exist: registered or seeded. */
  findLibrary(type: 'users' | 'groups', id: number): Library | undefined {
    return this.libraries.get(`${type}/${id}`);
  }

  /** Library name as the API shows it: the username, or the group name. */
  libraryName(lib: Library): string {
    if (lib.type === 'user') return this.users.get(lib.id)?.username ?? `user${lib.id}`;
    return this.groups.get(lib.id)?.name ?? `group${lib.id}`;
  }

  isGroupMember(group: GroupRecord, userID: number): boolean {
    return group.owner === userID || group.members.includes(userID) || group.admins.includes(userID);
  }
}
