/**
 * `zotero_get_item`: one item in the Web API's JSON shape, with its direct children (notes as
 * text, attachments with their file facts, annotations of an attachment), the names of its
 * collections, and whether full text exists.
 */
import type { LibraryArgs } from '../../library/address.js';
import type { WebApiItem } from '../../library/port.js';
import type { Deps } from '../../tool.js';
import { attachmentHasText, itemTitle, tagNames } from '../digest.js';
import { htmlToText } from '../html.js';
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
}

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
}

export interface GetItemOutput extends Answered {
  item: WebApiItem;
  children: ChildEntry[];
  collections: Array<{ key: string; name: string }>;
  fulltext: boolean;
  inTrash: boolean;
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
  const keys = Array.isArray(item.data.collections) ? item.data.collections : [];
  const hasChildren = item.data.itemType !== 'note' && item.data.itemType !== 'annotation';
  const [children, names] = await Promise.all([
    hasChildren ? reader.children(item.key) : Promise.resolve([]),
    keys.length > 0 ? collectionNames(reader, keys) : Promise.resolve(new Map<string, string>()),
  ]);
  const entries = children.map(childEntry);
  return {
    item,
    children: entries,
    collections: keys.map((key) => ({ key, name: names.get(key) ?? '' })),
    fulltext: entries.some((c) => c.fulltext === true) || attachmentHasText(item),
    inTrash: Boolean(item.data.deleted),
    ...answered(route),
  };
}
