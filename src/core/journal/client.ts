/**
 * The journal at the client interface: every write a tool sends through its write client
 * (`writeBatch`, `patch`, `deleteBatch`, and any other non-GET request) is recorded before it
 * is sent and settled after, whatever tool or engine sends it (the set-change engine, creates,
 * item updates, collection writes, deletions, attachments). Another client of the same
 * interface (the desktop's) is journaled by wrapping it the same way.
 *
 * The state before is the full object as this client last read it at the version the write
 * names: the engine and the other write paths read what they change first, so that costs no
 * request. Only objects written without such a read (a PATCH at a version not read through
 * this client, a deletion of keys never read) are read first: ⌈n/50⌉ requests for n objects.
 */
import { outcomeUnknown, toZoteusError } from '../errors.js';
import { chunk } from '../zotero/batch.js';
import type { CallContext, ObjectKind, ZoteroClient, ZoteroObject } from '../zotero/index.js';
import type { JournalRecorder } from './recorder.js';
import type { EntryStatus, NewEntry, Settlement } from './store.js';

type Data = Record<string, unknown>;

export function journaledClient(client: ZoteroClient, journal: JournalRecorder): ZoteroClient {
  /** Objects as last read (or answered by a write) through this client. */
  const seen = new Map<string, ZoteroObject>();
  /** Entries whose write got no answer: settled by the next read of their object. */
  const unknown = new Map<string, { id: number; op: 'update' | 'create'; sentAt: number | undefined }>();
  const id = (library: string, kind: string, key: string): string =>
    `${library.replace(/^\/+|\/+$/g, '')}/${kind}/${key}`;
  const remember = (library: string, kind: string, object: ZoteroObject | undefined): void => {
    if (object && typeof object.key === 'string') seen.set(id(library, kind, object.key), object);
  };

  const getByKeys = (async (
    library: string,
    kind: ObjectKind,
    keys: readonly string[],
    options?: { call?: CallContext | undefined },
  ) => {
    const read = await client.getByKeys<ZoteroObject>(library, kind, keys, options);
    const settled: Settlement[] = [];
    for (const object of read.objects) {
      remember(library, kind, object);
      const at = id(library, kind, object.key);
      const lost = unknown.get(at);
      // As the engine decides: a create found, or an object moved on since the lost write, landed.
      if (lost && (lost.op === 'create' || (object.version ?? 0) > (lost.sentAt ?? Infinity))) {
        settled.push({
          id: lost.id,
          status: 'done',
          afterVersion: object.version,
          // A lost update read back may hold others' changes too: only what was sent is its own.
          after: lost.op === 'create' ? (object.data as Data) : null,
        });
        unknown.delete(at);
      }
    }
    await journal.settle(settled);
    return read;
  }) as ZoteroClient['getByKeys'];

  /** The objects as they are before a write at `versions`: as read, else read now. */
  const before = async (
    library: string,
    kind: ObjectKind,
    keys: readonly string[],
    versions: ReadonlyMap<string, number | undefined>,
    call: CallContext | undefined,
  ): Promise<Map<string, ZoteroObject>> => {
    const out = new Map<string, ZoteroObject>();
    const toRead: string[] = [];
    for (const key of keys) {
      const object = seen.get(id(library, kind, key));
      const wanted = versions.get(key);
      if (object && (wanted === undefined || object.version === wanted)) out.set(key, object);
      else toRead.push(key);
    }
    if (toRead.length > 0) {
      const read = await client.getByKeys<ZoteroObject>(library, kind, toRead, { call });
      for (const object of read.objects) {
        remember(library, kind, object);
        out.set(object.key, object);
      }
    }
    return out;
  };

  const recordAll = async (entries: NewEntry[]): Promise<number[]> => {
    const ids: number[] = [];
    // One transaction per batch of 50, as the writes go.
    for (const part of chunk(entries)) ids.push(...(await journal.record(part)));
    return ids;
  };
  /** A thrown write: its entries failed, or are unknown when the answer was lost. */
  const settleThrown = async (
    ids: number[],
    error: unknown,
    lost: (i: number) => { key: string; op: 'update' | 'create'; sentAt: number | undefined; at: string },
  ): Promise<void> => {
    const maybe = outcomeUnknown(toZoteusError(error));
    if (maybe) {
      ids.forEach((entryId, i) => {
        const l = lost(i);
        unknown.set(l.at, { id: entryId, op: l.op, sentAt: l.sentAt });
      });
    }
    await journal.settle(ids.map((entryId) => ({ id: entryId, status: maybe ? 'unknown' : 'failed' })));
  };

  const writeBatch = (async (
    library: string,
    kind: ObjectKind,
    objects: ReadonlyArray<Data>,
    options?: Parameters<ZoteroClient['writeBatch']>[3],
  ) => {
    const updates = objects.filter((o) => typeof o.version === 'number' && typeof o.key === 'string');
    const versions = new Map(updates.map((o) => [o.key as string, o.version as number]));
    const found = await before(
      library,
      kind,
      updates.map((o) => o.key as string),
      versions,
      options?.call,
    );
    const ops = objects.map(
      (o) => (versions.has(o.key as string) ? 'update' : 'create') as 'update' | 'create',
    );
    const ids = await recordAll(
      objects.map((o, i) => {
        const { key, version, ...fields } = o;
        void version;
        const was = ops[i] === 'update' ? found.get(key as string) : undefined;
        return {
          library,
          kind,
          key: String(key ?? ''),
          op: ops[i] as 'update' | 'create',
          before: was ? (was as unknown as Data) : null,
          sent: fields,
        };
      }),
    );
    let written: Awaited<ReturnType<ZoteroClient['writeBatch']>>;
    try {
      written = await client.writeBatch(library, kind, objects, options);
    } catch (error) {
      await settleThrown(ids, error, (i) => ({
        key: String(objects[i]?.key),
        op: ops[i] as 'update' | 'create',
        sentAt: objects[i]?.version as number | undefined,
        at: id(library, kind, String(objects[i]?.key)),
      }));
      throw error;
    }
    const settlements: Settlement[] = [];
    for (const s of written.successful) {
      const object = s.object as ZoteroObject | undefined;
      remember(library, kind, object);
      settlements.push({
        id: ids[s.index] as number,
        status: 'done',
        afterVersion: object?.version ?? written.libraryVersion,
        // The object as the server answered it (it may have mapped fields): what undo compares to.
        after:
          (object?.data as Data | undefined) ??
          (ops[s.index] === 'create' ? (objects[s.index] ?? null) : null),
      });
    }
    for (const u of written.unchanged) settlements.push({ id: ids[u.index] as number, status: 'unchanged' });
    for (const f of written.failed) {
      const lost = f.reason === 'network_error' || f.reason === 'rate_limited' || f.code >= 500;
      const status: EntryStatus = lost ? 'unknown' : 'failed';
      if (lost) {
        const o = objects[f.index];
        unknown.set(id(library, kind, String(o?.key)), {
          id: ids[f.index] as number,
          op: ops[f.index] as 'update' | 'create',
          sentAt: o?.version as number | undefined,
        });
      }
      settlements.push({ id: ids[f.index] as number, status });
    }
    await journal.settle(settlements);
    return written;
  }) as ZoteroClient['writeBatch'];

  const patch: ZoteroClient['patch'] = async (library, kind, key, data, version, options) => {
    const found = await before(library, kind, [key], new Map([[key, version]]), options?.call);
    const was = found.get(key);
    const ids = await journal.record([
      { library, kind, key, op: 'update', before: was ? (was as unknown as Data) : null, sent: data },
    ]);
    let written: { version: number | undefined };
    try {
      written = await client.patch(library, kind, key, data, version, options);
    } catch (error) {
      await settleThrown(ids, error, () => ({
        key,
        op: 'update',
        sentAt: version,
        at: id(library, kind, key),
      }));
      throw error;
    }
    seen.delete(id(library, kind, key));
    await journal.settle([{ id: ids[0] as number, status: 'done', afterVersion: written.version }]);
    return written;
  };

  /** Per library, the collections its last complete listing answered (a deletion's subtree). */
  const listedCollections = new Map<string, ZoteroObject[]>();

  const listAll = (async (path: string, options?: Parameters<ZoteroClient['listAll']>[1]) => {
    const result = await client.listAll<ZoteroObject>(path, options);
    const match = /^\/?((?:users|groups)\/\d+)\/(collections|items|searches)(\/top)?$/.exec(
      path.split('?')[0] ?? '',
    );
    if (match) {
      const [, library, kind] = match as unknown as [string, string, ObjectKind];
      for (const object of result.objects)
        if (object?.data && object.version !== undefined) remember(library, kind, object);
      if (kind === 'collections' && !match[3] && result.complete && !options?.query) {
        listedCollections.set(library, result.objects);
      }
    }
    return result;
  }) as ZoteroClient['listAll'];

  /**
   * What deleting collections changes beyond them (the server's cascade): every collection
   * below them, deleted too, and every item in any of them (the trash included), which loses
   * those memberships. Read first: the library's collection listing when a collection has
   * subcollections (the deletion's own, when it listed them), then one listing of the members of
   * each doomed collection that has any (100 a page, the trash included; a collection the server
   * counts no items in is not listed, so a trashed item alone in one is not journaled).
   */
  const collectionCascade = async (
    library: string,
    roots: readonly string[],
    found: ReadonlyMap<string, ZoteroObject>,
    call: CallContext | undefined,
  ): Promise<{ below: ZoteroObject[]; members: NewEntry[] }> => {
    const leaves = roots.every((key) => found.get(key)?.meta?.numCollections === 0);
    let all: ZoteroObject[] = [];
    if (!leaves) {
      all =
        listedCollections.get(library) ??
        (await listAll(`/${library}/collections`, { call })).objects.filter((o) => o && o.data);
    }
    const children = new Map<string, ZoteroObject[]>();
    for (const object of all) {
      const parent = object.data?.parentCollection;
      if (typeof parent !== 'string' || parent === '') continue;
      const list = children.get(parent);
      if (list) list.push(object);
      else children.set(parent, [object]);
    }
    const doomed = new Set(roots);
    const below: ZoteroObject[] = [];
    for (let queue = [...roots]; queue.length > 0;) {
      const next: string[] = [];
      for (const at of queue) {
        for (const child of children.get(at) ?? []) {
          if (doomed.has(child.key)) continue;
          doomed.add(child.key);
          below.push(child);
          next.push(child.key);
        }
      }
      queue = next;
    }
    const numItems = new Map<string, unknown>([
      ...roots.map((key) => [key, found.get(key)?.meta?.numItems] as const),
      ...below.map((object) => [object.key, object.meta?.numItems] as const),
    ]);
    const members = new Map<string, ZoteroObject>();
    for (const key of doomed) {
      if (numItems.get(key) === 0) continue;
      const listed = await client.listAll<ZoteroObject>(`/${library}/collections/${key}/items`, {
        query: { includeTrashed: 1 },
        call,
      });
      for (const object of listed.objects) {
        if (!object?.data) continue;
        remember(library, 'items', object);
        members.set(object.key, object);
      }
    }
    const entries: NewEntry[] = [];
    for (const object of members.values()) {
      const was = Array.isArray(object.data?.collections) ? (object.data.collections as unknown[]) : [];
      const kept = was.filter((c) => !doomed.has(String(c)));
      if (kept.length === was.length) continue;
      entries.push({
        library,
        kind: 'items',
        key: object.key,
        op: 'update',
        before: object as unknown as Data,
        sent: { collections: kept },
      });
    }
    return { below, members: entries };
  };

  const deleteBatch: ZoteroClient['deleteBatch'] = async (library, kind, keys, options) => {
    const unique = [...new Set(keys)];
    const found = await before(library, kind, unique, new Map(), options?.call);
    const cascade =
      kind === 'collections'
        ? await collectionCascade(library, unique, found, options?.call)
        : { below: [], members: [] };
    const ids = await recordAll([
      ...unique.map((key) => {
        const was = found.get(key);
        return {
          library,
          kind,
          key,
          op: 'delete' as const,
          before: was ? (was as unknown as Data) : null,
          sent: null,
        };
      }),
      // What the server deletes and changes with them: settled as the deletion is.
      ...cascade.below.map((object) => ({
        library,
        kind,
        key: object.key,
        op: 'delete' as const,
        before: object as unknown as Data,
        sent: null,
      })),
      ...cascade.members,
    ]);
    const idOf = new Map(unique.map((key, i) => [key, ids[i] as number]));
    const cascadeIds = ids.slice(unique.length);
    let result: Awaited<ReturnType<ZoteroClient['deleteBatch']>>;
    try {
      result = await client.deleteBatch(library, kind, keys, options);
    } catch (error) {
      // The cascade's entries are not read back one by one: a lost answer leaves them pending,
      // and undo reads what is there.
      const maybe = outcomeUnknown(toZoteusError(error));
      await settleThrown(ids.slice(0, unique.length), error, (i) => ({
        key: unique[i] as string,
        op: 'update',
        sentAt: undefined,
        at: id(library, kind, unique[i] as string),
      }));
      await journal.settle(
        maybe ? [] : cascadeIds.map((entryId) => ({ id: entryId, status: 'failed' as const })),
      );
      throw error;
    }
    const settlements: Settlement[] = [];
    for (const key of result.deleted) {
      seen.delete(id(library, kind, key));
      settlements.push({ id: idOf.get(key) as number, status: 'done', afterVersion: result.libraryVersion });
    }
    for (const f of result.failed) {
      const entryId = idOf.get(f.key as string);
      if (entryId !== undefined) settlements.push({ id: entryId, status: 'failed' });
    }
    // The cascade landed with the deletion (one request for all of it).
    const landed = result.deleted.length > 0;
    for (const entryId of cascadeIds) {
      settlements.push(
        landed
          ? { id: entryId, status: 'done', afterVersion: result.libraryVersion }
          : { id: entryId, status: 'failed' },
      );
    }
    for (const object of cascade.below) seen.delete(id(library, kind, object.key));
    for (const entry of cascade.members) seen.delete(id(library, 'items', entry.key));
    await journal.settle(settlements);
    return result;
  };

  /** Per library, the item keys answered by `format=keys` listings of a tag (what a tag deletion changes). */
  const listedByTag = new Map<string, Set<string>>();

  /**
   * A library-wide tag deletion (`DELETE /tags?tag=A || B`) changes every item carrying the
   * tags: each is journaled as an update from the item as read (⌈n/50⌉ reads, of the keys the
   * deletion listed already), so undo gives the items their tags back.
   */
  const tagDeletion = async (
    library: string,
    query: Record<string, unknown>,
    call: CallContext | undefined,
  ): Promise<NewEntry[]> => {
    const names = new Set(String(query.tag ?? '').split(' || '));
    const keys = [...(listedByTag.get(library) ?? [])];
    if (keys.length === 0) return [];
    const read = await client.getByKeys<ZoteroObject>(library, 'items', keys, { call });
    const entries: NewEntry[] = [];
    for (const object of read.objects) {
      remember(library, 'items', object);
      const tags = Array.isArray(object.data?.tags) ? (object.data.tags as Array<{ tag?: unknown }>) : [];
      const kept = tags.filter((t) => !names.has(String(t?.tag)));
      if (kept.length === tags.length) continue;
      entries.push({
        library,
        kind: 'items',
        key: object.key,
        op: 'update',
        before: object as unknown as Data,
        sent: { tags: kept },
      });
    }
    return entries;
  };

  const request = (async (method: string, path: string, options?: Parameters<ZoteroClient['request']>[2]) => {
    const match = /^\/?((?:users|groups)\/\d+)\/([a-z]+)/.exec(path);
    const library = match?.[1] ?? '';
    const kind = match?.[2] ?? '';
    if (method === 'GET' || method === 'HEAD') {
      const response = await client.request(method, path, options);
      if (kind === 'items' && options?.query?.format === 'keys' && options.query.tag !== undefined) {
        const listed = listedByTag.get(library) ?? new Set<string>();
        for (const key of response.text.split(/\s+/)) if (key.trim()) listed.add(key.trim());
        listedByTag.set(library, listed);
      }
      return response;
    }
    const query = (options?.query ?? {}) as Record<string, unknown>;
    const perObject =
      method === 'DELETE' &&
      kind === 'tags' &&
      /^\/?(users|groups)\/\d+\/tags$/.test(path.split('?')[0] ?? '')
        ? await tagDeletion(library, query, options?.call)
        : [];
    // Otherwise not per object (a file upload): recorded, not undoable. An upload changes its
    // attachment's file fields on the server: the attachment as last read is its state before.
    const upload = /^\/?(?:users|groups)\/\d+\/items\/([A-Za-z0-9]+)\/file$/.exec(path.split('?')[0] ?? '');
    const attachment = upload ? seen.get(id(library, 'items', upload[1] as string)) : undefined;
    const ids = await recordAll(
      perObject.length > 0
        ? perObject
        : [
            {
              library,
              kind,
              key: `${method} ${path.split('?')[0] ?? path}`,
              op: 'other',
              before: attachment ? (attachment as unknown as Data) : null,
              sent: options?.query ? (JSON.parse(JSON.stringify(options.query)) as Data) : null,
            },
          ],
    );
    try {
      const response = await client.request(method, path, options);
      await journal.settle(
        ids.map((id) => ({ id, status: 'done' as const, afterVersion: response.lastModifiedVersion })),
      );
      return response;
    } catch (error) {
      const status = outcomeUnknown(toZoteusError(error)) ? 'unknown' : 'failed';
      await journal.settle(ids.map((id) => ({ id, status })));
      throw error;
    }
  }) as ZoteroClient['request'];

  const wrapped: Partial<ZoteroClient> = { getByKeys, listAll, writeBatch, patch, deleteBatch, request };
  return Object.assign(Object.create(client) as ZoteroClient, wrapped);
}
