/**
 * The CSL engine: citeproc-js (npm `citeproc`) run on CSL-JSON items with a style and locales
 * resolved by styles.ts and locales.ts.
 *
 * - One engine per style, locale set and output (html or text; markdown is made from html) is
 *   built per process and kept in `deps.services`: building one costs about 100 ms, formatting
 *   an entry a millisecond or so.
 * - citeproc-js asks for locales synchronously, so every locale it may need is resolved first
 *   (downloaded if need be): en-US (its fallback), the locale it runs in and that locale's base
 *   dialect, and those the style names in `locale` attributes (offline only).
 * - Deterministic: the engine's registry is reset before each use, so the same items, clusters,
 *   style and locale give the same bytes whatever was formatted before.
 * - Locale: an explicit locale is forced on the style (citeproc's forceLang); without one, a
 *   dependent style's `default-locale` is forced (as Zotero does); else the style's own
 *   `default-locale` applies, else en-US.
 * - A whole `zot cite` process is mostly this module's engine build: the style and locales are
 *   handed to citeproc-js in its own JSON form, kept in the parsed cache after the first build
 *   (styles.ts parsedDir), so that a later process parses no XML; and citeproc-js' macro
 *   lookups are answered from an index (indexMacroLookups).
 */
import { readFileSync } from 'node:fs';
import CSL, {
  type CiteprocCitation,
  type CiteprocEngine,
  type CiteprocXmlJson,
  type CiteprocXmlJsonReader,
} from 'citeproc';
import { didYouMean } from '../did-you-mean.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import { sha256 } from '../node-crypto.js';
import type { CslItem } from './csl-types.js';
import {
  bundledLocales,
  normalizeLocaleTag,
  offlineLocale,
  primaryDialect,
  resolveLocale,
  type LocaleSource,
} from './locales.js';
import {
  cslDigest,
  dependencyFile,
  keepStyleMeta,
  readParsed,
  resolveStyle,
  writeParsed,
  type CslDeps,
  type ResolvedStyle,
  type StyleRef,
} from './styles.js';

import { CITATION_FORMATS, LOCATOR_LABELS, type CitationFormat, type LocatorLabel } from './constants.js';

export { CITATION_FORMATS, LOCATOR_LABELS, type CitationFormat, type LocatorLabel };

export interface EngineOptions {
  /** A style id or a .csl path; default ZOTEUS_CITATION_STYLE, else apa. */
  style?: string | undefined;
  /** A locale tag (`de`, `fr-FR`); default the style's. */
  locale?: string | undefined;
  /** Default text. */
  format?: CitationFormat | undefined;
}

/** What ran: the style (and parent), the locale, the output format, and what was degraded. */
export interface EngineInfo {
  style: StyleRef & {
    class: 'in-text' | 'note';
    /** Whether the style has a bibliography (some note styles have none). */
    hasBibliography: boolean;
    parent?: StyleRef;
    citationFormat?: string;
  };
  /** The locale the engine runs in (`en-US`). */
  locale: string;
  /** Where each locale handed to the engine came from. */
  locales: Array<{ tag: string; source: LocaleSource }>;
  format: CitationFormat;
  /** Things that did not go as asked but did not stop the work (a locale not available offline). */
  warnings: string[];
}

export interface BibliographyEntry {
  /** The CSL-JSON item's id. */
  id: string;
  text: string;
}

export interface Bibliography extends EngineInfo {
  /** In the style's order (sorted, or in the order given for styles that number by citation). */
  entries: BibliographyEntry[];
  /** False when the style has no bibliography (some note styles): entries is then empty. */
  hasBibliography: boolean;
  /** The style's layout of the list, as citeproc-js reports it. */
  meta: {
    hangingIndent: boolean;
    secondFieldAlign: 'flush' | 'margin' | null;
    entrySpacing: number;
    lineSpacing: number;
    maxOffset: number;
    /** HTML only: what wraps the entries (`<div class="csl-bib-body">` … `</div>`). */
    bibStart?: string;
    bibEnd?: string;
  };
  /** citeproc-js' complaints about items (missing fields a style needs), as text. */
  errors: string[];
}

export interface CitationItemRef {
  /** The CSL-JSON item's id. */
  id: string;
  locator?: string | undefined;
  /** One of LOCATOR_LABELS; default page when there is a locator. */
  label?: string | undefined;
  prefix?: string | undefined;
  suffix?: string | undefined;
  suppressAuthor?: boolean | undefined;
  authorOnly?: boolean | undefined;
}

export interface CitationCluster {
  items: CitationItemRef[];
  /** The footnote number of a note style (default: cluster n is in note n); 0 for in-text. */
  noteIndex?: number | undefined;
}

export interface Citations extends EngineInfo {
  /** One per cluster, in order: its final text after the whole sequence (disambiguation included). */
  citations: Array<{ index: number; noteIndex: number; text: string }>;
  errors: string[];
}

// ---------------------------------------------------------------------------------------------

/** citeproc-js' warnings go to the debug log of the call in progress, never to stdout. */
let debugSink: ((message: string) => void) | undefined;
CSL.debug = (message: string) => debugSink?.(message);

/**
 * citeproc-js finds a macro by walking the whole style on every call of it (CSL.expandMacro →
 * XmlJSON.getNodesByName(root, 'macro', name)): with APA's hundreds of macro calls, about a
 * tenth of an engine build. Here the same lookup is answered from an index of the style's
 * macros, made at the first lookup and made again whenever the root's children change: the
 * same nodes in the same order, in a new array each time. Only for the citeproc-js version it
 * was checked against, whose build adds and removes no macro once it expands them.
 */
function indexMacroLookups(): void {
  if (citeprocPackageVersion() !== '2.4.63') return;
  const proto = CSL.XmlJSON.prototype;
  const walk = proto.getNodesByName;
  interface MacroIndex {
    children: unknown[];
    length: number;
    byName: Map<string, CiteprocXmlJson[]>;
  }
  const indexes = new WeakMap<CiteprocXmlJson, MacroIndex>();
  proto.getNodesByName = function (this: CiteprocXmlJsonReader, node, name, nameAttr, found) {
    if (
      name !== 'macro' ||
      !nameAttr ||
      found !== undefined ||
      node !== this.dataObj ||
      !Array.isArray(node.children)
    )
      return walk.call(this, node, name, nameAttr, found);
    let index = indexes.get(node);
    if (index === undefined || index.children !== node.children || index.length !== node.children.length) {
      const byName = new Map<string, CiteprocXmlJson[]>();
      for (const macro of walk.call(this, node, 'macro')) {
        const key = macro.attrs.name;
        if (typeof key !== 'string') continue;
        const list = byName.get(key);
        if (list) list.push(macro);
        else byName.set(key, [macro]);
      }
      index = { children: node.children, length: node.children.length, byName };
      indexes.set(node, index);
    }
    return [...(index.byName.get(nameAttr) ?? [])];
  };
}

interface Built {
  engine: CiteprocEngine;
  /** The items of the call in progress, read by the engine's retrieveItem. */
  items: Map<string, CslItem>;
  /** The locale citeproc-js settled on. */
  lang: string;
}

/** A style and locale ready to format, bound to one engine of the process. */
export interface CslEngine {
  readonly info: EngineInfo;
  bibliography(items: readonly CslItem[], deps?: Pick<CslDeps, 'log'>): Bibliography;
  citations(
    items: readonly CslItem[],
    clusters: readonly CitationCluster[],
    deps?: Pick<CslDeps, 'log'>,
  ): Citations;
}

/**
 * Resolves the style and the locales, then takes this process' engine for them (building it
 * the first time). Errors are those of resolveStyle and resolveLocale, and a `validation_error`
 * when citeproc-js cannot load the style.
 */
export async function openEngine(deps: CslDeps, options: EngineOptions = {}): Promise<CslEngine> {
  const format = options.format ?? 'text';
  if (!(CITATION_FORMATS as readonly string[]).includes(format))
    throw new ZoteusError('validation_error', `Unknown format "${String(format)}": text, html or markdown.`, {
      field: 'format',
    });
  const style = await resolveStyle(deps, options.style);
  const warnings: string[] = [];
  const requested =
    options.locale === undefined ? undefined : await primaryDialect(normalizeLocaleTag(options.locale));
  const forced = requested ?? style.forceLocale;
  const lang = forced ?? style.defaultLocale ?? 'en-US';
  const spec = CSL.localeResolve(lang.replace('_', '-'));

  // Every locale the engine may ask for, resolved before it is built.
  const locales = new Map<string, { xml: string; source: LocaleSource }>();
  const want = async (tag: string, required: boolean) => {
    if (locales.has(tag)) return;
    try {
      const found = await resolveLocale(deps, tag);
      locales.set(found.tag, { xml: found.xml, source: found.source });
      if (found.tag !== tag) locales.set(tag, { xml: found.xml, source: found.source });
    } catch (error) {
      if (required || !isZoteusError(error)) throw error;
      warnings.push(
        `The locale ${tag} of the style is not available (${error.message.replace(/\.$/, '')}); its terms fall back to en-US.`,
      );
    }
  };
  await want('en-US', true);
  if (spec.base !== spec.best) await want(spec.base, false);
  await want(spec.best, requested !== undefined);
  const bundled = await bundledLocales(deps);
  for (const raw of style.layoutLocales) {
    try {
      const tag = CSL.localeResolve(raw.replace('_', '-')).best;
      if (!locales.has(tag)) {
        const found = offlineLocale(deps, tag, bundled);
        if (found) locales.set(tag, { xml: found.xml, source: found.source });
      }
    } catch {
      // a locale the style names but no one has: citeproc-js does without it
    }
  }

  const citeprocFormat = format === 'markdown' ? 'html' : format;
  const key = sha256()
    .update(style.xml)
    .update('\0')
    .update(lang)
    .update(forced ? '\0force' : '\0')
    .update(citeprocFormat);
  for (const tag of [...locales.keys()].sort()) key.update(`\0${tag}\0`).update(locales.get(tag)!.xml);
  const built = await deps.services.get<Built>(`csl-engine:${key.digest('hex')}`, () =>
    build(deps, style, lang, forced !== undefined, citeprocFormat, locales),
  );
  const info: EngineInfo = {
    style: styleInfo(style),
    locale: built.lang,
    locales: [...locales]
      .filter(([tag]) => tag === spec.best || tag === spec.base || tag === 'en-US')
      .map(([tag, l]) => ({ tag, source: l.source })),
    format,
    warnings,
  };
  return {
    info,
    bibliography: (items, callDeps) =>
      withEngine(built, callDeps ?? deps, citeprocFormat, style, () => makeBibliography(built, items, info)),
    citations: (items, clusters, callDeps) =>
      withEngine(built, callDeps ?? deps, citeprocFormat, style, () =>
        makeCitations(built, items, clusters, info, style),
      ),
  };
}

/** The bibliography of `items` (CSL-JSON, with unique ids) in a style and locale. */
export async function bibliography(
  deps: CslDeps,
  items: readonly CslItem[],
  options: EngineOptions = {},
): Promise<Bibliography> {
  return (await openEngine(deps, options)).bibliography(items, deps);
}

/** The in-text citations (or notes) of a sequence of clusters over `items`. */
export async function citations(
  deps: CslDeps,
  items: readonly CslItem[],
  clusters: readonly CitationCluster[],
  options: EngineOptions = {},
): Promise<Citations> {
  return (await openEngine(deps, options)).citations(items, clusters, deps);
}

function styleInfo(style: ResolvedStyle): EngineInfo['style'] {
  const out: EngineInfo['style'] = {
    id: style.id,
    uri: style.uri,
    title: style.title,
    source: style.source,
    class: style.class,
    hasBibliography: style.hasBibliography,
  };
  if (style.file) out.file = style.file;
  if (style.parent) out.parent = style.parent;
  if (style.citationFormat) out.citationFormat = style.citationFormat;
  return out;
}

function build(
  deps: CslDeps,
  style: ResolvedStyle,
  lang: string,
  force: boolean,
  format: 'html' | 'text',
  locales: Map<string, { xml: string; source: LocaleSource }>,
): Built {
  const items = new Map<string, CslItem>();
  const attempt = (forms: CslForms): Built => {
    const sys = {
      retrieveItem: (id: string) => withEvent(items.get(id)),
      retrieveLocale: (tag: string) => {
        const locale = locales.get(tag);
        return locale === undefined ? false : forms.of(locale.xml);
      },
    };
    const engine = new CSL.Engine(sys, forms.of(style.xml), lang, force);
    engine.setOutputFormat(format);
    return { engine, items, lang: engine.opt.lang };
  };
  const previous = debugSink;
  debugSink = (message) => deps.log.debug(`citeproc-js: ${message}`);
  try {
    let forms = new CslForms(deps, true);
    let built: Built;
    try {
      built = attempt(forms);
    } catch (error) {
      // A parsed form read back from the cache that the engine refuses: built again from the XML.
      if (!forms.fromCache) throw error;
      deps.log.debug(
        `citeproc-js refused a parsed form of the cache (${citeprocMessage(error)}): parsing the XML.`,
      );
      forms = new CslForms(deps, false);
      built = attempt(forms);
    }
    forms.keep();
    keepStyleMeta(deps, style.xml, style.meta);
    return built;
  } catch (error) {
    throw new ZoteusError(
      'validation_error',
      `The CSL processor cannot load the style ${style.parent?.id ?? style.id}${(style.parent?.file ?? style.file) ? ` (${style.parent?.file ?? style.file})` : ''}: ${citeprocMessage(error)}.`,
      { field: 'style' },
    );
  } finally {
    debugSink = previous;
  }
}

/** citeproc-js' version, its package's (CSL.PROCESSOR_VERSION names the 1.x it is based on); undefined when unreadable. */
let citeprocVersion: string | null | undefined;
function citeprocPackageVersion(): string | undefined {
  if (citeprocVersion === undefined) {
    try {
      const version = (
        JSON.parse(readFileSync(dependencyFile('citeproc/package.json'), 'utf8')) as { version?: unknown }
      ).version;
      citeprocVersion = typeof version === 'string' && /^[0-9A-Za-z.+-]+$/.test(version) ? version : null;
    } catch {
      citeprocVersion = null;
    }
  }
  return citeprocVersion ?? undefined;
}

function isXmlJson(value: unknown): value is CiteprocXmlJson {
  const v = value as { name?: unknown; children?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.name === 'string' && Array.isArray(v.children);
}

/**
 * What one engine build hands citeproc-js for each XML (the style, every locale it asks for):
 * citeproc-js' JSON form of it, as CSL.parseXml makes it (what the engine itself would make of
 * the text), read from the parsed cache or parsed now; each call a new object, since the
 * engine changes the tree it is given. Forms parsed now are kept once the build succeeded.
 */
class CslForms {
  /** Whether a form came from the cache (a build that fails then is tried again from the XML). */
  fromCache = false;
  private readonly fresh = new Map<string, string>();
  private readonly version = citeprocPackageVersion();

  constructor(
    private readonly deps: CslDeps,
    private readonly useCache: boolean,
  ) {}

  of(xml: string): CiteprocXmlJson | string {
    if (this.version === undefined) return xml;
    const name = `${cslDigest(xml)}.citeproc-${this.version}.json`;
    if (this.useCache) {
      const cached = readParsed(this.deps, name);
      if (isXmlJson(cached)) {
        this.fromCache = true;
        return cached;
      }
    }
    // As CSL.setupXml reads a text: a leading BOM and whitespace dropped, then XML if it starts with "<".
    const text = xml.replace('^\uFEFF', '').replace(/^\s+/, '');
    if (!text.startsWith('<')) return xml;
    const form = CSL.parseXml(text);
    this.fresh.set(name, JSON.stringify(form));
    return form;
  }

  /** Writes the forms parsed by this build into the cache. */
  keep(): void {
    for (const [name, json] of this.fresh) writeParsed(this.deps, name, json);
  }
}

indexMacroLookups();

function citeprocMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^citeproc-js error:\s*/i, '').replace(/\.$/, '');
}

/** Runs `work` on a freshly reset engine, with citeproc-js' warnings in this call's debug log. */
function withEngine<T>(
  built: Built,
  deps: Pick<CslDeps, 'log'>,
  format: 'html' | 'text',
  style: ResolvedStyle,
  work: () => T,
): T {
  const previous = debugSink;
  debugSink = (message) => deps.log.debug(`citeproc-js: ${message}`);
  try {
    built.engine.setOutputFormat(format);
    built.engine.restoreProcessorState([]);
    return work();
  } catch (error) {
    if (isZoteusError(error)) throw error;
    throw new ZoteusError(
      'internal_error',
      `The CSL processor failed with the style ${style.id}: ${citeprocMessage(error)}.`,
    );
  } finally {
    built.items.clear();
    debugSink = previous;
  }
}

/** Puts the items where the engine reads them, first of each id kept; their ids in order. */
function load(built: Built, items: readonly CslItem[]): string[] {
  built.items.clear();
  const ids: string[] = [];
  for (const item of items) {
    const id = String(item.id);
    if (built.items.has(id)) continue;
    built.items.set(id, { ...item, id });
    ids.push(id);
  }
  return ids;
}

function convert(text: string, format: CitationFormat): string {
  if (format === 'markdown') return htmlToMarkdown(text);
  if (format === 'html') return text.trim();
  return text.replace(/\n+$/, '');
}

function makeBibliography(built: Built, items: readonly CslItem[], info: EngineInfo): Bibliography {
  const ids = load(built, items);
  built.engine.updateItems(ids);
  const made = ids.length === 0 ? false : built.engine.makeBibliography();
  const base = { ...info, warnings: [...info.warnings] };
  if (made === false) {
    return {
      ...base,
      entries: [],
      hasBibliography: info.style.hasBibliography,
      meta: { hangingIndent: false, secondFieldAlign: null, entrySpacing: 1, lineSpacing: 1, maxOffset: 0 },
      errors: [],
    };
  }
  const [meta, raw] = made;
  const entries = raw.map((text, i) => ({
    id: meta.entry_ids[i]?.[0] ?? ids[i] ?? '',
    text: convert(text, info.format),
  }));
  const out: Bibliography = {
    ...base,
    entries,
    hasBibliography: true,
    meta: {
      hangingIndent: Boolean(meta.hangingindent),
      secondFieldAlign: meta['second-field-align'] || null,
      entrySpacing: meta.entryspacing,
      lineSpacing: meta.linespacing,
      maxOffset: meta.maxoffset,
    },
    errors: meta.bibliography_errors.map(describeCiteprocError),
  };
  if (info.format === 'html') {
    out.meta.bibStart = meta.bibstart;
    out.meta.bibEnd = meta.bibend;
  }
  return out;
}

function describeCiteprocError(error: unknown): string {
  if (typeof error === 'string') return error;
  const e = error as { message?: unknown; itemID?: unknown; index?: unknown };
  const message = typeof e.message === 'string' ? e.message : JSON.stringify(error);
  return e.itemID !== undefined ? `${String(e.itemID)}: ${message}` : message;
}

function makeCitations(
  built: Built,
  items: readonly CslItem[],
  clusters: readonly CitationCluster[],
  info: EngineInfo,
  style: ResolvedStyle,
): Citations {
  const ids = load(built, items);
  const known = new Set(ids);
  const citationsIn = clusters.map((cluster, k) => toCiteproc(cluster, k, known, style.class));
  built.engine.updateItems(ids);
  const texts = new Map<string, string>();
  const errors: string[] = [];
  const pre: Array<[string, number]> = [];
  for (const citation of citationsIn) {
    const [status, changed] = built.engine.processCitationCluster(citation, pre, []);
    for (const [, text, id] of changed) texts.set(id, text);
    errors.push(...status.citation_errors.map(describeCiteprocError));
    pre.push([citation.citationID, citation.properties.noteIndex]);
  }
  return {
    ...info,
    warnings: [...info.warnings],
    citations: citationsIn.map((c, index) => ({
      index,
      noteIndex: c.properties.noteIndex,
      text: convert(texts.get(c.citationID) ?? '', info.format),
    })),
    errors,
  };
}

function toCiteproc(
  cluster: CitationCluster,
  k: number,
  known: Set<string>,
  cls: 'in-text' | 'note',
): CiteprocCitation {
  if (cluster.items.length === 0)
    throw new ZoteusError('validation_error', `Citation ${k + 1} cites nothing: give at least one item.`, {
      field: 'citations',
    });
  const noteIndex = cluster.noteIndex ?? (cls === 'note' ? k + 1 : 0);
  if (!Number.isInteger(noteIndex) || noteIndex < 0)
    throw new ZoteusError(
      'validation_error',
      `Citation ${k + 1} has noteIndex ${noteIndex}: a note number, 0 or more.`,
      {
        field: 'citations',
      },
    );
  return {
    citationID: `c${k + 1}`,
    properties: { noteIndex },
    citationItems: cluster.items.map((item) => {
      const id = String(item.id);
      if (!known.has(id))
        throw new ZoteusError(
          'validation_error',
          `Citation ${k + 1} cites ${id}, which is not among the items given.`,
          {
            field: 'citations',
          },
        );
      const out: CiteprocCitation['citationItems'][number] = { id };
      if (item.locator !== undefined && item.locator.trim() !== '') out.locator = item.locator.trim();
      if (item.label !== undefined) {
        const label = item.label.trim().toLowerCase();
        if (!(LOCATOR_LABELS as readonly string[]).includes(label)) {
          const mean = didYouMean(label, LOCATOR_LABELS);
          throw new ZoteusError(
            'validation_error',
            `Unknown locator label "${item.label}"${mean ? `: ${mean}` : '.'} CSL knows ${LOCATOR_LABELS.join(', ')}.`,
            { field: 'label' },
          );
        }
        out.label = label;
      }
      if (item.prefix) out.prefix = item.prefix;
      if (item.suffix) out.suffix = item.suffix;
      if (item.suppressAuthor) out['suppress-author'] = true;
      if (item.authorOnly) out['author-only'] = true;
      return out;
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Locators.

/** Label words and abbreviations a locator may start with ("p. 12", "chapter 3", "§ 4"). */
const LABEL_WORDS: Record<string, LocatorLabel> = {
  p: 'page',
  pp: 'page',
  pg: 'page',
  pgs: 'page',
  pages: 'page',
  ch: 'chapter',
  chap: 'chapter',
  chaps: 'chapter',
  chapters: 'chapter',
  sec: 'section',
  secs: 'section',
  sections: 'section',
  '§': 'section',
  '§§': 'section',
  para: 'paragraph',
  paras: 'paragraph',
  paragraphs: 'paragraph',
  '¶': 'paragraph',
  fig: 'figure',
  figs: 'figure',
  figures: 'figure',
  vol: 'volume',
  vols: 'volume',
  volumes: 'volume',
  l: 'line',
  ll: 'line',
  lines: 'line',
  n: 'note',
  nn: 'note',
  notes: 'note',
  col: 'column',
  cols: 'column',
  columns: 'column',
  tab: 'table',
  tbl: 'table',
  tables: 'table',
  v: 'verse',
  vv: 'verse',
  verses: 'verse',
  pt: 'part',
  pts: 'part',
  parts: 'part',
  bk: 'book',
  bks: 'book',
  books: 'book',
  no: 'issue',
  op: 'opus',
  app: 'appendix',
  eq: 'equation',
  fol: 'folio',
  sv: 'sub-verbo',
  'sub verbo': 'sub-verbo',
};

/**
 * A locator as a person writes it: "12", "12-14", "p. 12", "pp. 12–14", "page 12", "chapter 3",
 * "§ 4" → the label (when one leads) and the locator itself.
 */
export function parseLocator(raw: string): { locator: string; label?: LocatorLabel } {
  const text = raw.trim();
  const m = /^(§§?|¶|[A-Za-z][A-Za-z-]*(?:\s+verbo)?)(\.?)\s*(\S.*)$/u.exec(text);
  if (m) {
    const word = (m[1] as string).toLowerCase();
    const label = (LOCATOR_LABELS as readonly string[]).includes(word)
      ? (word as LocatorLabel)
      : LABEL_WORDS[word];
    // "p.12" and "p 12" have a label; "Smith 12" and "iv" do not.
    if (
      label &&
      (m[2] === '.' ||
        /\s/.test(text.slice((m[1] as string).length, (m[1] as string).length + 1)) ||
        /^[§¶]/.test(word))
    )
      return { label, locator: (m[3] as string).trim() };
  }
  return { locator: text };
}

// ---------------------------------------------------------------------------------------------
// Markdown from citeproc-js' HTML.

interface Run {
  text: string;
  italic: boolean;
  bold: boolean;
  sup: boolean;
  sub: boolean;
  href?: string | undefined;
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos|nbsp);/g, (_all, body: string) => {
    if (body.startsWith('#x')) return String.fromCodePoint(parseInt(body.slice(2), 16));
    if (body.startsWith('#')) return String.fromCodePoint(Number(body.slice(1)));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }[body] as string;
  });
}

/** Characters with a meaning in Markdown, escaped in text. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>~#|]/g, '\\$&').replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&');
}

const URL_IN_TEXT = /https?:\/\/[^\s<>"]+/g;

/** Text with its bare URLs as autolinks (`<https://…>`, which nothing inside escapes) and the rest escaped. */
function textToMarkdown(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(URL_IN_TEXT)) {
    let url = m[0];
    const trail = /[.,;:!?)\]]+$/.exec(url);
    if (trail) url = url.slice(0, -trail[0].length);
    const at = m.index;
    out += escapeMarkdown(text.slice(last, at)) + `<${url}>`;
    last = at + url.length;
  }
  return out + escapeMarkdown(text.slice(last));
}

/**
 * citeproc-js' HTML as Markdown: `<i>`/`<em>` → `*…*`, `<b>` → `**…**`, normal-style spans undo
 * them, `<sup>`/`<sub>` kept as inline HTML (CommonMark has no other), small caps and
 * underline as plain text, links as `[text](url)` or `<url>`, the left-margin column of
 * numbered styles followed by a space, blocks on lines of their own; text escaped.
 */
export function htmlToMarkdown(html: string): string {
  const runs: Run[] = [];
  type Frame = {
    tag: string;
    italic?: boolean;
    bold?: boolean;
    sup?: boolean;
    sub?: boolean;
    href?: string;
    after?: string;
    before?: string;
  };
  const stack: Frame[] = [];
  const state = () => {
    const s = { italic: false, bold: false, sup: false, sub: false, href: undefined as string | undefined };
    for (const f of stack) {
      if (f.italic !== undefined) s.italic = f.italic;
      if (f.bold !== undefined) s.bold = f.bold;
      if (f.sup) s.sup = true;
      if (f.sub) s.sub = true;
      if (f.href !== undefined) s.href = f.href;
    }
    return s;
  };
  const push = (text: string) => {
    if (text === '') return;
    runs.push({ text, ...state() });
  };
  const TAG = /<(\/?)([a-zA-Z]+)((?:\s+[a-zA-Z-]+="[^"]*")*)\s*(\/?)>/g;
  let last = 0;
  const source = html.trim();
  for (const m of source.matchAll(TAG)) {
    push(decodeEntities(source.slice(last, m.index).replace(/\n\s*/g, '')));
    last = m.index + m[0].length;
    const closing = m[1] === '/';
    const tag = (m[2] as string).toLowerCase();
    const attrs = m[3] ?? '';
    if (m[4] === '/' || tag === 'br') {
      if (tag === 'br') push('\n');
      continue;
    }
    if (closing) {
      const at = stack.map((f) => f.tag).lastIndexOf(tag);
      if (at >= 0) {
        const frame = stack[at] as Frame;
        stack.splice(at);
        if (frame.after) push(frame.after);
      }
      continue;
    }
    const styleAttr = /style="([^"]*)"/.exec(attrs)?.[1] ?? '';
    const cls = /class="([^"]*)"/.exec(attrs)?.[1] ?? '';
    const frame: Frame = { tag };
    if (tag === 'i' || tag === 'em') frame.italic = true;
    else if (tag === 'b' || tag === 'strong') frame.bold = true;
    else if (tag === 'sup') frame.sup = true;
    else if (tag === 'sub') frame.sub = true;
    else if (tag === 'a') frame.href = decodeEntities(/href="([^"]*)"/.exec(attrs)?.[1] ?? '');
    else if (tag === 'span') {
      if (/font-style:\s*normal/.test(styleAttr)) frame.italic = false;
      if (/font-style:\s*(italic|oblique)/.test(styleAttr)) frame.italic = true;
      if (/font-weight:\s*normal/.test(styleAttr)) frame.bold = false;
      if (/font-weight:\s*bold/.test(styleAttr)) frame.bold = true;
    } else if (tag === 'div') {
      if (/csl-left-margin/.test(cls)) frame.after = ' ';
      else if (/csl-block|csl-indent/.test(cls) && runs.length > 0) {
        push('\n');
      }
    }
    stack.push(frame);
  }
  push(decodeEntities(source.slice(last).replace(/\n\s*/g, '')));
  return renderRuns(runs)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

function renderRuns(runs: Run[]): string {
  // Merge neighbours of the same style, so that markers open and close once.
  const merged: Run[] = [];
  for (const run of runs) {
    const prev = merged[merged.length - 1];
    if (
      prev &&
      prev.italic === run.italic &&
      prev.bold === run.bold &&
      prev.sup === run.sup &&
      prev.sub === run.sub &&
      prev.href === run.href
    )
      prev.text += run.text;
    else merged.push({ ...run });
  }
  let out = '';
  for (const run of merged) {
    const lead = /^\s*/.exec(run.text)![0];
    const trail = run.text.length > lead.length ? /\s*$/.exec(run.text)![0] : '';
    const core = run.text.slice(lead.length, run.text.length - trail.length);
    if (core === '') {
      out += run.text;
      continue;
    }
    let body: string;
    if (run.href !== undefined && run.href !== '') {
      body =
        core === run.href
          ? `<${run.href}>`
          : `[${escapeMarkdown(core)}](${run.href.replace(/[()\s]/g, (c) => encodeURIComponent(c))})`;
    } else body = textToMarkdown(core);
    if (run.sup) body = `<sup>${body}</sup>`;
    if (run.sub) body = `<sub>${body}</sub>`;
    if (run.bold) body = `**${body}**`;
    if (run.italic) body = `*${body}*`;
    out += lead + body + trail;
  }
  return out;
}

/**
 * Zotero's mapping writes a meeting's name as CSL 1.0.2's `event-title`; citeproc-js 2.4.63 and
 * the many styles written before 1.0.2 read only `event`, so a conference paper would lose its
 * "presented at …". The engine gets both (the exported CSL-JSON keeps Zotero's own).
 */
function withEvent(item: CslItem | undefined): CslItem | undefined {
  if (!item || item['event-title'] === undefined || item.event !== undefined) return item;
  return { ...item, event: item['event-title'] };
}
