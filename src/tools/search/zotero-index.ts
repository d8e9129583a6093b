/**
 * `zotero_index` / `zot index build|update|status`: the local search index of a library (an
 * SQLite FTS5 file in the Zoteus data directory), built and kept up to date from library
 * versions. It changes no library data: it writes only its own file.
 */
import { join } from 'node:path';
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { libraryParams } from '../shared/params.js';
import { toolRef, onlyOn } from '../../core/call/refs.js';

const report = z.object({
  mode: z
    .enum(['build', 'update'])
    .describe('build: the index was empty (or rebuilt); update: brought up to date.'),
  upToDate: z.boolean().describe('The source had not changed since the last update: nothing was read.'),
  added: z.number().int(),
  changed: z.number().int(),
  deleted: z.number().int(),
  unchanged: z.number().int(),
  requests: z.number().int().describe('Requests made to the Zotero server (0 when read from zotero.sqlite).'),
  libraryVersion: z.number().int().nullable(),
  fulltext: z
    .object({ indexed: z.number().int(), empty: z.number().int(), failed: z.number().int() })
    .nullable()
    .describe(
      'Attachments whose full text was read this time (ZOTEUS_INDEX_FULLTEXT); null when not indexing full text.',
    ),
  vectors: z
    .object({ embedded: z.number().int(), model: z.string() })
    .nullable()
    .describe('Items embedded this time (ZOTEUS_EMBEDDINGS); null when embeddings are off.'),
});

const status = z.object({
  state: z
    .enum(['absent', 'partial', 'complete'])
    .describe('absent: never built; partial: a build stopped half-way (build resumes it); complete.'),
  building: z.boolean().describe('Another process is building it right now.'),
  items: z
    .number()
    .int()
    .describe('Items indexed, children (notes, attachments, annotations) and trash included.'),
  topLevel: z.number().int().describe('Top-level items not in the trash.'),
  trashed: z.number().int(),
  fulltextDocuments: z.number().int().describe('Attachments whose full text is indexed.'),
  vectors: z.object({ count: z.number().int(), model: z.string() }).nullable(),
  bytes: z.number().int().describe('Size of the index file.'),
  libraryVersion: z.number().int().nullable(),
  updatedAt: z.string().nullable(),
  source: z
    .string()
    .nullable()
    .describe('What it was built from: sqlite:PATH, web:PREFIX or localApi:PREFIX.'),
  upToDate: z
    .boolean()
    .nullable()
    .describe(
      'Whether zotero.sqlite is unchanged since the last update (null: only asking the Web API could tell).',
    ),
});

export default defineTool({
  name: 'zotero_index',
  title: 'Search index',
  summary:
    'Build, update or inspect the local full-text search index of a library (used by zotero_semantic_search).',
  description: [
    'Build, update or check the search index zotero_semantic_search uses (it self-updates; build ahead if large).',
    'Reads desktop data without a key, else Web API with ZOTERO_API_KEY; writes only the index file.',
    'A build elsewhere: retryable conflict.',
  ].join(' '),
  tier: 'write',
  writesFilesOnly: true,
  openWorld: true,
  idempotent: true,
  since: '0.2.0',
  toolset: 'search',
  inDefaultSet: true,
  cli: [
    {
      path: ['index', 'build'],
      preset: { action: 'build' },
      summary: 'Build the search index of a library (resumes an interrupted build; --rebuild starts over).',
    },
    {
      path: ['index', 'update'],
      preset: { action: 'update' },
      omit: ['rebuild'],
      summary: 'Bring the search index up to date, reading only what changed.',
    },
    {
      path: ['index', 'status'],
      preset: { action: 'status' },
      omit: ['rebuild', 'fulltext'],
      tier: 'read',
      summary: 'What the search index of a library holds, and whether it is up to date.',
    },
  ],
  input: z
    .object({
      action: z.enum(['build', 'update', 'status']),
      rebuild: z
        .boolean()
        .optional()
        .describe(
          onlyOn('mcp', 'build: start over.') +
            onlyOn('cli', 'build only: empty the index and read the whole library again.'),
        ),
      fulltext: z
        .boolean()
        .optional()
        .describe(
          onlyOn('mcp', 'Default: ZOTEUS_INDEX_FULLTEXT.') +
            onlyOn(
              'cli',
              'Index attachments’ full text this time (default: ZOTEUS_INDEX_FULLTEXT, false unless set).',
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    action: z.enum(['build', 'update', 'status']),
    library: z.string().describe('The library, as users/ID or groups/ID.'),
    backend: z.enum(['web', 'localApi', 'sqlite']).describe('What the index reads the library through.'),
    path: z.string().describe('The index file.'),
    report: report.nullable().describe('What this build or update did; null for status.'),
    status,
  }),
  plan(input, deps) {
    return {
      action: input.action,
      ...(input.rebuild ? { rebuild: true } : {}),
      index_dir: join(deps.config.dataDir, 'index'),
      fulltext: input.fulltext ?? deps.config.indexFulltext,
      embeddings: deps.config.embeddings,
      writes: 'only the index file of the library (no library data changes)',
    };
  },
  summarize(out) {
    const s = out.status;
    const what = `${s.items.toLocaleString('en-US')} items (${s.topLevel.toLocaleString('en-US')} top-level)`;
    if (out.action === 'status') {
      if (s.state === 'absent')
        return `No search index for ${out.library} yet${s.building ? ' (being built now)' : ''}.`;
      const fresh = s.upToDate === null ? '' : s.upToDate ? ', up to date' : ', out of date';
      return `Search index of ${out.library}: ${s.state}, ${what}${fresh}${s.building ? ', being built now' : ''}.`;
    }
    const r = out.report!;
    if (r.upToDate) return `Search index of ${out.library} is up to date: ${what}.`;
    return `Search index of ${out.library} ${r.mode === 'build' ? 'built' : 'updated'}: ${r.added} added, ${r.changed} changed, ${r.deleted} deleted (${r.requests} requests); ${what}.`;
  },
  async run(input, deps) {
    const { indexedLibrary, indexStatus, runIndexUpdate } =
      await import('../../core/search-index/service.js');
    const args = { library_id: input.library_id, library_type: input.library_type };
    const lib = await indexedLibrary(deps, args);
    let result = null;
    if (input.action !== 'status') {
      if (input.action === 'update') {
        const before = await indexStatus(lib);
        if (before.state === 'absent') {
          const { ZoteusError } = await import('../../core/errors.js');
          throw new ZoteusError('not_found', `${lib.library} has no search index yet.`, {
            hint: `Build it first: ${toolRef('zotero_index', { action: 'build' })}.`,
          });
        }
      }
      result = await runIndexUpdate(deps, args, lib, {
        rebuild: input.rebuild === true,
        ...(input.fulltext !== undefined ? { fulltext: input.fulltext } : {}),
      });
    }
    return {
      action: input.action,
      library: lib.library,
      backend: lib.backend,
      path: lib.path,
      report: result,
      status: await indexStatus(lib),
    };
  },
});
