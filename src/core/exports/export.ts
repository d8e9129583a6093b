/**
 * `zotero_export`: items as a BibTeX, BibLaTeX, RIS or CSL-JSON file. Without `save_path` the
 * text is the answer, a bounded page of items at a time (`nextStart`); with it the file is
 * written atomically under the evidence table's save rules, and a whole library is streamed
 * into it page by page (memory stays flat, progress events on the way). Keys come from
 * library-keys.ts; a key that names no item is one entry of `failed`.
 *
 * From zotero.sqlite a listing (the library, a collection) is its keys, read once in one
 * query, then its items hydrated by key a page of `SQLITE_PAGE` at a time; each page's
 * entries go to the file as one piece before the next page is read. Other backends page
 * through the reader's listing.
 */
import { ZoteusError } from '../errors.js';
import type { FailedEntry } from '../zotero/types.js';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import { askableKeys, keyedEntries, nothingUsable, readKeyedEntries } from '../items/read/entries.js';
import { localSchema, type ItemSchema } from '../items/schema.js';
import type { LibraryArgs } from '../library/address.js';
import type { LibraryReader, WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { itemUri, toCslJson } from '../citations/csl-json.js';
import { bibtexEntry, BIBTEX_ENTRY_SEPARATOR, defaultCharset, isExportable, type Charset } from './bibtex.js';
import { desktopRoute, libraryKeys, type DirectSqlite, type LibraryKeys } from './library-keys.js';
import type { KeySource } from './keys.js';
import { risRecord, RIS_RECORD_SEPARATOR } from './ris.js';

export const EXPORT_FORMATS = ['bibtex', 'biblatex', 'ris', 'csljson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Items per page of an answer (text in the envelope), and read per request when streaming. */
export const EXPORT_DEFAULT_LIMIT = 100;
export const EXPORT_MAX_LIMIT = 1000;
/** Items per request when a listing is read through the reader (the Web API's largest page). */
const READ_PAGE = 100;
/**
 * Items read at a time from zotero.sqlite (and written to the file as one piece). On 50,000
 * items (bench/export.bench-run.ts) the whole export peaked at 188 to 197 MB with 100 a page,
 * at 237 to 274 MB with 250 to 1,000 a page, whose CPU time was not measurably less.
 */
export const SQLITE_PAGE = 100;

export interface ExportInput extends LibraryArgs {
  item_keys?: string[] | undefined;
  collection_key?: string | undefined;
  all?: boolean | undefined;
  format?: ExportFormat | undefined;
  charset?: Charset | undefined;
  save_path?: string | undefined;
  overwrite?: boolean | undefined;
  start?: number | undefined;
  limit?: number | undefined;
  /** `local` (default): Zoteus' writers, every backend; `zotero`: Zotero's own translators. */
  engine?: 'local' | 'zotero' | undefined;
}

export interface ExportOutput extends Answered {
  /** Which engine wrote the export. */
  engine: 'local' | 'zotero';
  format: ExportFormat;
  /** The export, when not saved to a file. */
  text?: string | undefined;
  /** Where it was saved, and how big it is. */
  saved?: { path: string; bytes: number } | undefined;
  /** The item keys exported. */
  succeeded: string[];
  failed: FailedEntry[];
  /** BibTeX and BibLaTeX: each exported item's citation key and where it came from. */
  keys?: Array<{ item_key: string; citation_key: string; source: KeySource }> | undefined;
  /** Over which items generated keys are unique, and where Better BibTeX's keys came from. */
  unique?: 'library' | 'export' | undefined;
  betterBibtex?: string | undefined;
  /** Citation keys that more than one item of the library has as its own. */
  duplicateKeys?: Array<{ citationKey: string; itemKeys: string[] }> | undefined;
  totalResults?: number | undefined;
  nextStart?: number | undefined;
  truncated?: boolean | undefined;
  /** Keys given that did not fit in this answer. */
  remaining?: string[] | undefined;
}

interface Writer {
  header: string;
  entry(item: WebApiItem, index: number): string;
  separator: string;
  footer: string;
}

function writerFor(
  format: ExportFormat,
  charset: Charset | undefined,
  schema: ItemSchema,
  keys: LibraryKeys,
): Writer {
  const keyOf = (item: WebApiItem) => keys.assignment.get(item.key);
  switch (format) {
    case 'bibtex':
    case 'biblatex': {
      const biblatex = format === 'biblatex';
      const options = { biblatex, charset: charset ?? defaultCharset(biblatex), schema };
      return {
        header: '',
        entry: (item) => bibtexEntry(item, keyOf(item)?.citationKey ?? item.key, options),
        separator: BIBTEX_ENTRY_SEPARATOR,
        footer: '',
      };
    }
    case 'ris':
      return {
        header: '',
        entry: (item) => risRecord(item, { schema }),
        separator: RIS_RECORD_SEPARATOR,
        footer: '',
      };
    case 'csljson':
      // Zotero's CSL JSON export names an item by its citation key when it has one of its own.
      return {
        header: '[\n',
        entry: (item) => {
          const own = keyOf(item);
          const id = own && own.source !== 'generated' ? own.citationKey : itemUri(item);
          return JSON.stringify(toCslJson(item, schema, { id }), null, 2).replace(/^/gm, '  ');
        },
        separator: ',\n',
        footer: '\n]\n',
      };
  }
}

const usesKeys = (format: ExportFormat) =>
  format === 'bibtex' || format === 'biblatex' || format === 'csljson';

/**
 * Items by key, each missing one a failed entry, notes and attachments too (they have no entry).
 * With `direct`, read from zotero.sqlite by key, not through the reader's listing (which
 * loads the library's in-memory table first).
 */
export async function itemsByKey(
  reader: LibraryReader,
  keys: readonly string[],
  library: string,
  direct?: DirectSqlite,
): Promise<{ items: WebApiItem[]; failed: FailedEntry[] }> {
  const unusable = (item: WebApiItem) =>
    isExportable(item)
      ? undefined
      : `${item.key} is a ${String(item.data.itemType)}, which has no entry of its own.`;
  if (!direct) return readKeyedEntries(reader, keys, library, unusable);
  const asked = askableKeys(keys);
  const found = asked.length ? await direct.sqlite.itemsByKeys(direct.libraryID, asked) : [];
  return keyedEntries(keys, found, library, unusable);
}

type ListingQuery = Record<string, unknown> & { collectionKey?: string };

/** A listing read a page at a time; `listed`: how many of its rows the page covered. */
interface Listing {
  pageSize: number;
  read(start: number, limit: number): Promise<{ items: WebApiItem[]; totalResults: number; listed: number }>;
}

/**
 * The listing's pages: from zotero.sqlite its keys (one query), then its items by key; else
 * the reader's listing. A collection zotero.sqlite does not hold is the reader's own
 * `not_found`.
 */
async function openListing(
  reader: LibraryReader,
  listing: ListingQuery,
  direct: DirectSqlite | undefined,
): Promise<Listing> {
  const keys = direct
    ? await direct.sqlite.exportListingKeys(
        direct.libraryID,
        listing.collectionKey !== undefined ? { collectionKey: listing.collectionKey } : {},
      )
    : undefined;
  if (direct && keys === undefined) await reader.items({ ...listing, start: 0, limit: 1 });
  if (!direct || keys === undefined) {
    return {
      pageSize: READ_PAGE,
      async read(start, limit) {
        const page = await reader.items({ ...listing, start, limit });
        return { items: page.items, totalResults: page.totalResults, listed: page.items.length };
      },
    };
  }
  return {
    pageSize: SQLITE_PAGE,
    async read(start, limit) {
      const wanted = keys.slice(start, start + limit);
      const items = wanted.length ? await direct.sqlite.itemsByKeys(direct.libraryID, wanted) : [];
      return { items, totalResults: keys.length, listed: wanted.length };
    },
  };
}

function checkInput(input: ExportInput): void {
  const ways = [
    input.item_keys?.length ? 'item_keys' : undefined,
    input.collection_key !== undefined ? 'collection_key' : undefined,
    input.all ? 'all' : undefined,
  ].filter((w): w is string => w !== undefined);
  if (ways.length === 0)
    throw new ZoteusError('validation_error', 'Nothing to export: give item keys, a collection, or all.', {
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
  if (
    input.charset !== undefined &&
    input.format !== undefined &&
    input.format !== 'bibtex' &&
    input.format !== 'biblatex'
  )
    throw new ZoteusError(
      'validation_error',
      `charset applies to bibtex and biblatex, not ${input.format}.`,
      {
        field: 'charset',
      },
    );
}

/**
 * Writes the export's text, as it is produced, to the file `save_path` names, and says where
 * (the tool supplies it: files are saved by render/save.ts, under its rules).
 */
export type SaveText = (path: string, chunks: AsyncIterable<string>) => Promise<string>;

export async function exportItems(deps: Deps, input: ExportInput, save?: SaveText): Promise<ExportOutput> {
  checkInput(input);
  const format = input.format ?? 'bibtex';
  if (input.engine === 'zotero') {
    const { exportWithZotero } = await import('./zotero-export.js');
    return exportWithZotero(deps, input, format, save);
  }
  const schema = localSchema(deps.config);
  const { reader, route } = await openReader(deps, input);
  const listing: ListingQuery | undefined = input.item_keys?.length
    ? undefined
    : {
        top: true,
        sort: 'dateAdded',
        direction: 'asc' as const,
        ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
      };
  // Where the router reads the library: zotero.sqlite is read directly (keys, listings).
  const desktop = await desktopRoute(deps, input);

  // Saved: every item (a whole library streams into the file); else one bounded page.
  if (input.save_path !== undefined) {
    if (!save)
      throw new ZoteusError(
        'internal_error',
        'Internal error in Zoteus (an export to save without a saver).',
      );
    return saveExport(deps, input, format, schema, reader, route, listing, desktop, save);
  }

  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? EXPORT_DEFAULT_LIMIT, EXPORT_MAX_LIMIT);
  let items: WebApiItem[];
  let failed: FailedEntry[] = [];
  let totalResults: number | undefined;
  let listed: WebApiItem[] = [];
  if (listing) {
    const page = await (await openListing(reader, listing, desktop.sqlite)).read(start, limit);
    listed = page.items;
    items = page.items.filter(isExportable);
    totalResults = page.totalResults;
  } else {
    ({ items, failed } = await itemsByKey(reader, input.item_keys ?? [], route.library, desktop.sqlite));
    listed = items;
  }
  if (items.length === 0 && failed.length > 0) throw await nothingUsable(deps, failed, route.library);
  const keys = usesKeys(format) ? await libraryKeys(deps, input, reader, items, desktop) : undefined;
  const writer = writerFor(format, input.charset, schema, keys ?? emptyKeys());
  // Bounded: entries up to the rows budget; the rest is the next page.
  const parts: string[] = [];
  let used = 0;
  let kept = 0;
  for (const item of items) {
    const entry = writer.entry(item, kept);
    const size = jsonBytes(entry) + jsonBytes(writer.separator);
    if (kept > 0 && used + size > ROWS_BUDGET) break;
    used += size;
    parts.push(entry);
    kept += 1;
  }
  const exported = items.slice(0, kept);
  const cut = kept < items.length;
  const end = cut ? start + listed.indexOf(items[kept] as WebApiItem) : start + listed.length;
  const more = listing ? end < (totalResults ?? 0) && listed.length > 0 : false;
  return {
    engine: 'local',
    format,
    text: `${writer.header}${parts.join(writer.separator)}${writer.footer}`,
    succeeded: exported.map((i) => i.key),
    failed,
    ...keyFields(keys, exported),
    ...(totalResults !== undefined ? { totalResults } : {}),
    ...(more || (cut && listing) ? { nextStart: end } : {}),
    ...(cut ? { truncated: true } : {}),
    ...(cut && !listing ? { remaining: items.slice(kept).map((i) => i.key) } : {}),
    ...answered(route),
  };
}

function emptyKeys(): LibraryKeys {
  return {
    assignment: {
      unique: 'export',
      size: 0,
      get: () => undefined,
      entries: () => new Map().entries(),
      duplicates: [],
    },
    unique: 'export',
    betterBibtex: { from: null, reason: 'not needed for this format' },
  };
}

function keyFields(keys: LibraryKeys | undefined, exported: readonly WebApiItem[]): Partial<ExportOutput> {
  if (!keys) return {};
  const listed = exported.flatMap((item) => {
    const k = keys.assignment.get(item.key);
    return k ? [{ item_key: item.key, citation_key: k.citationKey, source: k.source }] : [];
  });
  return {
    keys: listed,
    unique: keys.unique,
    betterBibtex:
      keys.betterBibtex.from === null
        ? `not used: ${keys.betterBibtex.reason}`
        : `read from its ${keys.betterBibtex.from === 'sqlite' ? 'database' : 'running app'}`,
    ...(keys.assignment.duplicates.length ? { duplicateKeys: keys.assignment.duplicates.slice(0, 100) } : {}),
  };
}

async function saveExport(
  deps: Deps,
  input: ExportInput,
  format: ExportFormat,
  schema: ItemSchema,
  reader: LibraryReader,
  route: Awaited<ReturnType<typeof openReader>>['route'],
  listing: ListingQuery | undefined,
  desktop: Awaited<ReturnType<typeof desktopRoute>>,
  save: SaveText,
): Promise<ExportOutput> {
  let failed: FailedEntry[] = [];
  let byKey: WebApiItem[] | undefined;
  if (!listing) {
    ({ items: byKey, failed } = await itemsByKey(
      reader,
      input.item_keys ?? [],
      route.library,
      desktop.sqlite,
    ));
    if (byKey.length === 0) throw await nothingUsable(deps, failed, route.library);
  }
  // The listing's keys first: a collection that does not exist fails before any other read.
  const pages = listing ? await openListing(reader, listing, desktop.sqlite) : undefined;
  // Keys over the library (or the items given): known before the first entry is written.
  const keys = usesKeys(format) ? await libraryKeys(deps, input, reader, byKey ?? [], desktop) : undefined;
  const writer = writerFor(format, input.charset, schema, keys ?? emptyKeys());
  const exported: string[] = [];
  let bytes = 0;
  let totalResults: number | undefined;
  /** The file's text: the header, then each page's entries as one piece, then the footer. */
  async function* chunks(): AsyncGenerator<string> {
    const emit = (text: string) => {
      bytes += Buffer.byteLength(text, 'utf8');
      return text;
    };
    yield emit(writer.header);
    const entries = (items: readonly WebApiItem[]): string => {
      let text = '';
      for (const item of items) {
        if (!isExportable(item)) continue;
        if (exported.length > 0) text += writer.separator;
        text += writer.entry(item, exported.length);
        exported.push(item.key);
      }
      return text;
    };
    if (byKey) {
      for (let start = 0; start < byKey.length; start += SQLITE_PAGE)
        yield emit(entries(byKey.slice(start, start + SQLITE_PAGE)));
    } else if (pages) {
      const phase = 'export';
      for (let start = 0; ; start += pages.pageSize) {
        const page = await pages.read(start, pages.pageSize);
        if (totalResults === undefined) {
          totalResults = page.totalResults;
          deps.progress({ event: 'start', phase, done: 0, total: totalResults });
        }
        const text = entries(page.items);
        if (text) yield emit(text);
        deps.progress({
          event: 'progress',
          phase,
          done: Math.min(start + page.listed, totalResults),
          total: totalResults,
        });
        if (page.listed < pages.pageSize || start + page.listed >= page.totalResults) break;
      }
      deps.progress({ event: 'complete', phase, done: totalResults ?? 0, total: totalResults ?? 0 });
    }
    yield emit(writer.footer);
  }
  const path = await save(input.save_path as string, chunks());
  const shown = exported.slice(0, 1000);
  const keyInfo = keyFields(
    keys,
    shown.map((k) => ({ key: k }) as WebApiItem),
  );
  return {
    engine: 'local',
    format,
    saved: { path, bytes },
    succeeded: shown,
    failed,
    ...keyInfo,
    ...(totalResults !== undefined ? { totalResults } : {}),
    ...(exported.length > shown.length ? { truncated: true } : {}),
    ...answered(route),
  };
}
