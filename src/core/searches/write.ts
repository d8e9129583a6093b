/**
 * `zotero_manage_saved_searches`: creating a saved search (a client key from the request's
 * write ids, so a retry never makes a second one) and deleting one (read with the library
 * version, deleted with it, read again on `412`). Writes go through the one write client the
 * other writes use (`openWebLibrary`).
 */
import { toolRef } from '../call/refs.js';
import { ZoteusError, type ErrorCode } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { createObjects, DEFAULT_MAX_ROUNDS } from '../writes/index.js';
import { reasonForCode, type FailedEntry, type ZoteroObject } from '../zotero/index.js';
import type { SearchCondition } from './conditions.js';

export interface CreateSearchInput extends LibraryArgs {
  name: string;
  /** Already parsed and checked against Zotero's names. */
  conditions: SearchCondition[];
}

export interface CreateSearchResult {
  created: string[];
  name: string;
  conditions: SearchCondition[];
  libraryVersion?: number;
}

export interface DeleteSearchResult {
  deleted: string;
  deletedName: string;
  libraryVersion?: number;
}

type SearchObject = ZoteroObject<{ name?: unknown }>;

function refused(failure: FailedEntry): ZoteusError {
  const code = reasonForCode(failure.code) as ErrorCode;
  return new ZoteusError(code, `Zotero refused the saved search (HTTP ${failure.code}): ${failure.message}`, {
    status: failure.code,
    ...(failure.code === 400 ? { field: 'conditions' } : failure.code === 413 ? { field: 'name' } : {}),
    ...(failure.code === 412 ? { retryable: true } : {}),
  });
}

export async function createSavedSearch(deps: Deps, input: CreateSearchInput): Promise<CreateSearchResult> {
  const name = input.name.trim();
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  const written = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'searches',
    objects: [{ name, conditions: input.conditions }],
    labels: ['search'],
    ids: deps.writeIds,
    call,
  });
  const failure = written.failed[0];
  if (failure) throw refused(failure);
  const key = written.successful[0]?.key;
  if (!key) {
    throw new ZoteusError('api_error', 'The Zotero API accepted the saved search but did not say its key.', {
      hint: `${toolRef('zotero_saved_searches', { action: 'list' })} finds it before it is created again.`,
    });
  }
  return {
    created: [key],
    name,
    conditions: input.conditions,
    ...(written.libraryVersion !== undefined ? { libraryVersion: written.libraryVersion } : {}),
  };
}

export async function deleteSavedSearch(
  deps: Deps,
  input: LibraryArgs & { search_key: string },
): Promise<DeleteSearchResult> {
  const key = input.search_key;
  const call = (await webClient(deps)).newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  let last: string | undefined;
  for (let round = 1; round <= DEFAULT_MAX_ROUNDS; round++) {
    // By key through a multi-object request: its Last-Modified-Version is the library's.
    const read = await lib.client.getByKeys<SearchObject>(lib.prefix, 'searches', [key], { call });
    const current = read.byKey.get(key);
    if (!current) {
      throw new ZoteusError(
        'not_found',
        `Saved search ${key} does not exist in library ${lib.prefix}; nothing was deleted.`,
        {
          field: 'search_key',
          hint: `${toolRef('zotero_saved_searches', { action: 'list' })} lists the saved searches and their keys.`,
        },
      );
    }
    const name = typeof current.data?.name === 'string' ? current.data.name : '';
    try {
      const result = await lib.client.deleteBatch(lib.prefix, 'searches', [key], {
        libraryVersion: read.libraryVersion,
        call,
      });
      return {
        deleted: key,
        deletedName: name,
        ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
      };
    } catch (error) {
      // The library moved since the read: read again and delete with the new version.
      if (!(error instanceof ZoteusError && error.status === 412)) throw error;
      last = error.message;
    }
  }
  throw new ZoteusError(
    'conflict',
    `The library kept changing while saved search ${key} was being deleted (${DEFAULT_MAX_ROUNDS} attempts)${last ? `: ${last}` : ''}.`,
    { retryable: true, field: 'search_key' },
  );
}
