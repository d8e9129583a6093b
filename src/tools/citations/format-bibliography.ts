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
  title: 'Format citations and bibliographies (read-only)',
  summary: 'Format items as a bibliography or an in-text citation in any CSL style (APA by default).',
  description: [
    'Read-only; changes nothing. Formats items of the library in a CSL citation style with citeproc-js, the engine',
    'Zotero uses: mode "bibliography" (default) gives one entry per item in the style’s order; mode "citation" gives the',
    'in-text citation (or footnote, for a note style) of one cluster of items, with locators ("(Church & White, 2013, p.',
    '12; Vaswani et al., 2017)"). Items: item_keys, or citations (each {item_key, locator, label, prefix, suffix,',
    'suppress_author}: a citation cluster in order; label is page by default), or for a bibliography collection_key or q',
    '(a search: words in title, creators and year), paged by start/limit. style: a Zotero style repository id (apa,',
    'chicago-author-date, ieee, nature, vancouver, modern-language-association, harvard-cite-them-right, …) or a .csl',
    'path; default ZOTEUS_CITATION_STYLE, else apa; zotero_styles lists what works offline (others are downloaded once).',
    'locale (en-US, de-DE, fr-FR…) defaults to the style’s. format: text (default), html or markdown. Result: text (the',
    'whole bibliography or the citation), entries [{item_key, text}], the style, locale and engine used, failed',
    '({index, key, code, message, reason, retryable}: a key that names no item, or a note or attachment, while the others',
    'are still formatted), warnings. The same items give the same bytes. engine: "local" (default) is citeproc-js in Zoteus',
    'and works offline on every backend; "zotero" has Zotero itself format them through the Web API or the desktop app’s',
    'local API (exactly what Zotero produces; each entry formatted on its own, in the order given or listed; one item per',
    'citation, without locators; refused for a library read only from zotero.sqlite). To find items use',
    'zotero_search_items; for BibTeX, RIS or CSL-JSON files use zotero_export.',
  ].join(' '),
  tier: 'read',
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
        .describe('Items to format, by key (a key that names no item is one entry of failed).'),
      citations: z
        .array(
          z
            .object({
              item_key: z.string().max(64).describe('The cited item.'),
              locator: z.string().max(100).optional().describe('Where in it: "12", "12-14".'),
              label: z.enum(LOCATOR_LABELS).optional().describe('What the locator counts (default page).'),
              prefix: z.string().max(200).optional().describe('Text before the cite ("see").'),
              suffix: z.string().max(200).optional().describe('Text after it.'),
              suppress_author: z.boolean().optional().describe('Leave the author out ("(2013)").'),
            })
            .strict(),
        )
        .max(CITE_MAX_ITEMS)
        .optional()
        .describe('One citation cluster, in order (mode "citation"); instead of item_keys.'),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe('Format the items of this collection (bibliography only).'),
      q: z.string().max(500).optional().describe('Format the items a search finds (bibliography only).'),
      mode: z
        .enum(['bibliography', 'citation'])
        .optional()
        .describe('"bibliography" (default; "citation" when citations are given) or "citation".'),
      style: z.string().max(1000).optional().describe('A CSL style id or a .csl path (default apa).'),
      locale: z
        .string()
        .max(35)
        .optional()
        .describe('A locale tag, e.g. en-US or de-DE (default the style’s).'),
      format: z.enum(CITATION_FORMATS).optional().describe('text (default), html or markdown.'),
      locators: z
        .array(z.string().max(100))
        .optional()
        .describe('Mode citation: one locator per item key, in order ("12", "page 12-14", "chapter 3").'),
      engine: z
        .enum(ENGINES)
        .optional()
        .describe(
          'local (default): citeproc-js in Zoteus, offline, every backend; zotero: Zotero’s own renderer (Web API or local API).',
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
