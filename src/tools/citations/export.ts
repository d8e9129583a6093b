/**
 * `zotero_export` / `zot export KEY…|--collection K|--all --format bibtex|biblatex|ris|csljson
 * [--save PATH]`: items as a bibliography file. Writes no library; with a save path it writes a
 * local file, hence tier `write` with `WRITES FILES` (available in read-only mode).
 */
import * as z from 'zod';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList } from '../shared/output.js';
import { libraryParams, pagingParams, zoteroKey } from '../shared/params.js';
import { continuation } from '../shared/text.js';

/** The same as core/exports/export.ts (not imported: the declaration loads without the writers). */
const FORMATS = ['bibtex', 'biblatex', 'ris', 'csljson'] as const;
const PAGE = { rows: 'Items', default: 100, max: 1000 } as const;
/** The same as core/citations/zotero-engine.ts. */
const ENGINES = ['local', 'zotero'] as const;

export default defineTool({
  name: 'zotero_export',
  title: 'Export references',
  summary: 'Export items as BibTeX, BibLaTeX, RIS or CSL-JSON: the text, or a file with --save.',
  description: [
    'Export items as BibTeX, BibLaTeX, RIS or CSL-JSON; styled references (APA...): zotero_format_bibliography.',
    `Desktop data without a key, else Web API with ZOTERO_API_KEY. Give item_keys, collection_key or ${paramRef('all')}. The text`,
    'holds one page (nextStart); save_path writes all to a file. Unknown keys: failed[].',
  ].join(' '),
  tier: 'write',
  writesFilesOnly: true,
  openWorld: true,
  // The same items give the same bytes; a repeated save rewrites them (overwrite) or is refused.
  idempotent: true,
  since: '0.2.0',
  toolset: 'citations',
  inDefaultSet: true,
  cli: [
    {
      path: ['export'],
      args: ['item_keys'],
      flags: { collection_key: 'collection', save_path: 'save' },
      summary:
        'Export items as BibTeX, BibLaTeX, RIS or CSL-JSON (--format), printed or saved with --save PATH.',
    },
  ],
  input: z
    .object({
      item_keys: z
        .array(z.string().max(64))
        .max(5000)
        .optional()
        .describe(
          onlyOn('cli', 'Items to export, by key (a key that names no item is one entry of failed).'),
        ),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Export the top-level items of this collection.')),
      all: z.boolean().optional().describe(onlyOn('cli', 'Export every top-level item of the library.')),
      format: z
        .enum(FORMATS)
        .optional()
        .meta({ default: 'bibtex' })
        .describe(onlyOn('cli', 'bibtex (default), biblatex, ris or csljson.')),
      charset: z
        .enum(['utf8', 'ascii'])
        .optional()
        .describe(
          onlyOn(
            'cli',
            'BibTeX and BibLaTeX: ascii writes non-ASCII as LaTeX commands (bibtex’s default), utf8 keeps it (biblatex’s).',
          ),
        ),
      save_path: z
        .string()
        .min(1)
        .optional()
        .describe(
          onlyOn(
            'cli',
            "Write the export to this file instead of returning it (confined to the caller's own folder on a shared deployment).",
          ),
        ),
      overwrite: z
        .boolean()
        .optional()
        .meta({ default: false })
        .describe(
          onlyOn('cli', `Allow ${paramRef('save_path')} to replace an existing file (default false).`),
        ),
      engine: z
        .enum(ENGINES)
        .optional()
        .meta({ default: 'local' })
        .describe(
          onlyOn(
            'cli',
            'local (default): Zoteus’ writers, offline, every backend; zotero: Zotero’s own translators (Web API or local API).',
          ),
        ),
      ...pagingParams(PAGE),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    engine: z
      .enum(ENGINES)
      .describe('Which engine wrote it: local (Zoteus’ writers) or zotero (Zotero’s own translators).'),
    format: z.enum(FORMATS),
    text: z.string().optional().describe('The export, when it was not saved to a file.'),
    saved: z
      .object({
        path: z.string(),
        bytes: z.number().int(),
        resource: z.string().optional().describe('On a shared server: the MCP resource that reads it back.'),
      })
      .optional()
      .describe('The file written, and its size in bytes.'),
    succeeded: z.array(z.string()).describe('The item keys exported (the first 1,000 of a saved export).'),
    failed: failedList,
    keys: z
      .array(
        z.object({
          item_key: z.string(),
          citation_key: z.string(),
          source: z.enum(['extra', 'field', 'better-bibtex', 'generated']),
        }),
      )
      .optional()
      .describe('Each exported item’s citation key and where it came from.'),
    unique: z
      .enum(['library', 'export'])
      .optional()
      .describe('Generated keys are unique across the library, or within this export.'),
    betterBibtex: z
      .string()
      .optional()
      .describe('Whether Better BibTeX’s keys were used, and from where or why not.'),
    duplicateKeys: z
      .array(z.object({ citationKey: z.string(), itemKeys: z.array(z.string()) }))
      .optional()
      .describe('Citation keys that several items have as their own (left as they are).'),
    totalResults: z
      .number()
      .int()
      .optional()
      .describe('A collection or the library: how many items it holds.'),
    nextStart: z.number().int().optional().describe('Where the next page starts.'),
    truncated: z.boolean().optional().describe('The size bound cut this page short of limit.'),
    remaining: z.array(z.string()).optional().describe('Keys given that did not fit in this answer.'),
    ...answeredFields,
  }),
  summarize: (out) => {
    const n = plural(out.succeeded.length, 'item');
    const where = out.saved ? ` to ${out.saved.path} (${plural(out.saved.bytes, 'byte')})` : '';
    const failed = out.failed.length ? `; ${out.failed.length} failed (see failed)` : '';
    const total = out.totalResults !== undefined && !out.saved ? ` of ${out.totalResults}` : '';
    const by = out.engine === 'zotero' ? ' by Zotero' : '';
    return `Exported ${n}${total} as ${out.format}${by}${where}${failed}.${continuation(out)}`;
  },
  // A file's bytes are printed as they are: a .bib or .ris re-wrapped to the terminal would break.
  text: (out) => (out.text !== undefined ? { document: out.text } : `Saved to ${out.saved?.path ?? '?'}.\n`),
  plan(input) {
    return {
      format: input.format ?? 'bibtex',
      engine: input.engine ?? 'local',
      items: input.all
        ? 'the whole library'
        : input.collection_key
          ? `collection ${input.collection_key}`
          : (input.item_keys ?? []),
      ...(input.save_path !== undefined
        ? { save_path: input.save_path, overwrite: input.overwrite === true }
        : { writes: 'nothing (the export is printed)' }),
    };
  },
  async run(input, deps) {
    const { exportItems } = await import('../../core/exports/export.js');
    const { saveFile, savedWithResource } = await import('../../render/save.js');
    const out = await exportItems(deps, input, async (path, chunks) =>
      saveFile(path, chunks, {
        overwrite: input.overwrite === true,
        env: deps.env,
        fileRoot: deps.fileRoot,
        sharedState: deps.sharedState,
      }),
    );
    return savedWithResource(out, deps.fileRoot);
  },
});
