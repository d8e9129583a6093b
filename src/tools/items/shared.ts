/**
 * What the item tools share: an item in the Web API's JSON shape, whatever the backend, and a
 * digest. Light on purpose: the declarations load for `zot --help`, the library code only when a
 * handler runs.
 */
import * as z from 'zod';
import type { WebApiItem } from '../../core/library/port.js';

const creator = z.looseObject({
  creatorType: z.string(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  name: z.string().optional(),
});

const tag = z.looseObject({
  tag: z.string(),
  type: z.number().optional().describe('1 for an automatic tag; absent for a manual one.'),
});

/** The library an item is in, as the Web API names it. */
const libraryField = z
  .looseObject({ type: z.enum(['user', 'group']), id: z.number(), name: z.string().optional() })
  .optional();

/** The Web API's `meta` of an item (what a listing and a read both carry). */
const META_FIELDS = {
  creatorSummary: z.string().optional().describe('"Church and White", "Vaswani et al."'),
  parsedDate: z.string().optional().describe('The date as YYYY, YYYY-MM or YYYY-MM-DD.'),
  numChildren: z.number().optional().describe('Child notes and attachments not in the trash.'),
};

/** An item as the Zotero Web API v3 serves it (`GET /users/{id}/items/{key}`), whatever the backend. */
export const webApiItem = z
  .looseObject({
    key: z.string().describe('8-character item key.'),
    version: z.number().describe('The item’s version (changes on every edit).'),
    library: libraryField,
    meta: z.looseObject(META_FIELDS).optional(),
    data: z
      .looseObject({
        key: z.string(),
        version: z.number(),
        itemType: z.string().describe('journalArticle, book, note, attachment, …'),
        title: z.string().optional(),
        creators: z.array(creator).optional(),
        tags: z.array(tag).optional(),
        collections: z.array(z.string()).optional().describe('Keys of the collections the item is in.'),
        parentItem: z.string().optional().describe('Key of the parent, for a child note or attachment.'),
        dateAdded: z.string().optional(),
        dateModified: z.string().optional(),
      })
      .describe(
        'The item’s fields by name (every field of its type, "" when empty), creators, tags, collections, relations, dateAdded, dateModified; note (HTML) for notes; contentType, filename, linkMode for attachments; deleted: 1 when in the trash.',
      ),
  })
  .describe('An item in the Zotero Web API JSON shape (the same whichever backend answered).');

export type ItemJson = z.infer<typeof webApiItem>;

/**
 * An item as a listing returns it (issue 16, point 18): the Web API shape without its empty
 * values (empty strings, lists and objects, null), and with `fields` only the chosen ones, so
 * every property but the key may be absent.
 */
export const listedItem = z
  .looseObject({
    key: z.string().describe('8-character item key (always present).'),
    version: z.number().optional().describe('The item’s version (changes on every edit).'),
    library: libraryField,
    meta: z
      .looseObject({
        ...META_FIELDS,
        year: z.string().optional().describe('The year of the date, four digits (when fields names year).'),
      })
      .optional(),
    data: z
      .looseObject({
        key: z.string().optional(),
        version: z.number().optional(),
        itemType: z.string().optional().describe('journalArticle, book, note, attachment, …'),
        title: z.string().optional(),
        creators: z.array(creator).optional(),
        tags: z.array(tag).optional(),
        collections: z.array(z.string()).optional().describe('Keys of the collections the item is in.'),
        parentItem: z.string().optional().describe('Key of the parent, for a child note or attachment.'),
        dateAdded: z.string().optional(),
        dateModified: z.string().optional(),
      })
      .optional()
      .describe(
        'The item’s fields by name, those that are not empty (all of them, or those fields names): creators, tags, collections, relations, dateAdded, dateModified; note (HTML) for notes; contentType, filename, linkMode for attachments; deleted: 1 when in the trash.',
      ),
  })
  .describe(
    'An item in the Zotero Web API JSON shape (the same whichever backend answered), without its empty values.',
  );

export type ListedItemJson = z.infer<typeof listedItem>;

/**
 * The reader's items as the output schema types them: the same objects (the schema is loose:
 * every field the backend sends is kept), only the interface lacks the index signatures.
 */
export function asItemJson(item: WebApiItem): ItemJson {
  return item as unknown as ItemJson;
}

/** A listing's items as the output schema types them (the same objects). */
export function asListedJson(item: object): ListedItemJson {
  return item as unknown as ListedItemJson;
}

export const digestSchema = z.object({
  key: z.string(),
  itemType: z.string(),
  citation: z
    .string()
    .describe('One reference line: creators (year). Title. Container, volume(issue), pages. DOI link.'),
  title: z.string(),
  creators: z.array(z.string()).describe('"Last, First"; a role other than the primary one in parentheses.'),
  year: z.string().nullable().describe('Four digits; null when the item has no date.'),
  abstract: z
    .string()
    .optional()
    .describe('The abstract’s first 400 characters, cut at a word (a standalone note: its text).'),
  abstractTruncated: z.boolean().optional().describe('True when the abstract was cut.'),
  DOI: z.string().optional(),
  url: z.string().optional(),
  tags: z.array(z.string()),
  collections: z.array(z.object({ key: z.string(), name: z.string() })),
  notes: z
    .array(z.object({ key: z.string(), title: z.string(), excerpt: z.string() }))
    .describe('Child notes, oldest first: first line and the first 200 characters of the text.'),
  attachments: z.array(
    z.object({
      key: z.string(),
      title: z.string(),
      contentType: z.string().nullable(),
      filename: z.string().nullable(),
      linkMode: z.string().nullable(),
      fulltext: z
        .boolean()
        .describe(
          'Whether it is a file that holds readable text (a stored or linked PDF, EPUB, HTML or text file; a link to a URL holds none), judged from its type, not from the full-text index.',
        ),
    }),
  ),
  fulltext: z
    .boolean()
    .describe(
      'Whether any attachment is a file that holds readable text (zotero_get_fulltext reads it), judged from the attachments’ types.',
    ),
  inTrash: z.literal(true).optional().describe('Present when the item is in the trash.'),
  omitted: z
    .object({
      notes: z.number().int().optional(),
      attachments: z.number().int().optional(),
      tags: z.number().int().optional(),
      collections: z.number().int().optional(),
    })
    .optional()
    .describe(
      'How many entries of each list were left out: a digest keeps the first 20 notes, attachments, tags and collections (zotero_get_item has them all).',
    ),
});
