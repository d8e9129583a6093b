/**
 * Full-text content (Zotero's "Full-Text Content Requests", and the dataserver's
 * `FullTextController`): an attachment's text with its page or character counts, stored with
 * the library version of the write that set it. Shared by the HTTP handlers
 * (`routes-fulltext.ts`) and the seeding helper (`Library.setFulltext`), so seeded text obeys
 * the rules a client's PUT does.
 */
import { WriteError } from './mutate.js';
import type { FulltextData, FulltextInput, ItemData } from './types.js';

export const FULLTEXT_COUNTS = ['indexedChars', 'totalChars', 'indexedPages', 'totalPages'] as const;

/** Zotero keeps full text for attachments only, and not for links to URLs (no file). */
export function holdsFulltext(item: ItemData | undefined): item is ItemData {
  return item?.itemType === 'attachment' && item.linkMode !== 'linked_url';
}

/**
 * The body of a PUT as full text: `content` a string, the counts non-negative integers. The
 * dataserver casts whatever it gets; a stricter test server catches a client that sends junk.
 */
export function parseFulltext(body: unknown): FulltextInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new WriteError(400, 'Uploaded data must be a JSON object');
  }
  const input = body as Record<string, unknown>;
  if (typeof input.content !== 'string') throw new WriteError(400, "'content' must be a string");
  const out: FulltextInput = { content: input.content };
  for (const name of FULLTEXT_COUNTS) {
    const v = input[name];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      throw new WriteError(400, `'${name}' must be a non-negative integer`);
    }
    out[name] = v;
  }
  return out;
}

/** Stores the text of an attachment at `version`; 404 when the key names no file attachment. */
export function storeFulltext(
  lib: { items: Map<string, ItemData>; fulltext: Map<string, FulltextData> },
  key: string,
  input: FulltextInput,
  version: number,
): void {
  const item = lib.items.get(key);
  if (!item) throw new WriteError(404, 'Item not found');
  if (!holdsFulltext(item)) throw new WriteError(404, 'Full-text content can only be added for attachments');
  lib.fulltext.set(key, { ...input, version });
}

/** The JSON of `GET items/{key}/fulltext`: the content, and only the counts that are set and non-zero. */
export function fulltextJson(data: FulltextData): Record<string, unknown> {
  const json: Record<string, unknown> = { content: data.content };
  for (const name of FULLTEXT_COUNTS) if (data[name]) json[name] = data[name];
  return json;
}
