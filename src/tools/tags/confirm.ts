/**
 * What `remove_items` and `delete` ask a person to confirm: the tag and how many items carry it,
 * from the desktop's data when it holds the library, else the input alone.
 */
import type { LibraryReader } from '../../core/library/port.js';
import { plural } from '../../core/words.js';

const show = (tag: string) => JSON.stringify(tag.length > 60 ? `${tag.slice(0, 59)}…` : tag);

/** Items carrying each tag (a name with a manual and an automatic entry counts both). */
async function carriers(desktop: LibraryReader, tags: readonly string[]): Promise<Map<string, number>> {
  const wanted = new Set(tags);
  const counts = new Map(tags.map((t) => [t, 0]));
  for (const entry of await desktop.tags())
    if (wanted.has(entry.tag)) counts.set(entry.tag, (counts.get(entry.tag) ?? 0) + entry.meta.numItems);
  return counts;
}

export async function confirmDeleteTags(
  tags: readonly string[],
  desktop: LibraryReader | undefined,
): Promise<string> {
  const names = [...new Set(tags)];
  if (!desktop) {
    return names.length === 1
      ? `delete tag ${show(names[0] as string)} from every item of the library that carries it`
      : `delete ${plural(names.length, 'tag')} (${names.slice(0, 5).map(show).join(', ')}${names.length > 5 ? ', …' : ''}) from every item of the library that carries them`;
  }
  const counts = await carriers(desktop, names);
  const listed = names
    .slice(0, 5)
    .map((t) => `${show(t)} (${plural(counts.get(t) ?? 0, 'item')})`)
    .join(', ');
  const one = counts.get(names[0] as string) ?? 0;
  if (names.length === 1 && one === 0)
    return `delete tag ${show(names[0] as string)}, which no item carries (nothing would change)`;
  return names.length === 1
    ? `delete tag ${show(names[0] as string)} from the ${plural(one, 'item')} that ${one === 1 ? 'carries' : 'carry'} it`
    : `delete ${plural(names.length, 'tag')} from every item that carries them: ${listed}${names.length > 5 ? ', …' : ''}`;
}

export async function confirmRemoveTag(
  tag: string,
  itemKeys: readonly string[],
  desktop: LibraryReader | undefined,
): Promise<string> {
  const keys = [...new Set(itemKeys)];
  const what = `remove tag ${show(tag)} from ${plural(keys.length, 'item')}`;
  if (!desktop) return what;
  // Which of them carry it now: a removal from the others changes nothing.
  const items = await Promise.all(keys.slice(0, 100).map((key) => desktop.item(key)));
  const carrying = items.filter((item) => (item?.data.tags ?? []).some((t) => t.tag === tag)).length;
  return keys.length > 100
    ? what
    : `${what} (${carrying} of them ${carrying === 1 ? 'carries' : 'carry'} it)`;
}
