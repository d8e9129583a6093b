/**
 * `zotero_import` / `zot add --doi D | --arxiv ID | --isbn ISBN… | --url URL… | --from-file FILE`: items
 * from identifiers, web pages and citation files.
 */
import * as z from 'zod';
import { entriesOf, RECORD_FORMATS } from '../../core/items/records.js';
import { mergeImport, retryImportInput } from '../../core/items/retry.js';
import { onlyOn } from '../../core/call/refs.js';
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
  title: 'Import items',
  summary:
    'Add items by DOI, arXiv id, ISBN or web page URL (metadata looked up), or from identifiers, BibTeX, RIS or CSL-JSON.',
  description: [
    'Add papers and books by DOI, arXiv id, ISBN or web page URL, with their metadata looked up, or from the text of',
    `a file (identifiers, BibTeX, RIS, CSL-JSON). Give exactly one of ${onlyOn('mcp', 'doi, arxiv, isbn, url, identifiers, records')}${onlyOn('cli', '--doi, --arxiv, --isbn, --url, --from-file')}.`,
    "For Zotero item JSON use zotero_create_items. Lookups need no key; items are written via the desktop's local API once a person authorised it,",
    'else the Web API with a write-enabled ZOTERO_API_KEY. An entry already in the library (same DOI, arXiv id, ISBN',
    'or URL) is not added again: unchanged gives its key, so a repeat is safe. failed entries say error.retryable:',
    'retry only those.',
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
        .describe('E.g. "10.1038/nature12373"; doi: and doi.org URL forms too.'),
      arxiv: z.string().min(1).optional().describe('E.g. "2101.00001" or "hep-th/9901001".'),
      identifiers: z
        .array(z.string().min(1))
        .min(1)
        .max(10_000)
        .optional()
        .describe('Mixed DOIs, arXiv ids, ISBNs and URLs.'),
      isbn: z
        .array(z.string().min(1).max(100))
        .min(1)
        .max(10_000)
        .optional()
        .describe('ISBN-10 or -13; a wrong check digit fails that one.'),
      url: z
        .array(z.string().min(1).max(8192))
        .min(1)
        .max(10_000)
        .optional()
        .describe('Pages with citation metadata; a doi.org or arxiv.org URL counts as that id.'),
      records: z
        .string()
        .min(1)
        .optional()
        .describe('One identifier per line (# comments), or BibTeX, RIS or CSL-JSON.'),
      format: z
        .enum(['auto', ...RECORD_FORMATS])
        .optional()
        .meta({ default: 'auto' })
        .describe('auto: detected from the text.'),
      collection_key: zoteroKey('collection_key').optional().describe('For the new items.'),
      tags: z.array(z.string().min(1).max(255)).max(50).optional().describe('For the new items.'),
      allow_duplicates: z.boolean().optional().describe('Add entries already in the library again.'),
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
