/**
 * `zotero_update_status`: preprints and early-access articles brought up to their published
 * version. A preview finds the candidates, looks their published versions up (published.ts),
 * and keeps the plan (the changes and each item's version as seen) for a day; applying writes
 * exactly that plan through the versioned write engine, and an item edited since the preview
 * is a conflict, left untouched. Re-running after an apply changes nothing: the items are no
 * longer candidates, and an applied plan's items already hold its values.
 */
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Answered } from '../items/read/common.js';
import { worksInScope } from '../items/read/entries.js';
import { localSchema } from '../items/schema.js';
import { openPlanStore } from '../store/plans.js';
import type { Deps } from '../tool.js';
import { applySetChange, createObjects, RefusedChange } from '../writes/index.js';
import { failedEntry } from '../zotero/errors.js';
import type { FailedEntry } from '../zotero/types.js';
import { candidateOf, type Candidate, type CandidateReason } from './candidates.js';
import { droppedByType, statusChanges, type FieldChange } from './changes.js';
import { findPublished, type Evidence, type SourceNote } from './published.js';
import { TITLE_THRESHOLD } from './similarity.js';
import { boundPlanAnswer } from '../items/read/bounds.js';
import { checkUpdateStatus, type UpdateStatusScope } from './check.js';

export const PLAN_KIND = 'update-status';

export interface UpdateStatusInput extends LibraryArgs, UpdateStatusScope {
  tag?: string | undefined;
  /** Add a child note to each item updated, saying what changed and on what evidence. */
  note?: boolean | undefined;
}

export interface StatusUpdate {
  key: string;
  title: string;
  reason: CandidateReason;
  server?: string | undefined;
  evidence: Evidence;
  /** Field by field, old → new: what the apply writes. */
  changes: FieldChange[];
  /** Fields the change of type removes, since the new type has no place for them. */
  dropped: FieldChange[];
  status: 'planned' | 'applied' | 'unchanged';
}

export interface Unmatched {
  key: string;
  title: string;
  reason: CandidateReason;
  /** Why nothing is planned: no published version found, or one that is not the same work. */
  why: string;
  evidence?: Evidence | undefined;
}

export interface UpdateStatusOutput extends Answered {
  applied: boolean;
  planId?: string | undefined;
  expiresAt?: string | undefined;
  threshold: number;
  checked: number;
  candidates: number;
  updates: StatusUpdate[];
  unmatched: Unmatched[];
  /** A preview: the candidates answered; an apply: the items written. */
  succeeded: string[];
  /** An apply: the items that already held the plan's values (nothing sent). */
  unchanged: string[];
  failed: FailedEntry[];
  sources: SourceNote[];
  libraryVersion?: number | undefined;
  /** How many updates and unmatched candidates there are in all, when the answer shows fewer. */
  totalUpdates?: number | undefined;
  totalUnmatched?: number | undefined;
  totalFailed?: number | undefined;
  truncated?: boolean | undefined;
}

interface PlanBody {
  threshold: number;
  entries: Array<{ version: number; update: StatusUpdate }>;
  checked: number;
  candidates: number;
  unmatched: Unmatched[];
  sources: SourceNote[];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The preview: candidates, their published versions, and the plan. */
async function preview(
  deps: Deps,
  input: UpdateStatusInput,
): Promise<{ body: PlanBody; failed: FailedEntry[]; route: Answered }> {
  const schema = localSchema(deps.config);
  const { items, failed, route } = await worksInScope(deps, input, () => 'which has no published version.');
  const candidates: Array<{ item: WebApiItem; candidate: Candidate }> = [];
  for (const item of items) {
    const candidate = candidateOf(item.data);
    if (candidate) candidates.push({ item, candidate });
  }
  const found = await findPublished(deps, schema, candidates);
  const entries: PlanBody['entries'] = [];
  const unmatched: Unmatched[] = [];
  const indexOf = new Map((input.item_keys ?? []).map((k, i) => [k, i] as const));
  for (const { item, candidate } of candidates) {
    const base = { key: item.key, title: text(item.data.title), reason: candidate.reason };
    const error = found.failures.get(item.key);
    if (error) {
      failed.push(
        failedEntry(indexOf.get(item.key) ?? -1, item.key, error.status ?? 0, error.message, error.code),
      );
      continue;
    }
    const match = found.matches.get(item.key);
    if (!match) {
      unmatched.push({ ...base, why: found.misses.get(item.key) ?? 'No published version was found.' });
      continue;
    }
    if (match.evidence.similarity < TITLE_THRESHOLD) {
      unmatched.push({
        ...base,
        why: `The published title is too different (similarity ${match.evidence.similarity} < ${TITLE_THRESHOLD}): not the same work, or retitled; check it by hand.`,
        evidence: match.evidence,
      });
      continue;
    }
    const changes = statusChanges(schema, item.data, match.item, candidate);
    if (changes.length === 0) {
      unmatched.push({
        ...base,
        why: 'The item already says what the published version says.',
        evidence: match.evidence,
      });
      continue;
    }
    entries.push({
      version: typeof item.version === 'number' ? item.version : Number(item.data.version ?? 0),
      update: {
        ...base,
        ...(candidate.server ? { server: candidate.server } : {}),
        evidence: match.evidence,
        changes,
        dropped: droppedByType(schema, item.data, changes),
        status: 'planned',
      },
    });
  }
  return {
    body: {
      threshold: TITLE_THRESHOLD,
      entries,
      checked: items.length,
      candidates: candidates.length,
      unmatched,
      sources: found.sources,
    },
    failed,
    route,
  };
}

/** The apply of one planned entry to the item as it is now: its values, or a conflict. */
function applyEntry(entry: PlanBody['entries'][number], tag: string | undefined) {
  return (data: Record<string, unknown>): Record<string, unknown> | null => {
    const { changes, key } = entry.update;
    const done = changes.every((c) => text(data[c.field]) === c.to);
    const tagged =
      !tag || (Array.isArray(data.tags) && data.tags.some((t) => (t as { tag?: unknown }).tag === tag));
    if (done && tagged) return null;
    const version = Number(data.version ?? 0);
    if (!done && version !== entry.version) {
      throw new RefusedChange(
        `Item ${key} was edited since the preview (version ${entry.version}, now ${version}): nothing was written to it. Preview again to plan it anew.`,
      );
    }
    const next = { ...data };
    for (const c of changes) next[c.field] = c.to;
    if (!tagged) next.tags = [...((data.tags as unknown[]) ?? []), { tag }];
    return next;
  };
}

export async function updateStatus(deps: Deps, input: UpdateStatusInput): Promise<UpdateStatusOutput> {
  checkUpdateStatus(input);
  const plans = await openPlanStore(deps);
  let body: PlanBody;
  let failed: FailedEntry[] = [];
  let route: Answered;
  let planId: string | undefined;
  let expiresAt: string | undefined;
  if (input.plan_id !== undefined) {
    const { openWebLibrary } = await import('../library/web.js');
    const lib = await openWebLibrary(deps, input, { access: 'write' });
    const plan = await plans.load<PlanBody>(PLAN_KIND, lib.prefix, input.plan_id);
    body = plan.body;
    planId = plan.id;
    expiresAt = plan.expiresAt;
    route = { backend: 'web', library: lib.prefix };
  } else {
    ({ body, failed, route } = await preview(deps, input));
    if (input.apply !== true) {
      const plan = body.entries.length ? await plans.save(PLAN_KIND, route.library, body) : undefined;
      return boundPlanAnswer<UpdateStatusOutput>(
        {
          applied: false,
          ...(plan ? { planId: plan.id, expiresAt: plan.expiresAt } : {}),
          threshold: body.threshold,
          checked: body.checked,
          candidates: body.candidates,
          updates: body.entries.map((e) => e.update),
          unmatched: body.unmatched,
          succeeded: [...body.entries.map((e) => e.update.key), ...body.unmatched.map((u) => u.key)],
          unchanged: [],
          failed,
          sources: body.sources,
          ...route,
        },
        'updates',
        'totalUpdates',
      );
    }
  }
  if (body.entries.length === 0) {
    return {
      applied: true,
      ...(planId ? { planId, expiresAt } : {}),
      threshold: body.threshold,
      checked: body.checked,
      candidates: body.candidates,
      updates: [],
      unmatched: body.unmatched,
      succeeded: [],
      unchanged: [],
      failed,
      sources: body.sources,
      ...route,
    };
  }

  const { openWebLibrary } = await import('../library/web.js');
  const lib = await openWebLibrary(deps, input, { access: 'write' });
  const byKey = new Map(body.entries.map((e) => [e.update.key, e] as const));
  const result = await applySetChange(lib.client, {
    library: lib.prefix,
    kind: 'items',
    keys: [...byKey.keys()],
    apply: (data) => applyEntry(byKey.get(text(data.key)) as PlanBody['entries'][number], input.tag)(data),
    progress: (done, total) => deps.progress({ event: 'progress', phase: 'write', done, total }),
  });
  const succeeded = new Set(result.succeeded);
  const noteFailures =
    input.note === true
      ? await addStatusNotes(
          deps,
          lib,
          body.entries.filter((e) => succeeded.has(e.update.key)),
        )
      : [];
  const updates = body.entries
    .filter((e) => succeeded.has(e.update.key) || result.unchanged.includes(e.update.key))
    .map((e) => ({
      ...e.update,
      status: succeeded.has(e.update.key) ? ('applied' as const) : ('unchanged' as const),
    }));
  return boundPlanAnswer<UpdateStatusOutput>(
    {
      applied: true,
      ...(planId ? { planId, expiresAt } : {}),
      threshold: body.threshold,
      checked: body.checked,
      candidates: body.candidates,
      updates,
      unmatched: body.unmatched,
      succeeded: result.succeeded,
      unchanged: result.unchanged,
      failed: [...failed, ...result.failed, ...noteFailures],
      sources: body.sources,
      ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
      ...(route.backend === 'web' ? route : { backend: 'web' as const, library: lib.prefix }),
    },
    'updates',
    'totalUpdates',
  );
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string,
  );
}

/** The note an updated item gets: the evidence and every field's old value, so nothing is lost from sight. */
export function statusNoteHtml(update: StatusUpdate): string {
  const e = update.evidence;
  const rows = [...update.changes, ...update.dropped]
    .map(
      (c) =>
        `<li>${escapeHtml(c.field)}: ${escapeHtml(c.from || '(empty)')} → ${escapeHtml(c.to || '(removed)')}</li>`,
    )
    .join('');
  return (
    `<p>Updated to the published version: <a href="https://doi.org/${escapeHtml(e.doi)}">${escapeHtml(e.doi)}</a>` +
    `${e.venue ? `, ${escapeHtml(e.venue)}` : ''}${e.year ? ` (${escapeHtml(e.year)})` : ''}. ` +
    `Found through ${escapeHtml(e.source)} (${escapeHtml(e.relation)}), title similarity ${e.similarity}.</p>` +
    `<ul>${rows}</ul>`
  );
}

/**
 * One child note per item written, created retry-safe (its key follows from the request's
 * seed and the item's key, so a retry never adds a second); a note Zotero refused is a failed
 * entry beside the item, which stays updated.
 */
async function addStatusNotes(
  deps: Deps,
  lib: { client: Parameters<typeof createObjects>[0]; prefix: string },
  entries: PlanBody['entries'],
): Promise<FailedEntry[]> {
  if (entries.length === 0) return [];
  const result = await createObjects(lib.client, {
    library: lib.prefix,
    kind: 'items',
    objects: entries.map((e) => ({
      itemType: 'note',
      parentItem: e.update.key,
      note: statusNoteHtml(e.update),
    })),
    labels: entries.map((e) => `status-note/${e.update.key}`),
    ids: deps.writeIds,
  });
  return result.failed.map((f) => ({
    ...f,
    key: entries[f.index]?.update.key ?? f.key,
    message: `The item was updated, but its note was not created: ${f.message}`,
  }));
}
