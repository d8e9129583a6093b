/**
 * CSL styles: which XML a style name stands for, and where it came from.
 *
 * A style is named by an id of the Zotero style repository (`apa`, `chicago-author-date`, or
 * the whole `http://www.zotero.org/styles/apa`), or by the path of a `.csl` file. An id is
 * looked up, in order:
 *
 * 1. installed in the Zotero desktop's data directory, `<dataDir>/styles/` (Zotero names each
 *    file after its id; other files there are matched by their `<info><id>`), unless
 *    ZOTEUS_LOCAL=off;
 * 2. the download cache, `$ZOT_CACHE_DIR/csl/styles/<id>.csl`;
 * 3. the copies an npm dependency ships (`@citation-js/plugin-csl`'s `lib/styles.json`: APA,
 *    Vancouver, Harvard Cite Them Right), read from its package folder: offline, `zot cite`
 *    never waits for a repository it does not need;
 * 4. downloaded once from the repository (`ZOTEUS_STYLES_URL/<id>`, through the outbound HTTP
 *    layer), checked, and written to the cache atomically: offline afterwards.
 *
 * A dependent style (an `<info>` with `<link rel="independent-parent">` and no layout) runs as
 * its independent parent, found the same way; its own `default-locale` is kept, to be forced
 * on the engine, as Zotero does. Every file read is checked: well-formed XML, a CSL `<style>`
 * with `<info><id>`. Style and locale files are not this project's: they come from the user's
 * data directory, the cache or the dependency, never from this repository.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { toolRef } from '../call/refs.js';
import { closest, didYouMean, editDistance } from '../did-you-mean.js';
import { ensureDir } from '../dirs.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import { createHttpLayer, newCall, RESETS } from '../http/index.js';
import { discoverZoteroDataDir } from '../local/discovery.js';
import { randomHex, sha256 } from '../node-crypto.js';
import { packageRoot } from '../package-root.js';
import { homeDir } from '../paths.js';
import type { Deps } from '../tool.js';

/** What style and locale resolution need of `Deps`. */
export type CslDeps = Pick<Deps, 'config' | 'env' | 'clock' | 'redact' | 'log' | 'version' | 'services'>;

export type StyleSource = 'path' | 'installed' | 'cache' | 'download' | 'bundled';

/** The CSL namespace every style and locale is in. */
export const CSL_NAMESPACE = 'http://purl.org/net/xbiblio/csl';

/** Zotero's style ids: `http://www.zotero.org/styles/<id>`. */
const ZOTERO_STYLE_URI = /^https?:\/\/(?:www\.)?zotero\.org\/styles\/([^/?#\s]+)\/?$/i;

/** A repository id: lowercase letters and digits, joined by single hyphens, dots or underscores. */
const STYLE_ID = /^[a-z0-9]+(?:[-._][a-z0-9]+)*$/;

/** Larger files are refused: the largest official style is about 150 KB. */
export const MAX_CSL_BYTES = 2 * 1024 * 1024;

/**
 * Ids of the repository an unknown id is compared with, besides those known offline: the
 * styles the issue and the README name, so that a typo of one gets its "did you mean".
 */
const WELL_KNOWN_IDS = [
  'apa',
  'chicago-author-date',
  'chicago-note-bibliography',
  'chicago-fullnote-bibliography',
  'ieee',
  'nature',
  'vancouver',
  'modern-language-association',
  'harvard-cite-them-right',
];

// ---------------------------------------------------------------------------------------------
// XML: a small well-formedness checker that builds a tree (CSL files use nothing more).

export interface XmlElement {
  /** The name as written, prefix included. */
  name: string;
  /** The name without its prefix (`style` for `cs:style`). */
  local: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (CDATA included), entities decoded, children's text left out. */
  text: string;
  line: number;
}

/** Where and why a text is not well-formed XML. */
export class XmlSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly problem: string,
  ) {
    super(`line ${line}, column ${column}: ${problem}`);
    this.name = 'XmlSyntaxError';
  }
}

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;
const NAME_REST = /[-A-Za-z0-9_:.\u00B7\u00C0-\uFFFF]/;
const SPACE = new Set([' ', '\t', '\n', '\r']);
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
// eslint-disable-next-line no-control-regex
const FORBIDDEN_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/**
 * Parses `source` as XML (1.0, without a DTD's internal subset), or throws an XmlSyntaxError
 * that says where the first problem is and what it is.
 */
export function parseXml(source: string): XmlElement {
  const src = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const n = src.length;
  let lineCursor = 0;
  let lineCount = 1;
  const lineOf = (offset: number): number => {
    if (offset < lineCursor) {
      lineCursor = 0;
      lineCount = 1;
    }
    for (; lineCursor < offset && lineCursor < n; lineCursor++) if (src[lineCursor] === '\n') lineCount++;
    return lineCount;
  };
  const fail = (offset: number, problem: string): never => {
    const at = Math.min(offset, n);
    const before = src.lastIndexOf('\n', at - 1);
    throw new XmlSyntaxError(lineOf(at), at - before, problem);
  };
  const bad = FORBIDDEN_CHAR.exec(src);
  if (bad)
    fail(
      bad.index,
      `the character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`,
    );

  const decode = (raw: string, offset: number): string => {
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;&\s<]{0,32})(;?)/g, (all, body: string, semi: string, at: number) => {
      const where = offset + at;
      if (!semi) return fail(where, 'a "&" that starts no entity (write "&amp;" for the character)');
      if (body in PREDEFINED) return PREDEFINED[body] as string;
      const m = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(body);
      if (!m)
        return fail(where, `the entity "&${body};" is not defined (XML knows &amp; &lt; &gt; &quot; &apos;)`);
      const code = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
      const valid =
        code === 0x9 ||
        code === 0xa ||
        code === 0xd ||
        (code >= 0x20 && code <= 0xd7ff) ||
        (code >= 0xe000 && code <= 0xfffd) ||
        (code >= 0x10000 && code <= 0x10ffff);
      if (!valid) return fail(where, `"${all}" names no character XML allows`);
      return String.fromCodePoint(code);
    });
  };
  const readName = (at: number): string | undefined => {
    if (at >= n || !NAME_START.test(src[at] as string)) return undefined;
    let end = at + 1;
    while (end < n && NAME_REST.test(src[end] as string)) end++;
    return src.slice(at, end);
  };
  const skipSpace = (at: number): number => {
    while (at < n && SPACE.has(src[at] as string)) at++;
    return at;
  };

  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  const start = i;
  while (i < n) {
    const lt = src.indexOf('<', i);
    const textEnd = lt < 0 ? n : lt;
    if (textEnd > i) {
      const raw = src.slice(i, textEnd);
      const top = stack[stack.length - 1];
      if (top) {
        if (raw.includes(']]>')) fail(i + raw.indexOf(']]>'), '"]]>" is not allowed in text');
        top.text += decode(raw, i);
      } else {
        const first = raw.search(/\S/);
        if (first >= 0)
          fail(
            i + first,
            root ? `text after the root element </${root.name}>` : 'text before the root element',
          );
      }
    }
    if (lt < 0) break;
    i = lt;
    if (src.startsWith('<!--', i)) {
      const end = src.indexOf('-->', i + 4);
      if (end < 0) fail(i, 'a comment is not closed ("-->" is missing)');
      i = end + 3;
      continue;
    }
    if (src.startsWith('<![CDATA[', i)) {
      const top = stack[stack.length - 1];
      if (!top) fail(i, 'a CDATA section outside the root element');
      const end = src.indexOf(']]>', i + 9);
      if (end < 0) fail(i, 'a CDATA section is not closed ("]]>" is missing)');
      top!.text += src.slice(i + 9, end);
      i = end + 3;
      continue;
    }
    if (src.startsWith('<?', i)) {
      const end = src.indexOf('?>', i + 2);
      if (end < 0) fail(i, 'a processing instruction is not closed ("?>" is missing)');
      const target = readName(i + 2);
      if (target === undefined) fail(i + 2, 'a processing instruction without a target name');
      if (target!.toLowerCase() === 'xml' && i !== start)
        fail(i, 'the XML declaration (<?xml …?>) must come first in the file');
      i = end + 2;
      continue;
    }
    if (src.startsWith('<!', i)) {
      if (!src.startsWith('<!DOCTYPE', i))
        fail(i, 'markup "<!" that is neither a comment, CDATA nor a DOCTYPE');
      if (root || stack.length > 0) fail(i, 'a DOCTYPE after the root element has started');
      const end = src.indexOf('>', i);
      if (end < 0) fail(i, 'the DOCTYPE is not closed (">" is missing)');
      const bracket = src.indexOf('[', i);
      if (bracket >= 0 && bracket < end) fail(bracket, 'a DOCTYPE with an internal subset is not accepted');
      i = end + 1;
      continue;
    }
    if (src[i + 1] === '/') {
      const name = readName(i + 2);
      if (name === undefined) fail(i + 2, 'a closing tag "</" without an element name');
      let at = skipSpace(i + 2 + name!.length);
      if (src[at] !== '>') fail(at, `">" expected to end the closing tag </${name}>`);
      at++;
      const top = stack.pop();
      if (!top) fail(i, `the closing tag </${name}> closes nothing`);
      if (top!.name !== name)
        fail(i, `the closing tag </${name}> does not match <${top!.name}> (opened at line ${top!.line})`);
      if (stack.length === 0) root = top;
      i = at;
      continue;
    }
    const name = readName(i + 1);
    if (name === undefined)
      fail(i + 1, '"<" not followed by an element name (write "&lt;" for the character)');
    if (root && stack.length === 0) fail(i, `a second root element <${name}> after </${root.name}>`);
    const element: XmlElement = {
      name: name!,
      local: name!.slice(name!.indexOf(':') + 1),
      attrs: {},
      children: [],
      text: '',
      line: lineOf(i),
    };
    let at = i + 1 + name!.length;
    let selfClosing = false;
    for (;;) {
      const spaced = skipSpace(at);
      if (src.startsWith('/>', spaced)) {
        selfClosing = true;
        at = spaced + 2;
        break;
      }
      if (src[spaced] === '>') {
        at = spaced + 1;
        break;
      }
      if (spaced >= n) fail(i, `the tag <${name}> is not closed (">" is missing)`);
      if (spaced === at) fail(at, `whitespace, ">" or "/>" expected in the tag <${name}>`);
      const attr = readName(spaced);
      if (attr === undefined) fail(spaced, `an attribute name, ">" or "/>" expected in the tag <${name}>`);
      let eq = skipSpace(spaced + attr!.length);
      if (src[eq] !== '=') fail(eq, `"=" expected after the attribute ${attr} of <${name}>`);
      eq = skipSpace(eq + 1);
      const quote = src[eq];
      if (quote !== '"' && quote !== "'")
        fail(eq, `the value of the attribute ${attr} of <${name}> must be quoted`);
      const close = src.indexOf(quote as string, eq + 1);
      if (close < 0) fail(eq, `the value of the attribute ${attr} of <${name}> is not closed`);
      const raw = src.slice(eq + 1, close);
      const lessThan = raw.indexOf('<');
      if (lessThan >= 0) fail(eq + 1 + lessThan, `"<" is not allowed in the value of the attribute ${attr}`);
      if (Object.hasOwn(element.attrs, attr!))
        fail(spaced, `the attribute ${attr} appears twice in <${name}>`);
      element.attrs[attr!] = decode(raw, eq + 1).replace(/[\t\n\r]/g, ' ');
      at = close + 1;
    }
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(element);
    if (selfClosing) {
      if (!parent) root = element;
    } else stack.push(element);
    i = at;
  }
  const open = stack[stack.length - 1];
  if (open) fail(n, `the file ends inside <${open.name}> (opened at line ${open.line})`);
  if (!root) fail(n, 'there is no root element');
  return root!;
}

/** The first child element with this local name. */
export function child(element: XmlElement | undefined, local: string): XmlElement | undefined {
  return element?.children.find((c) => c.local === local);
}

function* walk(element: XmlElement): Generator<XmlElement> {
  yield element;
  for (const c of element.children) yield* walk(c);
}

// ---------------------------------------------------------------------------------------------
// What a style file says about itself.

export interface StyleMeta {
  /** `<info><id>` as written. */
  uri: string;
  /** The repository id when the uri is a Zotero style URI (`apa`), else the uri. */
  id: string;
  title: string;
  /** `<link rel="independent-parent">`: the parent's uri, for a dependent style. */
  parentUri?: string;
  /** The parent's repository id (or uri). */
  parent?: string;
  /** `default-locale` of `<style>`. */
  defaultLocale?: string;
  /** `class` of `<style>`. */
  class: 'in-text' | 'note';
  /** `<category citation-format>`: author-date, numeric, note, label or author. */
  citationFormat?: string;
  hasBibliography: boolean;
  /** Locales named by `locale` attributes (layouts, conditions): what the engine may load. */
  layoutLocales: string[];
}

/** The repository id of a style URI (`http://www.zotero.org/styles/apa` → `apa`), else the URI. */
export function shortStyleId(uri: string): string {
  const m = ZOTERO_STYLE_URI.exec(uri.trim());
  return m ? (m[1] as string).toLowerCase() : uri.trim();
}

function styleInvalid(file: string, problem: string): ZoteusError {
  return new ZoteusError('validation_error', `${file} is not a valid CSL style: ${problem}.`, {
    field: 'style',
    hint: 'Give a CSL 1.0 style file (a <style> in the namespace http://purl.org/net/xbiblio/csl with <info><id>), or a style id.',
  });
}

/**
 * What a style's XML says about itself, after checking that it is well-formed XML and a CSL
 * style; a `validation_error` naming `file` and the problem otherwise. (Kept in the parsed
 * cache: bump PARSED_META_FORMAT when what this returns changes.)
 */
export function readStyleMeta(xml: string, file: string): StyleMeta {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (error) {
    if (error instanceof XmlSyntaxError)
      throw new ZoteusError('validation_error', `${file} is not valid XML: ${error.message}.`, {
        field: 'style',
        hint: 'Fix the file (an XML editor or `xmllint --noout` shows the problem), or give a style id.',
      });
    throw error;
  }
  if (root.local !== 'style') throw styleInvalid(file, `its root element is <${root.name}>, not <style>`);
  const prefix = root.name.includes(':') ? `xmlns:${root.name.slice(0, root.name.indexOf(':'))}` : 'xmlns';
  if (root.attrs[prefix] !== CSL_NAMESPACE)
    throw styleInvalid(file, `its <style> is not in the CSL namespace (${prefix}="${CSL_NAMESPACE}")`);
  const info = child(root, 'info');
  if (!info) throw styleInvalid(file, 'it has no <info>');
  const uri = child(info, 'id')?.text.trim();
  if (!uri) throw styleInvalid(file, 'its <info> has no <id>');
  const parentLink = info.children.find((c) => c.local === 'link' && c.attrs.rel === 'independent-parent');
  const parentUri = parentLink?.attrs.href?.trim() || undefined;
  const citation = child(root, 'citation');
  if (!parentUri && !child(citation, 'layout'))
    throw styleInvalid(
      file,
      'it has neither a <citation> with a <layout> nor a <link rel="independent-parent"> to the style it depends on',
    );
  const cls = root.attrs.class;
  if (!parentUri && cls !== 'in-text' && cls !== 'note')
    throw styleInvalid(file, `its <style> has class="${cls ?? ''}"; CSL knows "in-text" and "note"`);
  const layoutLocales = new Set<string>();
  for (const el of walk(root)) {
    const locale = el.local !== 'locale' ? el.attrs.locale : undefined;
    for (const tag of locale?.split(/\s+/) ?? []) if (tag) layoutLocales.add(tag);
  }
  const title = child(info, 'title')?.text.trim() || shortStyleId(uri);
  const meta: StyleMeta = {
    uri,
    id: shortStyleId(uri),
    title,
    class: cls === 'note' ? 'note' : 'in-text',
    hasBibliography: child(root, 'bibliography') !== undefined,
    layoutLocales: [...layoutLocales],
  };
  if (parentUri) {
    meta.parentUri = parentUri;
    meta.parent = shortStyleId(parentUri);
  }
  const defaultLocale = root.attrs['default-locale']?.trim();
  if (defaultLocale) meta.defaultLocale = defaultLocale;
  const format = info.children.find((c) => c.local === 'category' && c.attrs['citation-format']);
  if (format) meta.citationFormat = format.attrs['citation-format'];
  return meta;
}

// ---------------------------------------------------------------------------------------------
// Where styles are.

/** The installed styles' folder, `<Zotero data dir>/styles`; undefined with ZOTEUS_LOCAL=off or no data dir. */
export function installedStylesDir(deps: Pick<CslDeps, 'config' | 'env'>): string | undefined {
  const dataDir = zoteroDataDir(deps);
  return dataDir === undefined ? undefined : join(dataDir, 'styles');
}

/** The Zotero data directory styles and locales are installed in, as the desktop readers find it. */
export function zoteroDataDir(deps: Pick<CslDeps, 'config' | 'env'>): string | undefined {
  if (deps.config.local === 'off') return undefined;
  return discoverZoteroDataDir({ env: deps.env, config: deps.config }).dataDir;
}

/** `$ZOT_CACHE_DIR/csl/<kind>`: where downloaded styles and locales are kept. */
export function cslCacheDir(deps: Pick<CslDeps, 'config'>, kind: 'styles' | 'locales'): string {
  return join(deps.config.cacheDir, 'csl', kind);
}

/** A package's data file, found as Node would find the package from Zoteus' own folder. */
export function dependencyFile(request: string): string {
  return createRequire(join(packageRoot(), 'package.json')).resolve(request);
}

interface BundledStyle {
  meta: StyleMeta;
  xml: string;
}

/** The XML of the styles `@citation-js/plugin-csl` ships, by the package's names for them. */
function bundledStyleTexts(
  deps: Pick<CslDeps, 'services'>,
): Promise<{ file: string; xml: Map<string, string> }> {
  return deps.services.get('csl-bundled-style-texts', () => {
    const file = dependencyFile('@citation-js/plugin-csl/lib/styles.json');
    const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const xml = new Map<string, string>();
    for (const [name, text] of Object.entries(all)) if (typeof text === 'string') xml.set(name, text);
    return { file, xml };
  });
}

/** The styles `@citation-js/plugin-csl` ships, by repository id (and the package's own names). */
function bundledStyles(deps: Pick<CslDeps, 'services' | 'config'>): Promise<Map<string, BundledStyle>> {
  return deps.services.get('csl-bundled-styles', async () => {
    const { file, xml: texts } = await bundledStyleTexts(deps);
    const found = new Map<string, BundledStyle>();
    for (const [name, xml] of texts) {
      const meta = styleMeta(deps, xml, `${file} (${name})`);
      found.set(meta.id, { meta, xml });
      // The package's own name for a style stays an alias ("harvard1", Zotero's old id).
      if (!found.has(name)) found.set(name, { meta, xml });
    }
    return found;
  });
}

/**
 * A shipped style by id: the one the package names so when its id is that (only it is read),
 * else through every shipped style (an alias such as "harvard1").
 */
async function bundledStyle(
  deps: Pick<CslDeps, 'services' | 'config'>,
  id: string,
): Promise<BundledStyle | undefined> {
  const { file, xml: texts } = await bundledStyleTexts(deps);
  const xml = texts.get(id);
  if (xml !== undefined) {
    const meta = styleMeta(deps, xml, `${file} (${id})`);
    if (meta.id === id) return { meta, xml };
  }
  return (await bundledStyles(deps)).get(id);
}

function readIfFile(path: string): string | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_CSL_BYTES) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function cslFiles(dir: string | undefined): string[] {
  if (dir === undefined) return [];
  try {
    return readdirSync(dir)
      .filter((name) => /\.csl$/i.test(name))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

interface Found {
  meta: StyleMeta;
  xml: string;
  source: StyleSource;
  file?: string;
}

/** A style file of a folder Zoteus reads on its own (installed, cached): skipped with a warning when broken. */
function readQuietly(
  deps: Pick<CslDeps, 'log' | 'config'>,
  path: string,
  source: StyleSource,
): Found | undefined {
  const xml = readIfFile(path);
  if (xml === undefined) return undefined;
  try {
    return { meta: styleMeta(deps, xml, path), xml, source, file: path };
  } catch (error) {
    deps.log.warn(`Skipping ${path}: ${(error as Error).message}`);
    return undefined;
  }
}

function findInstalled(deps: CslDeps, id: string): Found | undefined {
  const dir = installedStylesDir(deps);
  if (dir === undefined) return undefined;
  const direct = readQuietly(deps, join(dir, `${id}.csl`), 'installed');
  if (direct) return direct;
  for (const file of cslFiles(dir)) {
    // Only a file whose <info><id> is this one: the name was tried above.
    const text = readIfFile(file);
    if (text === undefined || !text.includes(id)) continue;
    const found = readQuietly(deps, file, 'installed');
    if (found && (found.meta.id === id || found.meta.uri === id)) return found;
  }
  return undefined;
}

function findCached(deps: CslDeps, id: string): Found | undefined {
  return readQuietly(deps, join(cslCacheDir(deps, 'styles'), `${id}.csl`), 'cache');
}

// ---------------------------------------------------------------------------------------------
// Parsed forms, kept.

/**
 * `$ZOT_CACHE_DIR/csl/parsed/`: what parsing a style's or a locale's XML gave, named by the
 * SHA-256 of the XML, so that a process formatting with a style used before parses no XML
 * (the XML parses of a large style cost a whole-process `zot cite` more than the rest of the
 * library read): `<digest>.meta.json`, the style's StyleMeta, which resolution takes instead of
 * checking the XML again; `<digest>.citeproc-<version>.json`, citeproc-js' own JSON form of
 * the XML, which its engine takes instead of the text (engine.ts). Both are written by the
 * engine after it built an engine from that XML, so only XML that was checked and loaded
 * gets an entry; an entry that is missing, unreadable or malformed is parsed again, never an
 * error, and a cache that cannot be written only leaves the next process parsing.
 */
export function parsedDir(deps: Pick<CslDeps, 'config'>): string {
  return join(deps.config.cacheDir, 'csl', 'parsed');
}

/** Bumped whenever what readStyleMeta returns changes: older entries are then parsed again. */
export const PARSED_META_FORMAT = 1;

/** The name of what parsing `xml` gave: the SHA-256 of the XML, in hex. */
export function cslDigest(xml: string): string {
  return sha256().update(xml).digest('hex');
}

/** A parsed-cache entry as JSON, or undefined when there is none or it does not parse. */
export function readParsed(deps: Pick<CslDeps, 'config'>, name: string): unknown {
  try {
    return JSON.parse(readFileSync(join(parsedDir(deps), name), 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

let parsedWrites = 0;

/**
 * Entries not written for this long are removed when another is written (writes are rare: a
 * style or locale used for the first time), so edited .csl files and older citeproc-js versions
 * leave nothing behind for good; one in daily use is parsed again once in that time.
 */
export const PARSED_MAX_AGE_MS = 30 * 24 * 3_600_000;
/** A temporary file this old belongs to no write still running. */
const STALE_TMP_MS = 10 * 60_000;

/** Writes a parsed-cache entry atomically (a temporary file, then a rename); a failure is a debug line. */
export function writeParsed(
  deps: Pick<CslDeps, 'config' | 'log' | 'clock'>,
  name: string,
  json: string,
): void {
  const dir = parsedDir(deps);
  const path = join(dir, name);
  const tmp = `${path}.${process.pid}.${(parsedWrites += 1)}.tmp`;
  try {
    ensureDir(dir);
    writeFileSync(tmp, json, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (error) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // no folder to write in, so no temporary file left either
    }
    deps.log.debug(`Could not keep ${name} in ${dir}: ${(error as Error).message}`);
    return;
  }
  try {
    const now = deps.clock.now();
    for (const entry of readdirSync(dir)) {
      const age = now - statSync(join(dir, entry)).mtimeMs;
      if (age > (entry.endsWith('.tmp') ? STALE_TMP_MS : PARSED_MAX_AGE_MS))
        rmSync(join(dir, entry), { force: true });
    }
  } catch {
    // an entry another process removed meanwhile: the next write looks again
  }
}

const metaName = (digest: string) => `${digest}.meta.json`;

/** Keeps what a style's XML says about itself, for the next process (engine.ts, after a build). */
export function keepStyleMeta(
  deps: Pick<CslDeps, 'config' | 'log' | 'clock'>,
  xml: string,
  meta: StyleMeta,
): void {
  const name = metaName(cslDigest(xml));
  if (metaFromEntry(readParsed(deps, name)) === undefined)
    writeParsed(deps, name, JSON.stringify({ format: PARSED_META_FORMAT, meta }));
}

const isString = (v: unknown): v is string => typeof v === 'string';
const optionalString = (v: unknown) => v === undefined || isString(v);

/** A StyleMeta read back from the cache, or undefined when the entry is not one. */
function metaFromEntry(entry: unknown): StyleMeta | undefined {
  const e = entry as { format?: unknown; meta?: Partial<Record<keyof StyleMeta, unknown>> } | undefined;
  const m = e?.meta;
  if (e?.format !== PARSED_META_FORMAT || typeof m !== 'object' || m === null) return undefined;
  const ok =
    isString(m.uri) &&
    isString(m.id) &&
    isString(m.title) &&
    (m.class === 'in-text' || m.class === 'note') &&
    typeof m.hasBibliography === 'boolean' &&
    Array.isArray(m.layoutLocales) &&
    m.layoutLocales.every(isString) &&
    optionalString(m.parentUri) &&
    optionalString(m.parent) &&
    optionalString(m.defaultLocale) &&
    optionalString(m.citationFormat);
  return ok ? (m as StyleMeta) : undefined;
}

/** What a style says about itself: from the parsed cache when this XML was used before, else readStyleMeta. */
function styleMeta(deps: Pick<CslDeps, 'config'>, xml: string, file: string): StyleMeta {
  return metaFromEntry(readParsed(deps, metaName(cslDigest(xml)))) ?? readStyleMeta(xml, file);
}

// ---------------------------------------------------------------------------------------------
// Downloads.

/** What a repository said about a file: its text, or that it has none (404, 410). */
export type Fetched = { text: string } | { missing: true };

interface NetworkMemo {
  /** Repository and origin → until when it is not asked again after failing (this process). */
  unreachableUntil: Map<string, { until: number; error: ZoteusError }>;
}

/** How long a repository that could not be reached is not asked again, within one process. */
const UNREACHABLE_MS = 60_000;

/**
 * GET `url` from a CSL repository through the outbound HTTP layer: one resend after a reset, 429
 * and 503 waited out once (at most 10 s), redirects followed by hand. Throws `network_error`,
 * `rate_limited` or `api_error` (remembered for a minute, so one process asks an unreachable
 * repository once).
 */
export async function fetchCsl(
  deps: CslDeps,
  url: string,
  server: string,
  variable: string,
): Promise<Fetched> {
  const memo = await deps.services.get<NetworkMemo>('csl-network', () => ({ unreachableUntil: new Map() }));
  const origin = new URL(url).origin;
  const memoKey = `${server}\0${origin}`;
  const down = memo.unreachableUntil.get(memoKey);
  if (down && down.until > deps.clock.now()) throw down.error;
  const layer = createHttpLayer({
    clock: deps.clock,
    redact: deps.redact,
    log: (line) => deps.log.debug(line),
    timeoutMs: deps.config.timeoutMs,
    retry: {
      statuses: new Set([429, 503]),
      maxRetries: 1,
      maxWaitMs: 10_000,
      transient: (reason) => RESETS.has(reason),
    },
  });
  try {
    return await layer.send(
      {
        method: 'GET',
        url,
        server,
        headers: {
          Accept:
            'application/vnd.citationstyles.style+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1',
          'User-Agent': `Zoteus/${deps.version}`,
        },
        resendable: true,
        call: newCall(deps.config.retryBudgetMs),
        failures: {
          rateLimited: (seconds, cause) =>
            new ZoteusError(
              cause.kind === 'status' && cause.status === 503 ? 'api_error' : 'rate_limited',
              `${capital(server)} is busy (HTTP ${cause.kind === 'status' ? cause.status : 429}).`,
              { retryable: true, retryAfterSeconds: seconds, hint: `Wait ${seconds} seconds, then retry.` },
            ),
          unreachable: (reason) =>
            new ZoteusError('network_error', `Could not reach ${server} (${origin}): ${reason}.`, {
              hint: `Check the network (and ${variable}), then retry.`,
            }),
        },
      },
      ({ status, text }): Fetched => {
        if (status === 404 || status === 410) return { missing: true };
        if (status < 200 || status >= 300)
          throw new ZoteusError('api_error', `${capital(server)} answered HTTP ${status} for ${url}.`, {
            status,
            retryable: status >= 500,
          });
        if (text.length > MAX_CSL_BYTES)
          throw new ZoteusError('api_error', `${capital(server)} sent more than 2 MB for ${url}.`);
        return { text };
      },
    );
  } catch (error) {
    if (isZoteusError(error) && (error.code === 'network_error' || error.retryable))
      memo.unreachableUntil.set(memoKey, { until: deps.clock.now() + UNREACHABLE_MS, error });
    throw error;
  }
}

/**
 * Writes a downloaded file into a cache folder atomically (a temporary file, then a rename),
 * confined to that folder; a cache that cannot be written is only a warning.
 */
export async function writeCacheFile(
  deps: CslDeps,
  dir: string,
  name: string,
  text: string,
): Promise<string | undefined> {
  const path = resolve(dir, name);
  if (dirname(path) !== resolve(dir) || name.includes('/') || name.includes('\\'))
    throw new ZoteusError('internal_error', `Refusing to cache ${name} outside ${dir}.`);
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    ensureDir(dir);
    await fsp.writeFile(tmp, text, { mode: 0o600 });
    await fsp.rename(tmp, path);
    return path;
  } catch (error) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    deps.log.warn(`Could not keep ${name} in ${dir}: ${(error as Error).message}`);
    return undefined;
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---------------------------------------------------------------------------------------------
// Resolution.

export interface StyleRef {
  /** The repository id (or the `<info><id>` when it is not a Zotero style URI). */
  id: string;
  uri: string;
  title: string;
  source: StyleSource;
  /** The file it was read from (path, installed, cache, download). */
  file?: string;
}

export interface ResolvedStyle extends StyleRef {
  /** The XML the engine runs: this style's, or its independent parent's. */
  xml: string;
  /** Of the style the engine runs. */
  class: 'in-text' | 'note';
  hasBibliography: boolean;
  /** The `default-locale` of the style the engine runs. */
  defaultLocale?: string;
  /** A dependent style's own `default-locale`: to force on the engine (as Zotero does). */
  forceLocale?: string;
  /** The independent parent a dependent style runs as. */
  parent?: StyleRef;
  citationFormat?: string;
  /** Locales the engine may load for `locale` attributes of the style it runs. */
  layoutLocales: string[];
  /** What the XML the engine runs says about itself (kept in the parsed cache with it). */
  meta: StyleMeta;
}

function ref(found: Found): StyleRef {
  const r: StyleRef = {
    id: found.meta.id,
    uri: found.meta.uri,
    title: found.meta.title,
    source: found.source,
  };
  if (found.file) r.file = found.file;
  return r;
}

/** Whether a style name is a file path rather than an id. */
export function isStylePath(spec: string): boolean {
  return /\.(csl|xml)$/i.test(spec.trim());
}

/** The repository id a style name means (`apa`, the whole style URI), or a validation_error. */
export function styleIdOf(spec: string): string {
  const trimmed = spec.trim();
  const fromUri = ZOTERO_STYLE_URI.exec(trimmed);
  const id = (fromUri ? (fromUri[1] as string) : trimmed).toLowerCase();
  if (!STYLE_ID.test(id) || id.length > 200) {
    throw new ZoteusError(
      'validation_error',
      `"${trimmed.slice(0, 120)}" is neither a style id (letters, digits and hyphens, e.g. chicago-author-date, or http://www.zotero.org/styles/<id>) nor the path of a .csl file.`,
      {
        field: 'style',
        hint: `${toolRef('zotero_styles')} lists the styles available offline; any id of the Zotero style repository works when it can be reached.`,
      },
    );
  }
  return id;
}

/**
 * The style `spec` names (default: ZOTEUS_CITATION_STYLE, else `apa`): the XML to run and where
 * it came from. Errors: `not_found` for a path that does not exist, `validation_error` for a file
 * that is not a CSL style, an unknown id (with "did you mean") or a malformed one,
 * `network_error` when an id known nowhere offline could not be looked up.
 */
export async function resolveStyle(deps: CslDeps, spec?: string): Promise<ResolvedStyle> {
  const name = (spec ?? deps.config.citations.style).trim();
  if (name === '')
    throw new ZoteusError('validation_error', 'The style is empty.', {
      field: 'style',
      hint: 'Give a style id such as apa or chicago-author-date, or the path of a .csl file.',
    });
  const found = isStylePath(name) ? readStylePath(deps, name) : await findStyle(deps, styleIdOf(name));
  if (!found.meta.parentUri) return resolved(found, undefined);
  const parentId = found.meta.parent as string;
  let parent: Found;
  try {
    parent = await findStyle(deps, STYLE_ID.test(parentId) ? parentId : styleIdOf(parentId), found);
  } catch (error) {
    if (isZoteusError(error) && error.code === 'validation_error' && error.field === 'style')
      throw new ZoteusError(
        'validation_error',
        `The style ${found.meta.id} depends on ${found.meta.parentUri}, which cannot be found: ${error.message}`,
        { field: 'style', hint: error.hint },
      );
    throw error;
  }
  if (parent.meta.parentUri)
    throw styleInvalid(
      parent.file ?? parent.meta.id,
      `it is the parent of ${found.meta.id} but depends on ${parent.meta.parentUri} itself (a parent must be independent)`,
    );
  return resolved(parent, found);
}

function resolved(style: Found, dependent: Found | undefined): ResolvedStyle {
  const out: ResolvedStyle = {
    ...ref(dependent ?? style),
    xml: style.xml,
    class: style.meta.class,
    hasBibliography: style.meta.hasBibliography,
    layoutLocales: style.meta.layoutLocales,
    meta: style.meta,
  };
  if (style.meta.defaultLocale) out.defaultLocale = style.meta.defaultLocale;
  if (style.meta.citationFormat) out.citationFormat = style.meta.citationFormat;
  if (dependent) {
    out.parent = ref(style);
    if (dependent.meta.defaultLocale) out.forceLocale = dependent.meta.defaultLocale;
    if (dependent.meta.citationFormat) out.citationFormat = dependent.meta.citationFormat;
  }
  return out;
}

/**
 * A `.csl` path: relative to the working directory (`~` is home). A caller of a shared server
 * cannot name one: the pipeline refuses the input there (serverPaths); the server's own
 * default (ZOTEUS_CITATION_STYLE) may be a path.
 */
function readStylePath(deps: CslDeps, raw: string): Found {
  const path = stylePath(deps, raw);
  let text: string;
  try {
    const stat = statSync(path);
    if (stat.isDirectory())
      throw new ZoteusError('validation_error', `${path} is a folder, not a .csl file.`, { field: 'style' });
    if (stat.size > MAX_CSL_BYTES)
      throw new ZoteusError('validation_error', `${path} is larger than 2 MB: not a CSL style.`, {
        field: 'style',
      });
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isZoteusError(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new ZoteusError('not_found', `No style file at ${path}.`, {
        field: 'style',
        hint: `Check the path, or give a style id; ${toolRef('zotero_styles')} lists the styles available offline.`,
      });
    throw new ZoteusError(
      'validation_error',
      `Cannot read the style file ${path}: ${(error as Error).message}`,
      {
        field: 'style',
      },
    );
  }
  return { meta: styleMeta(deps, text, path), xml: text, source: 'path', file: path };
}

function stylePath(deps: CslDeps, raw: string): string {
  if (raw.includes('\0'))
    throw new ZoteusError('validation_error', 'A style path must not contain NUL.', { field: 'style' });
  const home = homeDir(deps.env);
  const expanded = raw === '~' ? home : /^~[\\/]/.test(raw) ? join(home, raw.slice(2)) : raw;
  return resolve(process.cwd(), expanded);
}

/** An id through the sources in order: installed, cache, download (then cached), bundled. */
async function findStyle(deps: CslDeps, id: string, dependent?: Found): Promise<Found> {
  const installed = findInstalled(deps, id);
  if (installed) return installed;
  const cached = findCached(deps, id);
  if (cached) return cached;
  // A style shipped with Zoteus is used as it is: offline (or on a network that never answers)
  // `zot cite` must not wait for a repository it does not need.
  const shipped = await bundledStyle(deps, id);
  if (shipped) return { meta: shipped.meta, xml: shipped.xml, source: 'bundled' };
  const base = deps.config.citations.stylesUrl;
  let repository: { missing: true } | { error: ZoteusError };
  try {
    const answer = await fetchCsl(
      deps,
      `${base}/${encodeURIComponent(id)}`,
      'the Zotero style repository',
      'ZOTEUS_STYLES_URL',
    );
    if ('missing' in answer) repository = { missing: true };
    else {
      let meta: StyleMeta;
      try {
        meta = readStyleMeta(answer.text, `${base}/${id}`);
      } catch (error) {
        throw new ZoteusError(
          'api_error',
          `The Zotero style repository sent something for ${id} that is not a CSL style: ${(error as Error).message}`,
          { hint: 'Check ZOTEUS_STYLES_URL: it must serve CSL files at <url>/<id>.' },
        );
      }
      const file = await writeCacheFile(deps, cslCacheDir(deps, 'styles'), `${id}.csl`, answer.text);
      deps.log.debug(`Downloaded the style ${id} from ${base}${file ? ` into ${file}` : ''}.`);
      return { meta, xml: answer.text, source: 'download', ...(file ? { file } : {}) };
    }
  } catch (error) {
    if (!isZoteusError(error)) throw error;
    repository = { error };
  }
  throw await unknownStyle(deps, id, repository, dependent);
}

async function unknownStyle(
  deps: CslDeps,
  id: string,
  repository: { missing: true } | { error: ZoteusError },
  dependent: Found | undefined,
): Promise<ZoteusError> {
  const known = new Set(WELL_KNOWN_IDS);
  for (const style of (await listStyles(deps)).styles) known.add(style.id);
  for (const name of (await bundledStyles(deps)).keys()) known.add(name);
  // The id itself is no suggestion (a well-known id the repository could not be asked for).
  known.delete(id);
  const mean = dependent ? '' : didYouMean(id, known);
  // Unreachable: a near miss of a known id (a typo) is the caller's to fix; an id that merely
  // starts like one (nature-chemistry, nature) may well exist, and is the network's problem.
  const typo = closest(id, known).some((c) => editDistance(id, c) <= Math.min(2, Math.floor(id.length / 3)));
  const url = deps.config.citations.stylesUrl;
  const hint = `${toolRef('zotero_styles')} lists the styles available offline; any id of the Zotero style repository works when it can be reached.`;
  if ('missing' in repository || typo) {
    const why =
      'missing' in repository
        ? `the Zotero style repository (${url}) has no such style`
        : `it is not available offline, and the Zotero style repository could not be reached (${repository.error.message.replace(/\.$/, '')})`;
    return new ZoteusError(
      'validation_error',
      `Unknown citation style "${id}": ${why}${mean ? `; ${mean}` : '.'}`,
      {
        field: 'style',
        hint,
      },
    );
  }
  return new ZoteusError(
    repository.error.code,
    `The citation style "${id}" is not available offline, and the Zotero style repository could not be reached: ${repository.error.message}${mean ? ` ${capital(mean)}` : ''}`,
    {
      field: 'style',
      retryable: repository.error.retryable,
      ...(repository.error.retryAfterSeconds !== undefined
        ? { retryAfterSeconds: repository.error.retryAfterSeconds }
        : {}),
      hint: `Check the network (and ZOTEUS_STYLES_URL), then retry; or give the path of a .csl file. ${hint}`,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Listing.

export interface StyleListing {
  id: string;
  title: string;
  source: 'installed' | 'cache' | 'bundled';
  dependent: boolean;
  /** The independent parent of a dependent style. */
  parent?: string;
  class: 'in-text' | 'note';
  citationFormat?: string;
  defaultLocale?: string;
}

/**
 * Every style available without the network: installed, cached, bundled; one entry per id, from
 * the source resolution would take it from, sorted by id. Broken files are skipped with a warning.
 */
export async function listStyles(deps: CslDeps): Promise<{ styles: StyleListing[] }> {
  const byId = new Map<string, StyleListing>();
  const add = (meta: StyleMeta, source: StyleListing['source']) => {
    if (byId.has(meta.id)) return;
    const entry: StyleListing = {
      id: meta.id,
      title: meta.title,
      source,
      dependent: meta.parentUri !== undefined,
      class: meta.class,
    };
    if (meta.parent) entry.parent = meta.parent;
    if (meta.citationFormat) entry.citationFormat = meta.citationFormat;
    if (meta.defaultLocale) entry.defaultLocale = meta.defaultLocale;
    byId.set(meta.id, entry);
  };
  for (const file of cslFiles(installedStylesDir(deps))) {
    const found = readQuietly(deps, file, 'installed');
    if (found) add(found.meta, 'installed');
  }
  for (const file of cslFiles(cslCacheDir(deps, 'styles'))) {
    const found = readQuietly(deps, file, 'cache');
    if (found) add(found.meta, 'cache');
  }
  const bundled = await bundledStyles(deps);
  for (const [name, style] of bundled) if (name === style.meta.id) add(style.meta, 'bundled');
  return { styles: [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
}

export interface StyleCatalogue {
  styles: StyleListing[];
  totalResults: number;
  start: number;
  nextStart?: number;
  /** ZOTEUS_CITATION_STYLE, else apa. */
  defaultStyle: string;
  /** Where other ids are downloaded from (ZOTEUS_STYLES_URL). */
  repository: string;
  locales: Array<{ tag: string; source: 'installed' | 'cache' | 'bundled' }>;
}

/**
 * A page of the styles available offline whose id or title holds every word of `q` (case- and
 * accent-insensitive), with the locales available offline.
 */
export async function styleCatalogue(
  deps: CslDeps,
  input: { q?: string | undefined; start?: number | undefined; limit?: number | undefined },
  defaultLimit: number,
): Promise<StyleCatalogue> {
  const { foldForSearch, queryWords } = await import('../local/sqlite/text.js');
  const { listLocales } = await import('./locales.js');
  const words = input.q === undefined ? [] : queryWords(input.q);
  const all = (await listStyles(deps)).styles.filter((style) => {
    if (words.length === 0) return true;
    const text = ` ${foldForSearch(`${style.id} ${style.title}`)} `;
    return words.every((word) => text.includes(word));
  });
  const start = input.start ?? 0;
  const limit = input.limit ?? defaultLimit;
  const page = all.slice(start, start + limit);
  const out: StyleCatalogue = {
    styles: page,
    totalResults: all.length,
    start,
    defaultStyle: deps.config.citations.style,
    repository: deps.config.citations.stylesUrl,
    locales: await listLocales(deps),
  };
  if (start + page.length < all.length) out.nextStart = start + page.length;
  return out;
}
