/**
 * The `zotero` engine of `zotero_format_bibliography` (issue 17, deliverable 5): Zotero formats
 * the items itself, through the Web API or the desktop's local API (`include=data,bib` or
 * `include=data,citation` with `style` and `locale` on an item listing, `citations.md`), so the
 * text is exactly what Zotero produces. zotero.sqlite has no renderer: a library the router reads
 * from it goes to the Web API when a key is configured, and is refused otherwise (never the local
 * engine in its place). The style is resolved as the local engine resolves it (an unknown id gets
 * the same "did you mean"), for its description; Zotero formats with its own copy.
 *
 * Requests: one per 50 item keys (`itemKey`), or one per page of 100 of a collection or search
 * (one on the local API, which does not page). Zotero formats each item on its own here
 * (`include=bib`), in the order given or listed.
 */
import { isZoteusError, ZoteusError } from '../errors.js';
import { paramRef, onlyOn } from '../call/refs.js';
import { jsonBytes, ROWS_BUDGET } from '../items/read/bounds.js';
import { answered, type OpenedLibrary } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { WebApiItem } from '../library/port.js';
import { zoteroApiOf, type ZoteroApi } from '../library/readers/web.js';
import { askableKeys, nothingUsable } from '../items/read/entries.js';
import { ENABLE_LOCAL_API_HINT } from '../local/local-api.js';
import type { Deps } from '../tool.js';
import { BATCH_SIZE, chunk, PAGE_LIMIT, type Query, type ZoteroResponse } from '../zotero/index.js';
import type { FailedEntry } from '../zotero/types.js';
import { failedEntry } from '../zotero/errors.js';
import { byKeyEntries, NOT_CITABLE, type CiteInput, type CiteOutput, type CiteStyle } from './cite.js';
import { CITATION_FORMATS, CITE_DEFAULT_LIMIT, CITE_MAX_ITEMS, type CitationFormat } from './constants.js';
import { htmlToMarkdown } from './engine.js';
import { normalizeLocaleTag, primaryDialect } from './locales.js';
import { isStylePath, resolveStyle, type ResolvedStyle } from './styles.js';

/** What `engine` takes: Zoteus' citeproc-js and writers, or Zotero's own renderer. */
export type Engine = 'local' | 'zotero';

export interface ZoteroRenderer extends OpenedLibrary {
  api: ZoteroApi;
}

/**
 * The library's reader with Zotero's renderer: the router's backend when it is the Web API or
 * the local API; for a library read from zotero.sqlite, the Web API when a key is configured;
 * else a `validation_error` saying which backend would be needed.
 */
export async function openZoteroRenderer(deps: Deps, args: LibraryArgs): Promise<ZoteroRenderer> {
  const { openLibraryReader, planRoute } = await import('../library/router.js');
  const { resolveLibrary } = await import('../library/address.js');
  const address = { library_id: args.library_id, library_type: args.library_type };
  const plan = await planRoute(deps, resolveLibrary(address, deps.config));
  if (plan.backend === 'sqlite' && deps.config.apiKey === undefined) {
    throw new ZoteusError(
      'validation_error',
      `Zotero's own renderer (${paramRef('engine', 'zotero')}) formats and exports through the Zotero Web API or the desktop app's local API, and ${plan.library} is read from zotero.sqlite, which has none: ${plan.reason}`,
      {
        field: 'engine',
        hint: `Start Zotero 7 or later with its local API enabled (${ENABLE_LOCAL_API_HINT.replace(/\.$/, '')}), or set ZOTERO_API_KEY${onlyOn('cli', ' (or ZOT_API_KEY)')} to use the Web API; or use ${paramRef('engine', 'local')}, which works offline on every backend.`,
      },
    );
  }
  const opened = await openLibraryReader(deps, address, plan.backend === 'sqlite' ? { prefer: 'web' } : {});
  const api = zoteroApiOf(opened.reader);
  if (!api) {
    throw new ZoteusError(
      'internal_error',
      `Internal error in Zoteus (the ${opened.route.backend} backend has no Zotero renderer).`,
    );
  }
  return { ...opened, api };
}

/** The style parameter Zotero takes: a repository id, else the style's URI (installed styles). */
export function zoteroStyleParam(style: Pick<ResolvedStyle, 'id' | 'uri'>): string {
  return style.uri === `http://www.zotero.org/styles/${style.id}` ? style.id : style.uri;
}

/** A request Zotero refused for its style or locale, in the caller's words; other errors as they are. */
export function zoteroRefusal(error: unknown, what: { style?: string; locale?: string }): unknown {
  if (!isZoteusError(error) || error.status !== 400) return error;
  // What Zotero said, after the request it answered (whose query names the style and locale too).
  const said = /HTTP 400 to [A-Z]+ \S+: ([\s\S]*)$/.exec(error.message)?.[1] ?? '';
  const field = /\blocale\b/i.test(said) ? 'locale' : /\bstyle\b/i.test(said) ? 'style' : undefined;
  if (!field) return error;
  const value = field === 'locale' ? what.locale : what.style;
  return new ZoteusError(
    'validation_error',
    `Zotero refused the ${field}${value ? ` ${value}` : ''}: ${said}`,
    {
      field,
      status: 400,
      hint: `Give a ${field} Zotero knows, or use ${paramRef('engine', 'local')}.`,
      cause: error,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Zotero's HTML as the answer's formats.

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos|nbsp);/g, (_all, body: string) => {
    if (body.startsWith('#x')) return String.fromCodePoint(parseInt(body.slice(2), 16));
    if (body.startsWith('#')) return String.fromCodePoint(Number(body.slice(1)));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }[body] as string;
  });
}

/** COinS spans (`<span class="Z3988" title="…"></span>`): metadata for browsers, no text. */
const COINS = /<span class="Z3988"[^>]*><\/span>/g;

/**
 * Zotero's HTML as plain text: tags stripped, entities decoded, the layout's line breaks and
 * indentation dropped, a space after the number column of a numbered style, `<br>` and list
 * items on lines of their own.
 */
export function htmlToText(html: string): string {
  return decodeEntities(
    html
      .replace(COINS, '')
      .replace(/\n\s*/g, '')
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/li>\s*(?=<li)/gi, '\n')
      .replace(/(<div class="csl-left-margin"[^>]*>[\s\S]*?<\/div>)/g, '$1 ')
      .replace(/<[^>]+>/g, ''),
  )
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

const BIB_BODY = /^\s*(<div class="csl-bib-body"[^>]*>)([\s\S]*)<\/div>\s*$/;

/** One item's `bib`: the wrapper Zotero put around it, and the entry inside. */
function splitBib(bib: string): { open: string; entry: string } {
  const m = BIB_BODY.exec(bib);
  return m ? { open: m[1] as string, entry: (m[2] as string).trim() } : { open: '', entry: bib.trim() };
}

function inFormat(html: string, format: CitationFormat): string {
  if (format === 'html') return html;
  return format === 'markdown' ? htmlToMarkdown(html.replace(COINS, '')) : htmlToText(html);
}

// ---------------------------------------------------------------------------------------------
// Formatting.

type Rendered = WebApiItem & { bib?: unknown; citation?: unknown };

function renderedList(response: ZoteroResponse, what: string): Rendered[] {
  if (!Array.isArray(response.data)) {
    throw new ZoteusError('api_error', `Zotero did not answer ${what} with a JSON list of items.`, {
      status: response.status,
    });
  }
  return response.data as Rendered[];
}

interface Source {
  items: Rendered[];
  listed: Rendered[];
  failed: FailedEntry[];
  totalResults?: number;
  nextStart?: number;
}

async function renderedItems(
  api: ZoteroApi,
  input: CiteInput,
  keys: readonly string[],
  output: Query,
  library: string,
): Promise<Source> {
  if (keys.length > 0) {
    const wellFormed = askableKeys(keys);
    const responses = await Promise.all(
      chunk(wellFormed, BATCH_SIZE).map((part) =>
        api.listItems({ keys: part, includeTrashed: true, limit: part.length }, output),
      ),
    );
    const found = responses.flatMap((r) => renderedList(r, 'the items by key'));
    const { items, failed } = byKeyEntries(keys, found, library);
    return { items, listed: items, failed };
  }
  const start = input.start ?? 0;
  const limit = Math.min(input.limit ?? CITE_DEFAULT_LIMIT, CITE_MAX_ITEMS);
  const listing = {
    top: true,
    sort: 'dateAdded',
    direction: 'asc' as const,
    ...(input.collection_key !== undefined ? { collectionKey: input.collection_key } : {}),
    ...(input.q !== undefined ? { q: input.q } : {}),
  };
  // The Web API pages by 100; the local API answers a page of any size at once.
  const step = api.backend === 'localApi' ? limit : Math.min(limit, PAGE_LIMIT);
  const first = await api.listItems({ ...listing, start, limit: step }, output);
  const total = first.totalResults ?? start + renderedList(first, 'the listing').length;
  const end = Math.min(start + limit, total);
  const starts: number[] = [];
  for (let s = start + step; s < end; s += step) starts.push(s);
  const rest = await Promise.all(
    starts.map((s) => api.listItems({ ...listing, start: s, limit: Math.min(step, end - s) }, output)),
  );
  const listed = [first, ...rest].flatMap((r) => renderedList(r, 'the listing')).slice(0, limit);
  const after = start + listed.length;
  return {
    items: listed.filter((i) => !NOT_CITABLE.has(String(i.data?.itemType))),
    listed,
    failed: [],
    totalResults: total,
    ...(after < total && listed.length > 0 ? { nextStart: after } : {}),
  };
}

function styleOf(style: ResolvedStyle): CiteStyle {
  const out: CiteStyle = {
    id: style.id,
    uri: style.uri,
    title: style.title,
    source: 'zotero',
    class: style.class,
    hasBibliography: style.hasBibliography,
  };
  if (style.parent) out.parent = style.parent;
  if (style.citationFormat) out.citationFormat = style.citationFormat;
  return out;
}

/** `zotero_format_bibliography` with `engine: zotero` (the checks common to both engines made). */
export async function formatWithZotero(
  deps: Deps,
  input: CiteInput,
  mode: 'bibliography' | 'citation',
  byKey: readonly string[],
): Promise<CiteOutput> {
  // What Zotero's API cannot do is refused before anything is read.
  if (input.style !== undefined && isStylePath(input.style)) {
    throw new ZoteusError(
      'validation_error',
      `Zotero's renderer takes a style of the Zotero style repository or one installed in Zotero, not a .csl file (${input.style}).`,
      { field: 'style', hint: `Give the style's id, or use ${paramRef('engine', 'local')} for a .csl file.` },
    );
  }
  if (mode === 'citation') {
    const c = input.citations?.[0];
    const located =
      (input.locators ?? []).some((l) => l.trim() !== '') ||
      (input.citations ?? []).some(
        (x) => x.locator || x.label || x.prefix || x.suffix || x.suppress_author !== undefined,
      );
    if (byKey.length > 1 || located) {
      throw new ZoteusError(
        'validation_error',
        byKey.length > 1
          ? `Zotero's API formats the citation of one item at a time, not a cluster of ${byKey.length}.`
          : `Zotero's API formats an item's citation as it is, without locators, labels, prefixes, suffixes or a suppressed author${c ? ` (${c.item_key})` : ''}.`,
        {
          field: input.citations?.length ? 'citations' : byKey.length > 1 ? 'item_keys' : 'locators',
          hint: `Use ${paramRef('engine', 'local')} for clusters and locators (the same citeproc-js Zotero uses).`,
        },
      );
    }
  }
  const format = input.format ?? 'text';
  if (!(CITATION_FORMATS as readonly string[]).includes(format))
    throw new ZoteusError('validation_error', `Unknown format "${String(format)}": text, html or markdown.`, {
      field: 'format',
    });
  const style = await resolveStyle(deps, input.style);
  const locale =
    input.locale !== undefined
      ? await primaryDialect(normalizeLocaleTag(input.locale))
      : (style.forceLocale ?? style.defaultLocale ?? 'en-US');
  const { api, route } = await openZoteroRenderer(deps, input);
  const include = mode === 'bibliography' ? 'bib' : 'citation';
  const styleParam = zoteroStyleParam(style);
  const output: Query = { include: `data,${include}`, style: styleParam, locale };
  let source: Source;
  try {
    source = await renderedItems(api, input, byKey, output, route.library);
  } catch (error) {
    throw zoteroRefusal(error, { style: styleParam, locale });
  }
  if (source.items.length === 0 && source.failed.length > 0)
    throw await nothingUsable(deps, source.failed, route.library);
  // An item Zotero formatted to nothing is said, never left out quietly.
  const failed = [...source.failed];
  const formatted: Array<{ item: Rendered; html: string }> = [];
  for (const item of source.items) {
    const html = typeof item[include] === 'string' ? (item[include] as string) : '';
    const body = include === 'bib' ? splitBib(html).entry : html.trim();
    if (body.replace(/<[^>]*>/g, '').trim() === '') {
      const index = byKey.length > 0 ? byKey.indexOf(item.key) : source.listed.indexOf(item);
      failed.push(
        failedEntry(index, item.key, 502, `Zotero formatted nothing for ${item.key}.`, 'api_error'),
      );
    } else formatted.push({ item, html });
  }
  const warnings: string[] = [];
  const base = {
    mode,
    engine: 'zotero' as const,
    style: styleOf(style),
    locale,
    format,
    failed,
    ...(source.totalResults !== undefined ? { totalResults: source.totalResults } : {}),
    ...(source.nextStart !== undefined ? { nextStart: source.nextStart } : {}),
    ...answered(route),
  };
  if (mode === 'citation') {
    const one = formatted[0];
    return {
      ...base,
      text: one ? inFormat(one.html.trim(), format) : '',
      entries: [],
      succeeded: one ? [one.item.key] : [],
      warnings,
    };
  }
  if (style.citationFormat === 'numeric' && formatted.length > 1) {
    warnings.push(
      `Zotero's API formats each entry of ${style.id} on its own, so every entry has the number 1; ${paramRef('engine', 'local')} numbers them in order.`,
    );
  }
  const open =
    formatted.map((f) => splitBib(f.html).open).find((o) => o !== '') ?? '<div class="csl-bib-body">';
  const answer = (count: number) => {
    const entries = formatted.slice(0, count).map((f) => ({
      item_key: f.item.key,
      text: inFormat(splitBib(f.html).entry, format),
    }));
    const text =
      format === 'html'
        ? `${open}\n${entries.map((e) => e.text).join('\n')}\n</div>`
        : entries.map((e) => e.text).join(format === 'markdown' ? '\n\n' : '\n');
    return { entries, text };
  };
  // Bounded as the local engine's answer: the first entries within the rows budget.
  let count = formatted.length;
  for (;;) {
    const { entries, text } = answer(count);
    const size = jsonBytes(entries) + jsonBytes(text);
    if (size <= ROWS_BUDGET || count <= 1) {
      const left = formatted.slice(count).map((f) => f.item);
      const cut = left.length > 0;
      const start = input.start ?? 0;
      return {
        ...base,
        text,
        entries,
        succeeded: entries.map((e) => e.item_key),
        warnings,
        ...(cut ? { truncated: true } : {}),
        ...(cut && byKey.length > 0 ? { remaining: left.map((i) => i.key) } : {}),
        ...(cut && byKey.length === 0
          ? { nextStart: start + source.listed.indexOf(left[0] as Rendered) }
          : {}),
      };
    }
    count = Math.max(1, Math.min(count - 1, Math.floor((count * ROWS_BUDGET) / size)));
  }
}
