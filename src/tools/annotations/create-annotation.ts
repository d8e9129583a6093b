/** `zotero_create_annotation` / `zot annotation add KEY --quote TEXT`: a highlight of a quoted passage of a PDF. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { libraryParams, zoteroKey } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

const RECT = z.array(z.number()).length(4);

export default defineTool({
  name: 'zotero_create_annotation',
  title: 'Highlight a passage in a PDF',
  summary: 'Create a highlight annotation on a PDF attachment where a quoted passage is.',
  description:
    "Highlight a quoted passage (on one page) of a PDF attachment on this computer; one only in Zotero's cloud fails. page: 1-based, picks among repeats. Writes to the desktop's local API when authorised, else the Web API with a ZOTERO_API_KEY that can write. Find text: zotero_get_fulltext.",
  tier: 'write',
  openWorld: true,
  needsKey: true,
  since: '0.2.0',
  toolset: 'files',
  undo: {
    restores: 'the created annotation goes to the trash',
  },
  cli: [
    {
      path: ['annotation', 'add'],
      args: ['attachment_key'],
      summary: 'Highlight a quoted passage of a PDF attachment: `zot annotation add KEY --quote TEXT`.',
    },
  ],
  input: z
    .object({
      attachment_key: zoteroKey('attachment_key').describe(
        onlyOn('cli', 'Key of the PDF attachment, e.g. "ABCD2345".'),
      ),
      quote: z
        .string()
        .min(1)
        .max(7500)
        .describe(
          onlyOn('mcp', 'The passage as it reads in the PDF.') +
            onlyOn('cli', 'The passage to highlight, as it reads in the PDF.'),
        ),
      comment: z
        .string()
        .max(10_000)
        .optional()
        .describe(onlyOn('cli', 'A comment stored with the highlight.')),
      color: z
        .string()
        .regex(/^#[0-9a-fA-F]{6}$/, 'color must be #rrggbb')
        .optional()
        .meta({ default: '#ffd400' })
        .describe(onlyOn('cli', 'Highlight colour, #rrggbb (default #ffd400).')),
      page: z
        .number()
        .int()
        .positive()
        .optional()
        .describe(
          onlyOn(
            'cli',
            'The 1-based page of the PDF whose occurrence to highlight, when the quote occurs more than once.',
          ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    key: z.string().describe('Key of the new annotation.'),
    attachmentKey: z.string().describe('The PDF attachment it is on.'),
    text: z.string().describe('The highlighted text as it reads on the page.'),
    color: z.string().describe('#rrggbb.'),
    pageIndex: z.number().int().describe('0-based page of the PDF.'),
    pageLabel: z.string().describe('The page’s label.'),
    rects: z.array(RECT).describe('One rect per line, [x1,y1,x2,y2] in PDF points from the bottom-left.'),
    sortIndex: z.string().describe('Zotero’s reading-order key (page|offset|top).'),
    libraryVersion: z.number().int().optional(),
  }),
  summarize: (out) =>
    `Highlighted “${out.text.length > 80 ? `${out.text.slice(0, 80)}…` : out.text}” on page ${out.pageIndex + 1} of ${out.attachmentKey}: annotation ${out.key}.`,
  next: (out) => [`zot annotation list ${out.attachmentKey}`],
  plan(input) {
    return {
      attachment_key: input.attachment_key,
      quote: input.quote.length > 500 ? `${input.quote.slice(0, 500)}…` : input.quote,
      color: (input.color ?? '#ffd400').toLowerCase(),
      ...(input.comment !== undefined ? { comment: input.comment } : {}),
      ...(input.page !== undefined ? { page: input.page } : {}),
    };
  },
  async run(input, deps) {
    const { createAnnotation } = await import('../../core/annotations/create.js');
    return createAnnotation(deps, input);
  },
});
