/**
 * Compact item listings (issue 16, point 18): a listed item leaves out its empty values (empty
 * strings, empty lists, empty objects, null), which are most of a Web API item; `fields` chooses
 * which of its fields a listing returns, in the Web API's shape still (the item's key always, the
 * chosen properties of the item, of its `meta` and of its `data`). Reading one item keeps
 * everything.
 *
 * Light on purpose: the search declaration checks `fields` with it, offline.
 */
import { paramRef } from '../../call/refs.js';
import { didYouMean } from '../../did-you-mean.js';
import { ZoteusError } from '../../errors.js';
import type { WebApiItem } from '../../library/port.js';
import { itemYear } from '../digest.js';
import type { ItemSchema } from '../schema.js';

/** Properties of the item itself (beside `meta` and `data`) a listing may choose. */
const ITEM_OWN = ['key', 'version', 'library', 'links'] as const;
/** Properties of `meta`, and `year`: the four digits of the date (put in `meta`). */
const META_OWN = ['creatorSummary', 'parsedDate', 'numChildren', 'year'] as const;
/**
 * Properties of `data` that are not fields of an item type in the schema: the item's own, a
 * note's, an attachment's and an annotation's (as the Web API serves them).
 */
const DATA_OWN = [
  'itemType',
  'creators',
  'tags',
  'collections',
  'relations',
  'parentItem',
  'dateAdded',
  'dateModified',
  'deleted',
  'inPublications',
  'note',
  'linkMode',
  'contentType',
  'charset',
  'filename',
  'path',
  'md5',
  'mtime',
  'annotationType',
  'annotationAuthorName',
  'annotationText',
  'annotationComment',
  'annotationColor',
  'annotationPageLabel',
  'annotationSortIndex',
  'annotationPosition',
] as const;

const isOwn = (list: readonly string[], name: string) => list.includes(name);

/** Every name `fields` accepts: the item's, its meta's, year, and every data field of the schema. */
export function listingFieldNames(schema: ItemSchema): string[] {
  return [...new Set([...ITEM_OWN, ...META_OWN, ...DATA_OWN, ...schema.allFields])];
}

/** The names of `fields`, each entry possibly several separated by commas (`key,title,year`). */
export function fieldNames(fields: readonly string[] | undefined): string[] | undefined {
  if (fields === undefined) return undefined;
  const names = fields.flatMap((entry) => entry.split(',')).map((name) => name.trim());
  return [...new Set(names.filter(Boolean))];
}

/** `fields` checked offline: a name that no item has is a `validation_error` with the closest names. */
export function checkListingFields(
  schema: ItemSchema,
  fields: readonly string[] | undefined,
  field = 'fields',
): void {
  const names = fieldNames(fields);
  if (names === undefined) return;
  if (names.length === 0) {
    throw new ZoteusError('validation_error', `${paramRef(field)} names no field.`, {
      field,
      hint: 'Give field names such as key, title, creators, year; omit it for every field that is not empty.',
    });
  }
  const known = listingFieldNames(schema);
  const accepted = new Set(known);
  const unknown = names.filter((name) => !accepted.has(name));
  if (unknown.length === 0) return;
  const first = unknown[0] as string;
  const near = didYouMean(first, known);
  const listed = unknown.map((name) => `'${name}'`).join(', ');
  throw new ZoteusError(
    'validation_error',
    `${paramRef(field)} ${listed} ${unknown.length === 1 ? 'is not a field' : 'are not fields'} of an item${near ? ` (${near})` : ''}.`,
    {
      field,
      hint: `Fields are Zotero's (title, creators, date, DOI, abstractNote, publicationTitle, tags, collections, …, spelled as the schema spells them), plus key, version, library, creatorSummary, parsedDate, numChildren and year.`,
    },
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether a value is empty: an empty string, an empty list, an object with nothing in it, null. */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isPlainObject(value) && Object.keys(value).length === 0;
}

/**
 * A copy of a value without its empty properties, at every depth (the entries of a list stay,
 * each compacted). Numbers and booleans are never empty: `numChildren: 0` stays.
 */
export function withoutEmpty<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => withoutEmpty(v)) as T;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    const compact = withoutEmpty(v);
    if (!isEmpty(compact)) out[name] = compact;
  }
  return out as T;
}

/** An item as a listing returns it: only its chosen fields when `names` is given, never its empty values. */
export type ListedItem = Pick<WebApiItem, 'key'> & Partial<WebApiItem>;

/**
 * The item with only `names`: its key always; `version`, `library`, `links` from the item;
 * `creatorSummary`, `parsedDate`, `numChildren` and `year` into `meta`; every other name from
 * `data`, where a base field stands for the field of the item's type mapped onto it (`title`
 * is a case's `caseName`, `publicationTitle` a book section's `bookTitle`). Empty values are
 * left out.
 */
export function pickFields(item: WebApiItem, names: readonly string[], schema: ItemSchema): ListedItem {
  const out: Record<string, unknown> = { key: item.key };
  const meta: Record<string, unknown> = {};
  const data: Record<string, unknown> = {};
  const source = item as unknown as Record<string, unknown>;
  const itemMeta = (item.meta ?? {}) as Record<string, unknown>;
  const itemData = (item.data ?? {}) as Record<string, unknown>;
  const spec = schema.types.get(String(itemData.itemType));
  for (const name of names) {
    if (isOwn(ITEM_OWN, name)) out[name] = source[name];
    else if (name === 'year') meta.year = itemYear(item);
    else if (isOwn(META_OWN, name)) meta[name] = itemMeta[name];
    else if (name in itemData) data[name] = itemData[name];
    else {
      const mapped = spec?.byBase.get(name);
      if (mapped !== undefined && mapped in itemData) data[mapped] = itemData[mapped];
    }
  }
  out.meta = meta;
  out.data = data;
  return withoutEmpty(out) as unknown as ListedItem;
}
