/**
 * The filters of an item listing held to what they can match (issue 16, point 12): an item type
 * that Zotero's schema does not have is a `validation_error` naming the closest types, before
 * anything is read; a tag filter that matched nothing is explained when the library has the tag
 * in another case or spacing (tags match exactly).
 *
 * Light on purpose: the search declaration checks its input with it, offline.
 */
import { paramRef, toolRef } from '../../call/refs.js';
import { didYouMean } from '../../did-you-mean.js';
import { ZoteusError } from '../../errors.js';
import { filterExpr, filterList } from '../../local/sqlite/text.js';
import type { ItemSchema } from '../schema.js';

/**
 * Every operand of an item-type filter (`book`, `book || journalArticle`, `-attachment`, or a
 * list of them) must be an item type of Zotero's schema, spelled as the schema spells it.
 */
export function checkItemTypeFilter(
  schema: ItemSchema,
  value: string | readonly string[] | undefined,
  field = 'item_type',
): void {
  const types = [...schema.types.keys()];
  for (const expr of filterList(value)) {
    const where = (v: string) => (expr.trim() === v ? '' : ` (in ${JSON.stringify(expr)})`);
    for (const v of filterExpr(expr).values) {
      if (schema.types.has(v)) continue;
      if (v === '') {
        throw new ZoteusError(
          'validation_error',
          `${paramRef(field)} ${JSON.stringify(expr)} has an empty item type: each side of "||", and what follows a leading "-", must be one.`,
          { field, hint: typesHint(types) },
        );
      }
      const near = didYouMean(v, types);
      throw new ZoteusError(
        'validation_error',
        `${paramRef(field)} '${v}'${where(v)} is not a Zotero item type${near ? ` (${near})` : ''}.`,
        { field, hint: typesHint(types) },
      );
    }
  }
}

function typesHint(types: readonly string[]): string {
  return `Item types: ${types.join(', ')}; combine them as "book || journalArticle" or exclude one as "-attachment". ${toolRef('zotero_schema')} lists each type's fields.`;
}

/** The tags a tag filter asks items to carry: the operands of its expressions that are not excluded. */
export function wantedTags(value: string | readonly string[] | undefined): string[] {
  const out = new Set<string>();
  for (const expr of filterList(value)) {
    const { negate, values } = filterExpr(expr);
    if (negate) continue;
    for (const v of values) if (v !== '') out.add(v);
  }
  return [...out];
}

/** A tag's letters without case and without any spacing: "Sea  Level " and "sea level" have the same. */
export function tagForm(tag: string): string {
  return tag.normalize('NFKC').toLowerCase().replace(/\s+/gu, '');
}

/**
 * The `message` of a listing that a tag filter left empty: for each wanted tag that no item
 * carries, the library's tags that differ from it only in case or spacing. `known` holds the
 * library's tags (or those of them that could be such a variant); `complete`: whether it holds
 * every such tag, so that "no item has" is known to be true. Undefined when nothing is close.
 */
export function tagVariantsMessage(
  wanted: readonly string[],
  known: Iterable<string>,
  complete: boolean,
): string | undefined {
  const names = new Set(known);
  const byForm = new Map<string, string[]>();
  for (const name of names) {
    const form = tagForm(name);
    const same = byForm.get(form);
    if (same) same.push(name);
    else byForm.set(form, [name]);
  }
  const sentences: string[] = [];
  for (const tag of wanted) {
    if (names.has(tag) || !complete) continue;
    const near = (byForm.get(tagForm(tag)) ?? []).filter((t) => t !== tag).sort();
    if (near.length === 0) continue;
    const shown = near.map((t) => JSON.stringify(t));
    const list = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
    sentences.push(`No item has the tag ${JSON.stringify(tag)}; the library has ${list}`);
  }
  return sentences.length > 0 ? `${sentences.join('. ')} (tags match exactly).` : undefined;
}

/**
 * What a Web API tag search should ask for to find the variants of `tag`: its longest word, in
 * lower case (the server's `q` on tags matches case-insensitively, as a substring).
 */
export function tagSearchWord(tag: string): string {
  const words = tag.split(/\s+/u).filter(Boolean);
  return (words.sort((a, b) => b.length - a.length)[0] ?? tag).toLowerCase();
}
