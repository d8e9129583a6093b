/** `zotero_styles` / `zot styles [--q TEXT]`: the CSL citation styles and locales available offline. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { pagingParams } from '../shared/params.js';
import { continuation, counted } from '../shared/text.js';
import { onlyOn } from '../../core/call/refs.js';

const PAGE = { rows: 'Styles', default: 100, max: 250 } as const;

const sourceField = z
  .enum(['installed', 'cache', 'bundled'])
  .describe(
    'installed: in the Zotero desktop’s styles folder; cache: downloaded by Zoteus before; bundled: shipped with Zoteus.',
  );

function summary(
  out: { styles: unknown[]; totalResults: number; start: number; nextStart?: number | undefined },
  input: { q?: string | undefined },
): string {
  const what = input.q?.trim()
    ? `styles matching ${JSON.stringify(input.q.trim())}`
    : 'styles available offline';
  if (out.totalResults === 0) return `No ${what}.`;
  if (out.styles.length === 0)
    return `No ${what} on this page (start ${out.start}); there are ${out.totalResults} in total.`;
  return `Showing ${out.start + 1}–${out.start + out.styles.length} of ${counted(out.totalResults, what)}.${continuation(out)}`;
}

export default defineTool({
  name: 'zotero_styles',
  title: 'List styles',
  summary:
    'List the CSL citation styles available offline (installed in Zotero, downloaded, bundled) and the locales.',
  description: [
    'List CSL styles usable offline, and locales, for zotero_format_bibliography. Offline, no key. Any style',
    'repository id works there too.',
  ].join(' '),
  tier: 'read',
  openWorld: false,
  since: '0.2.0',
  toolset: 'citations',
  cli: [{ path: ['styles'], summary: 'List the citation styles available offline (--q TEXT finds one).' }],
  input: z
    .object({
      q: z
        .string()
        .max(255)
        .optional()
        .describe(
          onlyOn(
            'cli',
            'Only styles whose id or title contains every word of this text (case- and accent-insensitive).',
          ),
        ),
      ...pagingParams(PAGE),
    })
    .strict(),
  output: z.object({
    styles: z
      .array(
        z.object({
          id: z.string().describe('The style id to cite with (the Zotero style repository’s, e.g. "apa").'),
          title: z.string(),
          source: sourceField,
          dependent: z
            .boolean()
            .describe('A dependent style: a journal’s name for another style, which it is formatted with.'),
          parent: z.string().optional().describe('The independent style a dependent one is formatted with.'),
          class: z
            .enum(['in-text', 'note'])
            .describe('in-text: citations in the text; note: citations in footnotes.'),
          citationFormat: z.string().optional().describe('author-date, numeric, note, label or author.'),
          defaultLocale: z
            .string()
            .optional()
            .describe('The locale the style is written for, when it names one.'),
        }),
      )
      .describe('This page of the styles, sorted by id.'),
    totalResults: z.number().int().describe('Styles matching in total, not just this page.'),
    start: z.number().int().describe('The offset this page starts at.'),
    nextStart: z
      .number()
      .int()
      .optional()
      .describe('Where the next page starts (pass it as start); absent when this page is the last.'),
    defaultStyle: z.string().describe('The style used when none is given (ZOTEUS_CITATION_STYLE, else apa).'),
    repository: z
      .string()
      .describe('Where styles not available offline are downloaded from, once (ZOTEUS_STYLES_URL).'),
    locales: z
      .array(z.object({ tag: z.string().describe('e.g. "en-US", "de-DE".'), source: sourceField }))
      .describe('The CSL locales available offline; others are downloaded on first use.'),
  }),
  rows: 'styles',
  summarize: summary,
  text: (out, input) =>
    [
      summary(out, input),
      ...out.styles.map(
        (s) =>
          `${s.id.padEnd(40)} ${s.source.padEnd(9)} ${s.title}${s.dependent && s.parent ? `  (→ ${s.parent})` : ''}`,
      ),
      `Default style: ${out.defaultStyle}. Locales offline: ${out.locales.map((l) => l.tag).join(', ')}.`,
    ].join('\n'),
  async run(input, deps) {
    const { styleCatalogue } = await import('../../core/citations/styles.js');
    return styleCatalogue(deps, input, PAGE.default);
  },
});
