/**
 * CSL locales (`locales-xx-XX.xml`: the terms, dates and punctuation of a language), found like
 * styles (styles.ts), in order:
 *
 * 1. installed beside the desktop's data, `<Zotero data dir>/locales/` (Zotero itself keeps its
 *    locales inside the application, so this folder is usually absent), unless ZOTEUS_LOCAL=off;
 * 2. the download cache, `$ZOT_CACHE_DIR/csl/locales/`;
 * 3. downloaded once from ZOTEUS_LOCALES_URL (`<url>/locales-<tag>.xml`; default the official
 *    repository's raw files), checked, and cached atomically;
 * 4. the copies `@citation-js/plugin-csl` ships (en-US, de-DE, fr-FR, es-ES, nl-NL).
 *
 * A bare language means its primary dialect as citeproc-js resolves it (`de` → `de-DE`,
 * `pt` → `pt-PT`), so that the locale found is the one the engine asks for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { didYouMean } from '../did-you-mean.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import {
  child,
  CSL_NAMESPACE,
  cslCacheDir,
  dependencyFile,
  fetchCsl,
  MAX_CSL_BYTES,
  parseXml,
  writeCacheFile,
  XmlSyntaxError,
  zoteroDataDir,
  type CslDeps,
} from './styles.js';

export type LocaleSource = 'installed' | 'cache' | 'download' | 'bundled';

export interface ResolvedLocale {
  /** The tag as the engine asks for it (`de-DE`). */
  tag: string;
  xml: string;
  source: LocaleSource;
  file?: string;
}

/** A locale tag: a language of 2–3 letters, then a region (`DE`) or a script (`Hant`). */
const TAG = /^([a-z]{2,3})(?:-([a-z]{2}|[0-9]{3}|[a-z]{4}))?$/i;

/** `de_de` → `de-DE`; a `validation_error` for what is no locale tag. */
export function normalizeLocaleTag(raw: string, field = 'locale'): string {
  const text = raw.trim().replace(/_/g, '-');
  const m = TAG.exec(text);
  if (!m)
    throw new ZoteusError(
      'validation_error',
      `"${raw.trim().slice(0, 60)}" is not a locale tag (a language with an optional region, such as en-US, de-DE or fr).`,
      { field },
    );
  const language = (m[1] as string).toLowerCase();
  const sub = m[2];
  if (sub === undefined) return language;
  if (sub.length === 4) return `${language}-${sub.charAt(0).toUpperCase()}${sub.slice(1).toLowerCase()}`;
  return `${language}-${sub.toUpperCase()}`;
}

async function citeproc() {
  return (await import('citeproc')).default;
}

/** The dialect the engine asks for: a bare language's primary dialect (`de` → `de-DE`), else the tag. */
export async function primaryDialect(tag: string): Promise<string> {
  if (tag.includes('-')) return tag;
  const base = (await citeproc()).LANG_BASES[tag];
  return base ? base.replace('_', '-') : tag;
}

/** The locales `@citation-js/plugin-csl` ships, by tag. */
export function bundledLocales(deps: Pick<CslDeps, 'services'>): Promise<Map<string, string>> {
  return deps.services.get('csl-bundled-locales', () => {
    const file = dependencyFile('@citation-js/plugin-csl/lib/locales.json');
    const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const found = new Map<string, string>();
    for (const [tag, xml] of Object.entries(all)) if (typeof xml === 'string') found.set(tag, xml);
    return found;
  });
}

function installedLocalesDir(deps: CslDeps): string | undefined {
  const dataDir = zoteroDataDir(deps);
  return dataDir === undefined ? undefined : join(dataDir, 'locales');
}

const fileName = (tag: string) => `locales-${tag}.xml`;

/** Checks a locale's XML: well-formed, a CSL `<locale>`. The problem, or undefined when it is one. */
export function localeProblem(xml: string): string | undefined {
  try {
    const root = parseXml(xml);
    if (root.local !== 'locale') return `its root element is <${root.name}>, not <locale>`;
    const prefix = root.name.includes(':') ? `xmlns:${root.name.slice(0, root.name.indexOf(':'))}` : 'xmlns';
    if (root.attrs[prefix] !== CSL_NAMESPACE) return 'its <locale> is not in the CSL namespace';
    if (!child(root, 'terms') && !child(root, 'date') && !child(root, 'style-options'))
      return 'it has no <terms>, <date> or <style-options>';
    return undefined;
  } catch (error) {
    if (error instanceof XmlSyntaxError) return `not valid XML: ${error.message}`;
    throw error;
  }
}

function readLocaleFile(deps: CslDeps, path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (text.length > MAX_CSL_BYTES) return undefined;
  const problem = localeProblem(text);
  if (problem === undefined) return text;
  deps.log.warn(`Skipping ${path}: ${problem}.`);
  return undefined;
}

/** A locale installed or cached (no network), synchronously. */
function localLocale(deps: CslDeps, tag: string): ResolvedLocale | undefined {
  for (const [dir, source] of [
    [installedLocalesDir(deps), 'installed'],
    [cslCacheDir(deps, 'locales'), 'cache'],
  ] as const) {
    if (dir === undefined) continue;
    const path = join(dir, fileName(tag));
    const xml = readLocaleFile(deps, path);
    if (xml !== undefined) return { tag, xml, source, file: path };
  }
  return undefined;
}

/** A locale from the sources that need no network (installed, cache, bundled), synchronously. */
export function offlineLocale(
  deps: CslDeps,
  tag: string,
  bundled: Map<string, string>,
): ResolvedLocale | undefined {
  const local = localLocale(deps, tag);
  if (local) return local;
  const xml = bundled.get(tag);
  return xml === undefined ? undefined : { tag, xml, source: 'bundled' };
}

/** The locales known to exist: citeproc-js' list, those available offline, those in the cache. */
async function knownLocales(deps: CslDeps): Promise<string[]> {
  const known = new Set(Object.keys((await citeproc()).LANGS));
  for (const tag of (await bundledLocales(deps)).keys()) known.add(tag);
  for (const { tag } of await listLocales(deps)) known.add(tag);
  return [...known].sort();
}

/**
 * The locale `raw` names (`de`, `de-DE`, `de_de`): installed, cached, downloaded (then cached)
 * or bundled. A tag no repository has is a `validation_error` that lists the locales that
 * exist; one that exists but could not be fetched is the network's error.
 */
export async function resolveLocale(deps: CslDeps, raw: string, field = 'locale'): Promise<ResolvedLocale> {
  const tag = await primaryDialect(normalizeLocaleTag(raw, field));
  const local = localLocale(deps, tag);
  if (local) return local;
  // Shipped with Zoteus: used without asking the repository (offline must not wait for it).
  const shipped = (await bundledLocales(deps)).get(tag);
  if (shipped !== undefined) return { tag, xml: shipped, source: 'bundled' };
  const base = deps.config.citations.localesUrl;
  let failure: ZoteusError | undefined;
  let missing = false;
  try {
    const answer = await fetchCsl(
      deps,
      `${base}/${fileName(tag)}`,
      'the CSL locales repository',
      'ZOTEUS_LOCALES_URL',
    );
    if ('missing' in answer) missing = true;
    else {
      const problem = localeProblem(answer.text);
      if (problem !== undefined)
        throw new ZoteusError(
          'api_error',
          `The CSL locales repository sent something for ${tag} that is not a CSL locale: ${problem}.`,
          { hint: 'Check ZOTEUS_LOCALES_URL: it must serve locales-<tag>.xml files.' },
        );
      const file = await writeCacheFile(deps, cslCacheDir(deps, 'locales'), fileName(tag), answer.text);
      return { tag, xml: answer.text, source: 'download', ...(file ? { file } : {}) };
    }
  } catch (error) {
    if (!isZoteusError(error)) throw error;
    failure = error;
  }
  const known = await knownLocales(deps);
  const listing = `Locales that exist: ${known.join(', ')}.`;
  if (missing || !known.includes(tag)) {
    const mean = didYouMean(tag, known);
    const why = missing
      ? `the CSL locales repository (${base}) has no ${fileName(tag)}`
      : `it is not one of the CSL locales (and the locales repository could not be reached to look further: ${failure?.message.replace(/\.$/, '')})`;
    throw new ZoteusError(
      'validation_error',
      `There is no CSL locale "${tag}": ${why}${mean ? `; ${mean}` : '.'}`,
      {
        field,
        hint: listing,
      },
    );
  }
  const error = failure as ZoteusError;
  throw new ZoteusError(
    error.code,
    `The CSL locale ${tag} is not available offline, and the locales repository could not be reached: ${error.message}`,
    {
      field,
      retryable: error.retryable,
      hint: `Check the network (and ZOTEUS_LOCALES_URL), then retry; available offline: ${(await listLocales(deps)).map((l) => l.tag).join(', ')}.`,
    },
  );
}

/** Every locale available without the network, one per tag (installed, then cache, then bundled), by tag. */
export async function listLocales(
  deps: CslDeps,
): Promise<Array<{ tag: string; source: 'installed' | 'cache' | 'bundled' }>> {
  const byTag = new Map<string, 'installed' | 'cache' | 'bundled'>();
  for (const [dir, source] of [
    [installedLocalesDir(deps), 'installed'],
    [cslCacheDir(deps, 'locales'), 'cache'],
  ] as const) {
    if (dir === undefined) continue;
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = /^locales-([A-Za-z0-9-]+)\.xml$/.exec(name);
      if (m && !byTag.has(m[1] as string)) byTag.set(m[1] as string, source);
    }
  }
  for (const tag of (await bundledLocales(deps)).keys()) if (!byTag.has(tag)) byTag.set(tag, 'bundled');
  return [...byTag].map(([tag, source]) => ({ tag, source })).sort((a, b) => (a.tag < b.tag ? -1 : 1));
}
