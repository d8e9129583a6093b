/**
 * The annotations of an attachment, or of every attachment of an item: read from whichever
 * backend the router picks (zotero.sqlite, the desktop's local API, the Web API), all of which
 * answer in the Web API's JSON shape, then put into one shape here: the position parsed from
 * its JSON string, ordered as Zotero's reader orders them (by sortIndex).
 */
import { ZoteusError } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { byCodeUnit } from '../text-order.js';
import {
  answered,
  assertKeysWellFormed,
  itemNotFound as readNotFound,
  openReader,
  type Answered,
} from '../items/read/common.js';

export interface ListAnnotationsInput extends LibraryArgs {
  item_key: string;
}

export interface AnnotationRow {
  key: string;
  version: number;
  /** The attachment the annotation is on. */
  attachmentKey: string;
  type: string;
  /** The selected text (highlights and underlines only). */
  text?: string;
  comment: string;
  color: string;
  pageLabel: string;
  sortIndex: string;
  /** The position as Zotero stores it (`{pageIndex, rects, …}` for a PDF), parsed; undefined when unreadable. */
  position?: Record<string, unknown>;
  authorName?: string;
  tags: string[];
  dateModified?: string;
}

export interface ListAnnotationsOutput extends Answered {
  itemKey: string;
  annotations: AnnotationRow[];
  totalResults: number;
  /** Why there are none, when the key is something that cannot hold annotations. */
  message?: string;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function parsePosition(value: unknown): Record<string, unknown> | undefined {
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return value as Record<string, unknown>;
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** One annotation item in the shape the tool answers with, whichever backend read it. */
export function annotationRow(o: WebApiItem): AnnotationRow {
  const data = o.data as Record<string, unknown>;
  const type = str(data.annotationType);
  const position = parsePosition(data.annotationPosition);
  const author = str(data.annotationAuthorName);
  const tags = Array.isArray(data.tags)
    ? (data.tags as Array<{ tag?: unknown }>)
        .map((t) => t?.tag)
        .filter((t): t is string => typeof t === 'string')
    : [];
  return {
    key: o.key,
    version: o.version,
    attachmentKey: str(data.parentItem),
    type,
    ...(type === 'highlight' || type === 'underline' ? { text: str(data.annotationText) } : {}),
    comment: str(data.annotationComment),
    // Zotero saves an empty colour as its default yellow.
    color: str(data.annotationColor) || '#ffd400',
    pageLabel: str(data.annotationPageLabel),
    sortIndex: str(data.annotationSortIndex),
    ...(position ? { position } : {}),
    // The desktop gives '' where the Web API leaves the field out: both mean no author.
    ...(author ? { authorName: author } : {}),
    tags: tags.sort(byCodeUnit),
    ...(typeof data.dateModified === 'string' ? { dateModified: data.dateModified } : {}),
  };
}

const live = (o: WebApiItem): boolean => !(o.data as Record<string, unknown>).deleted;

/**
 * The annotations under `item_key`: an attachment's own, or those of each attachment of a
 * regular item. A key that names nothing is `not_found`; a note (or an annotation) has none,
 * and the answer says so.
 */
export async function listAnnotations(
  deps: Deps,
  input: ListAnnotationsInput,
): Promise<ListAnnotationsOutput> {
  assertKeysWellFormed(deps, [input.item_key]);
  const { reader, route } = await openReader(deps, input);
  const childrenOf = async (key: string): Promise<WebApiItem[]> => {
    try {
      return await reader.children(key);
    } catch (error) {
      if (error instanceof ZoteusError && error.code === 'not_found')
        throw readNotFound(deps, [input.item_key], route.library);
      throw error;
    }
  };
  const item = await reader.item(input.item_key);
  if (!item) throw readNotFound(deps, [input.item_key], route.library);
  const itemType = str(item.data.itemType);
  let found: WebApiItem[] = [];
  let message: string | undefined;
  if (itemType === 'note' || itemType === 'annotation') {
    message = `${input.item_key} is ${itemType === 'note' ? 'a note' : 'itself an annotation'}: annotations are on attachments (PDF, EPUB, snapshot).`;
  } else if (itemType === 'attachment') {
    found = (await childrenOf(input.item_key)).filter((o) => o.data.itemType === 'annotation');
  } else {
    const attachments = (await childrenOf(input.item_key)).filter(
      (o) => o.data.itemType === 'attachment' && live(o),
    );
    for (const attachment of attachments)
      found.push(...(await childrenOf(attachment.key)).filter((o) => o.data.itemType === 'annotation'));
    if (attachments.length === 0) message = `${input.item_key} has no attachments, so no annotations.`;
  }
  const annotations = found
    .filter(live)
    .map(annotationRow)
    .sort(
      (a, b) =>
        byCodeUnit(a.attachmentKey, b.attachmentKey) ||
        byCodeUnit(a.sortIndex, b.sortIndex) ||
        byCodeUnit(a.key, b.key),
    );
  return {
    itemKey: input.item_key,
    annotations,
    totalResults: annotations.length,
    ...(message !== undefined && annotations.length === 0 ? { message } : {}),
    ...answered(route),
  };
}
