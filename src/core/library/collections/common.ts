/** Errors and small helpers shared by the collection actions. */
import { ZoteusError } from '../../errors.js';
import type { Deps } from '../../tool.js';
import { reasonForCode, type FailedEntry } from '../../zotero/index.js';
import type { ErrorCode } from '../../errors.js';
import { toolRef } from '../../call/refs.js';

/** How to find a collection's key, in the words of the surface the call came through. */
export function findHint(): string {
  return `${toolRef('zotero_list_collections', { q: 'TEXT' })} finds a collection by name and shows its key.`;
}

/** `not_found` for a collection key that names nothing in the library. */
export function collectionNotFound(
  deps: Pick<Deps, 'surface'>,
  key: string,
  prefix: string,
  options: { field?: string; role?: 'Collection' | 'Parent collection'; tail?: string } = {},
): ZoteusError {
  const role = options.role ?? 'Collection';
  return new ZoteusError(
    'not_found',
    `${role} ${key} does not exist in library ${prefix}${options.tail ? `; ${options.tail}` : ''}.`,
    { field: options.field ?? 'collection_key', hint: findHint() },
  );
}

/**
 * The error for a collection write the server refused (one object, so its failure is the
 * call's failure). `409` names a missing parent or a move under a descendant.
 */
export function collectionWriteError(
  deps: Pick<Deps, 'surface'>,
  failure: FailedEntry,
  context: { key?: string | undefined; prefix: string; parent?: string | false | undefined },
): ZoteusError {
  const said = failure.message;
  if (failure.code === 409 && /parent collection .*not found/i.test(said) && context.parent) {
    return collectionNotFound(deps, context.parent, context.prefix, {
      field: 'parent_collection',
      role: 'Parent collection',
      tail: 'nothing was written',
    });
  }
  if (failure.code === 409 && /ancestor|descendant/i.test(said)) {
    return new ZoteusError('validation_error', `Zotero refused the move: ${said}.`, {
      field: 'parent_collection',
      hint: 'A collection cannot be moved under itself or one of its own subcollections.',
    });
  }
  if (failure.code === 404 && context.key) {
    return collectionNotFound(deps, context.key, context.prefix, { tail: 'nothing was written' });
  }
  const code = reasonForCode(failure.code) as ErrorCode;
  const field = failure.code === 413 ? { field: 'name' } : {};
  return new ZoteusError(code, `Zotero refused the collection write (HTTP ${failure.code}): ${said}`, {
    status: failure.code,
    ...field,
    ...(failure.code === 412 ? { retryable: true } : {}),
    hint:
      code === 'validation_error'
        ? 'Collection names must be 1 to 255 characters.'
        : code === 'permission_denied'
          ? 'The key cannot write to this library (a group may let only its admins edit).'
          : 'Read the collection again (list it) and retry.',
  });
}

/** `conflict` after every round of read and write met someone else's newer version. */
export function keptChanging(key: string, rounds: number, last: string | undefined): ZoteusError {
  return new ZoteusError(
    'conflict',
    `Collection ${key} kept changing during the write (${rounds} rounds of read and write)${last ? `: ${last}` : ''}.`,
    { retryable: true, status: 412, hint: 'Another client is editing it; retry in a moment.' },
  );
}

export function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}
