/** Helpers shared by the collection tests: request counts from the test server's log, seeding. */
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import type { World } from '../../core/library/world.js';

export const USER = 'users/1';

/** Requests other than the key check, optionally of one method and one path (exact). */
export function requests(world: World, method?: string, path?: string): RequestLogEntry[] {
  return world.server.log.filter(
    (e) =>
      e.path !== '/keys/current' &&
      (method === undefined || e.method === method) &&
      (path === undefined || e.path === path),
  );
}

/** `{GET: 2, POST: 1}` of the requests to one path (key checks excluded). */
export function countsFor(world: World, path: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of requests(world, undefined, path)) out[e.method] = (out[e.method] ?? 0) + 1;
  return out;
}

/** Seeds `n` items titled `Paper i` in `prefix`; returns their keys in order. */
export function seedItems(
  world: World,
  n: number,
  prefix = USER,
  extra: Record<string, unknown> = {},
): string[] {
  return world.server
    .library(prefix)
    .addItems(Array.from({ length: n }, (_, i) => ({ title: `Paper ${i}`, ...extra })));
}

/** The collections each of `keys` is in, straight from the server's state. */
export function membership(world: World, keys: readonly string[], prefix = USER): string[][] {
  const items = world.server.library(prefix).items;
  return keys.map((k) => items.get(k)?.collections ?? []);
}

export const ceil50 = (n: number): number => Math.ceil(n / 50);
