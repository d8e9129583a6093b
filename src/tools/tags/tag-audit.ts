/**
 * `zotero_tag_audit` / `zot tag audit --vocabulary FILE|-`: the tags of a library or of some
 * collections checked against a controlled vocabulary, with `zot tag` commands to fix them.
 */
import * as z from 'zod';
import { jsonBytes, ROWS_BUDGET } from '../../core/items/read/bounds.js';
import { onlyOn, paramRef } from '../../core/call/refs.js';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { answeredFields, provenanceField } from '../shared/output.js';
import { PROVENANCE, libraryParams, zoteroKey } from '../shared/params.js';

const word = z.string().min(1).max(255);

interface Findings {
  unknown: unknown[];
  synonyms: unknown[];
  nearDuplicates: unknown[];
  suggestions: unknown[];
  missingTier: Array<{ items: string[] }>;
  truncated: boolean;
}

/**
 * The findings within the answer's size bound (about 40 KB of rows), whatever limit and the
 * number of tiers: the longest list is halved until they fit (totals still count them all).
 */
function bounded<T extends Findings>(out: T): T {
  let o = out;
  while (jsonBytes(o) > ROWS_BUDGET) {
    const lists: Array<[string, number]> = [
      ['unknown', o.unknown.length],
      ['synonyms', o.synonyms.length],
      ['nearDuplicates', o.nearDuplicates.length],
      ['suggestions', o.suggestions.length],
      ...o.missingTier.map((m, i): [string, number] => [`tier:${i}`, m.items.length]),
    ];
    const [name, length] = lists.reduce((a, b) => (b[1] > a[1] ? b : a));
    if (length <= 1) break;
    const keep = Math.floor(length / 2);
    if (name.startsWith('tier:')) {
      const at = Number(name.slice(5));
      o = {
        ...o,
        missingTier: o.missingTier.map((m, i) => (i === at ? { ...m, items: m.items.slice(0, keep) } : m)),
        truncated: true,
      };
    } else {
      const list = name as 'unknown' | 'synonyms' | 'nearDuplicates' | 'suggestions';
      o = { ...o, [list]: o[list].slice(0, keep), truncated: true };
    }
  }
  return o;
}

const entry = z.union([
  word,
  z
    .object({
      term: word,
      synonyms: z.array(word).max(100).optional(),
      tier: z.string().min(1).max(100).optional(),
    })
    .strict(),
]);

const summary = (out: {
  items: number;
  tags: number;
  backend: string;
  totals: { unknown: number; synonyms: number; nearDuplicates: number; suggestions: number };
  missingTier: Array<{ tier: string; count: number }>;
  complete: boolean;
}): string => {
  const findings = [
    plural(out.totals.unknown, 'unknown tag'),
    plural(out.totals.synonyms, 'synonym'),
    plural(out.totals.nearDuplicates, 'near-duplicate group'),
    ...out.missingTier.map((m) => `${plural(m.count, 'item')} without a "${m.tier}" tag`),
  ];
  return `Audited ${plural(out.tags, 'tag')} on ${plural(out.items, 'item')} (${out.backend}): ${findings.join(', ')}; ${plural(out.totals.suggestions, 'suggested command')}${out.complete ? '' : ' (incomplete read)'}.`;
};

export default defineTool({
  name: 'zotero_tag_audit',
  title: 'Audit tags',
  summary:
    'Check the tags of a library or collections against a controlled vocabulary; suggests zot tag commands.',
  description: [
    'Check tags against a vocabulary: unknown, synonyms, near-duplicates, items missing a tier; renames to apply',
    'with zotero_manage_tags (library-wide).',
    'Desktop without a key, else Web API (ZOTERO_API_KEY).',
  ].join(' '),
  tier: 'read',
  openWorld: true,
  since: '0.1.0',
  toolset: 'tags',
  inDefaultSet: true,
  cli: [
    {
      path: ['tag', 'audit'],
      summary: 'Audit tags against a vocabulary: zot tag audit --vocabulary FILE|- [--required-tiers T]…',
      files: { vocabulary: 'json' },
      // 0.1.0's spellings, for one release.
      deprecatedFlags: {
        'required-tier': { field: 'required_tiers', removedIn: '0.3.0' },
        scope: { fields: ['collection_keys', 'include_subcollections'], removedIn: '0.3.0' },
      },
    },
  ],
  input: z
    .object({
      vocabulary: z
        .array(entry)
        .min(1)
        .max(10_000)
        // The file's form, for people (the published schema shows the shape to a model).
        .describe(
          onlyOn(
            'cli',
            'A JSON list of terms: strings, or {"term": "Deep Learning", "synonyms": ["DL"], "tier": "method"}.',
          ),
        ),
      required_tiers: z
        .array(z.string().min(1).max(100))
        .max(50)
        .optional()
        .describe(
          onlyOn('mcp', 'Tiers every item needs a tag of.') +
            onlyOn(
              'cli',
              'Tiers every regular item in scope must have a tag from (each must be the tier of some term).',
            ),
        ),
      collection_keys: z
        .array(zoteroKey('A collection key'))
        .min(1)
        .max(100)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Audit only the items of these collections (their keys, as the collection listing gives them); omit for the whole library.',
          ),
        ),
      include_subcollections: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            `With ${paramRef('collection_keys')}: also the items of their subcollections, at any depth (default false).`,
          ),
        ),
      include_automatic: z
        .boolean()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Also audit automatic tags (type 1, added by importers and translators); default false.',
          ),
        ),
      limit: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .meta({ default: 100 })
        .describe(
          onlyOn('cli', 'At most this many entries in each listed finding (default 100, at most 1,000).'),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    items: z.number().int().describe('Top-level items audited.'),
    tags: z.number().int().describe('Distinct tags on them (automatic ones only with include_automatic).'),
    scope: z.object({
      collections: z
        .array(z.string())
        .nullable()
        .describe('The collections audited (subcollections included when asked); null: the whole library.'),
    }),
    unknown: z
      .array(
        z.object({
          tag: z.string(),
          items: z.number().int().describe('Items in scope carrying it.'),
          closest: z.string().optional().describe('The closest vocabulary term.'),
          match: z
            .enum(['variant', 'similar'])
            .optional()
            .describe(
              '"variant": the same after folding (rename it); "similar": a few letters apart (check first).',
            ),
        }),
      )
      .describe('Tags that are neither a term nor a synonym, most used first.'),
    synonyms: z
      .array(z.object({ tag: z.string(), preferred: z.string(), items: z.number().int() }))
      .describe('Tags that are synonyms: merge each into its preferred term.'),
    nearDuplicates: z
      .array(
        z.object({
          preferred: z
            .string()
            .describe('The spelling to keep: the vocabulary term, else the most used one.'),
          inVocabulary: z.boolean(),
          tags: z.array(z.object({ tag: z.string(), items: z.number().int() })),
        }),
      )
      .describe('Groups of tags equal after folding case, accents, hyphens/spaces and simple plurals.'),
    missingTier: z
      .array(
        z.object({
          tier: z.string(),
          count: z.number().int().describe('Regular items in scope without a tag of this tier.'),
          items: z.array(z.string()).describe('Their keys (at most limit).'),
        }),
      )
      .describe('One entry per required tier.'),
    suggestions: z
      .array(z.string())
      .describe('Ready `zot tag rename OLD NEW` commands; each renames across the whole library.'),
    totals: z
      .object({
        unknown: z.number().int(),
        synonyms: z.number().int(),
        nearDuplicates: z.number().int(),
        suggestions: z.number().int(),
      })
      .describe('Each finding counted in full, before limit.'),
    truncated: z.boolean().describe('True when limit, or the answer’s size bound, cut a list.'),
    complete: z.boolean().describe('False when a listing came back shorter than its total.'),
    message: z.string().optional(),
    ...answeredFields,
    provenance: provenanceField,
  }),
  summarize: summary,
  text: (out) =>
    [
      summary(out),
      ...out.synonyms.map((s) => `synonym   ${s.tag} → ${s.preferred} (${plural(s.items, 'item')})`),
      ...out.unknown.map(
        (u) =>
          `unknown   ${u.tag} (${plural(u.items, 'item')})${u.closest ? `; ${u.match === 'variant' ? 'variant of' : 'close to'} ${u.closest}` : ''}`,
      ),
      ...out.nearDuplicates.map(
        (g) => `near-dup  ${g.tags.map((t) => `${t.tag} (${t.items})`).join(', ')} → ${g.preferred}`,
      ),
      ...out.missingTier.map(
        (m) => `no ${m.tier}: ${m.items.join(' ')}${m.count > m.items.length ? ` … (${m.count})` : ''}`,
      ),
      ...(out.suggestions.length ? ['', 'Suggested:', ...out.suggestions.map((s) => `  ${s}`)] : []),
    ].join('\n'),
  async run(input, deps) {
    const { tagAudit } = await import('../../core/tags/audit.js');
    return bounded({ ...(await tagAudit(deps, input)), provenance: PROVENANCE });
  },
});
