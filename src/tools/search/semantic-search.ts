/**
 * `zotero_semantic_search` / `zot semantic-search QUERY`: ranked retrieval over the local
 * search index (BM25 keyword ranking, plus embedding vectors when configured, merged with
 * reciprocal-rank fusion), over one library or several. The CLI's table view is a list for
 * people (`text`): each hit's title, creators and year, score, and the passage that matched.
 */
import * as z from 'zod';
import { checkItemTypeFilter } from '../../core/items/read/filters.js';
import { localSchema } from '../../core/items/schema.js';
import { TEXT_COLUMNS } from '../../core/search-index/columns.js';
import { checkRankedQuery } from '../../core/search-index/stopwords.js';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { provenanceField } from '../shared/output.js';
import { PROVENANCE, libraryParams, zoteroKey } from '../shared/params.js';

const FIELDS = TEXT_COLUMNS;

const hit = z.object({
  key: z.string().describe('The top-level item (zotero_get_item reads it).'),
  library: z.string().describe('The library it is in, as users/ID or groups/ID.'),
  title: z.string(),
  creatorSummary: z
    .string()
    .describe('Its creators as Zotero sums them up (Smith, Smith and Jones, Smith et al.).'),
  year: z.string().nullable().describe('The year of its date; null when it has none.'),
  itemType: z.string(),
  score: z
    .number()
    .describe(
      'Higher is better, comparable within one answer. keyword mode: the BM25 score (of the item or its best-matching child); vector: the cosine similarity with the query (-1 to 1); hybrid: the fusion score, Σ 1/(60 + rank) over both rankings.',
    ),
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

const output = z.object({
  q: z.string().describe('The query, as searched.'),
  mode: z
    .enum(['hybrid', 'keyword', 'vector'])
    .describe(
      'What ran (not what was asked): keyword when no vectors were used (libraries[].vectors.reason says why), hybrid when vectors were merged in, vector for vectors alone. It decides what a hit’s score is.',
    ),
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
});

type Output = z.infer<typeof output>;
type Hit = Output['hits'][number];

export default defineTool({
  name: 'zotero_semantic_search',
  title: 'Relevance search',
  summary:
    'Ranked hybrid search: BM25 over titles, abstracts, tags, notes, annotations (and full text), plus vectors.',
  description: [
    "Rank items by meaning and words for a question, with the passage that matched. Zoteus' index,",
    'refreshed from desktop data without a key, else Web API with ZOTERO_API_KEY; index "building": retry, or run',
    'zotero_index. Exact filters, sorting, paging: zotero_search_items. Read a hit: zotero_get_fulltext.',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.2.0',
  toolset: 'search',
  inDefaultSet: true,
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
        .describe(onlyOn('cli', 'What to look for, in words (a question, a phrase, key terms).')),
      limit: z
        .number()
        .int()
        .min(1)
        .max(50)
        .optional()
        .meta({ default: 10 })
        .describe(onlyOn('cli', 'Hits to return (default 10, at most 50).')),
      mode: z
        .enum(['hybrid', 'keyword', 'vector'])
        .optional()
        .meta({ default: 'hybrid' })
        .describe(
          onlyOn('mcp', 'vector needs ZOTEUS_EMBEDDINGS.') +
            onlyOn(
              'cli',
              'hybrid (default): keywords plus vectors when configured; keyword: BM25 only; vector: vectors only (needs ZOTEUS_EMBEDDINGS).',
            ),
        ),
      item_type: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .describe(onlyOn('cli', 'Only items of this type (e.g. journalArticle).')),
      collection_key: zoteroKey('collection_key')
        .optional()
        .describe(onlyOn('cli', 'Only items directly in this collection.')),
      libraries: z
        .array(
          // The pair as the top-level inputs describe it: said once, not again in every entry.
          z
            .object({
              library_id: libraryParams.library_id.meta({ description: undefined }),
              library_type: libraryParams.library_type.meta({ description: undefined }),
            })
            .strict(),
        )
        .min(1)
        .max(10)
        .optional()
        .describe(
          onlyOn('mcp', `Several at once; overrides ${paramRef('library_id')}.`) +
            onlyOn(
              'cli',
              `Several libraries to search at once (a ${paramRef('library_id')} and ${paramRef('library_type')} each); overrides ${paramRef('library_id')}.`,
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output,
  rows: 'hits',
  summarize: summary,
  text: (out, input) =>
    [...wrap(summary(out, input), ''), ...out.hits.map((h, i) => hitText(h, i, out)), ...notices(out)].join(
      '\n',
    ),
  // An item type Zotero does not have would match nothing: refused offline, with the closest.
  // So is a query with no word, or (unless ranked by vectors alone) of stop words only.
  check(input, { config }) {
    checkRankedQuery(input.q, input.mode ?? 'hybrid', config.embeddings !== 'off');
    if (input.item_type !== undefined) checkItemTypeFilter(localSchema(config), input.item_type);
  },
  async run(input, deps) {
    const { semanticSearch } = await import('../../core/search-index/semantic.js');
    return { ...(await semanticSearch(deps, input)), provenance: PROVENANCE };
  },
});

/** What ran, in words, and what the score is: the same `mode` the answer carries. */
const RAN: Record<Output['mode'], string> = {
  keyword: 'keywords; BM25 scores',
  vector: 'vectors; cosine similarity scores',
  hybrid: 'keywords + vectors; rank fusion scores',
};

/** "3 hits for "ice" in users/1 (keywords only: ZOTEUS_EMBEDDINGS is off; BM25 scores)." */
function summary(out: Output, input: { mode?: Output['mode'] | undefined }): string {
  const asked = input.mode ?? 'hybrid';
  const why = out.libraries.find((l) => !l.vectors.used && l.index !== 'building')?.vectors.reason;
  const ran =
    out.mode === 'keyword' && asked !== 'keyword'
      ? `keywords only${why ? `: ${why.replace(/\.$/, '')}` : ''}; BM25 scores`
      : RAN[out.mode];
  const searched = out.libraries.filter((l) => l.index !== 'building').map((l) => l.library);
  const building = out.libraries.filter((l) => l.index === 'building').map((l) => l.library);
  const n = out.hits.length;
  return `${n} hit${n === 1 ? '' : 's'} for ${JSON.stringify(out.q)} in ${searched.join(', ')} (${ran})${
    building.length ? `; still indexing ${building.join(', ')}` : ''
  }.`;
}

/** Width of the list: the CLI fits wider lines to a narrower terminal itself. */
const WIDTH = 80;
const INDENT = '    ';

/** Words of `text` in lines of at most WIDTH characters, each starting with `indent`. */
function wrap(text: string, indent: string, first = indent): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && [...line].length + 1 + [...word].length > WIDTH) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  if (!empty) lines.push(line);
  return lines;
}

function scoreText(score: number, mode: Output['mode']): string {
  return mode === 'keyword' ? score.toFixed(2) : mode === 'vector' ? score.toFixed(3) : score.toFixed(4);
}

/**
 * One hit: its number and title, then creators · year · type · key · score (and the library
 * when several were searched), then where it matched and the passage, wrapped.
 */
function hitText(h: Hit, i: number, out: Output): string {
  const head = `${String(i + 1).padStart(2)}. `;
  const ranks =
    out.mode === 'hybrid'
      ? ` (keyword ${h.ranks.keyword === null ? '–' : `#${h.ranks.keyword}`}, vector ${
          h.ranks.vector === null ? '–' : `#${h.ranks.vector}`
        })`
      : '';
  const about = [
    h.creatorSummary,
    h.year ?? '',
    h.itemType,
    h.key,
    `score ${scoreText(h.score, out.mode)}${ranks}`,
    out.libraries.length > 1 ? h.library : '',
  ].filter(Boolean);
  const lines = [...wrap(h.title || '(untitled)', INDENT, head), ...wrap(about.join(' · '), INDENT)];
  if (h.matched) {
    const where =
      h.matched.itemKey === h.key ? h.matched.field : `${h.matched.field} (child ${h.matched.itemKey})`;
    lines.push(...wrap(`${where}: ${h.matched.snippet}`, INDENT));
  }
  return `\n${lines.join('\n')}`;
}

/** What a library's answer adds (still being indexed, a word too common to rank in full). */
function notices(out: Output): string[] {
  const said = out.libraries.filter((l) => l.message !== undefined);
  return said.length ? ['', ...said.flatMap((l) => wrap(`${l.library}: ${l.message}`, '  ', ''))] : [];
}
