/**
 * The whole text of an item's best document, for the search indexer's opt-in full-text
 * indexing (`ZOTEUS_INDEX_FULLTEXT`): the same sources in the same order as
 * `zotero_get_fulltext` (sources.ts: the desktop's index when complete, the local or Web API's
 * `/fulltext`, the file itself through the disk cache of extracted text, an incomplete index).
 */
import { ZOTERO_KEY_RE } from '../items/common.js';
import type { Deps } from '../tool.js';
import { resolveDocument, type FulltextSource } from './sources.js';

export interface ItemFulltext {
  text: string;
  source: FulltextSource;
  /** The attachment the text is from (the item itself when it is the attachment). */
  attachmentKey: string;
  /** Pages of the document (exact or as Zotero counted them); null for EPUB, HTML, text. */
  pages: number | null;
}

/**
 * Undefined when the item has no document text, and when the key names no item (the indexer
 * may ask for an item deleted since it listed it). Backend failures, and a file that cannot be
 * read (`validation_error` for a broken PDF), throw.
 */
export async function itemFulltext(
  deps: Deps,
  input: { itemKey: string; library_id?: number; library_type?: 'user' | 'group' },
): Promise<ItemFulltext | undefined> {
  if (!ZOTERO_KEY_RE.test(input.itemKey)) return undefined;
  const { attachment, loaded } = await resolveDocument(deps, input, 'start');
  if (!attachment || !loaded) return undefined;
  return {
    text: loaded.doc.text,
    source: loaded.source,
    attachmentKey: attachment.key,
    pages: loaded.totalPages ?? loaded.doc.totalPages ?? null,
  };
}
