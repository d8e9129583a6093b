/** `zotero_undo` / `zot undo REQUEST_ID`: a journaled request's objects back to their recorded state. */
import * as z from 'zod';
import { defineTool } from '../../core/tool.js';
import { plural } from '../../core/words.js';
import { failedList, libraryVersion } from '../shared/output.js';
import { libraryParams } from '../shared/params.js';
import { onlyOn, toolRef } from '../../core/call/refs.js';

const keys = (what: string) => z.array(z.string()).describe(what);

export default defineTool({
  name: 'zotero_undo',
  title: 'Undo a write',
  summary: 'Undo a journaled write: its objects back to their recorded state; created items to the trash.',
  description:
    "Undo a write by its request id (zotero_history lists them): objects back as they were (not a deleted item's children or files), created items trashed; objects changed since are conflicts, left alone. An undo is journaled too, so it can be undone. Writes to the desktop's local API when authorised, else the Web API with a ZOTERO_API_KEY that can write.",
  tier: 'destructive',
  openWorld: true,
  idempotent: true,
  needsKey: true,
  since: '0.2.0',
  toolset: 'history',
  undo: { restores: 'the objects the undo changed, as the undone request had left them' },
  cli: [
    {
      path: ['undo'],
      args: ['request_id'],
      summary: 'Undo a journaled write by its request id: zot undo REQUEST_ID [--dry-run]',
    },
  ],
  input: z
    .object({
      request_id: z
        .string()
        .min(1)
        .max(64)
        .describe(
          onlyOn('mcp', "As the write's answer carries it in meta (the history lists them).") +
            onlyOn(
              'cli',
              `The request id of the write to undo, as its answer’s meta carries it (${toolRef('zotero_history')} lists them).`,
            ),
        ),
      ...libraryParams,
    })
    .strict(),
  output: z.object({
    requestId: z.string().describe('The request undone.'),
    tool: z.string().describe('The tool of the request undone.'),
    library: z.string().describe('Its library.'),
    updated: keys(
      'Objects written back: their fields as they were, or (items the request created) moved to the trash.',
    ),
    trashed: keys('Of updated, the items the request created, now in the trash.'),
    deleted: keys('Collections and saved searches the request created, now deleted.'),
    created: keys(
      'Objects the request deleted permanently, created again (under their keys) from the journal.',
    ),
    unchanged: keys('Objects already as they were before the request: nothing sent.'),
    conflicts: z
      .array(
        z.object({
          key: z.string(),
          kind: z.string().describe('items or collections.'),
          fields: z.array(z.string()).describe('The fields that differ from what the request left.'),
        }),
      )
      .describe('Objects that changed again since the request: left as they are (also in failed).'),
    notUndoable: z
      .array(z.object({ key: z.string(), reason: z.string() }))
      .describe('What the journal holds no state to restore for, and why.'),
    failed: failedList,
    libraryVersion,
  }),
  summarize: (out) => {
    const parts = [
      out.updated.length - out.trashed.length
        ? `${plural(out.updated.length - out.trashed.length, 'object')} restored`
        : '',
      out.trashed.length ? `${plural(out.trashed.length, 'created item')} trashed` : '',
      out.deleted.length ? `${plural(out.deleted.length, 'created collection')} deleted` : '',
      out.created.length ? `${plural(out.created.length, 'deleted object')} recreated` : '',
      out.unchanged.length ? `${out.unchanged.length} already as before` : '',
      out.conflicts.length ? `${plural(out.conflicts.length, 'conflict')} left as they are` : '',
      out.notUndoable.length ? `${out.notUndoable.length} not undoable` : '',
    ].filter((p) => p !== '');
    return `Undid request ${out.requestId} (${out.tool}): ${parts.length ? parts.join('; ') : 'nothing to undo'}.`;
  },
  plan(input) {
    return {
      request_id: input.request_id,
      would:
        'restore every object the request changed to its journaled state; created items to the trash, created collections deleted; objects changed since left as conflicts (a dry run reads only the journal: which objects changed since shows only when it runs)',
      requests: 'about 2 per 50 objects',
    };
  },
  retryFailed: {
    // The same undo again: what it restored is now as before (unchanged), the rest is tried anew.
    input: (input, previous) => (previous.failed.some((f) => f.retryable) ? input : null),
    merge: (previous, retry) => {
      const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];
      const updated = union(previous.updated, retry.updated);
      const created = union(previous.created, retry.created);
      const deleted = union(previous.deleted, retry.deleted);
      const wrote = new Set([...updated, ...created, ...deleted]);
      return {
        ...retry,
        updated,
        trashed: union(previous.trashed, retry.trashed),
        deleted,
        created,
        unchanged: retry.unchanged.filter((key) => !wrote.has(key)),
      };
    },
  },
  async planDetail(input, deps) {
    const { previewUndo } = await import('../../core/journal/undo.js');
    return previewUndo(deps, input);
  },
  async confirmation(input) {
    return `undo the writes of request ${input.request_id}`;
  },
  async run(input, deps) {
    const { undoRequest } = await import('../../core/journal/undo.js');
    return undoRequest(deps, input);
  },
});
