/**
 * `zotero_check_citations`: the citation keys of manuscripts (manuscripts.ts reads `.tex`,
 * `.aux`, pandoc Markdown and `.bib`) checked against the library's keys, which are assigned
 * as an export assigns them (library-keys.ts: Extra's `Citation Key:`, the `citationKey` field,
 * Better BibTeX's, else Zotero's formula), over the whole library whichever backend serves it:
 *
 * - `found`: one item has the key (its item key, title, and where the key came from);
 * - `missing`: no item has it, with the library's closest keys ("did you mean");
 * - `ambiguous`: several items have it as their own key (Extra, field, Better BibTeX);
 * - `unstable`: found, but only through Zotero's formula, so it changes when the first
 *   creator, the title or the year changes (or an item added earlier comes to share it).
 *
 * Missing and ambiguous keys are the failed entries of the answer (a partial success when
 * some keys were found). Nothing in the library changes; a `.bib` of exactly the cited items
 * found is written only when asked, through the caller's saver (render/save.ts's rules).
 */
import { paramRef, toolRef } from '../call/refs.js';
import { closest } from '../did-you-mean.js';
import { isZoteusError, ZoteusError } from '../errors.js';
import { MAX_INPUT_TEXT } from '../input-bounds.js';
import { jsonBytes } from '../items/read/bounds.js';
import type { Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { ItemQuery, LibraryReader, WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { count, plural } from '../words.js';
import type { FailedEntry } from '../zotero/types.js';
import type { SaveText } from '../exports/export.js';
import type { KeySource } from '../exports/keys.js';
import { citedKeys, MANUSCRIPT_EXTENSIONS, manuscriptKind, type ManuscriptKind } from './manuscripts.js';

// The declaration checks its input with this module when it loads (for `zot --help` too): what
// reads the library, the file system or writes BibTeX is imported when a check runs.

export const MANUSCRIPT_KINDS = [
  'tex',
  'aux',
  'markdown',
  'bib',
] as const satisfies readonly ManuscriptKind[];
/** Manuscripts one call reads. */
export const MAX_MANUSCRIPTS = 100;
/** Bytes of rows an answer holds (each list is cut to fit; `counts` has the totals). */
export const CHECK_ROWS_BUDGET = 30_000;
/** Rows of one list, at most. */
export const CHECK_LIST_MAX = 500;
/** Closest keys offered for one missing key. */
const SUGGESTIONS = 3;
/** Items read per page: the same pages the key assignment reads (library-keys.ts). */
const PAGE = 1000;
/** How the answer names a manuscript given as text. */
export const TEXT_NAME = '(text)';

export interface CheckInput extends LibraryArgs {
  files?: string[] | undefined;
  text?: string | undefined;
  kind?: ManuscriptKind | undefined;
  write_bib?: string | undefined;
  overwrite?: boolean | undefined;
}

/** What the caller supplies: where a path leads (confined on a shared deployment), and the saver. */
export interface CheckIo {
  /** The absolute path a manuscript's path names; throws a ZoteusError for a path refused. */
  resolve(path: string): Promise<string>;
  save: SaveText;
}

export interface FoundRow {
  citation_key: string;
  item_key: string;
  title: string;
  source: KeySource;
  in_trash?: boolean;
}
export interface MissingRow {
  citation_key: string;
  file: string;
  line: number;
  did_you_mean: string[];
}
export interface AmbiguousRow {
  citation_key: string;
  items: Array<{ item_key: string; title: string }>;
}
export interface UnstableRow {
  citation_key: string;
  item_key: string;
  title: string;
}

/** A failed entry of a check: its key is the citation key. */
export type CheckFailed = FailedEntry & { key: string };

export interface CheckOutput extends Answered {
  manuscripts: Array<{ file: string; kind: ManuscriptKind; keys: number; citations: number }>;
  /** Distinct keys cited, over every manuscript. */
  cited: number;
  counts: { found: number; missing: number; ambiguous: number; unstable: number };
  found: FoundRow[];
  missing: MissingRow[];
  ambiguous: AmbiguousRow[];
  unstable: UnstableRow[];
  /** The citation keys found (the rows of `found`). */
  succeeded: string[];
  /** One per missing or ambiguous key. */
  failed: CheckFailed[];
  saved?: { path: string; bytes: number; entries: number } | undefined;
  betterBibtex: string;
  truncated?: boolean | undefined;
  warnings: string[];
}

function knownKinds(): string {
  return MANUSCRIPT_EXTENSIONS.join(', ');
}

/** The kind a file is read as: its extension's, else `kind`; a validation_error without either. */
export function kindOfFile(path: string, kind: ManuscriptKind | undefined, index: number): ManuscriptKind {
  const found = manuscriptKind(path) ?? kind;
  if (found) return found;
  throw new ZoteusError(
    'validation_error',
    `Cannot tell what kind of manuscript ${path} is: its extension is not one of ${knownKinds()}.`,
    {
      field: `files[${index}]`,
      hint: `Give ${paramRef('kind', 'tex')} (or aux, markdown, bib) to read it as that kind.`,
    },
  );
}

/** What a call needs beyond its schema, offline (the declaration's `check`). */
export function checkCitationsInput(input: CheckInput): void {
  const files = input.files ?? [];
  if (files.length === 0 && input.text === undefined)
    throw new ZoteusError('validation_error', 'Nothing to check: give the manuscripts’ paths, or a text.', {
      field: 'files',
      hint: `Give one or more .tex, .aux, .md or .bib files, or the manuscript itself in ${paramRef('text')} with its ${paramRef('kind')}.`,
    });
  if (input.text !== undefined && input.kind === undefined)
    throw new ZoteusError(
      'validation_error',
      'A manuscript given as text needs its kind: tex, aux, markdown or bib.',
      {
        field: 'kind',
        hint: `Add ${paramRef('kind', 'tex')} (or aux, markdown, bib).`,
      },
    );
  files.forEach((file, index) => {
    if (file === '-')
      throw new ZoteusError('validation_error', '"-" names no file: a manuscript from stdin is a text.', {
        field: `files[${index}]`,
        hint: `Give ${paramRef('text', '-')} with ${paramRef('kind', 'tex')} (or aux, markdown, bib) to read it from stdin.`,
      });
    kindOfFile(file, input.kind, index);
  });
  if (input.overwrite && input.write_bib === undefined)
    throw new ZoteusError('validation_error', 'overwrite applies to write_bib, which was not given.', {
      field: 'overwrite',
      hint: `Give ${paramRef('write_bib', 'refs.bib')} to write a .bib of the cited items.`,
    });
}

interface Manuscript {
  file: string;
  kind: ManuscriptKind;
  text: string;
}

function unreadable(raw: string, path: string, index: number, error: unknown): ZoteusError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  const field = `files[${index}]`;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new ZoteusError('not_found', `No manuscript at ${path}: the file ${raw} does not exist.`, {
      field,
      hint: 'Check the path: a relative one starts from the working directory (on a shared server, from your own folder).',
    });
  if (code === 'EACCES' || code === 'EPERM')
    return new ZoteusError(
      'permission_denied',
      `Cannot read the manuscript ${path}: no permission to read it.`,
      {
        field,
      },
    );
  return new ZoteusError('validation_error', `Cannot read the manuscript ${path} (${code}).`, { field });
}

async function readManuscript(
  raw: string,
  index: number,
  kind: ManuscriptKind | undefined,
  io: CheckIo,
): Promise<Manuscript> {
  const as = kindOfFile(raw, kind, index);
  const path = await io.resolve(raw);
  const { readFile, stat } = await import('node:fs/promises');
  try {
    const info = await stat(path);
    if (info.isDirectory())
      throw new ZoteusError('validation_error', `${path} is a folder, not a manuscript.`, {
        field: `files[${index}]`,
        hint: `Name the .tex, .aux, .md or .bib files in it (${knownKinds()}).`,
      });
    if (info.size > MAX_INPUT_TEXT)
      throw new ZoteusError(
        'validation_error',
        `The manuscript ${path} is larger than ${MAX_INPUT_TEXT / (1024 * 1024)} MiB, the most one call reads.`,
        { field: `files[${index}]` },
      );
    const text = await readFile(path, 'utf8');
    return { file: raw, kind: as, text: text.replace(/^\uFEFF/, '') };
  } catch (error) {
    if (isZoteusError(error)) throw error;
    throw unreadable(raw, path, index, error);
  }
}

/** Where a key is first cited, over every manuscript. */
interface Cite {
  key: string;
  file: string;
  line: number;
}

/**
 * The library's keys, by citation key: each key's items (more than one only for keys of the
 * items' own that several share).
 */
interface Universe {
  items: Map<string, WebApiItem>;
  byCitationKey: Map<string, Array<{ itemKey: string; source: KeySource }>>;
  betterBibtex: string;
}

/**
 * The reader, with the pages of the library already read answered again from memory when
 * libraryKeys asks for the same pages (it reads the whole library on the desktop); any other
 * query goes to the reader.
 */
function withPages(reader: LibraryReader, pages: Map<string, Awaited<ReturnType<LibraryReader['items']>>>) {
  return new Proxy(reader, {
    get(target, prop) {
      if (prop === 'items')
        return (query: ItemQuery) => {
          const page = pages.get(JSON.stringify(query));
          return page ? Promise.resolve(page) : target.items(query);
        };
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function readUniverse(
  deps: Deps,
  input: CheckInput,
  reader: LibraryReader,
  desktop: boolean,
): Promise<Universe> {
  const { isExportable } = await import('../exports/bibtex.js');
  const { libraryKeys } = await import('../exports/library-keys.js');
  const items = new Map<string, WebApiItem>();
  const pages = new Map<string, Awaited<ReturnType<LibraryReader['items']>>>();
  const phase = 'read_library';
  let total = 0;
  for (let start = 0; ; start += PAGE) {
    // The desktop: the very query libraryKeys pages with (so it reads nothing again); the Web
    // API: top-level items only, which is every item that has a key.
    const query: ItemQuery = desktop
      ? { includeTrashed: true, sort: 'dateAdded', direction: 'asc', start, limit: PAGE }
      : { top: true, includeTrashed: true, sort: 'dateAdded', direction: 'asc', start, limit: PAGE };
    const page = await reader.items(query);
    if (desktop) pages.set(JSON.stringify(query), page);
    if (start === 0) {
      total = page.totalResults;
      deps.progress({ event: 'start', phase, done: 0, total });
    }
    for (const item of page.items) if (isExportable(item)) items.set(item.key, item);
    deps.progress({ event: 'progress', phase, done: Math.min(start + page.items.length, total), total });
    if (page.items.length < PAGE || start + page.items.length >= page.totalResults) break;
  }
  deps.progress({ event: 'complete', phase, done: total, total });
  const keys = await libraryKeys(deps, input, withPages(reader, pages), [...items.values()]);
  pages.clear();
  const byCitationKey = new Map<string, Array<{ itemKey: string; source: KeySource }>>();
  for (const [itemKey, assigned] of keys.assignment.entries()) {
    const holders = byCitationKey.get(assigned.citationKey);
    const holder = { itemKey, source: assigned.source };
    if (holders) holders.push(holder);
    else byCitationKey.set(assigned.citationKey, [holder]);
  }
  const betterBibtex =
    keys.betterBibtex.from === null
      ? `not used: ${keys.betterBibtex.reason}`
      : `read from its ${keys.betterBibtex.from === 'sqlite' ? 'database' : 'running app'}`;
  return { items, byCitationKey, betterBibtex };
}

const titleOf = (item: WebApiItem | undefined): string => {
  const data = item?.data;
  if (!data) return '';
  for (const field of ['title', 'caseName', 'subject', 'nameOfAct']) {
    const v = data[field];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return '';
};

/** Lower case words and numbers of a key: `Vaswani2017` → vaswani, 2017. */
function tokens(key: string): string[] {
  return key
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u)
    .filter((t) => t !== '');
}

/**
 * The library's keys closest to a missing one: those a few edits away (did-you-mean.ts), then
 * those holding every word and number of it (`vaswani2017` → `vaswani_attention_2017`).
 */
class Suggester {
  private readonly keys: string[];
  private readonly lower: string[];
  private readonly byToken = new Map<string, number[]>();
  constructor(keys: Iterable<string>) {
    this.keys = [...keys];
    this.lower = this.keys.map((k) => k.toLowerCase());
    this.keys.forEach((key, i) => {
      for (const t of new Set(tokens(key))) {
        const list = this.byToken.get(t);
        if (list) list.push(i);
        else this.byToken.set(t, [i]);
      }
    });
  }

  suggest(cited: string): string[] {
    const word = cited.toLowerCase();
    // Candidates closest() could accept: a prefix either way, or within 3 characters of its
    // length with letters that differ by at most 3 in count (a bound below the edit distance).
    const counts = new Int32Array(128);
    for (let i = 0; i < word.length; i += 1) {
      const c = word.charCodeAt(i) & 127;
      counts[c] = (counts[c] as number) + 1;
    }
    const near: string[] = [];
    this.lower.forEach((lower, i) => {
      const prefix = word.length >= 3 && (lower.startsWith(word) || word.startsWith(lower));
      if (
        prefix ||
        (Math.abs(lower.length - word.length) <= 3 && lettersWithin(counts, word.length, lower, 3))
      )
        near.push(this.keys[i] as string);
    });
    const out = closest(cited, near, SUGGESTIONS);
    const words = [...new Set(tokens(cited))];
    if (out.length < SUGGESTIONS && words.length >= 2) {
      const lists = words.map((t) => this.byToken.get(t) ?? []);
      const rarest = lists.reduce((a, b) => (b.length < a.length ? b : a));
      const sets = lists.map((l) => new Set(l));
      const matches = rarest
        .filter((i) => sets.every((s) => s.has(i)))
        .map((i) => this.keys[i] as string)
        .filter((k) => !out.includes(k))
        .sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
      out.push(...matches.slice(0, SUGGESTIONS - out.length));
    }
    return out;
  }
}

/**
 * Whether `other`'s characters differ from those counted in `counts` by at most `max` on either
 * side (characters folded into 128 buckets, which only lowers the difference); `counts` is left
 * as it was.
 */
function lettersWithin(counts: Int32Array, total: number, other: string, max: number): boolean {
  let plus = total;
  let minus = 0;
  for (let i = 0; i < other.length; i += 1) {
    const c = other.charCodeAt(i) & 127;
    if ((counts[c] as number) > 0) plus -= 1;
    else minus += 1;
    counts[c] = (counts[c] as number) - 1;
  }
  for (let i = 0; i < other.length; i += 1) {
    const c = other.charCodeAt(i) & 127;
    counts[c] = (counts[c] as number) + 1;
  }
  return Math.max(plus, minus) <= max;
}

/** Rows within the budget: each list to CHECK_LIST_MAX, all of them to CHECK_ROWS_BUDGET. */
class Budget {
  private used = 0;
  cut = false;
  take(bytes: number, listLength: number): boolean {
    if (listLength >= CHECK_LIST_MAX || this.used + bytes > CHECK_ROWS_BUDGET) {
      this.cut = true;
      return false;
    }
    this.used += bytes;
    return true;
  }
}

/** Reads the manuscripts, checks each cited key against the library, writes the .bib when asked. */
export async function checkCitations(deps: Deps, input: CheckInput, io: CheckIo): Promise<CheckOutput> {
  checkCitationsInput(input);
  const manuscripts: Manuscript[] = [];
  for (const [index, file] of (input.files ?? []).entries())
    manuscripts.push(await readManuscript(file, index, input.kind, io));
  if (input.text !== undefined)
    manuscripts.push({
      file: TEXT_NAME,
      kind: input.kind as ManuscriptKind,
      text: input.text.replace(/^\uFEFF/, ''),
    });

  const cites = new Map<string, Cite>();
  const perManuscript = manuscripts.map((m) => {
    const keys = citedKeys(m.text, m.kind);
    for (const k of keys) if (!cites.has(k.key)) cites.set(k.key, { key: k.key, file: m.file, line: k.line });
    return {
      file: m.file,
      kind: m.kind,
      keys: keys.length,
      citations: keys.reduce((n, k) => n + k.count, 0),
    };
  });

  const { answered, openReader } = await import('../items/read/common.js');
  const { reader, route } = await openReader(deps, input);
  const warnings: string[] = [];
  if (cites.size === 0) {
    warnings.push(
      `${manuscripts.length === 1 ? 'The manuscript cites' : 'The manuscripts cite'} no key${input.write_bib !== undefined ? ', so no .bib was written' : ''}.`,
    );
    return {
      manuscripts: perManuscript,
      cited: 0,
      counts: { found: 0, missing: 0, ambiguous: 0, unstable: 0 },
      found: [],
      missing: [],
      ambiguous: [],
      unstable: [],
      succeeded: [],
      failed: [],
      betterBibtex: 'not needed: no key to look up',
      warnings,
      ...answered(route),
    };
  }

  const universe = await readUniverse(deps, input, reader, route.backend !== 'web');
  const found: Array<{ cite: Cite; item: WebApiItem; source: KeySource }> = [];
  const missing: Array<{ cite: Cite; index: number }> = [];
  const ambiguous: Array<{ cite: Cite; index: number; itemKeys: string[] }> = [];
  [...cites.values()].forEach((cite, index) => {
    const holders = universe.byCitationKey.get(cite.key);
    if (!holders) missing.push({ cite, index });
    else if (holders.length > 1) ambiguous.push({ cite, index, itemKeys: holders.map((h) => h.itemKey) });
    else {
      const holder = holders[0] as { itemKey: string; source: KeySource };
      found.push({ cite, item: universe.items.get(holder.itemKey) as WebApiItem, source: holder.source });
    }
  });
  const unstableAll = found.filter((f) => f.source === 'generated');
  const trashed = found.filter((f) => f.item.data.deleted === 1 || f.item.data.deleted === true);

  // The rows, within the budget: the manuscripts, the first key found (so a partial answer says
  // what was found), what failed, the unstable keys, then the rest of what was found.
  const budget = new Budget();
  const rows = {
    manuscripts: [] as CheckOutput['manuscripts'],
    found: [] as FoundRow[],
    missing: [] as MissingRow[],
    ambiguous: [] as AmbiguousRow[],
    unstable: [] as UnstableRow[],
    failed: [] as CheckFailed[],
  };
  for (const m of perManuscript)
    if (budget.take(jsonBytes(m), rows.manuscripts.length)) rows.manuscripts.push(m);
  const foundRow = (f: (typeof found)[number]): FoundRow => ({
    citation_key: f.cite.key,
    item_key: f.item.key,
    title: titleOf(f.item),
    source: f.source,
    ...(f.item.data.deleted === 1 || f.item.data.deleted === true ? { in_trash: true } : {}),
  });
  const takeFound = (f: (typeof found)[number]) => {
    const row = foundRow(f);
    if (!budget.take(jsonBytes(row) + jsonBytes(row.citation_key), rows.found.length)) return false;
    rows.found.push(row);
    return true;
  };
  if (found[0]) takeFound(found[0]);

  const suggester = missing.length > 0 ? new Suggester(universe.byCitationKey.keys()) : undefined;
  for (const { cite, index } of missing) {
    const suggestions = suggester?.suggest(cite.key) ?? [];
    const row: MissingRow = {
      citation_key: cite.key,
      file: cite.file,
      line: cite.line,
      did_you_mean: suggestions,
    };
    const mean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
    const failed: CheckFailed = {
      index,
      key: cite.key,
      code: 404,
      message: `No item in the library has the citation key "${cite.key}" (${cite.file}, line ${cite.line}).${mean}`,
      reason: 'not_found',
      retryable: false,
    };
    if (!budget.take(jsonBytes(row) + jsonBytes(failed), rows.missing.length)) break;
    rows.missing.push(row);
    rows.failed.push(failed);
  }
  for (const { cite, index, itemKeys } of ambiguous) {
    const row: AmbiguousRow = {
      citation_key: cite.key,
      items: itemKeys.map((k) => ({ item_key: k, title: titleOf(universe.items.get(k)) })),
    };
    const failed: CheckFailed = {
      index,
      key: cite.key,
      code: 409,
      message: `${plural(itemKeys.length, 'item')} have the citation key "${cite.key}" as their own: ${itemKeys.join(', ')}. Give each its own key.`,
      reason: 'conflict',
      retryable: false,
    };
    if (!budget.take(jsonBytes(row) + jsonBytes(failed), rows.ambiguous.length)) break;
    rows.ambiguous.push(row);
    rows.failed.push(failed);
  }
  for (const f of unstableAll) {
    const row: UnstableRow = { citation_key: f.cite.key, item_key: f.item.key, title: titleOf(f.item) };
    if (!budget.take(jsonBytes(row), rows.unstable.length)) break;
    rows.unstable.push(row);
  }
  for (const f of found.slice(1)) if (!takeFound(f)) break;

  if (found.length === 0) throw noneFound(cites.size, missing.length, ambiguous.length, rows.failed);

  if (unstableAll.length > 0)
    warnings.push(
      `${plural(unstableAll.length, 'cited key is', 'cited keys are')} only generated by Zotero’s formula (first creator, first word of the title, year; see unstable): ${unstableAll.length === 1 ? 'it changes' : 'they change'} when those fields change. Pin one by adding the line "Citation Key: <key>" to its item’s Extra field (${toolRef('zotero_update_item', { item_key: 'KEY' })}; keep the lines Extra holds).`,
    );
  if (trashed.length > 0)
    warnings.push(
      `${plural(trashed.length, 'cited item is', 'cited items are')} in the trash (in_trash in found): ${trashed
        .slice(0, 10)
        .map((f) => f.item.key)
        .join(', ')}${trashed.length > 10 ? ', …' : ''}.`,
    );

  let saved: CheckOutput['saved'];
  if (input.write_bib !== undefined) {
    if (found.length === 0)
      warnings.push(`Nothing was written to ${input.write_bib}: no cited key was found.`);
    else saved = await writeBib(deps, input.write_bib, found, io.save);
    if (saved && (missing.length > 0 || ambiguous.length > 0))
      warnings.push(
        `${saved.path} holds the ${plural(found.length, 'cited item')} found; the ${plural(missing.length + ambiguous.length, 'key')} missing or ambiguous ${missing.length + ambiguous.length === 1 ? 'is' : 'are'} not in it.`,
      );
  }

  return {
    manuscripts: rows.manuscripts,
    cited: cites.size,
    counts: {
      found: found.length,
      missing: missing.length,
      ambiguous: ambiguous.length,
      unstable: unstableAll.length,
    },
    found: rows.found,
    missing: rows.missing,
    ambiguous: rows.ambiguous,
    unstable: rows.unstable,
    succeeded: rows.found.map((r) => r.citation_key),
    failed: rows.failed,
    ...(saved ? { saved } : {}),
    betterBibtex: universe.betterBibtex,
    ...(budget.cut ? { truncated: true } : {}),
    warnings,
    ...answered(route),
  };
}

/**
 * Not one cited key found: an error (the pipeline's outcome of a batch where nothing
 * succeeded), saying how many keys failed of each kind, with the failed entries that fit.
 */
function noneFound(cited: number, missing: number, ambiguous: number, failed: CheckFailed[]): ZoteusError {
  const one = cited === 1;
  const parts = [
    missing ? (one ? 'no item has it' : `no item has ${count(missing)} of them`) : '',
    ambiguous ? (one ? 'several items share it' : `several items share ${count(ambiguous)} of them`) : '',
  ].filter(Boolean);
  const shown =
    failed.length < missing + ambiguous
      ? ` (error.failed holds the first ${count(failed.length)})`
      : ' (see error.failed)';
  return new ZoteusError(
    missing && ambiguous ? 'api_error' : missing ? 'not_found' : 'conflict',
    `${one ? 'The cited key names no single' : `None of the ${plural(cited, 'cited key')} names exactly one`} item of the library: ${parts.join(', and ')}${shown}.`,
    {
      failed,
      retryable: false,
      hint: `Each entry says why, with the library’s closest keys; ${toolRef('zotero_search_items', { q: 'TEXT' })} finds the items, and ${toolRef('zotero_export', { item_keys: 'KEY…' })} shows their keys.`,
    },
  );
}

/** A BibTeX file of the items found, in the order first cited, each under the key it is cited by. */
async function writeBib(
  deps: Deps,
  path: string,
  found: ReadonlyArray<{ cite: Cite; item: WebApiItem }>,
  save: SaveText,
): Promise<{ path: string; bytes: number; entries: number }> {
  const { bibtexEntry, BIBTEX_ENTRY_SEPARATOR, defaultCharset } = await import('../exports/bibtex.js');
  const { localSchema } = await import('../items/schema.js');
  const options = { biblatex: false, charset: defaultCharset(false), schema: localSchema(deps.config) };
  let bytes = 0;
  async function* chunks(): AsyncGenerator<string> {
    for (const [i, f] of found.entries()) {
      const text = (i > 0 ? BIBTEX_ENTRY_SEPARATOR : '') + bibtexEntry(f.item, f.cite.key, options);
      bytes += Buffer.byteLength(text, 'utf8');
      yield text;
    }
  }
  const written = await save(path, chunks());
  return { path: written, bytes, entries: found.length };
}
