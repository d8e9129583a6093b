/**
 * `zotero_tag_audit`: the tags of every top-level item in scope (the library, or some
 * collections with or without their subcollections) checked against a controlled vocabulary.
 * Read-only: it reports and suggests `zot tag` commands, it never writes.
 */
import { ZoteusError } from '../errors.js';
import { answered, openReader, type Answered } from '../items/read/common.js';
import type { LibraryArgs } from '../library/address.js';
import type { LibraryReader, WebApiCollection, WebApiItem } from '../library/port.js';
import type { Deps } from '../tool.js';
import { buildVocabulary, closestTerm, nearKey, type Term, type VocabularyEntry } from './vocabulary.js';
import { commandRef, toolRef } from '../call/refs.js';
import { shellWord } from '../shell-word.js';

export const AUDIT_DEFAULT_LIMIT = 100;
export const AUDIT_MAX_LIMIT = 1000;

/** Items that carry no tags by nature: left out of the required-tier check. */
const NOT_REGULAR = new Set(['note', 'attachment', 'annotation']);

export interface TagAuditInput extends LibraryArgs {
  vocabulary: VocabularyEntry[];
  required_tiers?: string[] | undefined;
  collection_keys?: string[] | undefined;
  include_subcollections?: boolean | undefined;
  include_automatic?: boolean | undefined;
  limit?: number | undefined;
}

export interface TagAuditOutput extends Answered {
  items: number;
  tags: number;
  scope: { collections: string[] | null };
  unknown: Array<{ tag: string; items: number; closest?: string; match?: 'variant' | 'similar' }>;
  synonyms: Array<{ tag: string; preferred: string; items: number }>;
  nearDuplicates: Array<{
    preferred: string;
    inVocabulary: boolean;
    tags: Array<{ tag: string; items: number }>;
  }>;
  missingTier: Array<{ tier: string; count: number; items: string[] }>;
  suggestions: string[];
  totals: { unknown: number; synonyms: number; nearDuplicates: number; suggestions: number };
  truncated: boolean;
  complete: boolean;
  message?: string;
}

export { shellWord };

/** The call that applies a suggested rename, as a reference each surface writes in its own terms. */
function renameCommand(from: string, to: string, input: LibraryArgs): string | undefined {
  // Offered only where a shell can take both names as they are.
  if (shellWord(from) === undefined || shellWord(to) === undefined) return undefined;
  const library: Record<string, string> = {};
  if (input.library_id !== undefined) library.library_id = String(input.library_id);
  if (input.library_type !== undefined) library.library_type = input.library_type;
  return commandRef('zotero_manage_tags', { action: 'rename', tag: from, new_name: to, ...library });
}

/** The collections in scope: those named, and their descendants when asked; not_found for an unknown key. */
async function scopeCollections(
  deps: Deps,
  reader: LibraryReader,
  keys: readonly string[],
  withChildren: boolean,
  library: string,
): Promise<{ keys: string[]; complete: boolean }> {
  const listing = await reader.collections();
  const all: WebApiCollection[] = listing.collections;
  const known = new Set(all.map((c) => c.key));
  const missing = keys.filter((k) => !known.has(k));
  if (missing.length > 0 && listing.complete) {
    throw new ZoteusError(
      'not_found',
      `No collection ${missing.map((k) => `'${k}'`).join(', ')} in library ${library}.`,
      {
        field: 'collection_keys',
        hint: `${toolRef('zotero_list_collections')} lists the keys.`,
      },
    );
  }
  const out = new Set(keys);
  if (withChildren) {
    const children = new Map<string, string[]>();
    for (const c of all) {
      const parent = c.data.parentCollection;
      if (typeof parent === 'string') children.set(parent, [...(children.get(parent) ?? []), c.key]);
    }
    const queue = [...keys];
    while (queue.length > 0) {
      for (const child of children.get(queue.pop()!) ?? []) {
        if (!out.has(child)) {
          out.add(child);
          queue.push(child);
        }
      }
    }
  }
  return { keys: [...out].sort(), complete: listing.complete };
}

/** Every top-level item in scope (not in the trash), read whole; `complete` false if a listing came back short. */
async function readItems(
  reader: LibraryReader,
  collections: readonly string[] | null,
): Promise<{ items: WebApiItem[]; complete: boolean }> {
  const queries = collections === null ? [{}] : collections.map((collectionKey) => ({ collectionKey }));
  const byKey = new Map<string, WebApiItem>();
  let complete = true;
  for (const q of queries) {
    // No limit: the reader reads every page from start (100 at a time on the Web API).
    const page = await reader.items({ ...q, top: true });
    if (page.items.length < page.totalResults) complete = false;
    for (const item of page.items) byKey.set(item.key, item);
  }
  return { items: [...byKey.values()], complete };
}

const byCount = <T extends { items: number; tag: string }>(a: T, b: T): number =>
  b.items - a.items || (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0);

export async function tagAudit(deps: Deps, input: TagAuditInput): Promise<TagAuditOutput> {
  const vocabulary = buildVocabulary(input.vocabulary);
  const required = [...new Set(input.required_tiers ?? [])];
  const unknownTiers = required.filter((t) => !vocabulary.tiers.has(t));
  if (unknownTiers.length > 0) {
    throw new ZoteusError(
      'validation_error',
      `No vocabulary term has tier ${unknownTiers.map((t) => `"${t}"`).join(', ')}.`,
      {
        field: 'required_tiers',
        hint: vocabulary.tiers.size
          ? `Tiers of this vocabulary: ${[...vocabulary.tiers].sort().join(', ')}.`
          : 'Give vocabulary entries a tier ({"term": "…", "tier": "…"}).',
      },
    );
  }
  const limit = input.limit ?? AUDIT_DEFAULT_LIMIT;
  const { reader, route } = await openReader(deps, input);
  const wanted = input.collection_keys ?? [];
  const scoped =
    wanted.length > 0
      ? await scopeCollections(deps, reader, wanted, input.include_subcollections ?? false, route.library)
      : undefined;
  const read = await readItems(reader, scoped?.keys ?? null);
  const complete = read.complete && (scoped?.complete ?? true);

  // Tag → keys of the items carrying it.
  const carriers = new Map<string, Set<string>>();
  const missing = new Map(required.map((t) => [t, [] as string[]]));
  for (const item of read.items) {
    const tiers = new Set<string>();
    for (const t of item.data.tags ?? []) {
      if (t.type === 1 && !input.include_automatic) continue;
      const set = carriers.get(t.tag) ?? new Set<string>();
      set.add(item.key);
      carriers.set(t.tag, set);
      const term: Term | undefined = vocabulary.terms.get(t.tag) ?? vocabulary.synonyms.get(t.tag);
      if (term?.tier) tiers.add(term.tier);
    }
    if (NOT_REGULAR.has(item.data.itemType)) continue;
    for (const [tier, keys] of missing) if (!tiers.has(tier)) keys.push(item.key);
  }
  const count = (tag: string): number => carriers.get(tag)?.size ?? 0;

  const suggestions: string[] = [];
  const suggest = (command: string | undefined): void => {
    if (command !== undefined && !suggestions.includes(command)) suggestions.push(command);
  };

  const synonyms: TagAuditOutput['synonyms'] = [];
  const unknown: TagAuditOutput['unknown'] = [];
  for (const tag of carriers.keys()) {
    if (vocabulary.terms.has(tag)) continue;
    const preferred = vocabulary.synonyms.get(tag);
    if (preferred) {
      synonyms.push({ tag, preferred: preferred.term, items: count(tag) });
      continue;
    }
    const closest = closestTerm(vocabulary, tag);
    unknown.push({
      tag,
      items: count(tag),
      ...(closest ? { closest: closest.term, match: closest.match } : {}),
    });
  }
  synonyms.sort(byCount);
  unknown.sort(byCount);
  for (const s of synonyms) suggest(renameCommand(s.tag, s.preferred, input));
  for (const u of unknown)
    if (u.match === 'variant' && u.closest) suggest(renameCommand(u.tag, u.closest, input));

  // Near-duplicates: tags in scope sharing a folded key.
  const groups = new Map<string, string[]>();
  for (const tag of carriers.keys()) {
    const key = nearKey(tag);
    groups.set(key, [...(groups.get(key) ?? []), tag]);
  }
  const nearDuplicates: TagAuditOutput['nearDuplicates'] = [];
  for (const [key, tags] of groups) {
    if (tags.length < 2) continue;
    const rows = tags.map((tag) => ({ tag, items: count(tag) })).sort(byCount);
    // The vocabulary's term when it has one for these spellings, else the most used spelling.
    const inVocabulary = rows.find((r) => vocabulary.terms.has(r.tag));
    const target = inVocabulary?.tag ?? vocabulary.byKey.get(key)?.term ?? rows[0]!.tag;
    nearDuplicates.push({ preferred: target, inVocabulary: vocabulary.terms.has(target), tags: rows });
    for (const r of rows) if (r.tag !== target) suggest(renameCommand(r.tag, target, input));
  }
  nearDuplicates.sort(
    (a, b) =>
      b.tags.reduce((n, t) => n + t.items, 0) - a.tags.reduce((n, t) => n + t.items, 0) ||
      (a.preferred < b.preferred ? -1 : 1),
  );

  const missingTier = [...missing].map(([tier, keys]) => ({
    tier,
    count: keys.length,
    items: keys.sort().slice(0, limit),
  }));
  const truncated =
    unknown.length > limit ||
    synonyms.length > limit ||
    nearDuplicates.length > limit ||
    suggestions.length > limit ||
    missingTier.some((m) => m.count > limit);
  return {
    ...answered(route),
    items: read.items.length,
    tags: carriers.size,
    scope: { collections: scoped?.keys ?? null },
    unknown: unknown.slice(0, limit),
    synonyms: synonyms.slice(0, limit),
    nearDuplicates: nearDuplicates.slice(0, limit),
    missingTier,
    suggestions: suggestions.slice(0, limit),
    totals: {
      unknown: unknown.length,
      synonyms: synonyms.length,
      nearDuplicates: nearDuplicates.length,
      suggestions: suggestions.length,
    },
    truncated,
    complete,
    ...(complete
      ? {}
      : {
          message:
            'A listing came back shorter than its total (a capped collection listing or a deviating server): the audit covers the items read.',
        }),
  };
}
