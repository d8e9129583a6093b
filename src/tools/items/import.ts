/**
 * `zotero_import` / `zot add --doi D | --arxiv ID | --isbn ISBN… | --url URL… | --from-file FILE`: items
 * from identifiers, web pages and citation files.
 */
import * as z from 'zod';
import { entriesOf, RECORD_FORMATS } from '../../core/items/records.js';
import { mergeImport, retryImportInput } from '../../core/items/retry.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { quoted } from '../shared/text.js';

const entryError = z.object({
  code: z.string().describe('Error code (not_found, network_error, rate_limited, validation_error, …).'),
  message: z.string(),
  retryable: z
    .boolean()
    .describe('Whether the same entry may succeed on a retry (a network failure, a busy resolver).'),
});

export default defineTool({
  name: 'zotero_import',
  title: 'Import items by DOI, arXiv id, ISBN, web page or file',
  summary:
    'Add items by DOI, arXiv id, ISBN or web page URL (metadata looked up), or from identifiers, BibTeX, RIS or CSL-JSON.',
  description: [
    'Writes new items to the Zotero library (the desktop app’s local API when it takes writes, else the cloud Web API), with metadata looked up for you: a DOI at Crossref, then',
    'DataCite; an arXiv id at the arXiv API (saved as a preprint); an ISBN (10 or 13 digits, check digit verified) at Open',
    'Library, then the Library of Congress catalogue (saved as a book); a web page URL by fetching the page and reading its',
    'embedded citation metadata (Highwire citation_* tags, Dublin Core, JSON-LD ScholarlyArticle), a DOI the page names',
    'being looked up as a DOI instead; a page with no such metadata fails. Give exactly one of doi, arxiv, isbn (a list),',
    'url (a list), identifiers (a list of DOIs, arXiv ids, ISBNs and URLs, mixed) or records (the text of a file: one',
    'identifier per line, or BibTeX, RIS or CSL-JSON, whose own metadata is used as is; format is detected unless given).',
    'Duplicate check: an entry whose DOI, arXiv id, ISBN (ISBN-10 and -13 alike) or page URL is already in the library is',
    'not added again; it is listed in unchanged with the existing key (reason "duplicate"), so',
    'adding the same paper twice is safe. Set allow_duplicates: true to add a copy anyway. collection_key (a collection) and',
    'tags apply to every new item, not to duplicates. Entries are resolved and written 50 at a time, with progress',
    'notifications. Result: succeeded [{entry, key, itemType, title}], unchanged [{entry, key, reason}], failed [{entry,',
    'error: {code, message, retryable}}] (an entry not found, a line that is no identifier, an ISBN whose check digit is',
    'wrong, a page without metadata, a resolver that did not answer)',
    'while the others still landed; total; libraryVersion. Retry only the entries of failed whose error is retryable. For',
    'metadata you already have as Zotero JSON use zotero_create_items.',
  ].join(' '),
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.1.0',
  toolset: 'items',
  undo: {
    restores: 'the imported items go to the trash',
  },
  cli: [
    {
      path: ['add'],
      omit: ['identifiers'],
      flags: { records: 'from-file', tags: 'tag', collection_key: 'collection' },
      files: { records: 'text' },
      summary:
        'Add items by --doi, --arxiv, --isbn, --url or --from-file FILE|- (identifiers, BibTeX, RIS, CSL-JSON), duplicates skipped.',
    },
  ],
  input: z
    .object({
      doi: z
        .string()
        .min(1)
        .optional()
        .describe('One DOI, e.g. "10.1038/nature12373" (doi: and https://doi.org/ forms accepted).'),
      arxiv: z
        .string()
        .min(1)
        .optional()
        .describe('One arXiv id, e.g. "2101.00001" or "hep-th/9901001" (a version like v2 is kept).'),
      identifiers: z
        .array(z.string().min(1))
        .min(1)
        .max(10_000)
        .optional()
        .describe(
          'Several DOIs, arXiv ids, ISBNs and web page URLs, mixed; each is detected. Unrecognised ones fail on their own.',
        ),
      isbn: z
        .array(z.string().min(1).max(100))
        .min(1)
        .max(10_000)
        .optional()
        .describe(
          'ISBNs of books, e.g. "978-0-306-40615-7" or "0306406152" (hyphens and spaces allowed); one with a wrong check digit fails on its own.',
        ),
      url: z
        .array(z.string().min(1).max(8192))
        .min(1)
        .max(10_000)
        .optional()
        .describe(
          'Web page URLs (http or https) whose embedded citation metadata is read; a doi.org or arxiv.org URL is taken as that identifier.',
        ),
      records: z
        .string()
        .min(1)
        .optional()
        .describe(
          'Text of a file to import: one DOI, arXiv id, ISBN or URL per line (# comments allowed), or BibTeX, RIS or CSL-JSON.',
        ),
      format: z
        .enum(['auto', ...RECORD_FORMATS])
        .optional()
        .describe(
          'How to read records (default auto: JSON is CSL-JSON, "TY  -" lines RIS, @entries BibTeX, else identifiers).',
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe('Key of a collection to put every new item in.'),
      tags: z.array(z.string().min(1).max(255)).max(50).optional().describe('Tags to add to every new item.'),
      allow_duplicates: z
        .boolean()
        .optional()
        .describe(
          'Add entries even when an item with the same DOI, arXiv id, ISBN or URL is already in the library (default false).',
        ),
      ...libraryParams,
    })
    .strict()
    .refine(
      (v) =>
        [v.doi, v.arxiv, v.identifiers, v.isbn, v.url, v.records].filter((x) => x !== undefined).length === 1,
      {
        message:
          'Give exactly one of doi, arxiv, isbn, url, identifiers or records (--doi, --arxiv, --isbn, --url or --from-file).',
        path: ['doi'],
      },
    ),
  output: z.object({
    succeeded: z
      .array(
        z.object({
          entry: z
            .string()
            .describe('The entry as given (identifier or URL, or a record’s DOI / arXiv id / citation key).'),
          key: z.string().describe('Key of the new item.'),
          itemType: z.string().optional(),
          title: z.string().optional(),
        }),
      )
      .describe('Entries added as new items.'),
    unchanged: z
      .array(
        z.object({
          entry: z.string(),
          key: z.string().describe('Key of the item already in the library.'),
          reason: z
            .enum(['duplicate', 'repeated'])
            .describe(
              'duplicate: the library already had this DOI/arXiv id/ISBN/URL; repeated: the same identifier earlier in this input.',
            ),
        }),
      )
      .describe('Entries not added because the item is already there: nothing was written for them.'),
    failed: z
      .array(z.object({ entry: z.string(), error: entryError }))
      .describe('Entries that did not land, each with its error; the others did.'),
    total: z.number().int().describe('Entries in the input.'),
    libraryVersion: z.number().int().optional().describe("The library's version after this call."),
  }),
  summarize: (out) =>
    `Added ${plural(out.succeeded.length, 'item')}${out.unchanged.length ? `, ${out.unchanged.length} already in the library` : ''}${out.failed.length ? `, ${out.failed.length} failed` : ''} (of ${out.total}).`,
  next: (out) => {
    const keys = out.succeeded.map((s) => s.key);
    if (keys.length === 0) return [];
    const list = keys.slice(0, 10).map(quoted).join(' ');
    return [`zot tag add <tag> ${list}`, `zot note add ${keys[0]} <text>`];
  },
  // The records are read offline first: a file that cannot be read costs no request.
  check: (input) => void entriesOf(input),
  plan(input) {
    const { source, format, entries } = entriesOf(input);
    const would: Record<string, unknown> = { source };
    if (source === 'doi') would.doi = entries[0]?.identifier?.value;
    else if (source === 'arxiv') would.arxiv = entries[0]?.identifier?.value;
    else {
      if (format) would.format = format;
      would.entries = entries.length;
      would.preview = entries.slice(0, 20).map((e) => ({
        entry: e.entry,
        ...(e.identifier ? { [e.identifier.kind]: e.identifier.value } : {}),
        ...(e.csl ? { record: true } : {}),
        ...(e.error ? { invalid: e.error.message } : {}),
      }));
      would.batches = Math.ceil(entries.length / 50);
    }
    if (input.collection_key) would.collection_key = input.collection_key;
    if (input.tags?.length) would.tags = input.tags;
    would.duplicate_check = !input.allow_duplicates;
    return would;
  },
  retryFailed: {
    input: (input, previous) => retryImportInput(input, previous),
    merge: (previous, retry) => mergeImport(previous, retry),
  },
  async run(input, deps) {
    const { importItems } = await import('../../core/items/import.js');
    return importItems(deps, input);
  },
});
