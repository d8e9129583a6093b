/**
 * Likely duplicates among a library's regular items, as Zotero's duplicate finder judges them:
 * items of one item type that share a DOI, an arXiv id or an ISBN (confidence 1), or whose
 * normalised titles are alike (title similarity at least TITLE_DUPLICATE_THRESHOLD) with the
 * same first creator and the same year. A title match is refused when the titles number
 * different parts ("Part I" / "Part II", "Volume 2" / "Volume 3"), or when both items carry
 * identifiers of one kind and none is shared (two DOIs: two works). Pure: no reads, no state.
 *
 * Items are compared within blocks (item type, first creator, year), so a library of tens of
 * thousands of items costs a few comparisons per item, not one per pair. In a block too large
 * to compare pair by pair (hundreds of items of one creator and year, or of none), the same
 * normalised title still matches, and alike titles are compared among those that begin or end
 * alike (the first or last 8 letters).
 */
import { identitiesOfItem } from '../items/identifiers.js';
import { normaliseTitle, titleSimilarity } from '../versions/similarity.js';

/** The least title similarity a match by title, first creator and year needs. */
export const TITLE_DUPLICATE_THRESHOLD = 0.9;

export type DuplicateMatch = 'doi' | 'arxiv' | 'isbn' | 'title';

export interface DuplicateMember {
  key: string;
  title: string;
  itemType: string;
  firstCreator?: string | undefined;
  year?: string | undefined;
  dateAdded?: string | undefined;
}

export interface DuplicateGroup {
  /** The members, oldest first (by date added); the first is the suggested master. */
  keys: string[];
  items: DuplicateMember[];
  /** The weakest link that joins the group. */
  match: DuplicateMatch;
  reason: string;
  /** 1 for a shared identifier; the title similarity for a title match (the weakest link). */
  confidence: number;
  /** Suggested master: the oldest item (date added), the most complete one among equals. */
  master: string;
}

interface Entry {
  key: string;
  data: Record<string, unknown>;
  itemType: string;
  title: string;
  norm: string;
  numbers: string;
  creator: string;
  creatorShown: string | undefined;
  year: string;
  dateAdded: string;
  filled: number;
  ids: { doi: string[]; arxiv: string[]; isbn: string[] };
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

const ROMAN = /^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$/;
const NUMBER_WORDS = new Set([
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
]);

/** The numbers a normalised title holds (digits, roman numerals, number words), sorted: parts and volumes. */
export function titleNumbers(norm: string): string {
  return norm
    .split(' ')
    .filter((w) => /^\d+$/.test(w) || (w.length > 0 && ROMAN.test(w)) || NUMBER_WORDS.has(w))
    .map((w) => (/^\d+$/.test(w) ? String(Number(w)) : w))
    .sort()
    .join(' ');
}

function creatorOf(data: Record<string, unknown>): { norm: string; shown: string | undefined } {
  const first = Array.isArray(data.creators)
    ? (data.creators[0] as Record<string, unknown> | undefined)
    : undefined;
  if (!first) return { norm: '', shown: undefined };
  const name = str(first.lastName) || str(first.name);
  return { norm: normaliseTitle(name), shown: name || undefined };
}

function yearOf(data: Record<string, unknown>): string {
  return /\b(\d{4})\b/.exec(str(data.date))?.[1] ?? '';
}

function filledFields(data: Record<string, unknown>): number {
  let n = 0;
  for (const [field, value] of Object.entries(data)) {
    if (['key', 'version', 'dateAdded', 'dateModified', 'relations', 'collections', 'tags'].includes(field))
      continue;
    if ((typeof value === 'string' && value !== '') || (Array.isArray(value) && value.length > 0)) n++;
  }
  return n;
}

function entryOf(item: { key: string; data: Record<string, unknown> }): Entry {
  const data = item.data;
  const title = str(data.title);
  const norm = normaliseTitle(title);
  const ids = { doi: [] as string[], arxiv: [] as string[], isbn: [] as string[] };
  for (const identity of identitiesOfItem(data)) {
    const [kind, ...rest] = identity.split(':');
    const value = rest.join(':');
    // arXiv's own DOI says the same as the arXiv id: counted once, as the arXiv id.
    if (kind === 'doi' && /^10\.48550\/arxiv\./.test(value)) continue;
    if (kind === 'doi' || kind === 'arxiv' || kind === 'isbn') ids[kind].push(value);
  }
  const creator = creatorOf(data);
  return {
    key: item.key,
    data,
    itemType: str(data.itemType),
    title,
    norm,
    numbers: titleNumbers(norm),
    creator: creator.norm,
    creatorShown: creator.shown,
    year: yearOf(data),
    dateAdded: str(data.dateAdded),
    filled: filledFields(data),
    ids,
  };
}

/** Both carry identifiers of a kind and share none of them: two different works. */
function identifiersDisagree(a: Entry, b: Entry): boolean {
  for (const kind of ['doi', 'arxiv', 'isbn'] as const) {
    const x = a.ids[kind];
    const y = b.ids[kind];
    if (x.length > 0 && y.length > 0 && !x.some((v) => y.includes(v))) return true;
  }
  return false;
}

interface Link {
  match: DuplicateMatch;
  confidence: number;
  reason: string;
}

const STRENGTH: Record<DuplicateMatch, number> = { doi: 3, arxiv: 2, isbn: 1, title: 0 };
const LABEL: Record<Exclude<DuplicateMatch, 'title'>, string> = {
  doi: 'DOI',
  arxiv: 'arXiv id',
  isbn: 'ISBN',
};

/** Largest block compared pair by pair; a larger one is split by the start of the title first. */
const BLOCK_MAX = 200;

/**
 * The groups of likely duplicates among `items` (regular items; notes, attachments and
 * annotations are left out), strongest first (confidence, then the oldest master).
 */
export function findDuplicateGroups(
  items: ReadonlyArray<{ key: string; data: Record<string, unknown> }>,
): DuplicateGroup[] {
  const entries = items
    .filter((i) => !['note', 'attachment', 'annotation'].includes(str(i.data.itemType)))
    .filter((i) => !i.data.parentItem)
    .map(entryOf);
  const parent = entries.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i] as number] as number;
      i = parent[i] as number;
    }
    return i;
  };
  /** The links that joined two groups: the group's confidence is its weakest. */
  const links = new Map<number, Link[]>();
  const join = (a: number, b: number, link: Link): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra === rb) return;
    parent[rb] = ra;
    const into = links.get(ra) ?? [];
    for (const l of links.get(rb) ?? []) into.push(l);
    into.push(link);
    links.set(ra, into);
    links.delete(rb);
  };

  // Shared identifiers, within one item type (a book and its chapter share an ISBN).
  const byIdentity = new Map<string, number>();
  entries.forEach((e, i) => {
    for (const kind of ['doi', 'arxiv', 'isbn'] as const) {
      for (const value of e.ids[kind]) {
        const id = `${e.itemType}\u0000${kind}:${value}`;
        const first = byIdentity.get(id);
        if (first === undefined) byIdentity.set(id, i);
        else join(first, i, { match: kind, confidence: 1, reason: `same ${LABEL[kind]} ${value}` });
      }
    }
  });

  // Title, first creator and year, within one item type.
  const blocks = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, i: number): void => {
    const list = map.get(key);
    if (list) list.push(i);
    else map.set(key, [i]);
  };
  entries.forEach((e, i) => {
    if (e.norm !== '') push(blocks, `${e.itemType}\u0000${e.creator}\u0000${e.year}`, i);
  });
  const titleLink = (a: Entry, similarity: number): Link => {
    const who = a.creatorShown ? `first creator ${a.creatorShown}` : 'no creators';
    const when = a.year ? `year ${a.year}` : 'no year';
    return {
      match: 'title',
      confidence: similarity,
      reason: `title similarity ${similarity}, same ${who}, same ${when}`,
    };
  };
  const compare = (members: readonly number[]): void => {
    for (let x = 0; x < members.length; x++) {
      for (let y = x + 1; y < members.length; y++) {
        const a = entries[members[x] as number] as Entry;
        const b = entries[members[y] as number] as Entry;
        if (a.numbers !== b.numbers || identifiersDisagree(a, b)) continue;
        const similarity = a.norm === b.norm ? 1 : titleSimilarity(a.title, b.title);
        if (similarity < TITLE_DUPLICATE_THRESHOLD) continue;
        join(members[x] as number, members[y] as number, titleLink(a, similarity));
      }
    }
  };
  for (const members of blocks.values()) {
    if (members.length < 2) continue;
    if (members.length <= BLOCK_MAX) {
      compare(members);
      continue;
    }
    // A large block (many items of one creator and year, or of none): the same title always
    // matches; alike titles are compared among those that begin or end alike, in parts small
    // enough to compare pair by pair.
    const exact = new Map<string, number[]>();
    const heads = new Map<string, number[]>();
    const tails = new Map<string, number[]>();
    for (const i of members) {
      const compact = (entries[i] as Entry).norm.replace(/ /g, '');
      push(exact, (entries[i] as Entry).norm, i);
      push(heads, compact.slice(0, 8), i);
      push(tails, compact.slice(-8), i);
    }
    for (const same of exact.values()) {
      for (const i of same.slice(1)) {
        const a = entries[same[0] as number] as Entry;
        const b = entries[i] as Entry;
        if (!identifiersDisagree(a, b)) join(same[0] as number, i, titleLink(a, 1));
      }
    }
    for (const part of [...heads.values(), ...tails.values()]) {
      if (part.length > 1 && part.length <= BLOCK_MAX) compare(part);
    }
  }

  const groups: DuplicateGroup[] = [];
  const members = new Map<number, Entry[]>();
  entries.forEach((e, i) => {
    const root = find(i);
    if (!links.has(root)) return;
    const list = members.get(root);
    if (list) list.push(e);
    else members.set(root, [e]);
  });
  for (const [root, list] of members) {
    const joined = links.get(root) as Link[];
    const ordered = [...list].sort(
      (a, b) =>
        (a.dateAdded || '\uffff').localeCompare(b.dateAdded || '\uffff') ||
        b.filled - a.filled ||
        a.key.localeCompare(b.key),
    );
    const weakest = joined.reduce((w, l) =>
      l.confidence < w.confidence || (l.confidence === w.confidence && STRENGTH[l.match] < STRENGTH[w.match])
        ? l
        : w,
    );
    const reasons = [...new Set(joined.map((l) => l.reason))];
    groups.push({
      keys: ordered.map((e) => e.key),
      items: ordered.map((e) => ({
        key: e.key,
        title: e.title,
        itemType: e.itemType,
        ...(e.creatorShown ? { firstCreator: e.creatorShown } : {}),
        ...(e.year ? { year: e.year } : {}),
        ...(e.dateAdded ? { dateAdded: e.dateAdded } : {}),
      })),
      match: weakest.match,
      reason: reasons.join('; '),
      confidence: weakest.confidence,
      master: (ordered[0] as Entry).key,
    });
  }
  return groups.sort(
    (a, b) =>
      b.confidence - a.confidence ||
      (a.items[0]?.dateAdded ?? '').localeCompare(b.items[0]?.dateAdded ?? '') ||
      (a.master < b.master ? -1 : 1),
  );
}
