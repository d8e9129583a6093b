/**
 * `zotero_format_bibliography` / `zot cite KEY… [--style S] [--mode citation] [--locator L]…`:
 * items formatted in a CSL style by citeproc-js, a bibliography or one in-text citation.
 */
import * as z from 'zod';
import {
  CITATION_FORMATS,
  CITE_DEFAULT_LIMIT,
  CITE_MAX_ITEMS,
  LOCATOR_LABELS,
} from '../../core/citations/constants.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, failedList } from '../shared/output.js';
import { libraryParams, pagingParams, zoteroKey } from '../shared/params.js';
import { continuation } from '../shared/text.js';

const PAGE = { rows: 'Items', default: CITE_DEFAULT_LIMIT, max: CITE_MAX_ITEMS } as const;

const styleRef = z.object({
  id: z.string().describe('The style’s short id (`apa`), or the path of its .csl file.'),
  title: z.string().describe('The style’s title.'),
  source: z
    .string()
    .describe(
      'Where it came from: path, installed, cache, download or bundled; zotero when Zotero formatted with its own copy.',
    ),
});

/** The same as core/citations/zotero-engine.ts (not imported: the declaration loads without it). */
const ENGINES = ['local', 'zotero'] as const;

export default defineTool({
  name: 'zotero_format_bibliography',
  title: 'Format citations',
  summary: 'Format items as a bibliography or an in-text citation in any CSL style (APA by default).',
  description: [
    'Format items as a bibliography or citation in a CSL style, to paste; BibTeX/RIS: zotero_export.',
    'Desktop data without a key, else Web API with ZOTERO_API_KEY. Give item_keys' +
      onlyOn('mcp', ', citations (one cluster)') +
      ', collection_key or q. Style ids: zotero_styles. Unknown keys: failed[].',
  ].join(' '),
  tier: 'read',
  // A .csl or .xml path, as styles.ts's isStylePath says; an id is looked up, never read from disk.
  serverPaths: {
    style: { instead: 'a style id (apa, ieee, …)', isPath: (v) => /\.(csl|xml)$/i.test(v.trim()) },
  },
  openWorld: true,
  since: '0.2.0',
  toolset: 'citations',
  inDefaultSet: true,
  cli: [
    {
      path: ['cite'],
      args: ['item_keys'],
      omit: ['citations'],
      flags: { collection_key: 'collection', locators: 'locator' },
      summary:
        'Format items in a CSL style: a bibliography, or an in-text citation with --mode citation (--locator "page 12").',
    },
  ],
  input: z
    .object({
      item_keys: z
        .array(z.string().max(64))
        .max(CITE_MAX_ITEMS)
        .optional()
        .describe(
          onlyOn('cli', 'Items to format, by key (a key that names no item is one entry of failed).'),
        ),
      citations: z
        .array(
          z
            .object({
              item_key: z.string().max(64),
              locator: z.string().max(100).optional(),
              label: z.enum(LOCATOR_LABELS).optional().meta({ default: 'page' }),
              prefix: z.string().max(200).optional(),
              suffix: z.string().max(200).optional(),
              suppress_author: z.boolean().optional(),
            })
            .strict(),
        )
        .max(CITE_MAX_ITEMS)
        .optional(),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Format the items of this collection (bibliography only).')),
      q: z
        .string()
        .max(500)
        .optional()
        .describe(onlyOn('cli', 'Format the items a search finds (bibliography only).')),
      mode: z
        .enum(['bibliography', 'citation'])
        .optional()
        .describe(
          onlyOn('cli', '"bibliography" (default; "citation" when citations are given) or "citation".'),
        ),
      style: z
        .string()
        .max(1000)
        .optional()
        .describe(
          onlyOn('mcp', 'apa, ieee... or a .csl path.') +
            onlyOn('cli', 'A CSL style id (apa, ieee, …) or a .csl path (default apa).'),
        ),
      locale: z
        .string()
        .max(35)
        .optional()
        .describe(onlyOn('cli', 'A locale tag, e.g. en-US or de-DE (default the style’s).')),
      format: z
        .enum(CITATION_FORMATS)
        .optional()
        .meta({ default: 'text' })
        .describe(onlyOn('cli', 'text (default), html or markdown.')),
      locators: z
        .array(z.string().max(100))
        .optional()
        .describe(
          onlyOn('mcp', 'Per item key.') +
            onlyOn(
              'cli',
              `${paramRef('mode', 'citation')}: one locator per item key, in order ("12", "page 12-14", "chapter 3").`,
            ),
        ),
      engine: z
        .enum(ENGINES)
        .optional()
        .meta({ default: 'local' })
        .describe(
          onlyOn(
            'cli',
            'local (default): citeproc-js in Zoteus, offline, every backend; zotero: Zotero’s own renderer (Web API or local API).',
          ),
        ),
      ...pagingParams(PAGE),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    mode: z.enum(['bibliography', 'citation']),
    engine: z
      .enum(ENGINES)
      .describe('Which engine ran: local (citeproc-js in Zoteus) or zotero (Zotero’s own renderer).'),
    style: styleRef
      .extend({
        class: z.enum(['in-text', 'note']),
        hasBibliography: z.boolean(),
        parent: styleRef.optional().describe('The independent style a dependent one is formatted with.'),
        citationFormat: z.string().optional(),
      })
      .describe('The style used.'),
    locale: z.string().describe('The locale the engine ran in.'),
    format: z.enum(CITATION_FORMATS),
    text: z.string().describe('The whole bibliography (one entry per line) or the citation.'),
    entries: z
      .array(z.object({ item_key: z.string(), text: z.string() }))
      .describe('Bibliography entries in the style’s order (empty in mode citation).'),
    succeeded: z.array(z.string()).describe('The item keys formatted.'),
    failed: failedList,
    warnings: z.array(z.string()).describe('What did not go as asked but did not stop the work.'),
    totalResults: z.number().int().optional().describe('Collection or search: the items that match.'),
    nextStart: z.number().int().optional().describe('Collection or search: where the next page starts.'),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'The size bound (about 40 KB) cut the bibliography short: go on from nextStart or remaining.',
      ),
    remaining: z
      .array(z.string())
      .optional()
      .describe('Keys given that did not fit in this answer: ask again with them.'),
    ...answeredFields,
  }),
  summarize: (out) => {
    const what =
      out.mode === 'citation'
        ? `Citation of ${plural(out.succeeded.length, 'item')}`
        : `Bibliography of ${plural(out.entries.length, 'item')}`;
    const failed = out.failed.length ? `; ${out.failed.length} failed (see failed)` : '';
    const page =
      out.totalResults !== undefined ? ` ${plural(out.totalResults, 'item')} match.${continuation(out)}` : '';
    const by = out.engine === 'zotero' ? ', formatted by Zotero' : '';
    return `${what} in ${out.style.title} (${out.locale}, ${out.format}${by})${failed}.${page}`;
  },
  // Printed as it is, one entry per line: copied from the terminal, it pastes whole.
  text: (out) => ({ document: `${out.text}\n` }),
  async run(input, deps) {
    const { formatBibliography } = await import('../../core/citations/cite.js');
    return formatBibliography(deps, input);
  },
});
