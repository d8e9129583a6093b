/**
 * `zotero_import`: items from identifiers (DOIs via Crossref then DataCite, arXiv ids via the
 * arXiv API, ISBNs via Open Library then the Library of Congress, web pages by their embedded
 * metadata or the DOI they name) and from BibTeX, RIS and CSL-JSON records, added to a Web API
 * library.
 *
 * Order of work: the input is read offline (unrecognised lines fail there, without a request);
 * the library is opened (key check, write access); web pages are fetched and read (a page that
 * names a DOI or an arXiv id becomes that identifier, its own metadata kept as the fallback);
 * entries repeated within the input are
 * folded onto their first occurrence; the duplicate check finds items the library already has
 * with the same DOI or arXiv id (reported as `unchanged` with the existing key, nothing added,
 * unless `allow_duplicates`); the rest are resolved and written 50 at a time (one batch `POST`
 * per 50, with a write token), with a progress event after each batch.
 *
 * Duplicate check cost: one probe (`items/top?limit=1`) for the library's size, then whichever
 * is cheaper, one page per 100 items of the library (`items/top`, paged) or one search per
 * identifier (`items?q=…&qmode=everything`; an ISBN is searched as ISBN-13 and as ISBN-10).
 */
import { toZoteusError, ZoteusError, type ErrorCode } from '../errors.js';
import type { LibraryArgs } from '../library/address.js';
import { webClient } from '../library/keys.js';
import { openWebLibrary, type WebLibrary } from '../library/web.js';
import type { Deps } from '../tool.js';
import { createObjects } from '../writes/index.js';
import { BATCH_SIZE, chunk, type CallContext, type ZoteroObject } from '../zotero/index.js';
import { unique } from './common.js';
import { resolveIsbns } from './books.js';
import { cslToZotero, type CslItem } from './csl.js';
import { arxivBase, identitiesOf, identitiesOfItem } from './identifiers.js';
import { isbn13to10, parseIsbn } from './isbn.js';
import { fetchPage, nothingOnPage, readPageMetadata } from './page-metadata.js';
import { entriesOf, type ImportEntry, type ImportSource } from './records.js';
import { resolveArxiv, resolveDoi, resolverSettings, type ResolverSettings } from './resolvers.js';
import { onlineSchema, type ItemSchema } from './schema.js';
import { validateItem } from './validate.js';
import { toolRef } from '../call/refs.js';

/** Entries resolved and written per batch (one batch POST each). */
export const IMPORT_BATCH = BATCH_SIZE;
/** DOI lookups in flight at once (and pages fetched at once). */
const RESOLVE_CONCURRENCY = 4;
export const IMPORT_PHASE = 'batch_add';
/** Progress of fetching and reading web pages, before the batches. */
export const PAGES_PHASE = 'read_pages';

export interface ImportInput extends LibraryArgs, ImportSource {
  collection_key?: string | undefined;
  tags?: readonly string[] | undefined;
  allow_duplicates?: boolean | undefined;
}

export interface EntryError {
  code: string;
  message: string;
  retryable: boolean;
}

export interface ImportOutput {
  succeeded: Array<{ entry: string; key: string; itemType?: string; title?: string }>;
  unchanged: Array<{ entry: string; key: string; reason: 'duplicate' | 'repeated' }>;
  failed: Array<{ entry: string; error: EntryError }>;
  /** Entries in the input. */
  total: number;
  libraryVersion?: number;
}

function entryError(error: unknown): EntryError {
  const e = toZoteusError(error);
  return { code: e.code, message: e.message, retryable: e.retryable };
}

async function mapLimit<T, R>(list: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(list.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < list.length) {
      const i = next++;
      out[i] = await fn(list[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, worker));
  return out;
}

/** An entry as import works on it: a web page's entry knows the page it was read from. */
interface Entry extends ImportEntry {
  page?: {
    /** The page's URL (fragment dropped): the item's `url`, and an identity of the entry. */
    url: string;
    host: string;
    /** The page's own metadata, used when the DOI or arXiv id it names cannot be resolved. */
    fallback?: CslItem;
  };
}

/** What to search for an entry, and the identities it stands for. */
interface Probe {
  ids: string[];
  queries: string[];
}

/** The identities of an entry: its identifier's, and the page it came from. */
function idsOf(entry: Entry): string[] {
  const ids = entry.identifier ? identitiesOf(entry.identifier) : [];
  if (entry.page && entry.identifier?.kind !== 'url')
    ids.push(...identitiesOf({ kind: 'url', value: entry.page.url }));
  return ids;
}

function probeOf(entry: Entry): Probe | undefined {
  const id = entry.identifier;
  if (!id) return undefined;
  const isbn10 = id.kind === 'isbn' ? isbn13to10(id.value) : undefined;
  const queries = id.kind === 'arxiv' ? [arxivBase(id.value)] : isbn10 ? [id.value, isbn10] : [id.value];
  return { ids: idsOf(entry), queries };
}

/**
 * Existing items of the library carrying any of the probes' identities: identity → item key.
 * Items in the trash do not count (adding a paper again after trashing it is not a duplicate).
 */
export async function findExisting(
  lib: WebLibrary,
  probes: readonly Probe[],
  call: CallContext,
  noteVersion: (v: number | undefined) => void,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (probes.length === 0) return found;
  const wanted = new Set(probes.flatMap((p) => p.ids));
  const index = (objects: readonly ZoteroObject[]): void => {
    for (const object of objects) {
      const data = (object.data ?? {}) as Record<string, unknown>;
      if (data.deleted) continue;
      for (const id of identitiesOfItem(data))
        if (wanted.has(id) && !found.has(id)) found.set(id, object.key);
    }
  };
  const top = `/${lib.prefix}/items/top`;
  const size = await lib.client.request('GET', top, { query: { limit: 1 }, call });
  noteVersion(size.lastModifiedVersion);
  const total = size.totalResults;
  if (total === 0) return found;
  let rest = probes;
  if (total !== undefined && Math.ceil(total / 100) <= probes.length) {
    const listing = await lib.client.listAll<ZoteroObject>(top, { call });
    noteVersion(listing.libraryVersion);
    index(listing.objects);
    if (listing.complete) return found;
    rest = probes.filter((p) => !p.ids.some((id) => found.has(id)));
  }
  const queries = unique(rest.flatMap((p) => p.queries));
  await Promise.all(
    queries.map(async (q) => {
      const answer = await lib.client.request<ZoteroObject[]>('GET', `/${lib.prefix}/items`, {
        query: { q, qmode: 'everything', limit: 25 },
        call,
      });
      noteVersion(answer.lastModifiedVersion);
      if (Array.isArray(answer.data)) index(answer.data);
    }),
  );
  return found;
}

type Resolution = { item: Record<string, unknown> } | { error: ZoteusError };

/**
 * An entry's resolution, with what its page adds: the page's URL when the item has none, and
 * the page's own metadata when the DOI or arXiv id it names is unknown.
 */
function withPage(schema: ItemSchema, e: Entry, r: Resolution): Resolution {
  if (!e.page) return r;
  if ('error' in r) {
    if (r.error.code !== 'not_found' || !e.page.fallback) return r;
    return { item: cslToZotero(schema, e.page.fallback, { libraryCatalog: e.page.host }) };
  }
  if (r.item.url === undefined && schema.types.get(String(r.item.itemType))?.fields.has('url'))
    return { item: { ...r.item, url: e.page.url } };
  return r;
}

/**
 * Resolves one batch: records (and pages' own metadata) are mapped as they are; DOIs looked up;
 * arXiv ids in one request; ISBNs in one request per catalogue.
 */
async function resolveBatch(
  deps: Deps,
  settings: ResolverSettings,
  schema: ItemSchema,
  batch: readonly Entry[],
): Promise<Map<Entry, Resolution>> {
  const out = new Map<Entry, Resolution>();
  const set = (e: Entry, r: Resolution): void => void out.set(e, withPage(schema, e, r));
  const arxivEntries = batch.filter((e) => !e.csl && e.identifier?.kind === 'arxiv');
  const doiEntries = batch.filter((e) => !e.csl && e.identifier?.kind === 'doi');
  const isbnEntries = batch.filter((e) => !e.csl && e.identifier?.kind === 'isbn');
  for (const e of batch) {
    if (e.csl) set(e, { item: cslToZotero(schema, e.csl, e.page ? { libraryCatalog: e.page.host } : {}) });
  }
  const isbnOf = (e: Entry) => {
    const read = parseIsbn(e.entry);
    return read && 'isbn' in read
      ? read.isbn
      : { isbn13: e.identifier?.value as string, compact: e.identifier?.value as string };
  };
  const [arxiv, books] = await Promise.all([
    resolveArxiv(
      deps,
      settings,
      schema,
      arxivEntries.map((e) => e.identifier?.value as string),
    ),
    resolveIsbns(deps, settings, schema, isbnEntries.map(isbnOf)),
    mapLimit(doiEntries, RESOLVE_CONCURRENCY, async (e) => {
      try {
        const resolved = await resolveDoi(deps, settings, schema, e.identifier?.value as string);
        set(e, { item: resolved.item });
      } catch (error) {
        set(e, { error: toZoteusError(error) });
      }
    }),
  ]);
  const settle = (e: Entry, r: unknown, service: string): void =>
    set(
      e,
      r === undefined
        ? { error: new ZoteusError('internal_error', `${service} lookup lost an identifier.`) }
        : r instanceof ZoteusError
          ? { error: r }
          : { item: (r as { item: Record<string, unknown> }).item },
    );
  for (const e of arxivEntries) settle(e, arxiv.get(e.identifier?.value as string), 'arXiv');
  for (const e of isbnEntries) settle(e, books.get(e.identifier?.value as string), 'ISBN');
  return out;
}

/**
 * Fetches and reads the pages of the `url` entries, a few at a time: a page naming a DOI or an
 * arXiv id becomes that identifier (its own metadata the fallback), a page with metadata of its
 * own becomes a record, and a page with neither (or that cannot be fetched) fails on its own.
 */
async function readPages(
  deps: Deps,
  settings: ResolverSettings,
  entries: readonly Entry[],
): Promise<Entry[]> {
  const today = new Date(deps.clock.now()).toISOString().slice(0, 10);
  const total = entries.filter((e) => !e.error && e.identifier?.kind === 'url').length;
  const report = total > 1;
  let done = 0;
  if (report) deps.progress({ event: 'start', phase: PAGES_PHASE, done: 0, total });
  const read = await mapLimit(entries, RESOLVE_CONCURRENCY, async (e): Promise<Entry> => {
    if (e.error || e.identifier?.kind !== 'url') return e;
    const url = new URL(e.identifier.value);
    const settled = (entry: Entry): Entry => {
      done += 1;
      if (report && (done % 10 === 0 || done === total))
        deps.progress({ event: 'progress', phase: PAGES_PHASE, done, total });
      return entry;
    };
    try {
      const page = await fetchPage(deps, settings, url);
      const meta = readPageMetadata(page.html, url.href, today);
      const base = { url: url.href, host: url.host, ...(meta.csl ? { fallback: meta.csl } : {}) };
      if (meta.doi) return settled({ ...e, identifier: { kind: 'doi', value: meta.doi }, page: base });
      if (meta.arxiv) return settled({ ...e, identifier: { kind: 'arxiv', value: meta.arxiv }, page: base });
      if (meta.csl) return settled({ ...e, csl: meta.csl, page: { url: url.href, host: url.host } });
      return settled({ ...e, error: nothingOnPage(url.href) });
    } catch (error) {
      return settled({ ...e, error: toZoteusError(error) });
    }
  });
  if (report) deps.progress({ event: 'complete', phase: PAGES_PHASE, done: total, total });
  return read;
}

function titleOf(item: Record<string, unknown>): string | undefined {
  for (const [field, value] of Object.entries(item)) {
    if (/^(title|caseName|nameOfAct|subject)$/.test(field) && typeof value === 'string') return value;
  }
  return undefined;
}

export async function importItems(deps: Deps, input: ImportInput): Promise<ImportOutput> {
  const { source, entries: given } = entriesOf(input);
  const settings = resolverSettings(deps);
  const extraTags = unique((input.tags ?? []).map((t) => t.trim()).filter(Boolean));
  const client = await webClient(deps);
  const call = client.newCall();
  const lib = await openWebLibrary(deps, input, { access: 'write', call });
  let libraryVersion: number | undefined;
  const noteVersion = (v: number | undefined): void => {
    if (v !== undefined) libraryVersion = Math.max(libraryVersion ?? 0, v);
  };
  const schema = await onlineSchema(deps, lib.client, call);
  if (input.collection_key !== undefined) {
    const found = await lib.client.getByKeys(lib.prefix, 'collections', [input.collection_key], { call });
    noteVersion(found.libraryVersion);
    if (found.missing.length > 0) {
      throw new ZoteusError(
        'not_found',
        `Collection ${input.collection_key} does not exist in library ${lib.prefix}; nothing was added.`,
        {
          field: 'collection_key',
          hint: `${toolRef('zotero_list_collections', { q: 'TEXT' })} finds a collection by name and shows its key.`,
        },
      );
    }
  }

  // Web pages are read once the library is known to be writable: they may become identifiers.
  const entries: Entry[] = given.some((e) => e.identifier?.kind === 'url')
    ? await readPages(deps, settings, given)
    : given;

  const output: ImportOutput = { succeeded: [], unchanged: [], failed: [], total: entries.length };
  const errors = new Map<ImportEntry, ZoteusError>();
  const fail = (e: ImportEntry, error: unknown): void => {
    const err = toZoteusError(error);
    errors.set(e, err);
    output.failed.push({ entry: e.entry, error: entryError(err) });
  };
  const keyOf = new Map<ImportEntry, string>();
  // An entry's item key follows from its own text, so a retry of only the failed entries
  // (same idempotency key) gives each the key an earlier attempt may have created it under.
  const labelOf = new Map<ImportEntry, string>();
  const occurrences = new Map<string, number>();
  for (const e of entries) {
    const base = `import/${e.entry}\0${e.raw}`;
    const n = occurrences.get(base) ?? 0;
    occurrences.set(base, n + 1);
    labelOf.set(e, `${base}#${n}`);
  }

  // Repeats within the input fold onto their first occurrence.
  const firstOf = new Map<string, Entry>();
  const repeats: Array<{ entry: Entry; of: Entry }> = [];
  const work: Entry[] = [];
  for (const e of entries) {
    if (e.error) {
      fail(e, e.error);
      continue;
    }
    const ids = idsOf(e);
    const prior = ids.map((id) => firstOf.get(id)).find((p) => p !== undefined);
    if (prior) {
      repeats.push({ entry: e, of: prior });
      continue;
    }
    for (const id of ids) firstOf.set(id, e);
    work.push(e);
  }

  let toAdd = work;
  if (!input.allow_duplicates) {
    const probes = work.map(probeOf).filter((p): p is Probe => p !== undefined);
    const existing = await findExisting(lib, probes, call, noteVersion);
    toAdd = [];
    for (const e of work) {
      const key = idsOf(e)
        .map((id) => existing.get(id))
        .find(Boolean);
      if (key) {
        keyOf.set(e, key);
        output.unchanged.push({ entry: e.entry, key, reason: 'duplicate' });
      } else toAdd.push(e);
    }
  }

  const total = entries.length;
  let done = total - toAdd.length - repeats.length;
  const batched = source === 'file' || source === 'identifiers' || total > 1;
  if (batched) deps.progress({ event: 'start', phase: IMPORT_PHASE, done: 0, total });
  let aborted: ZoteusError | undefined;
  for (const batch of chunk(toAdd, IMPORT_BATCH)) {
    if (aborted) {
      const reason = aborted;
      for (const e of batch) {
        fail(
          e,
          new ZoteusError(reason.code, `Not attempted: an earlier batch failed (${reason.message})`, {
            retryable: reason.retryable,
          }),
        );
      }
      done += batch.length;
      continue;
    }
    const resolved = await resolveBatch(deps, settings, schema, batch);
    const writes: Array<{ entry: ImportEntry; item: Record<string, unknown> }> = [];
    for (const e of batch) {
      const r = resolved.get(e);
      if (!r || 'error' in r) {
        fail(e, r?.error ?? new ZoteusError('internal_error', 'Entry was not resolved.'));
        continue;
      }
      const item = { ...r.item };
      if (input.collection_key !== undefined) item.collections = [input.collection_key];
      if (extraTags.length) {
        const tags = Array.isArray(item.tags) ? (item.tags as Array<{ tag: string }>) : [];
        const names = new Set(tags.map((t) => t.tag));
        item.tags = [...tags, ...extraTags.filter((t) => !names.has(t)).map((tag) => ({ tag }))];
      }
      const problems = validateItem(schema, item, 0);
      if (problems.length > 0) {
        fail(
          e,
          new ZoteusError(
            'validation_error',
            `The metadata found does not fit Zotero's schema: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}.`,
          ),
        );
        continue;
      }
      writes.push({ entry: e, item });
    }
    if (writes.length > 0) {
      try {
        const result = await createObjects(lib.client, {
          library: lib.prefix,
          kind: 'items',
          objects: writes.map((w) => w.item),
          labels: writes.map((w) => labelOf.get(w.entry) as string),
          ids: deps.writeIds,
          call,
        });
        noteVersion(result.libraryVersion);
        for (const s of result.successful) {
          const w = writes[s.index];
          if (!w) continue;
          keyOf.set(w.entry, s.key);
          const title = titleOf(w.item);
          output.succeeded.push({
            entry: w.entry.entry,
            key: s.key,
            itemType: String(w.item.itemType),
            ...(title !== undefined ? { title } : {}),
          });
        }
        for (const f of result.failed) {
          const w = writes[f.index];
          if (!w) continue;
          const code = (f.reason as ErrorCode) ?? 'api_error';
          fail(
            w.entry,
            new ZoteusError(code, `Zotero refused the item (HTTP ${f.code}): ${f.message}`, {
              status: f.code,
            }),
          );
        }
      } catch (error) {
        aborted = toZoteusError(error);
        for (const w of writes) fail(w.entry, aborted);
      }
    }
    done += batch.length;
    if (batched) deps.progress({ event: 'progress', phase: IMPORT_PHASE, done, total });
  }

  for (const { entry, of } of repeats) {
    const key = keyOf.get(of);
    const err = errors.get(of);
    if (key) output.unchanged.push({ entry: entry.entry, key, reason: 'repeated' });
    else
      fail(
        entry,
        err ?? new ZoteusError('internal_error', `Entry ${entry.entry} repeats one that was not settled.`),
      );
  }
  if (batched) {
    deps.progress({
      event: 'complete',
      phase: IMPORT_PHASE,
      done: total,
      total,
      succeeded: output.succeeded.length,
      failed: output.failed.length,
    });
  }
  // One identifier asked for, one failure: its own error says more than a batch summary.
  if (
    !batched &&
    output.failed.length === 1 &&
    output.succeeded.length === 0 &&
    output.unchanged.length === 0
  ) {
    const only = entries[0];
    const err = only ? errors.get(only) : undefined;
    if (err) throw err;
  }
  if (libraryVersion !== undefined) output.libraryVersion = libraryVersion;
  return output;
}
