/** Small helpers shared by the item actions: keys, errors, wording that each surface renders (core/call/refs.ts). */
import { assertBulkConfirmed } from '../call/bulk.js';
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import type { SetChangeResult } from '../writes/index.js';
import { toolRef } from '../call/refs.js';

/** Zotero object keys: 8 characters, no 0, 1 or O (the same rule as tools/shared/params.ts). */
export const ZOTERO_KEY_RE = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

export function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}

/** How to find an item's key, in the words of the surface the call came through. */
export function findItemHint(): string {
  return `Check the key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ), or find it with ${toolRef('zotero_search_items', { q: 'TEXT' })}; items in the trash still count.`;
}

export function itemNotFound(
  deps: Pick<Deps, 'surface'>,
  key: string,
  prefix: string,
  options: { field?: string; tail?: string } = {},
): ZoteusError {
  return new ZoteusError(
    'not_found',
    `Item ${key} does not exist in library ${prefix}${options.tail ? `; ${options.tail}` : ''}.`,
    { field: options.field ?? 'item_key', hint: findItemHint() },
  );
}

export { assertBulkConfirmed };

export interface DeleteInput extends LibraryArgs {
  item_keys: readonly string[];
  confirm?: boolean | undefined;
}

/** Why permanent deletion is refused when ZOTEUS_ALLOW_DELETE is not true (the declaration's `disabled`). */
export const DELETE_DISABLED = {
  message:
    'Permanent deletion is turned off on this installation (ZOTEUS_ALLOW_DELETE is not true). Nothing was deleted.',
  hint: `Move the items to the trash instead (${toolRef('zotero_trash_items', { item_keys: 'KEY…' })}, reversible), or set ZOTEUS_ALLOW_DELETE=true to allow permanent deletion.`,
};

/** The refusal when permanent deletion is not enabled (before anything else, without a request). */
export function deleteDisabled(): ZoteusError {
  return new ZoteusError('permission_denied', DELETE_DISABLED.message, { hint: DELETE_DISABLED.hint });
}

/** Checks that need no request: deletion enabled, then the bulk-write threshold. */
export function checkDelete(deps: Pick<Deps, 'config' | 'surface'>, input: DeleteInput): void {
  if (!deps.config.allowDelete) throw deleteDisabled();
  const count = unique(input.item_keys).length;
  assertBulkConfirmed(
    deps,
    { count, what: `Deleting ${count} item${count === 1 ? '' : 's'} permanently` },
    input.confirm,
  );
}

/** The output of a batched change to items (tags, trash): what changed, what already was, what failed. */
export function changeOutcome<A extends string>(action: A, result: SetChangeResult) {
  return {
    action,
    updated: result.succeeded,
    unchanged: result.unchanged,
    failed: result.failed,
    ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
  };
}
