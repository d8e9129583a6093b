/**
 * Collections on the Zotero Web API: the listing both collection tools share, structure
 * changes (create, rename, reparent, delete) and membership changes (add or remove items).
 * The tools (`zotero_list_collections`, `zotero_manage_collections`) and the
 * `zotero://collections` resource are thin declarations over these functions.
 */
import { ZoteusError } from '../errors.js';
import type { Deps } from '../tool.js';
import type { FailedEntry } from '../zotero/index.js';
import type { LibraryArgs } from './address.js';
import type { CollectionAction } from './collections/constants.js';
import { listCollections, readCollectionRows, type CollectionRow } from './collections/list.js';
import { changeMembership } from './collections/membership.js';
import {
  createCollection,
  deleteCollection,
  renameCollection,
  reparentCollection,
} from './collections/write.js';

export {
  listCollections,
  pageRows,
  readCollections,
  toRow,
  type CollectionListing,
  type CollectionPage,
  type CollectionRow,
  type ListInput,
} from './collections/list.js';
export {
  changeMembership,
  type MembershipInput,
  type MembershipMode,
  type MembershipResult,
} from './collections/membership.js';
export {
  cleanName,
  createCollection,
  deleteCollection,
  descendantsOf,
  renameCollection,
  reparentCollection,
  type CreateResult,
  type DeleteResult,
  type UpdateResult,
} from './collections/write.js';

export {
  COLLECTION_ACTIONS,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  NAME_MAX,
  type CollectionAction,
} from './collections/constants.js';

/** The input of `zotero_manage_collections`, validated by its schema. */
export interface ManageInput extends LibraryArgs {
  action: CollectionAction;
  collection_key?: string | undefined;
  name?: string | undefined;
  parent_collection?: string | undefined;
  item_keys?: string[] | undefined;
  confirm?: boolean | undefined;
  q?: string | undefined;
  limit?: number | undefined;
  start?: number | undefined;
}

/** Every field an action may answer with (the tool's output schema). */
export interface ManageOutput {
  collections?: CollectionRow[];
  totalResults?: number;
  start?: number;
  complete?: boolean;
  read?: number;
  message?: string;
  created?: string[];
  collection_key?: string;
  deleted?: string;
  deletedName?: string;
  subcollectionsDeleted?: number;
  updated?: string[];
  unchanged?: string[];
  failed?: FailedEntry[];
  libraryVersion?: number;
}

/** A field the schema should have required for this action (a bug if it ever shows). */
function required<T>(value: T | undefined, field: string, action: string): T {
  if (value === undefined) {
    throw new ZoteusError('validation_error', `${field} is required for action "${action}".`, { field });
  }
  return value;
}

/** Runs one action of `zotero_manage_collections`. */
export async function manageCollections(deps: Deps, input: ManageInput): Promise<ManageOutput> {
  const library: LibraryArgs = { library_id: input.library_id, library_type: input.library_type };
  const { action } = input;
  switch (action) {
    case 'list':
      return listCollections(deps, { ...library, q: input.q, limit: input.limit, start: input.start });
    case 'create':
      return createCollection(deps, {
        ...library,
        name: required(input.name, 'name', action),
        parent_collection: input.parent_collection,
      });
    case 'rename':
      return renameCollection(deps, {
        ...library,
        collection_key: required(input.collection_key, 'collection_key', action),
        name: required(input.name, 'name', action),
      });
    case 'reparent':
      return reparentCollection(deps, {
        ...library,
        collection_key: required(input.collection_key, 'collection_key', action),
        parent_collection: input.parent_collection,
      });
    case 'delete':
      return deleteCollection(deps, {
        ...library,
        collection_key: required(input.collection_key, 'collection_key', action),
      });
    case 'add_items':
    case 'remove_items':
      return changeMembership(
        deps,
        {
          ...library,
          collection_key: required(input.collection_key, 'collection_key', action),
          item_keys: required(input.item_keys, 'item_keys', action),
          confirm: input.confirm,
        },
        action === 'add_items' ? 'add' : 'remove',
      );
  }
}

/** The `zotero://collections` resource: every collection of the default library, sorted. */
export async function collectionsResource(deps: Deps): Promise<{
  library: string;
  collections: CollectionRow[];
  totalResults: number;
  complete: boolean;
  read?: number;
  message?: string;
}> {
  // Through the router: the desktop's copy when it serves the default library, else the Web API.
  const { route, rows, complete, message } = await readCollectionRows(deps, {});
  return {
    library: route.library,
    collections: rows,
    totalResults: rows.length,
    complete,
    ...(message !== undefined ? { read: rows.length, message } : {}),
  };
}
