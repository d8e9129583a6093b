/**
 * Undo of a journaled request (issue 21): every object the request changed goes back to its
 * recorded state with versioned writes, through the write engine (read 50, write 50, a 412
 * re-read and judged again): about 2·⌈n/50⌉ requests for n objects.
 *
 * - an object the request updated (fields, tags, collections, the trash flag) gets its fields
 *   back as they were;
 * - an item it created goes to the trash; a collection or saved search it created is deleted;
 * - an object it deleted permanently is created again, under its key, from the JSON read before
 *   (a collection's subcollections before the items whose memberships come back);
 * - a file it uploaded is not restored: the attachment's file fields (md5, mtime) are left as
 *   the upload made them, and are not taken for someone else's change;
 * - an object that changed again since (it is neither as the request left it nor as it was
 *   before) is not touched: a per-entry `conflict` naming the fields that differ;
 * - an object already as it was before is unchanged (a write that never landed, an undo done).
 *
 * The undo's own writes go through the same write client, so it is journaled like any write
 * (its request row names the request it undid), and undoing it works the same way.
 */
import { ZoteusError } from '../errors.js';
import { libraryPrefix, resolveLibrary, type LibraryArgs } from '../library/address.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { applySetChange, RefusedChange, type ObjectData } from '../writes/engine.js';
import { failedByError, failedEntry, type FailedEntry, type ZoteroObject } from '../zotero/index.js';
import { journalWhere, openJournalOf } from './recorder.js';
import type { EntryRecord, Journal } from './store.js';

export interface UndoInput extends LibraryArgs {
  request_id: string;
}

export interface UndoConflict {
  key: string;
  kind: string;
  /** The fields that differ from what the request left. */
  fields: string[];
}

export interface UndoOutput {
  requestId: string;
  tool: string;
  library: string;
  /** Objects written back: fields as they were, or (items the request created) moved to the trash. */
  updated: string[];
  /** Of `updated`, the items the request created, now in the trash. */
  trashed: string[];
  /** Collections and saved searches the request created, now deleted. */
  deleted: string[];
  /** Objects the request deleted permanently, created again (under their keys) from the journal. */
  created: string[];
  /** Already as they were before the request: nothing sent. */
  unchanged: string[];
  conflicts: UndoConflict[];
  /** What the journal holds no state to restore for, and why. */
  notUndoable: Array<{ key: string; reason: string }>;
  failed: FailedEntry[];
  libraryVersion?: number;
}

/** Fields the server keeps itself: never compared, never sent back. */
const OWN_FIELDS = new Set(['key', 'version', 'dateModified', 'dateAdded']);

const LANDED: ReadonlySet<EntryRecord['status']> = new Set(['done', 'unknown', 'pending']);

/** A comparable form: empty values alike, tags and collections as sets, the trash flag a boolean. */
function norm(field: string, value: unknown): string {
  if (field === 'deleted') return value ? 'true' : 'false';
  if (value === undefined || value === null || value === '' || value === false) return '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '';
    if (field === 'tags') {
      return JSON.stringify(
        (value as Array<{ tag?: unknown; type?: unknown }>)
          .map((t) => `${String(t?.tag)}\0${Number(t?.type ?? 0)}`)
          .sort(),
      );
    }
    if (field === 'collections') return JSON.stringify([...(value as unknown[])].map(String).sort());
    return JSON.stringify(value);
  }
  if (typeof value === 'object') {
    if (Object.keys(value).length === 0) return '';
    return JSON.stringify(value, Object.keys(value).sort());
  }
  return JSON.stringify(value);
}

/** The fields in which `a` and `b` differ, sorted. */
export function differingFields(a: ObjectData, b: ObjectData): string[] {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields].filter((f) => !OWN_FIELDS.has(f) && norm(f, a[f]) !== norm(f, b[f])).sort();
}

function emptyLike(value: unknown): unknown {
  if (Array.isArray(value)) return [];
  if (typeof value === 'boolean') return false;
  if (typeof value === 'number') return 0;
  if (value !== null && typeof value === 'object') return {};
  return '';
}

/** `current` with every field that differs from `wanted` set back to it (but the `ignore`d ones). */
function restoredData<D extends ObjectData>(current: D, wanted: ObjectData, ignore?: readonly string[]): D {
  const out: ObjectData = { ...current };
  for (const field of differingFields(current, wanted)) {
    if (ignore?.includes(field)) continue;
    out[field] = field in wanted ? wanted[field] : emptyLike(current[field]);
  }
  return out as D;
}

function dataOf(object: Record<string, unknown> | null): ObjectData | undefined {
  if (!object) return undefined;
  const data = (object as { data?: unknown }).data;
  return data !== null && typeof data === 'object' ? (data as ObjectData) : undefined;
}

/**
 * What undo does to one object. `uploaded`: the request uploaded the attachment's file, which
 * set its file fields on the server without them being sent (FILE_FIELDS: not taken for
 * another's change); of those, the stored file's own (FILE_STATE) are not restored either.
 */
type Plan = { uploaded?: true } & (
  | { do: 'restore'; kind: string; key: string; wanted: ObjectData; left: ObjectData }
  | { do: 'trash'; kind: string; key: string; left: ObjectData }
  | { do: 'delete'; kind: string; key: string; left: ObjectData }
  | { do: 'recreate'; kind: string; key: string; wanted: ObjectData }
);

/** The kinds undo restores, in the order deleted objects come back (parents before what they hold). */
const KINDS = ['collections', 'searches', 'items'] as const;

/** The fields an upload of an attachment's file sets on the attachment item. */
const FILE_FIELDS: readonly string[] = ['md5', 'mtime', 'filename', 'contentType'];
/** Of those, what describes the bytes stored now, which undo does not bring back. */
const FILE_STATE: readonly string[] = ['md5', 'mtime'];

/** `METHOD /users/1/items/KEY/file`: a file upload's requests, journaled as `other` entries. */
const FILE_UPLOAD = /^[A-Z]+ \/?(?:users|groups)\/\d+\/items\/([A-Za-z0-9]+)\/file$/;

/** The fields in which `a` and `b` differ, but the file fields of a file the request uploaded. */
function differing(plan: Plan, a: ObjectData, b: ObjectData): string[] {
  const fields = differingFields(a, b);
  return plan.uploaded ? fields.filter((f) => !FILE_FIELDS.includes(f)) : fields;
}

/** What undo does per object, from the request's entries (several per object after re-reads). */
export function planUndo(entries: readonly EntryRecord[]): {
  plans: Plan[];
  notUndoable: Array<{ key: string; reason: string }>;
} {
  const groups = new Map<string, EntryRecord[]>();
  for (const e of entries) {
    if (!LANDED.has(e.status)) continue;
    const at = `${e.kind}/${e.key}`;
    const list = groups.get(at);
    if (list) list.push(e);
    else groups.set(at, [e]);
  }
  const plans: Plan[] = [];
  const notUndoable: Array<{ key: string; reason: string }> = [];
  /** Items whose file the request uploaded: their file fields are the upload's. */
  const uploaded = new Set<string>();
  /** Per item, the first upload's entry that read the attachment before it. */
  const beforeUpload = new Map<string, EntryRecord>();
  for (const e of entries) {
    const upload = e.op === 'other' && LANDED.has(e.status) ? FILE_UPLOAD.exec(e.key) : null;
    if (!upload) continue;
    const key = upload[1] as string;
    uploaded.add(key);
    if (e.before && !beforeUpload.has(key)) beforeUpload.set(key, e);
  }
  for (const list of groups.values()) {
    const first = list[0] as EntryRecord;
    const { kind, key } = first;
    if (!(KINDS as readonly string[]).includes(kind)) {
      notUndoable.push({ key, reason: `undo restores items, collections and saved searches, not ${kind}` });
      continue;
    }
    if (list.some((e) => e.op === 'other')) {
      notUndoable.push({
        key,
        reason: FILE_UPLOAD.test(key)
          ? "a file's bytes, uploaded to Zotero's file storage: undo does not restore files"
          : 'a change of many objects at once (a tag renamed or deleted across the library) is not recorded per object',
      });
      continue;
    }
    if (list.some((e) => e.op === 'delete')) {
      const before = dataOf(list.find((e) => e.op === 'delete')?.before ?? null);
      if (before) plans.push({ do: 'recreate', kind, key, wanted: before });
      else notUndoable.push({ key, reason: 'it was deleted without its state being read first' });
      continue;
    }
    // What the request left: the state before (or the created object), then each change: as
    // the server answered it when it did (it may map fields, as on a change of item type),
    // else as sent.
    let left: ObjectData | undefined;
    if (first.op === 'create') left = { ...(first.after ?? first.sent ?? {}) };
    else left = dataOf(first.before) ? { ...(dataOf(first.before) as ObjectData) } : undefined;
    if (!left) {
      notUndoable.push({ key, reason: 'its state before the change was not read' });
      continue;
    }
    for (const e of first.op === 'update' ? list : list.slice(1)) {
      // A full object as Zotero answers it carries its key and version; anything less is not taken.
      if (e.op === 'update' && e.after && 'key' in e.after && 'version' in e.after) left = { ...e.after };
      else Object.assign(left, e.sent ?? {});
    }
    const upload = kind === 'items' && uploaded.has(key) ? { uploaded: true as const } : {};
    if (first.op === 'create') {
      plans.push({ do: kind === 'items' ? 'trash' : 'delete', kind, key, left, ...upload });
    } else if (kind === 'searches') {
      notUndoable.push({ key, reason: 'undo restores a saved search created or deleted, not one edited' });
    } else {
      // The attachment before its file was uploaded, when that came first (the state the
      // update read was the upload's).
      const earlier = beforeUpload.get(key);
      const wanted = dataOf(earlier && earlier.id < first.id ? earlier.before : first.before) as ObjectData;
      plans.push({ do: 'restore', kind, key, wanted, left, ...upload });
    }
  }
  // An attachment whose file alone the request replaced: its file's name and type as they were.
  for (const [key, e] of beforeUpload) {
    const before = dataOf(e.before);
    if (groups.has(`items/${key}`) || !before) continue;
    plans.push({ do: 'restore', kind: 'items', key, wanted: before, left: before, uploaded: true });
  }
  return { plans, notUndoable };
}

/** At most this many objects are listed by a dry run; `more` counts the rest. */
const PREVIEW_OBJECTS = 200;

/**
 * What undo would do, from the journal alone (a dry run: offline, so it cannot tell which
 * objects changed since; the undo itself reads them and leaves those as conflicts).
 */
export async function previewUndo(deps: Deps, input: UndoInput): Promise<Record<string, unknown>> {
  const path = journalWhere(deps);
  // A plan, not a refusal: the undo itself would answer not_found.
  const unknown = { undoes: null, not_found: unknownRequest(input.request_id, path).message };
  const journal = await openJournalOf(deps, () => deps.clock.now(), { existing: true });
  if (!journal) return unknown;
  try {
    const request = await journal.request(input.request_id);
    if (!request || request.library === undefined) return unknown;
    const { plans, notUndoable } = planUndo(await journal.entries(request.requestId));
    const objects = plans.slice(0, PREVIEW_OBJECTS).map((p) => ({
      key: p.key,
      kind: p.kind,
      would: p.do,
      ...(p.do === 'restore'
        ? { fields: differingFields(p.left, p.wanted).filter((f) => !(p.uploaded && FILE_STATE.includes(f))) }
        : {}),
    }));
    return {
      undoes: {
        request_id: request.requestId,
        tool: request.tool,
        library: request.library,
        time: new Date(request.createdAt).toISOString(),
      },
      objects,
      ...(plans.length > PREVIEW_OBJECTS ? { more: plans.length - PREVIEW_OBJECTS } : {}),
      not_undoable: notUndoable,
    };
  } finally {
    await journal.close();
  }
}

function libraryArgsOf(prefix: string): LibraryArgs {
  const [type, id] = prefix.split('/');
  // The desktop names its user library users/0: the default user library, whichever side writes.
  if (type === 'users' && Number(id) === 0) return { library_type: 'user' };
  return { library_type: type === 'groups' ? 'group' : 'user', library_id: Number(id) };
}

function unknownRequest(id: string, path: string): ZoteusError {
  return new ZoteusError(
    'not_found',
    `No write with request id '${id}' is in the journal (${path}): it is unknown, older than the journal keeps (ZOTEUS_JOURNAL_DAYS), or another caller's.`,
    { field: 'request_id', hint: 'The history of writes lists the request ids that can be undone.' },
  );
}

export async function undoRequest(deps: Deps, input: UndoInput): Promise<UndoOutput> {
  const path = journalWhere(deps);
  let own: Journal | undefined;
  const journal = deps.journal
    ? await deps.journal.open()
    : (own = (await openJournalOf(deps, () => deps.clock.now()))!);
  try {
    return await undoWith(deps, journal, path, input);
  } finally {
    await own?.close();
  }
}

async function undoWith(deps: Deps, journal: Journal, path: string, input: UndoInput): Promise<UndoOutput> {
  const request = await journal.request(input.request_id);
  if (!request || request.library === undefined) throw unknownRequest(input.request_id, path);
  const library = request.library;
  if (input.library_id !== undefined || input.library_type !== undefined) {
    const named = resolveLibrary(input, deps.config);
    if (named.id !== null && libraryPrefix({ type: named.type, id: named.id }) !== library) {
      throw new ZoteusError(
        'validation_error',
        `Request '${request.requestId}' wrote to ${library}, not to ${libraryPrefix({ type: named.type, id: named.id })}: nothing was changed.`,
        {
          field: 'library_id',
          hint: 'Omit library_id: an undo goes to the library of the request it undoes.',
        },
      );
    }
  }
  const client = await (await import('../library/keys.js')).webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, libraryArgsOf(library), { access: 'write', call });
  if (lib.prefix !== library) {
    throw new ZoteusError(
      'permission_denied',
      `Request '${request.requestId}' wrote to ${library}, which this API key does not reach.`,
      {
        field: 'request_id',
      },
    );
  }
  deps.journal?.undoing(request.requestId);

  const { plans, notUndoable } = planUndo(await journal.entries(request.requestId));
  const out: UndoOutput = {
    requestId: request.requestId,
    tool: request.tool,
    library,
    updated: [],
    trashed: [],
    deleted: [],
    created: [],
    unchanged: [],
    conflicts: [],
    notUndoable,
    failed: [],
  };
  const indexOf = new Map(plans.map((p, i) => [`${p.kind}/${p.key}`, i]));
  const noteVersion = (v: number | undefined): void => {
    if (v !== undefined) out.libraryVersion = Math.max(out.libraryVersion ?? 0, v);
  };
  const conflict = (kind: string, key: string, fields: string[]): RefusedChange => {
    out.conflicts.push({ key, kind, fields });
    const noun = kind === 'items' ? 'Item' : kind === 'searches' ? 'Saved search' : 'Collection';
    return new RefusedChange(
      `${noun} ${key} changed since request ${request.requestId} (${fields.join(', ')}); it was left as it is.`,
    );
  };

  // 1. What the request deleted comes back first (collections before the items in them, a
  // parent collection before its subcollections).
  for (const kind of KINDS) {
    const recreate = parentsFirst(
      plans.filter((p): p is Extract<Plan, { do: 'recreate' }> => p.do === 'recreate' && p.kind === kind),
    );
    if (recreate.length === 0) continue;
    const present = await lib.client.getByKeys(
      library,
      kind,
      recreate.map((p) => p.key),
      { call },
    );
    noteVersion(present.libraryVersion);
    const missing = recreate.filter((p) => {
      if (!present.byKey.has(p.key)) return true;
      out.unchanged.push(p.key);
      return false;
    });
    if (missing.length === 0) continue;
    const objects = missing.map((p) => {
      const { version, ...data } = p.wanted;
      void version;
      return { ...data, key: p.key };
    });
    try {
      const written = await lib.client.writeBatch(library, kind, objects, { call });
      noteVersion(written.libraryVersion);
      for (const s of written.successful) out.created.push(missing[s.index]?.key as string);
      for (const u of written.unchanged) out.created.push(missing[u.index]?.key as string);
      for (const f of written.failed) {
        const key = missing[f.index]?.key as string;
        out.failed.push({ ...f, index: indexOf.get(`${kind}/${key}`) ?? f.index, key });
      }
    } catch (error) {
      for (const p of missing)
        out.failed.push(failedByError(indexOf.get(`${kind}/${p.key}`) ?? 0, p.key, error));
    }
  }

  // 2. Fields back as they were, created items to the trash: the write engine, per kind.
  for (const kind of ['collections', 'items'] as const) {
    const mine = new Map(
      plans
        .filter((p) => p.kind === kind && (p.do === 'restore' || p.do === 'trash'))
        .map((p) => [p.key, p as Extract<Plan, { do: 'restore' | 'trash' }>]),
    );
    if (mine.size === 0) continue;
    const result = await applySetChange(lib.client, {
      library,
      kind,
      keys: [...mine.keys()],
      call,
      apply: (data: ObjectData) => {
        const plan = mine.get(String(data.key)) as Extract<Plan, { do: 'restore' | 'trash' }>;
        if (plan.do === 'trash') {
          if (data.deleted) return null;
          const changed = differing(plan, data, plan.left);
          if (changed.length > 0) throw conflict(kind, plan.key, changed);
          return { ...data, deleted: true };
        }
        const keep = plan.uploaded ? FILE_STATE : undefined;
        if (differingFields(data, plan.wanted).filter((f) => !keep?.includes(f)).length === 0) return null;
        const changed = differing(plan, data, plan.left);
        if (changed.length > 0) throw conflict(kind, plan.key, changed);
        return restoredData(data, plan.wanted, keep);
      },
    });
    noteVersion(result.libraryVersion);
    out.updated.push(...result.succeeded);
    out.trashed.push(...result.succeeded.filter((key) => mine.get(key)?.do === 'trash'));
    out.unchanged.push(...result.unchanged);
    for (const f of result.failed)
      out.failed.push({ ...f, index: indexOf.get(`${kind}/${f.key}`) ?? f.index });
  }

  // 3. Collections and saved searches the request created: deleted when unchanged since (after
  // their items left).
  for (const kind of ['collections', 'searches'] as const) {
    const created = plans.filter(
      (p): p is Extract<Plan, { do: 'delete' }> => p.do === 'delete' && p.kind === kind,
    );
    if (created.length === 0) continue;
    const read = await lib.client.getByKeys<ZoteroObject>(
      library,
      kind,
      created.map((p) => p.key),
      { call },
    );
    noteVersion(read.libraryVersion);
    const gone: string[] = [];
    for (const p of created) {
      const current = read.byKey.get(p.key);
      if (!current) {
        out.unchanged.push(p.key);
        continue;
      }
      const changed = differing(p, current.data as ObjectData, p.left);
      if (changed.length > 0) {
        const refused = conflict(kind, p.key, changed);
        out.failed.push(
          failedEntry(indexOf.get(`${kind}/${p.key}`) ?? 0, p.key, 409, refused.message, 'conflict'),
        );
      } else gone.push(p.key);
    }
    if (gone.length > 0) {
      try {
        const result = await lib.client.deleteBatch(library, kind, gone, {
          libraryVersion: read.libraryVersion,
          call,
        });
        noteVersion(result.libraryVersion);
        out.deleted.push(...result.deleted);
        for (const f of result.failed)
          out.failed.push({ ...f, index: indexOf.get(`${kind}/${f.key}`) ?? f.index });
      } catch (error) {
        for (const key of gone)
          out.failed.push(failedByError(indexOf.get(`${kind}/${key}`) ?? 0, key, error));
      }
    }
  }
  out.failed.sort((a, b) => a.index - b.index);
  return out;
}

/** Collections to create again, each after the parent it names when that comes back too. */
function parentsFirst<P extends { key: string; wanted: ObjectData }>(plans: readonly P[]): P[] {
  const byKey = new Map(plans.map((p) => [p.key, p]));
  const out: P[] = [];
  const placed = new Set<string>();
  const place = (p: P, path: Set<string>): void => {
    if (placed.has(p.key) || path.has(p.key)) return;
    path.add(p.key);
    const parent = p.wanted.parentCollection;
    const first = typeof parent === 'string' ? byKey.get(parent) : undefined;
    if (first) place(first, path);
    placed.add(p.key);
    out.push(p);
  };
  for (const p of plans) place(p, new Set());
  return out;
}
