/** `zotero_history` / `zot history`: the journal of recent writes, and what undo can still restore. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { nextStartField } from '../shared/output.js';
import { pagingParams } from '../shared/params.js';
import { onlyOn } from '../../core/call/refs.js';

const row = z.object({
  requestId: z.string().describe('The request id (meta.request_id of its answer): what zotero_undo takes.'),
  time: z.string().describe('When the request started writing (ISO 8601, UTC).'),
  tool: z.string().describe('The tool that wrote.'),
  library: z.string().nullable().describe('The library written to (users/<id> or groups/<id>).'),
  status: z
    .enum(['done', 'partial', 'failed', 'interrupted'])
    .describe(
      'How the request ended; interrupted: the process ended between the journal and the end of its writes (undo reads what landed).',
    ),
  objects: z
    .object({
      changed: z.number().int().describe('Objects updated (fields, tags, collections, the trash flag).'),
      created: z.number().int(),
      deleted: z.number().int().describe('Objects deleted permanently.'),
      other: z
        .number()
        .int()
        .describe('Writes not recorded per object (a library-wide tag deletion, a file upload).'),
      notLanded: z.number().int().describe('Writes refused or already in place: nothing to undo for them.'),
      unknown: z.number().int().describe('Writes whose answer never came: undo reads whether they landed.'),
    })
    .describe('Journaled writes by kind (one object may count twice when it was written twice).'),
  undoable: z.boolean().describe('Whether zotero_undo can still restore this request.'),
  reason: z.string().optional().describe('Why it is not undoable.'),
  restores: z.string().optional().describe("What undo restores for this tool (the tool's declaration)."),
  cannot: z.string().optional().describe('What undo cannot restore for this tool.'),
  undoOf: z.string().optional().describe('The request this one undid.'),
  undoneBy: z.array(z.string()).optional().describe('Requests that undid this one.'),
});

export default defineTool({
  name: 'zotero_history',
  title: 'History of writes',
  summary:
    'The recent writes of Zoteus, newest first: request id, time, tool, library, objects, whether undo can restore them.',
  description:
    "Zoteus's journaled writes, newest first (offline, no key): request id, tool, status, undoable or why not; tool: an exact tool name; kept 90 days (ZOTEUS_JOURNAL_DAYS). Revert one with zotero_undo.",
  tier: 'read',
  openWorld: false,
  since: '0.2.0',
  toolset: 'history',
  cli: [
    {
      path: ['history'],
      summary:
        'The recent writes, newest first, and whether each can be undone: zot history [--limit N] [--since DATE] [--tool NAME]',
    },
  ],
  input: z
    .object({
      since: z
        .string()
        .max(40)
        .optional()
        .describe('Writes from this date or time on (2026-05-01, 2026-05-01T12:00:00Z).'),
      tool: z
        .string()
        .max(80)
        .optional()
        .describe(onlyOn('cli', 'Only the writes of one tool, named as the tool field of a row names it.')),
      ...pagingParams({ rows: 'Requests', default: 20, max: 50 }),
    })
    .strict(),
  output: z.object({
    requests: z.array(row).describe('This page of the journaled requests, newest first.'),
    totalResults: z.number().int().describe('Journaled requests matching in total.'),
    start: z.number().int().describe('The offset this page starts at.'),
    nextStart: nextStartField,
    journal: z.string().describe('The journal file read.'),
  }),
  rows: 'requests',
  summarize: (out) =>
    out.totalResults === 0
      ? 'No journaled writes.'
      : `${plural(out.totalResults, 'journaled write')}; ${out.requests.length} shown from ${out.start + 1}${out.nextStart !== undefined ? ` (next: start ${out.nextStart})` : ''}.`,
  text: (out) =>
    [
      out.totalResults === 0 ? 'No journaled writes.' : `${plural(out.totalResults, 'journaled write')}:`,
      ...out.requests.map(
        (r) =>
          `${r.requestId}  ${r.time.slice(0, 19).replace('T', ' ')}  ${r.tool}  ${r.library ?? ''}  ${r.status}  ${r.undoable ? 'undoable' : `not undoable: ${r.reason ?? ''}`}`,
      ),
    ].join('\n'),
  async run(input, deps) {
    const { listHistory } = await import('../../core/journal/history.js');
    const out = await listHistory(deps, input);
    return {
      requests: out.requests,
      totalResults: out.total,
      start: input.start ?? 0,
      ...(out.nextStart !== undefined ? { nextStart: out.nextStart } : {}),
      journal: out.journal,
    };
  },
});
