/**
 * Listing cache owned by one client instance (never module state): per library, the last
 * full listing of a path+query and the library version it reflects. A revalidation with
 * `If-Modified-Since-Version` answering `304` then costs one request instead of a re-read.
 */
import type { IncompleteReason, Query } from './types.js';

export interface CachedListing {
  version: number;
  objects: unknown[];
  totalResults: number;
  complete: boolean;
  reason?: IncompleteReason;
  message?: string;
  /** The cap the listing was read with: an incomplete entry is only reused for the same cap. */
  max: number;
}

export interface ListingCache {
  get(path: string, query: Query | undefined, max: number): CachedListing | undefined;
  set(path: string, query: Query | undefined, entry: CachedListing): void;
  /** Drops every listing of one library (`users/1`). */
  invalidate(library: string): void;
  clear(): void;
}

/** `users/1` from `/users/1/collections/top`; the whole path when it names no library. */
export function libraryOf(path: string): string {
  const found = /^\/?((?:users|groups)\/\d+)(?:\/|$)/.exec(path);
  return found?.[1] ?? path;
}

/** Path plus the caller's query in a stable order; paging parameters are the listing's own. */
export function cacheKey(path: string, query: Query | undefined): string {
  const parts: string[] = [];
  for (const name of Object.keys(query ?? {}).sort()) {
    if (name === 'start' || name === 'limit') continue;
    const value = query?.[name];
    if (value === undefined) continue;
    parts.push(`${name}=${Array.isArray(value) ? value.join('\u0000') : String(value)}`);
  }
  return `${path.startsWith('/') ? path : `/${path}`}?${parts.join('&')}`;
}

export function createListingCache(): ListingCache {
  const libraries = new Map<string, Map<string, CachedListing>>();
  return {
    get(path, query, max) {
      const entry = libraries.get(libraryOf(path))?.get(cacheKey(path, query));
      if (!entry) return undefined;
      // A complete listing serves any cap it fits under; a capped one only the same cap.
      if (entry.complete && entry.objects.length <= max) return entry;
      return entry.max === max ? entry : undefined;
    },
    set(path, query, entry) {
      const library = libraryOf(path);
      let listings = libraries.get(library);
      if (!listings) libraries.set(library, (listings = new Map()));
      listings.set(cacheKey(path, query), entry);
    },
    invalidate(library) {
      libraries.delete(library);
    },
    clear() {
      libraries.clear();
    },
  };
}
