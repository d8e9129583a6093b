/**
 * `zotero_merge_items`: duplicates merged as Zotero merges them. The master keeps its fields
 * (with `fill`, its empty fields take the first non-empty value of the others, in the order
 * given); it takes the union of the others' tags, collections and relations, and a
 * `dc:replaces` relation to each other's URI (so sync and citations that name an other find
 * the master); every child of the others (notes, attachments, whose annotations and files go
 * with them) moves to the master; items related to an other become related to the master too;
 * the others go to the trash.
 *
 * A preview reads (any backend) and keeps a plan with each candidate's version; applying reads
 * the candidates from the Web API, refuses the whole merge as a conflict when one changed since
 * the preview (unless it is already merged), lists the others' children afresh, and writes
 * everything through the versioned write engine: children and related items first, then the
 * master, the others' trashing last. n objects written cost 2·⌈n/50⌉ requests, plus one read of
 * the candidates and one listing of each other's children. A merge already done changes nothing.
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import {
  answered,
  ItemsNotFound,
  openReader,
  withKeysElsewhere,
  type Answered,
} from '../items/read/common.js';
import { fitRows, ROWS_BUDGET } from '../items/read/bounds.js';
import { localSchema, type ItemSchema } from '../items/schema.js';
import { openPlanStore } from '../store/plans.js';
import type { Deps } from '../tool.js';
import { applySetChange } from '../writes/index.js';
import type { FailedEntry } from '../zotero/types.js';
import { checkMerge } from './check.js';

export const MERGE_PLAN_KIND = 'merge-items';

export interface MergeInput extends LibraryArgs {
  master_key: string;
  item_keys: string[];
  fill?: boolean | undefined;
  apply?: boolean | undefined;
  plan_id?: string | undefined;
}

export interface MergeOutput extends Answered {
  applied: boolean;
  planId?: string | undefined;
  expiresAt?: string | undefined;
  master: { key: string; title: string };
  merged: Array<{ key: string; title: string; status: 'planned' | 'trashed' | 'unchanged' }>;
  filled: Array<{ field: string; value: string; from: string }>;
  tagsAdded: string[];
  collectionsAdded: string[];
  relationsAdded: Array<{ predicate: string; object: string }>;
  children: Array<{ key: string; itemType: string; from: string }>;
  totalChildren: number;
  related: string[];
  succeeded: string[];
  unchanged: string[];
  failed: FailedEntry[];
  libraryVersion?: number | undefined;
  truncated?: boolean | undefined;
}

interface PlanBody {
  master: { key: string; version: number };
  others: Array<{ key: string; version: number }>;
  fill: boolean;
}

type Data = Record<string, unknown>;
type Relations = Record<string, string | string[]>;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `http://zotero.org/users/1/items/ABCD2345`: an item's URI, as relations name it. */
export function itemUri(library: string, key: string): string {
  return `http://zotero.org/${library}/items/${key}`;
}

function relationsOf(data: Data): Relations {
  const r = data.relations;
  return r && typeof r === 'object' && !Array.isArray(r) ? (r as Relations) : {};
}

function values(relations: Relations, predicate: string): string[] {
  const v = relations[predicate];
  return v === undefined ? [] : Array.isArray(v) ? [...v] : [v];
}

function withValue(relations: Relations, predicate: string, value: string): Relations {
  const now = values(relations, predicate);
  if (now.includes(value)) return relations;
  const next = [...now, value];
  return { ...relations, [predicate]: next.length === 1 ? (next[0] as string) : next };
}

const NOT_MERGEABLE = new Set(['note', 'attachment', 'annotation']);

/** The candidates in the order master, others; refuses what Zotero would not merge. */
async function candidates(
  deps: Deps,
  found: readonly WebApiItem[],
  input: MergeInput,
  library: string,
): Promise<{ master: WebApiItem; others: WebApiItem[] }> {
  const keys = [input.master_key, ...new Set(input.item_keys)];
  const byKey = new Map(found.map((i) => [i.key, i] as const));
  const missing = keys.filter((k) => !byKey.has(k));
  if (missing.length > 0) {
    const field = missing.includes(input.master_key) ? 'master_key' : 'item_keys';
    const original = new ItemsNotFound(missing, library, field);
    const error = await withKeysElsewhere(deps, original);
    if (error === original) throw original;
    // A key another library of this computer holds: items of two libraries cannot be one.
    throw new ZoteusError(
      'validation_error',
      `Items of different libraries cannot be merged: ${error.message}`,
      {
        field,
        hint: 'Merge items of one library at a time.',
      },
    );
  }
  const items = keys.map((k) => byKey.get(k) as WebApiItem);
  const master = items[0] as WebApiItem;
  const type = str(master.data.itemType);
  for (const item of items) {
    const t = str(item.data.itemType);
    if (NOT_MERGEABLE.has(t) || item.data.parentItem) {
      throw new ZoteusError(
        'validation_error',
        `${item.key} is a ${item.data.parentItem ? `child ${t}` : t}: only regular items are merged (their notes and attachments move with them).`,
        { field: item === master ? 'master_key' : 'item_keys' },
      );
    }
    if (t !== type) {
      throw new ZoteusError(
        'validation_error',
        `Merged items must be of one item type, as in Zotero: ${master.key} is a ${type}, ${item.key} a ${t}.`,
        {
          field: 'item_keys',
          hint: 'Change the item type of one of them first, or merge only items of one type.',
        },
      );
    }
  }
  if (master.data.deleted) {
    throw new ZoteusError('validation_error', `The master ${master.key} is in the trash.`, {
      field: 'master_key',
      hint: 'Restore it first, or choose another master.',
    });
  }
  return { master, others: items.slice(1) };
}

interface MasterChange {
  next: Data;
  filled: MergeOutput['filled'];
  tagsAdded: string[];
  collectionsAdded: string[];
  relationsAdded: MergeOutput['relationsAdded'];
  /** Keys of items in this library that an other is related to (not the candidates). */
  related: string[];
}

/** The master after the merge (pure: the same data gives the same answer). */
export function mergedMaster(
  master: Data,
  others: ReadonlyArray<{ key: string; data: Data }>,
  options: { fill: boolean; schema: ItemSchema; library: string },
): MasterChange {
  const masterKey = str(master.key);
  const next: Data = { ...master };
  const filled: MergeOutput['filled'] = [];
  if (options.fill) {
    const spec = options.schema.types.get(str(master.itemType));
    const fields = spec
      ? [...spec.fields.keys()]
      : Object.keys(master).filter((f) => typeof master[f] === 'string');
    for (const field of fields) {
      if (['title', 'dateAdded', 'dateModified'].includes(field) && str(master[field]) !== '') continue;
      if (str(next[field]) !== '') continue;
      const donor = others.find((o) => str(o.data[field]) !== '');
      if (!donor) continue;
      next[field] = donor.data[field];
      filled.push({ field, value: str(donor.data[field]), from: donor.key });
    }
    const creators = Array.isArray(master.creators) ? master.creators : [];
    const donor = others.find((o) => Array.isArray(o.data.creators) && o.data.creators.length > 0);
    if (creators.length === 0 && donor) {
      next.creators = donor.data.creators;
      filled.push({
        field: 'creators',
        value: `${(donor.data.creators as unknown[]).length} creators`,
        from: donor.key,
      });
    }
  }

  const tags = Array.isArray(master.tags) ? [...(master.tags as Array<{ tag: string; type?: number }>)] : [];
  const tagsAdded: string[] = [];
  const collections = Array.isArray(master.collections) ? [...(master.collections as string[])] : [];
  const collectionsAdded: string[] = [];
  let relations: Relations = { ...relationsOf(master) };
  const relationsAdded: MergeOutput['relationsAdded'] = [];
  const related: string[] = [];
  const candidateUris = new Set(
    [masterKey, ...others.map((o) => o.key)].map((k) => itemUri(options.library, k)),
  );
  const ownPrefix = itemUri(options.library, '');
  const add = (predicate: string, object: string): void => {
    const after = withValue(relations, predicate, object);
    if (after !== relations) relationsAdded.push({ predicate, object });
    relations = after;
  };
  for (const other of others) {
    for (const t of Array.isArray(other.data.tags)
      ? (other.data.tags as Array<{ tag: string; type?: number }>)
      : []) {
      if (tags.some((m) => m.tag === t.tag)) continue;
      tags.push(t);
      tagsAdded.push(t.tag);
    }
    for (const c of Array.isArray(other.data.collections) ? (other.data.collections as string[]) : []) {
      if (collections.includes(c)) continue;
      collections.push(c);
      collectionsAdded.push(c);
    }
    const theirs = relationsOf(other.data);
    for (const predicate of Object.keys(theirs)) {
      for (const object of values(theirs, predicate)) {
        if (predicate === 'dc:relation' && candidateUris.has(object)) continue;
        if (predicate === 'dc:replaces' && object === itemUri(options.library, masterKey)) continue;
        add(predicate, object);
        if (predicate === 'dc:relation' && object.startsWith(ownPrefix)) {
          const key = object.slice(ownPrefix.length);
          if (/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/.test(key) && !related.includes(key))
            related.push(key);
        }
      }
    }
    add('dc:replaces', itemUri(options.library, other.key));
  }
  next.tags = tags;
  next.collections = collections;
  next.relations = relations;
  return { next, filled, tagsAdded, collectionsAdded, relationsAdded, related };
}

function versionOf(item: { version?: unknown; data: Data }): number {
  return typeof item.version === 'number' ? item.version : Number(item.data.version ?? 0);
}

function bounded(out: MergeOutput): MergeOutput {
  const children = fitRows(out.children, Math.floor(ROWS_BUDGET / 2));
  const failed = fitRows(out.failed, Math.floor(ROWS_BUDGET / 4));
  if (!children.cut && !failed.cut) return out;
  return { ...out, children: children.rows, failed: failed.rows, truncated: true };
}

/** Without apply: what the merge would do, and the plan that applies exactly it. */
async function preview(deps: Deps, input: MergeInput): Promise<MergeOutput> {
  const { reader, route } = await openReader(deps, input);
  const keys = [input.master_key, ...new Set(input.item_keys)];
  const found = (await reader.items({ keys, limit: keys.length, includeTrashed: true })).items;
  const { master, others } = await candidates(deps, found, input, route.library);
  const change = mergedMaster(
    master.data as Data,
    others.map((o) => ({ key: o.key, data: o.data as Data })),
    { fill: input.fill === true, schema: localSchema(deps.config), library: route.library },
  );
  const children: MergeOutput['children'] = [];
  for (const other of others) {
    for (const child of await reader.children(other.key)) {
      children.push({ key: child.key, itemType: str(child.data.itemType), from: other.key });
    }
  }
  const body: PlanBody = {
    master: { key: master.key, version: versionOf(master) },
    others: others.map((o) => ({ key: o.key, version: versionOf(o) })),
    fill: input.fill === true,
  };
  const plan = await (await openPlanStore(deps)).save(MERGE_PLAN_KIND, route.library, body);
  return bounded({
    applied: false,
    planId: plan.id,
    expiresAt: plan.expiresAt,
    master: { key: master.key, title: str(master.data.title) },
    merged: others.map((o) => ({
      key: o.key,
      title: str(o.data.title),
      status: o.data.deleted ? ('unchanged' as const) : ('planned' as const),
    })),
    filled: change.filled,
    tagsAdded: change.tagsAdded,
    collectionsAdded: change.collectionsAdded,
    relationsAdded: change.relationsAdded,
    children,
    totalChildren: children.length,
    related: change.related,
    succeeded: [],
    unchanged: [],
    failed: [],
    ...answered(route),
  });
}

/** Whether an other is merged already: in the trash, and replaced by the master. */
function alreadyMerged(other: WebApiItem, master: WebApiItem, library: string): boolean {
  return (
    Boolean(other.data.deleted) &&
    values(relationsOf(master.data as Data), 'dc:replaces').includes(itemUri(library, other.key))
  );
}

/**
 * The library as item URIs name it (`users/123`): the write's own prefix, except for the
 * desktop's personal library, which its local API calls `users/0` while Zotero's URIs (and a
 * preview's plan) carry the account's id; the read route knows it when the desktop does.
 */
async function uriLibrary(deps: Deps, input: MergeInput, prefix: string): Promise<string> {
  if (prefix !== 'users/0') return prefix;
  try {
    const { route } = await openReader(deps, input);
    return route.library;
  } catch {
    return prefix;
  }
}

export async function mergeItems(deps: Deps, input: MergeInput): Promise<MergeOutput> {
  checkMerge(input);
  if (input.apply !== true) return preview(deps, input);
  const { openWebLibrary } = await import('../library/web.js');
  const lib = await openWebLibrary(deps, input, { access: 'write' });
  const uris = await uriLibrary(deps, input, lib.prefix);
  const call = lib.client.newCall();
  let plan: { id: string; expiresAt: string; body: PlanBody } | undefined;
  if (input.plan_id !== undefined) {
    plan = await (await openPlanStore(deps)).load<PlanBody>(MERGE_PLAN_KIND, uris, input.plan_id);
    const same =
      plan.body.master.key === input.master_key &&
      plan.body.others.map((o) => o.key).join(',') === [...new Set(input.item_keys)].join(',');
    if (!same) {
      throw new ZoteusError(
        'validation_error',
        `Plan ${plan.id} merges ${plan.body.others.map((o) => o.key).join(', ')} into ${plan.body.master.key}, not the items given.`,
        {
          field: 'plan_id',
          hint: 'Apply the plan with the keys of its preview, or preview these items again.',
        },
      );
    }
  }
  const keys = [input.master_key, ...new Set(input.item_keys)];
  const read = await lib.client.getByKeys<WebApiItem>(lib.prefix, 'items', keys, { call });
  const { master, others } = await candidates(deps, read.objects, input, uris);
  if (plan) {
    const changed: string[] = [];
    const planned = new Map([plan.body.master, ...plan.body.others].map((c) => [c.key, c.version] as const));
    const merged = others.filter((o) => alreadyMerged(o, master, uris));
    for (const item of [master, ...others]) {
      const was = planned.get(item.key) as number;
      if (versionOf(item) === was) continue;
      if (item !== master && merged.includes(item)) continue;
      if (item === master && merged.length === others.length) continue;
      changed.push(`${item.key} (version ${was}, now ${versionOf(item)})`);
    }
    if (changed.length > 0) {
      throw new ZoteusError(
        'conflict',
        `Changed since the preview: ${changed.join(', ')}. Nothing was merged.`,
        {
          field: 'plan_id',
          retryable: false,
          hint: 'Preview the merge again to see it as the items are now, then apply the new plan.',
        },
      );
    }
  }
  const fill = plan ? plan.body.fill : input.fill === true;
  const schema = localSchema(deps.config);
  const otherData = others.map((o) => ({ key: o.key, data: o.data as Data }));
  const first = mergedMaster(master.data as Data, otherData, { fill, schema, library: uris });

  const children: MergeOutput['children'] = [];
  for (const other of others) {
    const listing = await lib.client.listAll<WebApiItem>(`/${lib.prefix}/items/${other.key}/children`, {
      cache: false,
      call,
    });
    for (const child of listing.objects)
      children.push({ key: child.key, itemType: str(child.data.itemType), from: other.key });
  }
  const otherKeys = new Set(others.map((o) => o.key));
  const childKeys = new Set(children.map((c) => c.key));
  const relatedKeys = first.related.filter((k) => !childKeys.has(k));
  const masterUri = itemUri(uris, master.key);
  const order = [...children.map((c) => c.key), ...relatedKeys, master.key, ...otherKeys];
  const result = await applySetChange<Data>(lib.client, {
    library: lib.prefix,
    kind: 'items',
    keys: order,
    call,
    apply: (data) => {
      const key = str(data.key);
      if (key === master.key) {
        return mergedMaster(data, otherData, { fill, schema, library: uris }).next;
      }
      if (otherKeys.has(key)) return data.deleted ? null : { ...data, deleted: 1 };
      if (childKeys.has(key)) {
        return data.parentItem === master.key ? null : { ...data, parentItem: master.key };
      }
      const relations = relationsOf(data);
      const after = withValue(relations, 'dc:relation', masterUri);
      return after === relations ? null : { ...data, relations: after };
    },
    progress: (done, total) => deps.progress({ event: 'progress', phase: 'write', done, total }),
  });
  const trashed = new Set(result.succeeded);
  return bounded({
    applied: true,
    ...(plan ? { planId: plan.id, expiresAt: plan.expiresAt } : {}),
    master: { key: master.key, title: str(master.data.title) },
    merged: others.map((o) => ({
      key: o.key,
      title: str(o.data.title),
      status: trashed.has(o.key) ? ('trashed' as const) : ('unchanged' as const),
    })),
    filled: first.filled,
    tagsAdded: first.tagsAdded,
    collectionsAdded: first.collectionsAdded,
    relationsAdded: first.relationsAdded,
    children,
    totalChildren: children.length,
    related: relatedKeys,
    succeeded: result.succeeded,
    unchanged: result.unchanged,
    failed: result.failed,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
    backend: lib.side === 'desktop' ? ('localApi' as const) : ('web' as const),
    library: uris,
  });
}
