/**
 * `zotero_format_bibliography`: items of a library formatted in a CSL style by citeproc-js
 * (engine.ts), as a bibliography in the style's order or as one in-text citation (a cluster,
 * with locators). The items come by key, from a collection or from a search, through the
 * router, so the same items give the same bytes on every backend; a key that names no item is
 * one entry of `failed`, never left out without a word.
 */
import { ZoteusError } from '../errors.js';
import type { FailedEntry } from '../zotero/types.js';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import { keyedEntries, nothingUsable, readKeyedEntries } from '../items/read/entries.js';
import { localSchema } from '../items/schema.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { toCslJson } from './csl-json.js';
import type { CslItem } from './csl-types.js';
import type { StyleSource } from './styles.js';
import {
  openEngine,
  parseLocator,
  type CitationFormat,
  type CitationItemRef,
  type EngineInfo,
} from './engine.js';

import { CITE_DEFAULT_LIMIT, CITE_MAX_ITEMS } from './constants.js';

/** Items that are parts of works, not works: nothing to cite. */
export const NOT_CITABLE = new Set(['note', 'attachment', 'annotation']);

export interface CiteCitation {
  item_key: string;
  locator?: string | undefined;
  label?: string | undefined;
  prefix?: string | undefined;
  suffix?: string | undefined;
  suppress_author?: boolean | undefined;
}

export interface CiteInput extends LibraryArgs {
  item_keys?: string[] | undefined;
  citations?: CiteCitation[] | undefined;
  collection_key?: string | undefined;
  q?: string | undefined;
  mode?: 'bibliography' | 'citation' | undefined;
  style?: string | undefined;
  locale?: string | undefined;
  format?: CitationFormat | undefined;
  /** CLI `--locator`: one per key, in order ("12", "page 12-14", "chapter 3"). */
  locators?: string[] | undefined;
  start?: number | undefined;
  limit?: number | undefined;
  /** `local` (default): citeproc-js in Zoteus, every backend; `zotero`: Zotero's own renderer. */
  engine?: 'local' | 'zotero' | undefined;
}

/** The style used; `source: zotero` when Zotero formatted with its own copy of it. */
export type CiteStyle = Omit<EngineInfo['style'], 'source'> & { source: StyleSource | 'zotero' };

export interface CiteOutput extends Answered {
  mode: 'bibliography' | 'citation';
  /** Which engine ran. */
  engine: 'local' | 'zotero';
  style: CiteStyle;
  locale: string;
  format: CitationFormat;
  /** The whole answer as one text: the bibliography's entries one per line, or the citation. */
  text: string;
  /** Bibliography: one entry per item, in the style's order. */
  entries: Array<{ item_key: string; text: string }>;
  /** The item keys formatted. */
  succeeded: string[];
  failed: FailedEntry[];
  warnings: string[];
  /** Collection or search: how many items match, and where the next page starts. */
  totalResults?: number | undefined;
  nextStart?: number | undefined;
  /** The size bound cut the answer short: `nextStart` (a listing) or `remaining` (keys) go on. */
  truncated?: boolean | undefined;
  remaining?: string[] | undefined;
}

interface Source {
  items: WebApiItem[];
  /** A listing's page as listed (notes and attachments included), for where the next page starts. */
  listed: WebApiItem[];
  failed: FailedEntry[];
  totalResults?: number;
  nextStart?: number;
}

/**
 * The items `keys` name, in their order, from those `found`: each key that names no item, or a
 * note or attachment, one failed entry (at the key's index); a repeated key formatted once.
 */
/** Entries of a bibliography by key (items/read/entries.ts): notes and attachments are no works to cite. */
export function byKeyEntries<T extends WebApiItem>(
  keys: readonly string[],
  found: readonly T[],
  library: string,
): { items: T[]; failed: FailedEntry[] } {
  return keyedEntries(keys, found, library, notCitable);
}

/** Why an item cannot be cited (a note, an attachment, an annotation), or undefined. */
function notCitable(item: WebApiItem): string | undefined {
  if (!NOT_CITABLE.has(String(item.data.itemType))) return undefined;
  const parent = typeof item.data.parentItem === 'string' ? ` (its parent is ${item.data.parentItem})` : '';
  return `${item.key} is a ${String(item.data.itemType)}, not a work to cite${parent}.`;
}

/** The items to format: by key (each missing one a failed entry), or a page of a listing. */
async function itemsOf(
  input: CiteInput,
  reader: Awaited<ReturnType<typeof openReader>>['reader'],
  keys: readonly string[],
  library: string,
): Promise<Source> {
  if (keys.length > 0) {
    const { items, failed } = await readKeyedEntries(reader, keys, library, notCitable);
    return { items, listed: items, failed };
  }
  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? CITE_DEFAULT_LIMIT, CITE_MAX_ITEMS);
  const page = await reader.items({
    top: true,
    sort: 'dateAdded',
    direction: 'asc',
    start,
    limit,
    ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
    ...(input.q !== undefined ? { q: input.q } : {}),
  });
  const items = page.items.filter((i) => !NOT_CITABLE.has(String(i.data.itemType)));
  const end = start + page.items.length;
  return {
    items,
    listed: page.items,
    failed: [],
    totalResults: page.totalResults,
    ...(end < page.totalResults && page.items.length > 0 ? { nextStart: end } : {}),
  };
}

/** A bibliography of `csl` as the answer holds it: entries, their text, and what was said. */
function bibliographyAnswer(
  engine: Awaited<ReturnType<typeof openEngine>>,
  csl: readonly CslItem[],
  deps: Deps,
): { text: string; entries: Array<{ item_key: string; text: string }>; warnings: string[] } {
  const bib = engine.bibliography(csl, deps);
  const entries = bib.entries.map((e) => ({ item_key: e.id, text: e.text.replace(/\n+$/, '') }));
  const warnings = [
    ...engine.info.warnings,
    ...(bib.hasBibliography ? [] : [`The style ${engine.info.style.id} has no bibliography.`]),
    ...bib.errors,
  ];
  const text =
    engine.info.format === 'html'
      ? `${bib.meta.bibStart ?? ''}${entries.map((e) => e.text).join('\n')}${bib.meta.bibEnd ?? ''}`
      : entries.map((e) => e.text).join(engine.info.format === 'markdown' ? '\n\n' : '\n');
  return { text, entries, warnings };
}

/** The citation items of a cluster: `citations` as given, else each key with its locator. */
function clusterOf(input: CiteInput, keys: readonly string[]): CiteCitation[] {
  if (input.citations?.length) return input.citations;
  const locators = input.locators ?? [];
  if (locators.length > keys.length) {
    throw new ZoteusError(
      'validation_error',
      `${locators.length} locators for ${keys.length} item${keys.length === 1 ? '' : 's'}: one locator per item, in order.`,
      { field: 'locators', hint: 'Give one locator per item key, in the order of the keys.' },
    );
  }
  return keys.map((item_key, i) => {
    const raw = locators[i]?.trim();
    if (!raw) return { item_key };
    const parsed = parseLocator(raw);
    return { item_key, locator: parsed.locator, ...(parsed.label ? { label: parsed.label } : {}) };
  });
}

export async function formatBibliography(deps: Deps, input: CiteInput): Promise<CiteOutput> {
  const mode = input.mode ?? (input.citations?.length ? 'citation' : 'bibliography');
  const byKey = input.citations?.length ? input.citations.map((c) => c.item_key) : (input.item_keys ?? []);
  const listing = input.collection_key !== undefined || input.q !== undefined;
  if (byKey.length > 0 && listing) {
    throw new ZoteusError('validation_error', 'Give item keys, or a collection or a search, not both.', {
      field: input.collection_key !== undefined ? 'collection_key' : 'q',
    });
  }
  if (byKey.length === 0 && !listing) {
    throw new ZoteusError(
      'validation_error',
      'Nothing to format: give item keys, a collection or a search.',
      {
        field: 'item_keys',
      },
    );
  }
  if (mode === 'citation' && byKey.length === 0) {
    throw new ZoteusError('validation_error', 'A citation cites items by key: give item keys.', {
      field: 'item_keys',
    });
  }
  if (input.engine === 'zotero') {
    const { formatWithZotero } = await import('./zotero-engine.js');
    return formatWithZotero(deps, input, mode, byKey);
  }
  // The style and locale first: a wrong one is refused before the library is read.
  const engine = await openEngine(deps, { style: input.style, locale: input.locale, format: input.format });
  const { reader, route } = await openReader(deps, input);
  const source = await itemsOf(input, reader, byKey, route.library);
  if (source.items.length === 0 && source.failed.length > 0)
    throw await nothingUsable(deps, source.failed, route.library);
  const schema = localSchema(deps.config);
  // The item key as the CSL id: entries and citations say which item they are.
  const csl: CslItem[] = source.items.map((item) => toCslJson(item, schema, { id: item.key }));
  const base = {
    mode,
    engine: 'local' as const,
    style: engine.info.style,
    locale: engine.info.locale,
    format: engine.info.format,
    succeeded: source.items.map((i) => i.key),
    failed: source.failed,
    ...(source.totalResults !== undefined ? { totalResults: source.totalResults } : {}),
    ...(source.nextStart !== undefined ? { nextStart: source.nextStart } : {}),
    ...answered(route),
  };
  if (mode === 'bibliography') {
    // Bounded: the entries and the text hold each entry once each, so together they stay
    // within the rows budget; a longer bibliography keeps the first items and says how to go on.
    let count = csl.length;
    for (;;) {
      const answer = bibliographyAnswer(engine, csl.slice(0, count), deps);
      const size = jsonBytes(answer.entries) + jsonBytes(answer.text);
      if (size <= ROWS_BUDGET || count <= 1) {
        const kept = source.items.slice(0, count);
        const left = source.items.slice(count);
        const cut = left.length > 0;
        const start = input.start ?? 0;
        return {
          ...base,
          ...answer,
          succeeded: kept.map((i) => i.key),
          ...(cut ? { truncated: true } : {}),
          ...(cut && byKey.length > 0 ? { remaining: left.map((i) => i.key) } : {}),
          ...(cut && byKey.length === 0
            ? { nextStart: start + source.listed.indexOf(left[0] as WebApiItem) }
            : {}),
        };
      }
      count = Math.max(1, Math.min(count - 1, Math.floor((count * ROWS_BUDGET) / size)));
    }
  }
  const found = new Set(source.items.map((i) => i.key));
  const items: CitationItemRef[] = clusterOf(input, byKey)
    .filter((c) => found.has(c.item_key))
    .map((c) => ({
      id: c.item_key,
      locator: c.locator,
      label: c.label,
      prefix: c.prefix,
      suffix: c.suffix,
      suppressAuthor: c.suppress_author,
    }));
  const cited = engine.citations(
    csl,
    [{ items, noteIndex: engine.info.style.class === 'note' ? 1 : 0 }],
    deps,
  );
  return {
    ...base,
    text: cited.citations[0]?.text ?? '',
    entries: [],
    warnings: [...engine.info.warnings, ...cited.errors],
  };
}
