/** Small helpers shared by the item actions: keys, errors, surface-aware wording. */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { Deps } from '../tool.js';
import type { SetChangeResult } from '../writes/index.js';

/** Zotero object keys: 8 characters, no 0, 1 or O (the same rule as tools/shared/params.ts). */
export const ZOTERO_KEY_RE = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

export function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}

/** How to find an item's key, in the words of the surface the call came through. */
export function findItemHint(deps: Pick<Deps, 'surface'>): string {
  return deps.surface === 'cli'
    ? 'Check the key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ); items in the trash still count.'
    : 'Check the item key; items in the trash still count.';
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
    { field: options.field ?? 'item_key', hint: findItemHint(deps) },
  );
}

/** `--confirm` or `confirm: true`, as the surface spells it. */
export function confirmHow(deps: Pick<Deps, 'surface'>): string {
  return deps.surface === 'cli'
    ? 'Run it again with --confirm to proceed'
    : 'Call again with confirm: true to proceed';
}

/**
 * The bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES=N, 0 is off): a bulk-destructive call on
 * more than N items needs `confirm: true`. Checked before credentials and before any request.
 */
export function assertBulkConfirmed(
  deps: Pick<Deps, 'config' | 'surface'>,
  count: number,
  confirmed: boolean | undefined,
  what: string,
): void {
  const threshold = deps.config.confirmBulkWrites;
  if (threshold <= 0 || count <= threshold || confirmed === true) return;
  throw new ZoteusError(
    'confirmation_required',
    `${what} (${count} items) in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is ${threshold} items. Nothing was changed.`,
    { field: 'confirm', hint: `${confirmHow(deps)}, or act on at most ${threshold} items per call.` },
  );
}

export interface DeleteInput extends LibraryArgs {
  item_keys: readonly string[];
  confirm?: boolean | undefined;
}

/** The refusal when permanent deletion is not enabled (before anything else, without a request). */
export function deleteDisabled(deps: Pick<Deps, 'surface'>): ZoteusError {
  return new ZoteusError(
    'permission_denied',
    'Permanent deletion is turned off on this installation (ZOTEUS_ALLOW_DELETE is not true). Nothing was deleted.',
    {
      hint:
        deps.surface === 'cli'
          ? 'Move the items to the trash instead (`zot trash KEY…`, reversible), or set ZOTEUS_ALLOW_DELETE=true to allow permanent deletion.'
          : 'Use zotero_trash_items instead (reversible); the user can set ZOTEUS_ALLOW_DELETE=true to allow permanent deletion.',
    },
  );
}

/** Checks that need no request: deletion enabled, then the bulk-write threshold. */
export function checkDelete(deps: Pick<Deps, 'config' | 'surface'>, input: DeleteInput): void {
  if (!deps.config.allowDelete) throw deleteDisabled(deps);
  assertBulkConfirmed(deps, unique(input.item_keys).length, input.confirm, 'Deleting items permanently');
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
