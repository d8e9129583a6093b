/**
 * What `delete` and `remove_items` ask a person to confirm: the collection by name with what goes
 * with it, read from the desktop's data when it holds the library, else the key alone.
 */
import type { LibraryReader } from '../../core/library/port.js';
import { plural } from '../../core/words.js';

/** The collection and its subtree of subcollections (keys), from one listing. */
async function subtree(
  desktop: LibraryReader,
  key: string,
): Promise<{ name: string; descendants: string[] } | undefined> {
  const { collections } = await desktop.collections({ counts: false });
  const target = collections.find((c) => c.key === key);
  if (!target) return undefined;
  const children = new Map<string, string[]>();
  for (const c of collections) {
    const parent = c.data.parentCollection;
    if (parent === false) continue;
    children.set(parent, [...(children.get(parent) ?? []), c.key]);
  }
  const descendants: string[] = [];
  const queue = [...(children.get(key) ?? [])];
  const seen = new Set([key]);
  while (queue.length > 0) {
    const next = queue.shift() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    descendants.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return { name: target.data.name, descendants };
}

export async function confirmDelete(key: string, desktop: LibraryReader | undefined): Promise<string> {
  const found = desktop ? await subtree(desktop, key) : undefined;
  if (!found) return `delete collection ${key} and all its subcollections (the items stay in the library)`;
  const subs = found.descendants.length;
  // The collection's own count only: an item filed in several subcollections would count twice.
  const own = desktop?.collectionItemCounts
    ? (await desktop.collectionItemCounts([key])).get(key)
    : undefined;
  const holding = own === undefined ? '' : ` with ${plural(own, 'item')}`;
  const with_ = subs > 0 ? ` and its ${plural(subs, 'subcollection')}` : ' (it has no subcollections)';
  return `delete collection ${JSON.stringify(found.name)} (${key})${holding}${with_}; the items stay in the library`;
}

export async function confirmRemove(
  key: string,
  itemKeys: readonly string[],
  desktop: LibraryReader | undefined,
): Promise<string> {
  const n = plural(itemKeys.length, 'item');
  if (!desktop) return `remove ${n} from collection ${key} (the items stay in the library)`;
  const found = (await desktop.collections({ keys: [key], counts: false })).collections;
  const target = found.find((c) => c.key === key);
  const name = target ? `${JSON.stringify(target.data.name)} (${key})` : key;
  // Which of them are in it now: removing the others changes nothing.
  const items = await Promise.all(itemKeys.slice(0, 100).map((k) => desktop.item(k)));
  const members = items.filter((item) => (item?.data.collections ?? []).includes(key)).length;
  const inIt = itemKeys.length > 100 ? '' : `; ${members} of them ${members === 1 ? 'is' : 'are'} in it`;
  return `remove ${n} from collection ${name} (the items stay in the library${inIt})`;
}
