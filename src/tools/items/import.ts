/**
 * `zotero_import` / `zot add --doi D | --arxiv ID | --isbn ISBN… | --url URL… | --from-file FILE`: items
 * from identifiers, web pages and citation files.
 */
import * as z from 'zod';
import { entriesOf, RECORD_FORMATS } from '../../core/items/records.js';
import { mergeImport, retryImportInput } from '../../core/items/retry.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';
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
    'Add items by DOI, arXiv id, ISBN, URL (metadata looked up) or BibTeX/RIS/CSL-JSON text; exactly one of',
    `${onlyOn('mcp', 'doi, arxiv, isbn, url, identifiers, records')}${onlyOn('cli', '--doi, --arxiv, --isbn, --url, --from-file')}. Duplicates are skipped.`,
    'A duplicate has the same DOI, arXiv id, ISBN or URL, not in the trash (allow_duplicates adds it). Item JSON: zotero_create_items.',
    'Desktop local API if authorised, else Web API (write ZOTERO_API_KEY).',
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
        .describe(
          onlyOn('cli', 'One DOI, ') +
            'e.g. "10.1038/nature12373"' +
            onlyOn('cli', ' (doi: and https://doi.org/ forms accepted).'),
        ),
      arxiv: z
        .string()
        .min(1)
        .optional()
        .describe(
          onlyOn('cli', 'One arXiv id, e.g. "2101.00001" or "hep-th/9901001" (a version like v2 is kept).'),
        ),
      identifiers: z.array(z.string().min(1)).min(1).max(10_000).optional(),
      isbn: z
        .array(z.string().min(1).max(100))
        .min(1)
        .max(10_000)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'ISBNs of books, e.g. "978-0-306-40615-7" or "0306406152" (hyphens and spaces allowed); one with a wrong check digit fails on its own.',
          ),
        ),
      url: z
        .array(z.string().min(1).max(8192))
        .min(1)
        .max(10_000)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Web page URLs (http or https) whose embedded citation metadata is read; a doi.org or arxiv.org URL is taken as that identifier.',
          ),
        ),
      records: z
        .string()
        .min(1)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Text of a file to import: one DOI, arXiv id, ISBN or URL per line (# comments allowed), or BibTeX, RIS or CSL-JSON.',
          ),
        ),
      format: z
        .enum(['auto', ...RECORD_FORMATS])
        .optional()
        .meta({ default: 'auto' })
        .describe(
          onlyOn(
            'cli',
            `How to read ${paramRef('records')} (default auto: JSON is CSL-JSON, "TY  -" lines RIS, @entries BibTeX, else identifiers).`,
          ),
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Key of a collection to put every new item in.')),
      tags: z
        .array(z.string().min(1).max(255))
        .max(50)
        .optional()
        .describe(onlyOn('cli', 'Tags to add to every new item.')),
      allow_duplicates: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Add entries even when an item with the same DOI, arXiv id, ISBN or URL is already in the library (default false).',
          ),
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
