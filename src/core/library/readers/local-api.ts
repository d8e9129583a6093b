/**
 * A LibraryReader over the desktop app's local API: the Web API reader (`web.ts`) with the
 * local client (no key, no key check), prefix `users/0` for the personal library or
 * `groups/ID` for a group the desktop holds, and whole listings in one request (the local
 * API is unpaginated unless `limit` is given). A failure says it came from the desktop app.
 */
import type { LibraryType } from '../../config.js';
import { localApiError, type LocalApi } from '../../local/local-api.js';
import { localApiPrefix } from '../address.js';
import type { LibraryReader } from '../port.js';
import { createApiReader } from './web.js';

export interface LocalApiReaderOptions {
  api: Pick<LocalApi, 'client' | 'url' | 'forget'>;
  /** The library as the router names it: the user library's id is the synced user id, or 0. */
  library: { type: LibraryType; id: number };
  maxCollections: number;
}

export function createLocalApiReader(o: LocalApiReaderOptions): LibraryReader {
  return createApiReader({
    backend: 'localApi',
    server: o.api.url,
    client: o.api.client,
    prefix: localApiPrefix(o.library),
    library: o.library,
    maxCollections: o.maxCollections,
    call: o.api.client.newCall(),
    unpaged: true,
    mapError: (error) => {
      const mapped = localApiError(error, o.api.url);
      // The app quit or the setting changed: the next call detects again instead of trusting this one.
      if (mapped !== error) o.api.forget();
      return mapped;
    },
  });
}
