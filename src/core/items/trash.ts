/**
 * Moving items to the trash and back (`deleted` on each item, through the write engine:
 * 2·⌈n/50⌉ requests for n items), and permanent deletion (`DELETE items?itemKey=…`, 50 per
 * request, under the library version). Deleting a parent deletes its child notes and
 * attachments too, in Zotero as on the Web API; the result lists them.
 */
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { applySetChangeReported, type ObjectData } from '../writes/index.js';
import { BATCH_SIZE, failedEntry, type FailedEntry, type ZoteroObject } from '../zotero/index.js';
import { changeOutcome, checkDelete, unique, type DeleteInput } from './common.js';

export interface TrashInput extends LibraryArgs {
  item_keys: readonly string[];
  action?: 'trash' | 'restore' | undefined;
}

export interface TrashOutput {
  action: 'trash' | 'restore';
  /** Item keys moved (to the trash, or out of it). */
  updated: string[];
  /** Already where they were asked to be. */
  unchanged: string[];
  failed: FailedEntry[];
  libraryVersion?: number;
}

export function toTrash<D extends ObjectData>(data: D): D | null {
  return data.deleted ? null : { ...data, deleted: true };
}

export function fromTrash<D extends ObjectData>(data: D): D | null {
  return data.deleted ? { ...data, deleted: false } : null;
}

export async function trashItems(deps: Deps, input: TrashInput): Promise<TrashOutput> {
  const action = input.action ?? 'trash';
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const total = unique(input.item_keys).length;
  const phase = action === 'trash' ? 'trash' : 'restore';
  const result = await applySetChangeReported(
    lib.client,
    {
      library: lib.prefix,
      kind: 'items',
      keys: input.item_keys,
      apply: action === 'trash' ? toTrash : fromTrash,
      call,
    },
    { progress: deps.progress, phase, report: total > BATCH_SIZE },
  );
  return changeOutcome(action, result);
}

export interface DeleteOutput {
  /** The given keys that were deleted, in input order. */
  deleted: string[];
  /** Child notes and attachments deleted with their parents. */
  children: Array<{ key: string; parentItem: string; itemType: string }>;
  failed: FailedEntry[];
  libraryVersion?: number;
}

export async function deleteItems(deps: Deps, input: DeleteInput): Promise<DeleteOutput> {
  checkDelete(deps, input);
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const keys = unique(input.item_keys);
  const indexOf = new Map(input.item_keys.map((k, i) => [k, i] as const).reverse());
  const read = await lib.client.getByKeys<ZoteroObject>(lib.prefix, 'items', keys, { call });
  let version = read.libraryVersion;
  const failed: FailedEntry[] = read.missing.map((key) =>
    failedEntry(indexOf.get(key) as number, key, 404, `Item ${key} does not exist in library ${lib.prefix}.`),
  );
  const found = read.objects;
  const given = new Set(found.map((o) => o.key));
  // Children of the parents being deleted go with them: list them so the result can say so.
  const parents = found.filter(
    (o) => Number((o.meta as { numChildren?: unknown } | undefined)?.numChildren ?? 0) > 0,
  );
  const childLists = await Promise.all(
    parents.map(async (parent) => {
      const listing = await lib.client.listAll<ZoteroObject>(`/${lib.prefix}/items/${parent.key}/children`, {
        query: { includeTrashed: 1 },
        cache: false,
        call,
      });
      if (listing.libraryVersion !== undefined) version = Math.max(version ?? 0, listing.libraryVersion);
      return listing.objects.map((child) => ({
        key: child.key,
        parentItem: parent.key,
        itemType: String((child.data as { itemType?: unknown })?.itemType ?? ''),
      }));
    }),
  );
  const children = childLists.flat().filter((c) => !given.has(c.key));
  if (found.length === 0) return { deleted: [], children: [], failed };

  const result = await lib.client.deleteBatch(
    lib.prefix,
    'items',
    found.map((o) => o.key),
    { libraryVersion: version, call },
  );
  const deleted = new Set(result.deleted);
  const failedKeys = new Set(result.failed.map((f) => f.key));
  for (const f of result.failed) failed.push({ ...f, index: indexOf.get(f.key as string) ?? f.index });
  failed.sort((a, b) => a.index - b.index);
  return {
    deleted: keys.filter((k) => deleted.has(k)),
    children: children.filter((c) => deleted.has(c.parentItem) && !failedKeys.has(c.parentItem)),
    failed,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
  };
}
