/**
 * `zotero_get_item`: one item in the Web API's JSON shape, with its direct children (notes as
 * text, attachments with their file facts, annotations of an attachment), the names of its
 * collections, and whether full text exists. Bounded (bounds.ts): each text field holds at most
 * `max_chars` characters (`offset` reads the long ones on), each child's text an excerpt, and
 * the children fill what the size bound leaves (`children_start` pages them).
 */
import type { LibraryArgs } from '../../library/address.js';
import type { WebApiItem } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { attachmentHasText, itemTitle, tagNames } from '../digest.js';
import { htmlToText } from '../html.js';
import {
  boundItem,
  clipText,
  fitRows,
  ITEM_LIST_MAX,
  jsonBytes,
  nextStartOf,
  ROWS_BUDGET,
  type FieldCut,
} from './bounds.js';
import {
  answered,
  assertKeysWellFormed,
  collectionNames,
  itemNotFound,
  openReader,
  type Answered,
} from './common.js';

export interface GetItemInput extends LibraryArgs {
  item_key: string;
  max_chars?: number | undefined;
  offset?: number | undefined;
  children_start?: number | undefined;
}

/** Characters of each text field of the item, by default. */
export const ITEM_MAX_CHARS = 10_000;
/** Characters of a child's text (a note, an annotation) that an item read shows. */
export const CHILD_TEXT_CHARS = 2_000;
/** Bytes of children an answer holds at least, however large the item itself. */
const MIN_CHILDREN_BUDGET = 10_000;

/** A child of the item, compact: what an agent reads, not the whole JSON. */
export interface ChildEntry {
  key: string;
  itemType: string;
  title: string;
  dateModified: string;
  tags: string[];
  /** Notes: the whole note as plain text. Annotations: the highlighted text and the comment. */
  text?: string;
  contentType?: string;
  filename?: string;
  linkMode?: string;
  url?: string;
  /** Attachments: whether the file holds text Zotero can index (PDF, EPUB, HTML, plain text). */
  fulltext?: boolean;
  annotationType?: string;
  pageLabel?: string;
  /** The text was cut at CHILD_TEXT_CHARS; totalChars is its whole length. */
  truncated?: true;
  totalChars?: number;
}

export interface GetItemOutput extends Answered {
  item: WebApiItem;
  children: ChildEntry[];
  collections: Array<{ key: string; name: string }>;
  fulltext: boolean;
  inTrash: boolean;
  /** Children in all (those on this page are `children`). */
  childrenTotal: number;
  /** Where the next page of children starts, when more follow. */
  nextChildrenStart?: number;
  /** Something was cut: a field (truncatedFields), a child's text, or the children list. */
  truncated?: boolean;
  truncatedFields?: FieldCut[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function childEntry(child: WebApiItem): ChildEntry {
  const d = child.data;
  const entry: ChildEntry = {
    key: child.key,
    itemType: d.itemType,
    title: itemTitle(child),
    dateModified: d.dateModified,
    tags: tagNames(child),
  };
  if (d.itemType === 'note') entry.text = htmlToText(str(d.note) ?? '');
  if (d.itemType === 'annotation') {
    const text = [str(d.annotationText), str(d.annotationComment)].filter(Boolean).join('\n');
    if (text) entry.text = text;
    if (str(d.annotationType)) entry.annotationType = str(d.annotationType);
    if (str(d.annotationPageLabel)) entry.pageLabel = str(d.annotationPageLabel);
  }
  if (d.itemType === 'attachment') {
    for (const field of ['contentType', 'filename', 'linkMode', 'url'] as const) {
      const v = str(d[field]);
      if (v !== undefined) entry[field] = v;
    }
    entry.fulltext = attachmentHasText(child);
  }
  return entry;
}

export async function getItem(deps: Deps, input: GetItemInput): Promise<GetItemOutput> {
  assertKeysWellFormed(deps, [input.item_key]);
  const { reader, route } = await openReader(deps, input);
  const item = await reader.item(input.item_key);
  if (!item) throw itemNotFound(deps, [input.item_key], route.library);
  const keys = Array.isArray(item.data.collections) ? item.data.collections.slice(0, ITEM_LIST_MAX) : [];
  const hasChildren = item.data.itemType !== 'note' && item.data.itemType !== 'annotation';
  const [children, names] = await Promise.all([
    hasChildren ? reader.children(item.key) : Promise.resolve([]),
    keys.length > 0 ? collectionNames(reader, keys) : Promise.resolve(new Map<string, string>()),
  ]);
  const entries = children.map(childEntry);
  const collections = keys.map((key) => ({ key, name: names.get(key) ?? '' }));
  // The item first (its fields cut shorter when it is very large), then its children in what is left.
  const room = ROWS_BUDGET - jsonBytes(collections);
  const bounded = boundItem(
    item,
    input.max_chars ?? ITEM_MAX_CHARS,
    input.offset ?? 0,
    Math.max(MIN_CHILDREN_BUDGET, room - MIN_CHILDREN_BUDGET),
  );
  const start = input.children_start ?? 0;
  const budget = Math.max(MIN_CHILDREN_BUDGET, room - jsonBytes(bounded.item));
  const page = fitRows(entries.slice(start).map(clipChild), budget);
  const nextChildrenStart = nextStartOf(start, page.rows.length, entries.length);
  const truncated =
    bounded.cuts.length > 0 || nextChildrenStart !== undefined || page.rows.some((c) => c.truncated);
  return {
    item: bounded.item,
    children: page.rows,
    collections,
    fulltext: entries.some((c) => c.fulltext === true) || attachmentHasText(item),
    inTrash: Boolean(item.data.deleted),
    childrenTotal: entries.length,
    ...(nextChildrenStart !== undefined ? { nextChildrenStart } : {}),
    ...(truncated ? { truncated: true } : {}),
    ...(bounded.cuts.length > 0 ? { truncatedFields: bounded.cuts } : {}),
    ...answered(route),
  };
}

/** A child whose text is an excerpt of CHILD_TEXT_CHARS characters (zotero_list_notes reads notes whole). */
function clipChild(entry: ChildEntry): ChildEntry {
  if (entry.text === undefined || entry.text.length <= CHILD_TEXT_CHARS) return entry;
  const c = clipText(entry.text, CHILD_TEXT_CHARS);
  return { ...entry, text: c.text, truncated: true, totalChars: c.totalChars };
}
