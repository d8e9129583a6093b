/**
 * The retraction check: which items of a library (keys, a collection, or the whole library,
 * a page of items at a time) have update notices: Crossref's `updated-by` (the publishers'
 * Crossmark notices and the Retraction Watch records Crossref carries), OpenAlex's
 * `is_retracted` (with an API key), and on the desktop Zotero's own `retractedItems` flags.
 * Retractions (also withdrawals, removals, partial retractions) are told apart from
 * expressions of concern and corrections, which are listed but are not retractions. Writes
 * nothing; `next` is the tag command for the retracted items, as a reference each surface writes.
 */
import { commandRef } from '../call/refs.js';
import { ZoteusError } from '../errors.js';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import { nothingUsable, readKeyedEntries } from '../items/read/entries.js';
import { identitiesOfItem } from '../items/identifiers.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import type { FailedEntry } from '../zotero/types.js';
import { crossrefWorks, type CrossrefUpdate, type CrossrefWork } from './crossref.js';
import { openAlexWorks } from './openalex.js';
import type { ZoteroRetraction } from './zotero-retractions.js';

export const RETRACTIONS_DEFAULT_LIMIT = 1000;
export const RETRACTIONS_MAX_LIMIT = 10_000;
/** Keys of checked items listed in `succeeded` (checked counts them all). */
const SUCCEEDED_SHOWN = 1000;
/** Items read per request of a listing. */
const READ_PAGE = 100;
const NOT_CHECKABLE = new Set(['note', 'attachment', 'annotation']);
/** The tag the `next` command puts on retracted items. */
export const RETRACTED_TAG = 'Retracted';

export type HitSource = 'crossref' | 'retraction-watch' | 'openalex' | 'zotero';

export interface RetractionHit {
  key: string;
  title: string;
  doi: string;
  /** retraction, partial_retraction, withdrawal, removal, expression_of_concern, correction, … */
  type: string;
  /** Whether the notice withdraws the work (retraction, partial retraction, withdrawal, removal). */
  retraction: boolean;
  date?: string | undefined;
  noticeDoi?: string | undefined;
  noticeUrl?: string | undefined;
  sources: HitSource[];
}

export interface RetractionsInput extends LibraryArgs {
  item_keys?: string[] | undefined;
  collection_key?: string | undefined;
  all?: boolean | undefined;
  start?: number | undefined;
  limit?: number | undefined;
}

export interface RetractionsOutput extends Answered {
  /** Items whose DOI every asked service answered for. */
  checked: number;
  /** Keys of the checked items (the first 1,000). */
  succeeded: string[];
  /** Items with at least one retraction notice. */
  retracted: number;
  hits: RetractionHit[];
  /** Items that could not be checked online (no DOI), with why. */
  notChecked: Array<{ key: string; title: string; reason: string }>;
  failed: FailedEntry[];
  /** What each source did in this check. */
  sources: { crossref: string; openalex: string; zotero: string };
  notes: string[];
  next: string[];
  totalResults?: number | undefined;
  nextStart?: number | undefined;
  truncated?: boolean | undefined;
  remaining?: string[] | undefined;
}

/** Crossref's update types (and Retraction Watch's natures) in one spelling: `expression_of_concern`. */
export function noticeType(type: string): string {
  return type
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

const RETRACTING = new Set(['retraction', 'partial_retraction', 'withdrawal', 'removal']);
/** Notices that are reported: the retracting ones, concerns, and corrections (which are not retractions). */
const REPORTED = new Set([
  ...RETRACTING,
  'expression_of_concern',
  'correction',
  'corrigendum',
  'erratum',
  'reinstatement',
]);

function checkInput(input: RetractionsInput): void {
  const ways = [
    input.item_keys?.length ? 'item_keys' : undefined,
    input.collection_key !== undefined ? 'collection_key' : undefined,
    input.all ? 'all' : undefined,
  ].filter((w): w is string => w !== undefined);
  if (ways.length === 0)
    throw new ZoteusError('validation_error', 'Nothing to check: give item keys, a collection, or all.', {
      field: 'item_keys',
    });
  if (ways.length > 1)
    throw new ZoteusError(
      'validation_error',
      `Give one of item keys, a collection or all, not ${ways.join(' and ')}.`,
      {
        field: ways[1] as string,
      },
    );
}

/** The item's DOI: its DOI field, a `DOI:` line in Extra, or a doi.org URL (lower-cased). */
export function itemDoi(item: WebApiItem): string | undefined {
  const id = identitiesOfItem(item.data).find((i) => i.startsWith('doi:'));
  return id?.slice(4);
}

const titleOf = (item: WebApiItem): string =>
  typeof item.data.title === 'string' && item.data.title ? item.data.title : '(untitled)';

function crossrefHits(item: WebApiItem, doi: string, work: CrossrefWork): RetractionHit[] {
  const byNotice = new Map<string, RetractionHit>();
  for (const u of work.updatedBy) {
    const type = noticeType(u.type);
    if (!REPORTED.has(type)) continue;
    const source: HitSource = u.source === 'retraction-watch' ? 'retraction-watch' : 'crossref';
    // One event may come from both the publisher and Retraction Watch: one hit, both sources.
    const id = `${u.doi ?? `${u.date ?? ''}`}\u0000${type}`;
    const seen = byNotice.get(id);
    if (seen) {
      if (!seen.sources.includes(source)) seen.sources.push(source);
      seen.date ??= u.date;
      continue;
    }
    byNotice.set(id, hit(item, doi, type, u, [source]));
  }
  return [...byNotice.values()];
}

function hit(
  item: WebApiItem,
  doi: string,
  type: string,
  u: Pick<CrossrefUpdate, 'doi' | 'date'>,
  sources: HitSource[],
  url?: string,
): RetractionHit {
  return {
    key: item.key,
    title: titleOf(item),
    doi,
    type,
    retraction: RETRACTING.has(type),
    ...(u.date ? { date: u.date } : {}),
    ...(u.doi ? { noticeDoi: u.doi } : {}),
    ...(u.doi || url ? { noticeUrl: u.doi ? `https://doi.org/${u.doi}` : url } : {}),
    sources,
  };
}

/** Adds a source's "retracted" to the item's retraction hit (the one of `noticeDoi` first), or a hit of its own. */
function mergeRetraction(
  hits: RetractionHit[],
  item: WebApiItem,
  doi: string,
  source: HitSource,
  notice: { doi?: string | undefined; date?: string | undefined; url?: string | undefined },
): void {
  const same =
    hits.find((h) => h.retraction && notice.doi !== undefined && h.noticeDoi === notice.doi) ??
    hits.find((h) => h.retraction);
  if (same) {
    if (!same.sources.includes(source)) same.sources.push(source);
    same.date ??= notice.date;
    return;
  }
  hits.push(hit(item, doi, 'retraction', { doi: notice.doi, date: notice.date }, [source], notice.url));
}

async function readItems(
  deps: Deps,
  input: RetractionsInput,
  reader: Awaited<ReturnType<typeof openReader>>['reader'],
  library: string,
): Promise<{
  items: WebApiItem[];
  failed: FailedEntry[];
  totalResults?: number;
  /** Listings: each item's position in the listing, and where the part read ends. */
  positions?: number[];
  end?: number;
}> {
  if (input.item_keys?.length) {
    const { items, failed } = await readKeyedEntries(reader, input.item_keys, library, (item) =>
      NOT_CHECKABLE.has(String(item.data.itemType))
        ? `${item.key} is a ${String(item.data.itemType)}, which has no DOI of its own to check.`
        : undefined,
    );
    if (items.length === 0 && failed.length > 0) throw await nothingUsable(deps, failed, library);
    return { items, failed };
  }
  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? RETRACTIONS_DEFAULT_LIMIT, RETRACTIONS_MAX_LIMIT);
  const listing = {
    top: true,
    sort: 'dateAdded',
    direction: 'asc' as const,
    ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
  };
  const items: WebApiItem[] = [];
  const positions: number[] = [];
  let totalResults = 0;
  let at = start;
  while (at < start + limit) {
    const page = await reader.items({
      ...listing,
      start: at,
      limit: Math.min(READ_PAGE, start + limit - at),
    });
    totalResults = page.totalResults;
    page.items.forEach((item, i) => {
      if (NOT_CHECKABLE.has(String(item.data.itemType))) return;
      items.push(item);
      positions.push(at + i);
    });
    at += page.items.length;
    if (page.items.length === 0 || at >= page.totalResults) break;
  }
  return { items, failed: [], totalResults, positions, end: at };
}

export async function checkRetractions(deps: Deps, input: RetractionsInput): Promise<RetractionsOutput> {
  checkInput(input);
  const { reader, route } = await openReader(deps, input);
  const listed = !input.item_keys?.length;
  const read = await readItems(deps, input, reader, route.library);
  const { items } = read;
  const failed = [...read.failed];
  const phase = 'retractions';
  const total = items.length;
  if (listed) deps.progress({ event: 'start', phase, done: 0, total });

  const doiOf = new Map<string, string>();
  for (const item of items) {
    const doi = itemDoi(item);
    if (doi) doiOf.set(item.key, doi);
  }
  const dois = [...new Set(doiOf.values())];
  // The services at once, each at its own pace: the slowest sets the wall time, not their sum.
  const [crossref, openalex, zotero] = await Promise.all([
    crossrefWorks(deps, dois, {
      onProgress: (done) => {
        if (listed) deps.progress({ event: 'progress', phase, done: Math.min(done, total), total });
      },
    }),
    openAlexWorks(deps, dois),
    desktopFlags(deps, input, items),
  ]);

  const notes: string[] = [];
  if (openalex.skipped) notes.push(openalex.skipped);
  if (zotero.reason) notes.push(`Zotero’s own retraction flags were not read: ${zotero.reason}.`);

  // Each item's part of the answer, in order; the page ends where the rows budget does.
  const hits: RetractionHit[] = [];
  const notChecked: RetractionsOutput['notChecked'] = [];
  const succeeded: string[] = [];
  let checked = 0;
  let retracted = 0;
  let used = 0;
  let kept = 0;
  for (const [index, item] of items.entries()) {
    const doi = doiOf.get(item.key);
    const own: RetractionHit[] = [];
    const errors: ZoteusError[] = [];
    const flag = zotero.flags?.get(item.key);
    if (doi) {
      const work = crossref.get(doi);
      if (work instanceof ZoteusError) errors.push(work);
      else if (work) own.push(...crossrefHits(item, doi, work));
      const oa = openalex.works?.get(doi);
      if (oa instanceof ZoteusError) errors.push(oa);
      else if (oa?.isRetracted) mergeRetraction(own, item, doi, 'openalex', {});
    }
    if (flag) {
      mergeRetraction(own, item, doi ?? '', 'zotero', {
        doi: flag.noticeDoi,
        date: flag.date,
        url: flag.urls[0],
      });
    }
    const entry: FailedEntry | undefined = errors.length
      ? serviceFailure(index, item.key, errors)
      : undefined;
    const skipped = !doi ? { key: item.key, title: titleOf(item), reason: noDoiReason(flag) } : undefined;
    // What the item adds to the answer: its hits, its failure or why it was not checked, and
    // its key while `succeeded` still lists keys (an item with none of these adds nothing).
    const listed = !entry && (doi || flag) && succeeded.length < SUCCEEDED_SHOWN;
    const size =
      (own.length ? jsonBytes(own) : 0) +
      (entry ? jsonBytes(entry) : 0) +
      (skipped ? jsonBytes(skipped) : 0) +
      (listed ? item.key.length + 3 : 0);
    if (kept > 0 && used + size > ROWS_BUDGET) break;
    used += size;
    kept += 1;
    hits.push(...own);
    if (own.some((h) => h.retraction)) retracted += 1;
    if (entry) failed.push(entry);
    if (skipped) notChecked.push(skipped);
    if (!entry && (doi || flag)) {
      checked += 1;
      if (succeeded.length < SUCCEEDED_SHOWN) succeeded.push(item.key);
    }
  }
  if (listed)
    deps.progress({ event: 'complete', phase, done: kept, total, succeeded: checked, failed: failed.length });

  const cut = kept < items.length;
  const start = input.start ?? 0;
  const out: RetractionsOutput = {
    checked,
    succeeded,
    retracted,
    hits,
    notChecked,
    failed,
    sources: {
      crossref: dois.length === 0 ? 'not asked: no item has a DOI' : `asked for ${dois.length} DOIs`,
      openalex: openalex.skipped
        ? 'skipped: no API key (ZOTEUS_OPENALEX_API_KEY)'
        : `asked for ${dois.length} DOIs`,
      zotero: zotero.reason ? `not read: ${zotero.reason}` : 'read (zotero.sqlite retractedItems)',
    },
    notes,
    next: nextCommands(hits, input),
    ...answered(route),
  };
  if (listed) {
    out.totalResults = read.totalResults;
    const end = cut ? (read.positions?.[kept] ?? start) : (read.end ?? start);
    if (end < (read.totalResults ?? 0)) out.nextStart = end;
    if (cut) out.truncated = true;
  } else if (cut) {
    out.truncated = true;
    out.remaining = items.slice(kept).map((i) => i.key);
  }
  return out;
}

function noDoiReason(flag: ZoteroRetraction | undefined): string {
  return flag
    ? 'no DOI: checked only against Zotero’s own retraction flags'
    : 'no DOI (DOI field, a DOI: line in Extra, or a doi.org URL): not checked online';
}

function serviceFailure(index: number, key: string, errors: readonly ZoteusError[]): FailedEntry {
  const first = errors[0] as ZoteusError;
  const message = errors.length === 1 ? first.message : errors.map((e) => e.message).join(' ');
  return {
    index,
    key,
    code: first.status ?? 0,
    message,
    reason: first.code,
    retryable: errors.every((e) => e.retryable),
  };
}

function nextCommands(hits: readonly RetractionHit[], input: RetractionsInput): string[] {
  const keys = [...new Set(hits.filter((h) => h.retraction).map((h) => h.key))];
  if (keys.length === 0) return [];
  const library: Record<string, string> = {};
  if (input.library_id !== undefined) library.library_id = String(input.library_id);
  if (input.library_type !== undefined) library.library_type = input.library_type;
  return [
    commandRef('zotero_manage_tags', {
      action: 'add_items',
      tag: RETRACTED_TAG,
      item_keys: keys.join(' '),
      ...library,
    }),
  ];
}

/** Zotero's flags for these items when the desktop holds the library, else why they were not read. */
async function desktopFlags(
  deps: Deps,
  input: RetractionsInput,
  items: readonly WebApiItem[],
): Promise<{ flags?: Map<string, ZoteroRetraction>; reason?: string }> {
  const { planRoute } = await import('../library/router.js');
  const { resolveLibrary } = await import('../library/address.js');
  const plan = await planRoute(deps, resolveLibrary(input, deps.config));
  const local = plan.backend === 'sqlite' || plan.backend === 'localApi' ? plan.local : undefined;
  if (local?.libraryID === undefined)
    return { reason: 'the library is not read from the desktop’s zotero.sqlite' };
  const { zoteroRetractions } = await import('./zotero-retractions.js');
  try {
    const found = await zoteroRetractions(
      deps,
      local.libraryID,
      items.map((i) => i.key),
    );
    return found.flags ? { flags: found.flags } : { reason: found.reason };
  } catch (error) {
    deps.log.debug(`Could not read Zotero's retractedItems: ${String(error)}`);
    return { reason: `zotero.sqlite could not be read (${(error as Error).message})` };
  }
}
