/**
 * `zotero_enrich`: empty fields filled from the open infrastructure, never a field that holds
 * something. A preview reads the items in scope, and for each one with an empty DOI,
 * abstractNote, ISSN, pages or publisher (those asked for, among the fields its type has):
 * - with a DOI: its Crossref record, 50 DOIs a list request (metadata/crossref.ts);
 * - without one: a Crossref search by title, first author and year, its top hit accepted only
 *   as search.ts judges it (the DOI then comes from it, with the evidence);
 * - for what is still empty: OpenAlex by DOI, with its key (openalex.ts), else skipped, said.
 * The plan (each item's changes, all from empty) is kept a day (store/plans.ts). Applying
 * writes exactly it through the versioned write engine, field by field: a field that is no
 * longer empty is left as it is and reported as a conflict of that field, the item's other
 * planned fields are still filled; an item whose every planned field was filled by someone else
 * meanwhile is a conflict in failed, untouched. Re-running changes nothing.
 */
import { toolRef } from '../call/refs.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Answered } from '../items/read/common.js';
import { worksInScope } from '../items/read/entries.js';
import { boundPlanAnswer } from '../items/read/bounds.js';
import { jatsToText } from '../items/html.js';
import { localSchema, type ItemSchema } from '../items/schema.js';
import { crossrefWorks, type CrossrefWork } from '../metadata/crossref.js';
import { serviceClient } from '../metadata/service.js';
import { openAlexSkipped } from '../metadata/openalex.js';
import { openPlanStore } from '../store/plans.js';
import type { Deps } from '../tool.js';
import { doiOf } from '../versions/candidates.js';
import { TITLE_THRESHOLD } from '../versions/similarity.js';
import { applySetChange, RefusedChange } from '../writes/index.js';
import { failedEntry } from '../zotero/errors.js';
import type { FailedEntry } from '../zotero/types.js';
import type { ZoteusError } from '../errors.js';
import { checkEnrich, enrichFields, type EnrichField, type EnrichScope } from './fields.js';
import { openAlexFills, type OpenAlexFill } from './openalex.js';
import { judge, nearMiss, searchCrossref, type SearchEvidence, type SearchQuery } from './search.js';

export const PLAN_KIND = 'enrich';

export interface EnrichInput extends LibraryArgs, EnrichScope {}

export interface FieldFill {
  /** The item type's own name for the field (publisher is `university` on a thesis). */
  field: string;
  from: string;
  to: string;
  source: 'crossref' | 'openalex';
  /** planned: preview; applied: written; unchanged: already held this value; conflict: filled by someone else since the preview, left as it is. */
  status: 'planned' | 'applied' | 'unchanged' | 'conflict';
  /** A conflict: what the field holds now. */
  now?: string | undefined;
}

export interface MatchEvidence {
  source: 'crossref';
  /** doi: the item's own DOI's record; search: found by title, first author and year. */
  via: 'doi' | 'search';
  doi: string;
  title?: string | undefined;
  year?: string | undefined;
  firstAuthor?: string | undefined;
  similarity?: number | undefined;
  yearMatches?: boolean | undefined;
  authorMatches?: boolean | undefined;
  score?: number | undefined;
}

export interface Enrichment {
  key: string;
  title: string;
  evidence: MatchEvidence;
  changes: FieldFill[];
  status: 'planned' | 'applied' | 'unchanged' | 'conflict';
}

export interface Unfilled {
  key: string;
  title: string;
  /** The empty fields asked for. */
  empty: string[];
  why: string;
  evidence?: MatchEvidence | undefined;
}

export interface SourceNote {
  service: string;
  requests?: number | undefined;
  note?: string | undefined;
}

export interface EnrichOutput extends Answered {
  applied: boolean;
  planId?: string | undefined;
  expiresAt?: string | undefined;
  fields: string[];
  threshold: number;
  checked: number;
  /** Items with at least one empty field asked for. */
  wanting: number;
  enrichments: Enrichment[];
  unmatched: Unfilled[];
  succeeded: string[];
  unchanged: string[];
  failed: FailedEntry[];
  sources: SourceNote[];
  libraryVersion?: number | undefined;
  totalEnrichments?: number | undefined;
  totalUnmatched?: number | undefined;
  totalFailed?: number | undefined;
  truncated?: boolean | undefined;
}

interface PlanBody {
  fields: EnrichField[];
  threshold: number;
  checked: number;
  wanting: number;
  entries: Array<{ version: number; enrichment: Enrichment }>;
  unmatched: Unfilled[];
  sources: SourceNote[];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** The item's empty fields among those asked: base name → the type's own name. */
function emptyFields(
  schema: ItemSchema,
  data: Record<string, unknown>,
  fields: readonly EnrichField[],
): Map<EnrichField, string> {
  const spec = schema.types.get(text(data.itemType));
  const out = new Map<EnrichField, string>();
  if (!spec) return out;
  for (const base of fields) {
    const field = spec.byBase.get(base) ?? base;
    if (!spec.fields.has(field)) continue;
    if (text(data[field]).trim() !== '') continue;
    // A DOI kept in Extra (`DOI: …`) is the item's DOI all the same.
    if (base === 'DOI' && doiOf(data) !== undefined) continue;
    out.set(base, field);
  }
  return out;
}

/** What the item offers a search: its title, first author's family name and year. */
function searchQuery(item: WebApiItem): SearchQuery | string {
  const title = text(item.data.title).trim();
  const creators = Array.isArray(item.data.creators)
    ? (item.data.creators as Array<Record<string, unknown>>)
    : [];
  const first = creators.find((c) => c.creatorType === 'author') ?? creators[0];
  const family = text(first?.lastName ?? first?.name).trim();
  const year = /\b(\d{4})\b/.exec(text(item.data.date))?.[1];
  const lacking = [!title && 'a title', !family && 'a first author', !year && 'a year'].filter(Boolean);
  if (lacking.length)
    return `No DOI, and no ${lacking.join(' or ')} to find and confirm one by: nothing looked up.`;
  return { key: item.key, title, family, year: year as string };
}

/** A Crossref record's values for the fields enrich fills. */
function crossrefValues(work: CrossrefWork, doi: string | undefined): Partial<Record<EnrichField, string>> {
  const issn = [...new Set(work.issn.map((s) => s.trim()).filter(Boolean))];
  const abstract = work.abstract ? jatsToText(work.abstract) : '';
  return {
    ...(doi ? { DOI: doi } : {}),
    ...(abstract ? { abstractNote: abstract } : {}),
    ...(issn.length ? { ISSN: issn.join(', ') } : {}),
    ...(work.page ? { pages: work.page } : {}),
    ...(work.publisher ? { publisher: work.publisher } : {}),
  };
}

const isError = (value: unknown): value is ZoteusError => value instanceof Error;

/** How a field is named to the user: abstract for abstractNote. */
const spoken = (f: EnrichField) => (f === 'abstractNote' ? 'abstract' : f);

interface Wanting {
  item: WebApiItem;
  empty: Map<EnrichField, string>;
  /** The DOI the item has, or the one an accepted search found. */
  doi?: string | undefined;
  evidence?: MatchEvidence | undefined;
  values: Partial<Record<EnrichField, { value: string; source: FieldFill['source'] }>>;
  error?: ZoteusError | undefined;
  why?: string | undefined;
}

async function preview(
  deps: Deps,
  input: EnrichInput,
): Promise<{ body: PlanBody; failed: FailedEntry[]; route: Answered }> {
  const fields = enrichFields(input.fields);
  const schema = localSchema(deps.config);
  const { items, failed, route } = await worksInScope(
    deps,
    input,
    () => 'which has no bibliographic fields to fill.',
  );
  const wanting: Wanting[] = [];
  for (const item of items) {
    const empty = emptyFields(schema, item.data, fields);
    if (empty.size) wanting.push({ item, empty, doi: doiOf(item.data), values: {} });
  }
  const crossref = await serviceClient(deps, 'crossref');
  const sentBefore = crossref.sent;
  const total = wanting.length;
  if (total) deps.progress({ event: 'start', phase: 'lookup', done: 0, total });

  // 1. Items with a DOI: their Crossref records, 50 a request.
  const withDoi = wanting.filter((w) => w.doi !== undefined);
  const records = withDoi.length
    ? await crossrefWorks(
        deps,
        withDoi.map((w) => w.doi as string),
        { onProgress: (done) => deps.progress({ event: 'progress', phase: 'lookup', done, total }) },
      )
    : new Map();
  for (const w of withDoi) {
    const doi = w.doi as string;
    const work = records.get(doi.toLowerCase());
    w.evidence = { source: 'crossref', via: 'doi', doi };
    if (isError(work)) w.error = work;
    else if (!work) w.why = `Crossref has no record of ${doi}.`;
    else
      for (const [f, value] of Object.entries(crossrefValues(work, undefined)))
        w.values[f as EnrichField] = { value, source: 'crossref' };
  }

  // 2. Items without one: a search each, its top hit taken only when plainly the same work.
  const queries: SearchQuery[] = [];
  for (const w of wanting) {
    if (w.doi !== undefined) continue;
    const q = searchQuery(w.item);
    if (typeof q === 'string') w.why = q;
    else queries.push(q);
  }
  const hits = await searchCrossref(deps, queries, (done) =>
    deps.progress({ event: 'progress', phase: 'lookup', done: withDoi.length + done, total }),
  );
  const byKey = new Map(wanting.map((w) => [w.item.key, w] as const));
  for (const q of queries) {
    const w = byKey.get(q.key) as Wanting;
    const hit = hits.get(q.key);
    if (isError(hit)) {
      w.error = hit;
      continue;
    }
    if (!hit) {
      w.why = 'No DOI, and a Crossref search by title, first author and year found nothing.';
      continue;
    }
    const { evidence, accepted } = judge(q, hit);
    const shown: SearchEvidence = evidence;
    w.evidence = shown;
    if (!accepted) {
      w.why = nearMiss(q, evidence);
      continue;
    }
    // A preprint and its published article share title, authors and year: never take one's DOI for the other.
    const isPreprint = text(w.item.data.itemType) === 'preprint';
    if ((hit.work.type === 'posted-content') !== isPreprint) {
      w.why = isPreprint
        ? `Crossref's best match is the published article (${hit.doi}), not this preprint: no DOI taken from it (${toolRef('zotero_update_status')} brings a preprint up to its published version).`
        : `Crossref's best match is a preprint (${hit.doi}), not this ${text(w.item.data.itemType)}: no DOI taken from it.`;
      continue;
    }
    w.doi = hit.doi;
    for (const [f, value] of Object.entries(crossrefValues(hit.work, hit.doi)))
      w.values[f as EnrichField] = { value, source: 'crossref' };
  }

  // 3. OpenAlex for what Crossref left empty (only with its key).
  const stillEmpty = (w: Wanting) => [...w.empty.keys()].filter((f) => f !== 'DOI' && !w.values[f]);
  const openDois = wanting
    .filter((w) => w.doi !== undefined && stillEmpty(w).length > 0)
    .map((w) => w.doi as string);
  const openalexNote = openAlexSkipped(deps);
  let openalexRequests: number | undefined;
  if (openDois.length && !openalexNote) {
    const client = await serviceClient(deps, 'openalex', [deps.config.metadata.openalexKey]);
    const before = client.sent;
    const answer = await openAlexFills(deps, openDois);
    openalexRequests = client.sent - before;
    for (const w of wanting) {
      if (w.doi === undefined || stillEmpty(w).length === 0) continue;
      const fill = answer.fills?.get(w.doi.toLowerCase());
      if (isError(fill)) {
        if (!w.error && Object.keys(w.values).length === 0) w.error = fill;
        continue;
      }
      for (const f of stillEmpty(w)) {
        const value = fill?.[f as keyof OpenAlexFill];
        if (value) w.values[f] = { value, source: 'openalex' };
      }
    }
  }
  if (total) deps.progress({ event: 'complete', phase: 'lookup', done: total, total });

  const entries: PlanBody['entries'] = [];
  const unmatched: Unfilled[] = [];
  const indexOf = new Map((input.item_keys ?? []).map((k, i) => [k, i] as const));
  for (const w of wanting) {
    const title = text(w.item.data.title);
    const changes: FieldFill[] = [];
    for (const [base, field] of w.empty) {
      const found = w.values[base];
      if (found) changes.push({ field, from: '', to: found.value, source: found.source, status: 'planned' });
    }
    const empty = [...w.empty.keys()].map(spoken);
    if (changes.length) {
      entries.push({
        version: typeof w.item.version === 'number' ? w.item.version : Number(w.item.data.version ?? 0),
        enrichment: {
          key: w.item.key,
          title,
          evidence: w.evidence as MatchEvidence,
          changes,
          status: 'planned',
        },
      });
      continue;
    }
    if (w.error) {
      failed.push(
        failedEntry(
          indexOf.get(w.item.key) ?? -1,
          w.item.key,
          w.error.status ?? 0,
          w.error.message,
          w.error.code,
        ),
      );
      continue;
    }
    unmatched.push({
      key: w.item.key,
      title,
      empty,
      why:
        w.why ??
        (openalexNote
          ? `Crossref's record of ${w.doi} has none of the empty fields (${empty.join(', ')}); OpenAlex was not asked (no API key).`
          : `Neither Crossref nor OpenAlex has any of the empty fields (${empty.join(', ')}) for ${w.doi}.`),
      ...(w.evidence ? { evidence: w.evidence } : {}),
    });
  }
  const sources: SourceNote[] = [
    { service: 'Crossref', requests: crossref.sent - sentBefore },
    {
      service: 'OpenAlex',
      ...(openalexNote ? { note: openalexNote } : { requests: openalexRequests ?? 0 }),
    },
  ];
  return {
    body: {
      fields,
      threshold: TITLE_THRESHOLD,
      checked: items.length,
      wanting: wanting.length,
      entries,
      unmatched,
      sources,
    },
    failed,
    route,
  };
}

/** What the apply found in an item's planned fields: taken by another value, or already the plan's. */
interface FieldsNow {
  taken: Map<string, string>;
  done: Set<string>;
}

/**
 * The apply of one planned entry to the item as it is now: each planned field still empty is
 * filled; one that now holds the planned value is done; one that holds anything else is left
 * and noted in `conflicts`. Every planned field taken: the item is a conflict, untouched.
 */
function applyEntry(entry: Enrichment, seen: Map<string, FieldsNow>) {
  return (data: Record<string, unknown>): Record<string, unknown> | null => {
    const taken = new Map<string, string>();
    const done = new Set<string>();
    const next = { ...data };
    let fills = 0;
    for (const c of entry.changes) {
      const now = text(data[c.field]);
      if (now.trim() === '') {
        next[c.field] = c.to;
        fills += 1;
      } else if (now === c.to) done.add(c.field);
      else taken.set(c.field, now);
    }
    seen.set(entry.key, { taken, done });
    if (fills === 0 && taken.size > 0)
      throw new RefusedChange(
        `Item ${entry.key} was edited since the preview: ${[...taken.keys()].join(', ')} ${taken.size === 1 ? 'holds' : 'hold'} another value now, which enrichment never overwrites; nothing was written to it.`,
      );
    return fills === 0 ? null : next;
  };
}

function outputOf(
  body: PlanBody,
  extra: Pick<EnrichOutput, 'applied' | 'enrichments' | 'succeeded' | 'unchanged' | 'failed'> &
    Partial<EnrichOutput>,
  route: Answered,
): EnrichOutput {
  return boundPlanAnswer<EnrichOutput>(
    {
      fields: body.fields,
      threshold: body.threshold,
      checked: body.checked,
      wanting: body.wanting,
      unmatched: body.unmatched,
      sources: body.sources,
      ...extra,
      ...route,
    },
    'enrichments',
    'totalEnrichments',
  );
}

export async function enrich(deps: Deps, input: EnrichInput): Promise<EnrichOutput> {
  checkEnrich(input);
  const plans = await openPlanStore(deps);
  let body: PlanBody;
  let failed: FailedEntry[] = [];
  let route: Answered;
  let planned: { planId: string; expiresAt: string } | undefined;
  if (input.plan_id !== undefined) {
    const { openWebLibrary } = await import('../library/web.js');
    const lib = await openWebLibrary(deps, input, { access: 'write' });
    const plan = await plans.load<PlanBody>(PLAN_KIND, lib.prefix, input.plan_id);
    body = plan.body;
    planned = { planId: plan.id, expiresAt: plan.expiresAt };
    route = { backend: 'web', library: lib.prefix };
  } else {
    ({ body, failed, route } = await preview(deps, input));
    if (input.apply !== true) {
      const plan = body.entries.length ? await plans.save(PLAN_KIND, route.library, body) : undefined;
      return outputOf(
        body,
        {
          applied: false,
          ...(plan ? { planId: plan.id, expiresAt: plan.expiresAt } : {}),
          enrichments: body.entries.map((e) => e.enrichment),
          succeeded: [...body.entries.map((e) => e.enrichment.key), ...body.unmatched.map((u) => u.key)],
          unchanged: [],
          failed,
        },
        route,
      );
    }
  }
  if (body.entries.length === 0)
    return outputOf(
      body,
      { applied: true, ...planned, enrichments: [], succeeded: [], unchanged: [], failed },
      route,
    );

  const { openWebLibrary } = await import('../library/web.js');
  const lib = await openWebLibrary(deps, input, { access: 'write' });
  const byKey = new Map(body.entries.map((e) => [e.enrichment.key, e.enrichment] as const));
  const seen = new Map<string, FieldsNow>();
  const result = await applySetChange(lib.client, {
    library: lib.prefix,
    kind: 'items',
    keys: [...byKey.keys()],
    apply: (data) => applyEntry(byKey.get(text(data.key)) as Enrichment, seen)(data),
    progress: (done, all) => deps.progress({ event: 'progress', phase: 'write', done, total: all }),
  });
  const written = new Set(result.succeeded);
  const same = new Set(result.unchanged);
  const refused = new Set(result.failed.flatMap((f) => (f.reason === 'conflict' && f.key ? [f.key] : [])));
  const enrichments: Enrichment[] = [];
  for (const e of body.entries.map((x) => x.enrichment)) {
    if (!written.has(e.key) && !same.has(e.key) && !refused.has(e.key)) continue;
    const now = seen.get(e.key);
    const changes = e.changes.map((c): FieldFill => {
      const other = now?.taken.get(c.field);
      if (other !== undefined) return { ...c, status: 'conflict', now: other };
      return { ...c, status: written.has(e.key) && !now?.done.has(c.field) ? 'applied' : 'unchanged' };
    });
    enrichments.push({
      ...e,
      changes,
      status: refused.has(e.key) ? 'conflict' : written.has(e.key) ? 'applied' : 'unchanged',
    });
  }
  return outputOf(
    body,
    {
      applied: true,
      ...planned,
      enrichments,
      succeeded: result.succeeded,
      unchanged: result.unchanged,
      failed: [...failed, ...result.failed],
      ...(result.libraryVersion !== undefined ? { libraryVersion: result.libraryVersion } : {}),
    },
    route.backend === 'web' ? route : { backend: 'web', library: lib.prefix },
  );
}
