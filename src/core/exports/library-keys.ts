/**
 * The citation keys of an export or a citation check (keys.ts), over the right universe: the
 * whole library when it is readable without the cloud (the desktop's zotero.sqlite or local
 * API), so a key never depends on what else was exported; else the items at hand. Better
 * BibTeX's keys are asked of the desktop when it holds the library (better-bibtex.ts).
 *
 * From zotero.sqlite the library's part is one query of what keys are made of
 * (`citationKeyFacts`), not the library's items read whole; through the local API, pages of
 * items.
 */
import { resolveLibrary, type LibraryArgs } from '../library/address.js';
import type { LibraryReader, WebApiItem } from '../library/port.js';
import { desktop } from '../library/readers/desktop.js';
import type { ZoteroSqliteReader } from '../local/index.js';
import { localApiUrl } from '../local/local-api.js';
import { loadDatabaseClass } from '../sqlite-driver.js';
import type { Deps } from '../tool.js';
import { zoteroDataDir } from '../citations/styles.js';
import { localSchema } from '../items/schema.js';
import { betterBibtexRpcUrl, createBetterBibtexRpc, lookupBetterBibtexKeys } from './better-bibtex.js';
import { cachedKeys, keepKeys } from './key-cache.js';
import { createKeyAssigner, keyFieldNames, ownKeyOf, type KeyAssignment, type KeyScope } from './keys.js';

/** Types that have no citation key (keys.ts passes them over). */
const NO_KEY = new Set(['note', 'attachment', 'annotation']);

/** Items read per page when the whole library is the universe of keys. */
const PAGE = 1000;

/** The desktop's zotero.sqlite and the library's id in it, when the router reads the library there. */
export interface DirectSqlite {
  sqlite: ZoteroSqliteReader;
  libraryID: number;
}

/**
 * Where the router sends the library's reads: `desktop`, the desktop's library when that is
 * zotero.sqlite or the local API; `sqlite`, the database itself when the reads go to it.
 */
export async function desktopRoute(
  deps: Deps,
  args: LibraryArgs,
): Promise<{ desktop?: { libraryID?: number | undefined } | undefined; sqlite?: DirectSqlite | undefined }> {
  const { planRoute } = await import('../library/router.js');
  const plan = await planRoute(deps, resolveLibrary(args, deps.config));
  if (plan.backend !== 'sqlite' && plan.backend !== 'localApi') return {};
  const local = plan.local;
  if (plan.backend !== 'sqlite' || local?.libraryID === undefined) return { desktop: local };
  const sqlite = (await (await desktop(deps)).state()).sqlite.reader;
  return { desktop: local, ...(sqlite ? { sqlite: { sqlite, libraryID: local.libraryID } } : {}) };
}

export interface LibraryKeys {
  assignment: KeyAssignment;
  unique: KeyScope;
  /** Where Better BibTeX's keys came from, or why none were used. */
  betterBibtex: { from: 'sqlite' | 'json-rpc' } | { from: null; reason: string };
}

/**
 * Keys for `items` (the export). `reader` reads the library; when the router sends the
 * library's reads to the desktop, every item of the library takes part: from zotero.sqlite
 * one query of what keys are made of, through the local API page by page (the assigner keeps
 * a few strings per item, not the items).
 */
export async function libraryKeys(
  deps: Deps,
  args: LibraryArgs,
  reader: LibraryReader,
  items: readonly WebApiItem[],
  /** The caller's `desktopRoute` for these args, when it has one already. */
  route?: Awaited<ReturnType<typeof desktopRoute>>,
): Promise<LibraryKeys> {
  const schema = localSchema(deps.config);
  const { desktop, sqlite } = route ?? (await desktopRoute(deps, args));
  let betterBibtex: LibraryKeys['betterBibtex'] = {
    from: null,
    reason: 'the library is read from the Zotero cloud, not from the desktop',
  };
  let bbtKeys: Map<string, string> | undefined;
  if (desktop?.libraryID !== undefined) {
    const found = await lookupBetterBibtexKeys({
      zoteroDataDir: zoteroDataDir(deps),
      libraryID: desktop.libraryID,
      itemKeys: items.map((i) => i.key),
      Database: loadDatabaseClass(),
      rpc: createBetterBibtexRpc({
        url: betterBibtexRpcUrl(localApiUrl(deps.env)),
        clock: deps.clock,
        redact: deps.redact,
        timeoutMs: Math.min(deps.config.timeoutMs, 2000),
      }),
      log: (line) => deps.log.debug(line),
    });
    if (found.keys) {
      bbtKeys = found.keys;
      betterBibtex = { from: found.from };
    } else betterBibtex = { from: null, reason: found.reason };
  }
  const unique: KeyScope = desktop ? 'library' : 'export';
  // The whole library's keys, kept between processes, when Better BibTeX gave none of these
  // items a key of its own (one would take its key from the others: key-cache.ts).
  const keyed = items.filter((i) => !NO_KEY.has(i.data.itemType));
  const bbtMatters = keyed.some((i) => !ownKeyOf(i) && bbtKeys?.get(i.key)?.trim());
  const cacheId =
    unique === 'library' && sqlite && !bbtMatters
      ? {
          source: sqlite.sqlite.source,
          libraryID: sqlite.libraryID,
          fingerprint: (await sqlite.sqlite.status()).fingerprint,
          schema: `${schema.version}:${schema.source}`,
        }
      : undefined;
  if (cacheId) {
    const kept = cachedKeys(deps.config.cacheDir, cacheId, [...new Set(keyed.map((i) => i.key))]);
    if (kept) return { assignment: kept, unique, betterBibtex };
  }
  const assigner = createKeyAssigner({ schema, unique, betterBibtex: bbtKeys });
  if (unique === 'export') for (const item of items) assigner.add(item);
  else {
    // Every item of the library, trashed ones too: restoring one must not change another's key.
    const seen = new Set<string>();
    if (sqlite) {
      await sqlite.sqlite.citationKeyFacts(sqlite.libraryID, keyFieldNames(schema), (facts) => {
        seen.add(facts.key);
        assigner.add(facts);
      });
    } else {
      for (let start = 0; ; start += PAGE) {
        const page = await reader.items({
          includeTrashed: true,
          sort: 'dateAdded',
          direction: 'asc',
          start,
          limit: PAGE,
        });
        for (const item of page.items) {
          seen.add(item.key);
          assigner.add(item);
        }
        if (page.items.length < PAGE || start + page.items.length >= page.totalResults) break;
      }
    }
    // An exported item the listing did not hold (added meanwhile) still gets its key.
    const unlisted = keyed.filter((item) => !seen.has(item.key));
    for (const item of unlisted) assigner.add(item);
    const assignment = assigner.assign();
    // Kept only when made from the database alone, as its fingerprint says.
    if (cacheId && unlisted.length === 0) keepKeys(deps.config.cacheDir, cacheId, assignment);
    return { assignment, unique, betterBibtex };
  }
  return { assignment: assigner.assign(), unique, betterBibtex };
}
