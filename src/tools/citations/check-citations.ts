/**
 * `zotero_check_citations` / `zot bibcheck FILE… [--write-bib PATH]`: the citation keys of
 * manuscripts checked against the library. Changes nothing in the library; with a .bib to
 * write it writes a local file, hence tier `write` with `WRITES FILES` (available in read-only
 * mode). On a shared deployment a manuscript comes as text (a path is refused: serverPaths);
 * the .bib is saved only inside the caller's own folder and served back as a resource.
 */
import * as z from 'zod';
import { checkCitations, checkCitationsInput } from '../../core/citations/check.js';
import { paramRef, onlyOn } from '../../core/call/refs.js';
import { defineTool, type Deps } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { fileExists, resolveSavePath } from '../../render/save.js';
import { answeredFields, failedEntry, provenanceField } from '../shared/output.js';
import { libraryParams, PROVENANCE } from '../shared/params.js';

/** The same as core/citations/check.ts's MANUSCRIPT_KINDS (spelled out for the schema). */
const KINDS = ['tex', 'aux', 'markdown', 'bib'] as const;
const SOURCES = ['extra', 'field', 'better-bibtex', 'generated'] as const;

/**
 * A manuscript path, as the command line means it (relative to the working directory, `~`
 * the home folder). On a shared deployment the pipeline refuses `files` before this runs
 * (serverPaths): nothing is read from the server's disk for a caller.
 */
function manuscriptPath(raw: string, deps: Pick<Deps, 'env'>): string {
  return resolveSavePath(raw, { fileRoot: undefined, env: deps.env, field: 'files' });
}

const titled = { item_key: z.string(), title: z.string() };

export default defineTool({
  name: 'zotero_check_citations',
  title: 'Check citation keys',
  summary:
    'Check the citation keys of .tex, .aux, Markdown or .bib files against the library; --write-bib writes a .bib of them.',
  description: [
    "Check a manuscript's citation keys (LaTeX, .aux, Markdown, .bib) against those zotero_export writes: found,",
    'missing, ambiguous, unstable; failed[]: missing and ambiguous. Desktop data without a key, else Web API with',
    'ZOTERO_API_KEY. Give files (paths on the Zoteus machine) or text with its kind. write_bib saves a .bib of the',
    'keys found (an existing file only with overwrite). A .bib of chosen items: zotero_export.',
  ].join(' '),
  tier: 'write',
  writesFilesOnly: true,
  openWorld: true,
  // The same manuscripts and library give the same answer and bytes; a repeated write is refused or overwrites.
  idempotent: true,
  since: '0.2.0',
  toolset: 'citations',
  cli: [
    {
      path: ['bibcheck'],
      args: ['files'],
      files: { text: 'text' },
      summary:
        'Check the citation keys of manuscripts (.tex, .aux, .md, .bib) against the library; --write-bib PATH writes a .bib of those found.',
    },
  ],
  input: z
    .object({
      files: z
        .array(z.string().min(1).max(1024))
        .max(100)
        .optional()
        .describe(
          onlyOn('mcp', `Known by extension, else set ${paramRef('kind')}.`) +
            onlyOn(
              'cli',
              `Manuscripts to check, by path: .tex, .ltx, .latex, .aux, .md, .markdown, .qmd, .rmd or .bib (another extension needs ${paramRef('kind')}).`,
            ),
        ),
      text: z
        .string()
        .optional()
        .describe(
          onlyOn(
            'cli',
            `A manuscript’s own text, instead of or besides the files (needs ${paramRef('kind')}).`,
          ),
        ),
      kind: z
        .enum(KINDS)
        .optional()
        .describe(
          onlyOn(
            'cli',
            `How to read ${paramRef('text')}, and any file whose extension is none of those known: tex, aux, markdown or bib.`,
          ),
        ),
      write_bib: z
        .string()
        .min(1)
        .max(1024)
        .optional()
        .describe(onlyOn('cli', 'Also write a BibTeX file of the cited items found to this path.')),
      overwrite: z
        .boolean()
        .optional()
        .meta({ default: false })
        .describe(
          onlyOn('cli', `Allow ${paramRef('write_bib')} to replace an existing file (default false).`),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    manuscripts: z
      .array(
        z.object({
          file: z.string().describe('The path as given, or "(text)".'),
          kind: z.enum(KINDS),
          keys: z.number().int().describe('Distinct keys it cites.'),
          citations: z.number().int().describe('Citations of those keys, in all.'),
        }),
      )
      .describe('What was read.'),
    cited: z.number().int().describe('Distinct keys cited over all manuscripts.'),
    counts: z
      .object({
        found: z.number().int(),
        missing: z.number().int(),
        ambiguous: z.number().int(),
        unstable: z.number().int(),
      })
      .describe('How many keys of each kind, whatever the lists hold.'),
    found: z
      .array(
        z.object({
          citation_key: z.string(),
          ...titled,
          source: z.enum(SOURCES).describe('Where the item’s key comes from.'),
          in_trash: z.boolean().optional().describe('The item is in the trash.'),
        }),
      )
      .describe('Keys exactly one item has.'),
    missing: z
      .array(
        z.object({
          citation_key: z.string(),
          file: z.string().describe('Where it is first cited.'),
          line: z.number().int(),
          did_you_mean: z.array(z.string()).describe('The library’s closest keys.'),
        }),
      )
      .describe('Keys no item has.'),
    ambiguous: z
      .array(z.object({ citation_key: z.string(), items: z.array(z.object(titled)) }))
      .describe('Keys several items have as their own.'),
    unstable: z
      .array(z.object({ citation_key: z.string(), ...titled }))
      .describe('Keys found only through Zotero’s formula (they change with the item’s metadata).'),
    succeeded: z.array(z.string()).describe('The citation keys found (those of found).'),
    failed: z
      .array(failedEntry.extend({ key: z.string().describe('The citation key.') }))
      .describe('One entry per missing (404, not_found) or ambiguous (409, conflict) key.'),
    saved: z
      .object({
        path: z.string(),
        bytes: z.number().int(),
        entries: z.number().int(),
        resource: z.string().optional().describe('On a shared server: the MCP resource that reads it back.'),
      })
      .optional()
      .describe('The .bib written, its size and its number of entries.'),
    betterBibtex: z.string().describe('Whether Better BibTeX’s keys were used, and from where or why not.'),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'A list was cut to the size bound (about 30 KB of rows, 500 rows a list): counts holds the totals.',
      ),
    warnings: z
      .array(z.string())
      .describe('What to know beyond the lists: unstable keys, items in the trash, the .bib.'),
    provenance: provenanceField,
    ...answeredFields,
  }),
  summarize: (out) => {
    const { found, missing, ambiguous, unstable } = out.counts;
    const files =
      out.manuscripts.length === 1
        ? (out.manuscripts[0]?.file ?? '')
        : plural(out.manuscripts.length, 'manuscript');
    const parts = [`${found} found${unstable ? ` (${unstable} unstable)` : ''}`, `${missing} missing`];
    if (ambiguous) parts.push(`${ambiguous} ambiguous`);
    const saved = out.saved
      ? ` Wrote ${out.saved.path} (${plural(out.saved.entries, 'entry', 'entries')}).`
      : '';
    return `${plural(out.cited, 'cited key')} in ${files}: ${parts.join(', ')}.${saved}`;
  },
  text: (out) => {
    const lines: string[] = [];
    for (const m of out.missing) {
      const mean = m.did_you_mean.length ? ` (did you mean ${m.did_you_mean.join(', ')}?)` : '';
      lines.push(`missing    ${m.citation_key}  ${m.file}:${m.line}${mean}`);
    }
    for (const a of out.ambiguous)
      lines.push(`ambiguous  ${a.citation_key}  ${a.items.map((i) => i.item_key).join(', ')}`);
    for (const u of out.unstable) lines.push(`unstable   ${u.citation_key}  ${u.item_key}  ${u.title}`);
    for (const f of out.found)
      if (f.source !== 'generated') lines.push(`found      ${f.citation_key}  ${f.item_key}  ${f.title}`);
    if (out.truncated) lines.push('(lists cut to the size bound: counts has the totals)');
    for (const w of out.warnings) lines.push(`note: ${w}`);
    return lines.length ? `${lines.join('\n')}\n` : '';
  },
  serverPaths: { files: { instead: `${paramRef('text')} with ${paramRef('kind')}` } },
  check: (input) => checkCitationsInput(input),
  plan(input, deps) {
    const fileRoot = (deps as Partial<Deps>).fileRoot;
    const bib =
      input.write_bib === undefined
        ? undefined
        : resolveSavePath(input.write_bib, { fileRoot, env: deps.env, field: 'write_bib' });
    return {
      manuscripts: [...(input.files ?? []), ...(input.text !== undefined ? ['(text)'] : [])],
      ...(bib !== undefined
        ? { write_bib: bib, write_bib_exists: fileExists(bib), overwrite: input.overwrite === true }
        : { writes: 'nothing (the check is printed)' }),
    };
  },
  async run(input, deps) {
    const out = await checkCitations(deps, input, {
      resolve: async (raw) => manuscriptPath(raw, deps),
      save: async (path, chunks) => {
        const { saveFile } = await import('../../render/save.js');
        return saveFile(path, chunks, {
          overwrite: input.overwrite === true,
          env: deps.env,
          fileRoot: deps.fileRoot,
          sharedState: deps.sharedState,
          field: 'write_bib',
        });
      },
    });
    const { savedWithResource } = await import('../../render/save.js');
    return { ...savedWithResource(out, deps.fileRoot), provenance: PROVENANCE };
  },
});
