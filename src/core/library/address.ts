/**
 * Library addressing, shared by every tool (agent-interface.md, "Credentials and trust"):
 * `library_id` alone is a group id; `library_type: group` without an id is refused; with
 * neither, ZOTERO_LIBRARY_ID with ZOTERO_LIBRARY_TYPE applies, else the key's own user
 * library, else the desktop's personal library.
 */
import type { Config, LibraryType } from '../config.js';
import { ZoteusError } from '../errors.js';
import { toolRef } from '../call/refs.js';

export interface LibraryArgs {
  library_id?: number | undefined;
  library_type?: LibraryType | undefined;
}

export interface LibraryRef {
  type: LibraryType;
  /** Null until the key or the desktop tells it (the key's own user library). */
  id: number | null;
  /** Why this library: named in the call, configured, the key's own, or the desktop's. */
  source: 'argument' | 'config' | 'key' | 'desktop';
}

/** Resolves the address without any network: the id may stay null (the key's user library). */
export function resolveLibrary(
  args: LibraryArgs,
  config: Pick<Config, 'libraryId' | 'libraryType' | 'apiKey'>,
): LibraryRef {
  const { library_id: id, library_type: type } = args;
  if (id !== undefined) return { type: type ?? 'group', id, source: 'argument' };
  if (type === 'group') {
    throw new ZoteusError('validation_error', 'library_type "group" needs library_id: which group?', {
      field: 'library_id',
      hint: `Pass the group id (${toolRef('zotero_groups')} lists the ids you can reach).`,
    });
  }
  if (config.libraryId !== undefined && (type === undefined || type === config.libraryType)) {
    return { type: config.libraryType, id: config.libraryId, source: 'config' };
  }
  if (config.apiKey !== undefined) return { type: 'user', id: null, source: 'key' };
  return { type: 'user', id: null, source: 'desktop' };
}

/** `users/123` / `groups/456`: the Web API path prefix of a resolved library. */
export function libraryPrefix(ref: { type: LibraryType; id: number }): string {
  return `${ref.type === 'user' ? 'users' : 'groups'}/${ref.id}`;
}

export function describeLibrary(ref: LibraryRef): string {
  if (ref.id !== null) return libraryPrefix({ type: ref.type, id: ref.id });
  return ref.source === 'key' ? "the API key's user library" : "the desktop app's personal library";
}

/** `users/0` for the personal library (the local API's own name for it), `groups/ID` for a group. */
export function localApiPrefix(library: { type: LibraryType; id: number }): string {
  return library.type === 'user' ? 'users/0' : `groups/${library.id}`;
}

/** Zotero object keys: 8 characters, no 0, 1 or O. */
const OBJECT_KEY = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

/** `key`, when it is a Zotero object key; else a `validation_error` naming `field`. */
export function checkObjectKey(key: string, field: string): string {
  if (!OBJECT_KEY.test(key)) {
    throw new ZoteusError(
      'validation_error',
      `${field} must be a Zotero key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ); got '${key.slice(0, 40)}'.`,
      { field },
    );
  }
  return key;
}
