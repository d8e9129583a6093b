/**
 * `zotero_semantic_search` / `zot semantic-search QUERY`: ranked retrieval over the local
 * search index (BM25 keyword ranking, plus embedding vectors when configured, merged with
 * reciprocal-rank fusion), over one library or several.
 */
import * as z from 'zod';
import { checkItemTypeFilter } from '../../core/items/read/filters.js';
import { localSchema } from '../../core/items/schema.js';
import { TEXT_COLUMNS } from '../../core/search-index/columns.js';
import { defineTool } from '../../core/tool.js';
import { provenanceField } from '../shared/output.js';
import { PROVENANCE, libraryParams, zoteroKey } from '../shared/params.js';

const FIELDS = TEXT_COLUMNS;

const hit = z.object({
  key: z.string().describe('The top-level item (zotero_get_item reads it).'),
  library: z.string().describe('The library it is in, as users/ID or groups/ID.'),
  title: z.string(),
  itemType: z.string(),
  score: z.number().describe('Reciprocal-rank fusion score: higher is better; comparable within one answer.'),
  ranks: z.object({
    keyword: z
      .number()
      .int()
      .nullable()
      .describe('Rank in the keyword (BM25) ranking, 1 = best; null: not in it.'),
    vector: z
      .number()
      .int()
      .nullable()
      .describe('Rank in the vector ranking; null: not in it or no vectors.'),
  }),
  matched: z
    .object({
      field: z
        .enum(FIELDS)
        .describe('Where the words matched best: fulltext, notes and annotations are passages.'),
      itemKey: z
        .string()
        .describe('The item holding it: the hit itself, or its child note, annotation or attachment.'),
      snippet: z.string().describe('The matching passage, words of the query in «».'),
    })
    .nullable()
    .describe('null when only the vector ranking found the item.'),
});

export default defineTool({
  name: 'zotero_semantic_search',
  title: 'Ranked search of the library (read-only)',
  summary:
    'Ranked hybrid search: BM25 over titles, abstracts, tags, notes, annotations (and full text), plus vectors.',
  description: [
    'Read-only for the library (it may build or update Zoteus’ own local search index first). Ranks the top-level',
    'items of a library by relevance to a free-text query: keyword ranking (BM25 over title, creators, abstract,',
    'tags, other fields, your notes, PDF annotations and, when indexed with ZOTEUS_INDEX_FULLTEXT, attachments’ full',
    'text; a child note or passage counts for its item) always works offline; with ZOTEUS_EMBEDDINGS set (openai or',
    'ollama) a vector ranking is merged in by reciprocal-rank fusion. Each hit gives the key, title, library, score,',
    'both ranks and what matched (field, the child item holding it, a snippet): read passages further with',
    'zotero_get_fulltext, then cite them with zotero_evidence_table. libraries searches several libraries at once',
    '(hits labelled by library). libraries[].vectors says whether vectors were used and, when not, why: results are',
    'never silently keyword-only. The index is brought up to date before searching; a library without one is',
    'indexed now when small, else in the background (libraries[].index "building"; search again later). Use',
    'zotero_search_items for exact filtering, listing and paging.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  cli: [
    {
      path: ['semantic-search'],
      args: ['q'],
      flags: { collection_key: 'collection', item_type: 'type' },
      summary:
        'Ranked search of a library: BM25 keywords (+ vectors when configured), with matching passages.',
    },
  ],
  input: z
    .object({
      q: z
        .string()
        .trim()
        .min(1)
        .max(1000)
        .describe('What to look for, in words (a question, a phrase, key terms).'),
      limit: z.number().int().min(1).max(50).optional().describe('Hits to return (default 10, at most 50).'),
      mode: z
        .enum(['hybrid', 'keyword', 'vector'])
        .optional()
        .describe(
          'hybrid (default): keywords plus vectors when configured; keyword: BM25 only; vector: vectors only.',
        ),
      item_type: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .describe('Only items of this type (e.g. journalArticle).'),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe('Only items directly in this collection.'),
      libraries: z
        .array(z.object(libraryParams).strict())
        .min(1)
        .max(10)
        .optional()
        .describe(
          'Several libraries to search at once ({library_id, library_type} each); overrides library_id.',
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    q: z.string().describe('The query, as searched.'),
    mode: z.enum(['hybrid', 'keyword', 'vector']),
    hits: z.array(hit),
    libraries: z
      .array(
        z.object({
          library: z.string(),
          backend: z.string(),
          index: z
            .enum(['ready', 'updated', 'built', 'building'])
            .describe(
              'ready: used as it was; updated: brought up to date first; built: built now; building: not searched yet.',
            ),
          items: z.number().int().describe('Top-level items in the index.'),
          vectors: z.object({
            used: z.boolean(),
            model: z.string().optional(),
            reason: z.string().optional().describe('Why vectors were not used.'),
          }),
          message: z.string().optional(),
        }),
      )
      .describe('Each library searched, its index and whether vectors were used.'),
    provenance: provenanceField,
  }),
  rows: 'hits',
  summarize(out) {
    const vec = out.libraries.some((l) => l.vectors.used) ? 'keywords + vectors' : 'keywords only';
    const building = out.libraries.filter((l) => l.index === 'building').map((l) => l.library);
    return `${out.hits.length} hit${out.hits.length === 1 ? '' : 's'} for ${JSON.stringify(out.q)} (${vec}; ${out.libraries
      .filter((l) => l.index !== 'building')
      .map((l) => l.library)
      .join(', ')})${building.length ? `; still indexing ${building.join(', ')}` : ''}.`;
  },
  // An item type Zotero does not have would match nothing: refused offline, with the closest.
  check(input, { config }) {
    if (input.item_type !== undefined) checkItemTypeFilter(localSchema(config), input.item_type);
  },
  async run(input, deps) {
    const { semanticSearch } = await import('../../core/search-index/semantic.js');
    return { ...(await semanticSearch(deps, input)), provenance: PROVENANCE };
  },
});
