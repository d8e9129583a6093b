/**
 * Citation keys for BibTeX and BibLaTeX exports (`zotero/citations.md`, "BibTeX / BibLaTeX" and
 * "Better BibTeX"), from the first source that has one:
 *
 * 1. `extra`: the first `Citation Key:` line of Extra, as Zotero's export translators read it;
 * 2. `field`: the item's `citationKey` field (Zotero 8 keeps Better BibTeX's keys there);
 * 3. `better-bibtex`: Better BibTeX's key for the item, read from the desktop by the caller
 *    (better-bibtex.ts) and passed in;
 * 4. `generated`: Zotero's own formula `%a_%t_%y`: the first creator's last name (lower case,
 *    spaces as `_`, commas dropped; `noauthor`), the first word of the title once articles and
 *    short prepositions of English, German, French and Spanish and Zotero's markup are taken
 *    out (`notitle`), the year (`nodate`); diacritics folded (`ü` → `u`, `ß` → `s`, `ł` → `l`),
 *    then only `[a-z0-9_-]` kept for items added in 2020 or later (Zotero's older items keep
 *    its wider legacy set).
 *
 * Clashes between generated keys are suffixed `-1`, `-2`… as Zotero does, but in the order of
 * the items' date added, then item key, over the whole set of items the keys must be unique in
 * (the library, when the caller can read all of it, else the export), never in export order. So
 * exporting a part of the library, or in another order, gives the same keys, and adding items
 * later (they are added later) never changes a key an earlier item has. A generated key also
 * never takes a key an item has from the first three sources. Two items whose own keys (Extra,
 * field, Better BibTeX) are the same are reported as `duplicates`: such keys are the user's, and
 * are not changed.
 */
import { strToDate, type DateOptions } from '../citations/dates.js';
import { extraCitationKey } from '../citations/extra.js';
import { fieldFor, type ItemSchema } from '../items/schema.js';
import type { WebApiCreator } from '../local/sqlite/types.js';

/** Where a key came from (see the module comment). */
export type KeySource = 'extra' | 'field' | 'better-bibtex' | 'generated';

/**
 * What a key is made of: an item (`WebApiItem`), or only its key, type, date added, Extra,
 * `citationKey`, title, date and first creator (zotero.sqlite's `citationKeyFacts`).
 */
export interface KeyedItem {
  key: string;
  data: { itemType: string; creators?: readonly WebApiCreator[] | undefined; [field: string]: unknown };
}

export interface AssignedKey {
  citationKey: string;
  source: KeySource;
}

/** Over which items the keys are unique: the whole library, or only the items exported. */
export type KeyScope = 'library' | 'export';

export interface KeyAssignerOptions {
  schema: ItemSchema;
  /** What the items added to the assigner are: the whole library, or the export alone. */
  unique: KeyScope;
  /** Better BibTeX's keys by item key (better-bibtex.ts), for items without a key of their own. */
  betterBibtex?: ReadonlyMap<string, string> | undefined;
  /** How two-digit years are read (dates.ts). */
  dates?: DateOptions;
}

export interface KeyAssignment {
  unique: KeyScope;
  /** How many items have a key. */
  size: number;
  /** The key of an item added to the assigner; undefined for any other item. */
  get(itemKey: string): AssignedKey | undefined;
  /** Every item key with its citation key, in the order the items were added. */
  entries(): IterableIterator<[string, AssignedKey]>;
  /** Keys of their own (Extra, field, Better BibTeX) that more than one item has, with those items. */
  duplicates: Array<{ citationKey: string; itemKeys: string[] }>;
}

export interface KeyAssigner {
  /** Adds one item of the set the keys must be unique in (notes, attachments, annotations are passed over). */
  add(item: KeyedItem): void;
  /** Assigns every key; call once, after the last `add`. */
  assign(): KeyAssignment;
}

/** An item's own key: Extra's `Citation Key:` line, else its `citationKey` field. */
export function ownKeyOf(item: Pick<KeyedItem, 'data'>): AssignedKey | undefined {
  const extra = typeof item.data.extra === 'string' ? item.data.extra : '';
  const fromExtra = extra ? extraCitationKey(extra) : undefined;
  if (fromExtra) return { citationKey: fromExtra, source: 'extra' };
  const field = item.data.citationKey;
  if (typeof field === 'string' && field.trim() !== '') return { citationKey: field.trim(), source: 'field' };
  return undefined;
}

/**
 * The fields an item's key reads (besides its type, date added and first creator): Extra, the
 * `citationKey` field, and the title and date with every field standing for them in a type.
 */
export function keyFieldNames(schema: ItemSchema): string[] {
  const names = new Set(['extra', 'citationKey', 'title', 'date']);
  for (const itemType of schema.types.keys()) {
    for (const base of ['title', 'date']) {
      const field = fieldFor(schema, itemType, base);
      if (field !== undefined) names.add(field);
    }
  }
  return [...names];
}

/** Words the title part leaves out, and Zotero's markup (the translators' `citeKeyTitleBannedRe`). */
const TITLE_BANNED =
  /\b(a|an|the|some|from|on|in|to|of|do|with|der|die|das|ein|eine|einer|eines|einem|einen|un|une|la|le|l'|el|las|los|al|uno|una|unos|unas|de|des|del|d')(\s+|\b)|(<\/?(i|b|sup|sub|sc|span style="small-caps"|span)>)/g;
/** What a key keeps: items added before 2020 the translators' legacy set, later ones `[a-z0-9_-]`. */
const LEGACY_CLEAN = /[^a-z0-9!$&*+\-./:;<>?[\]^_`|]+/g;
const SIMPLE_CLEAN = /[^a-z0-9_-]/g;

/** Letters Zotero's `removeDiacritics` folds that have no combining mark to drop. */
const FOLDED: Readonly<Record<string, string>> = {
  ß: 's',
  ø: 'o',
  ł: 'l',
  æ: 'ae',
  œ: 'oe',
  đ: 'd',
  ħ: 'h',
  ı: 'i',
  ŧ: 't',
  ŀ: 'l',
  ſ: 'l',
  ƀ: 'b',
  ƈ: 'c',
  ɗ: 'd',
  ƒ: 'f',
  ǥ: 'g',
  ɨ: 'i',
  ɉ: 'j',
  ƙ: 'k',
  ƚ: 'l',
  ɲ: 'n',
  ƥ: 'p',
  ʈ: 't',
  ʉ: 'u',
  ƴ: 'y',
  ƶ: 'z',
};

/** Lower case, diacritics folded (Zotero's `tidyAccents`). */
function fold(text: string): string {
  const lower = text.toLowerCase();
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(lower)) return lower;
  return lower
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[ßøłæœđħıŧŀſƀƈɗƒǥɨɉƙƚɲƥʈʉƴƶ]/g, (c) => FOLDED[c] ?? c)
    .normalize('NFC');
}

/**
 * Zotero's generated key for an item, before any clash suffix: `%a_%t_%y`, folded and cleaned
 * (see the module comment).
 */
export function generatedKeyBase(
  item: Pick<KeyedItem, 'data'>,
  schema: ItemSchema,
  dates?: DateOptions,
): string {
  const data = item.data;
  const get = (name: string): string => {
    const value = data[fieldFor(schema, data.itemType, name) ?? name];
    return typeof value === 'string' ? value : '';
  };
  const creator = data.creators?.[0];
  const last = creator ? ('name' in creator ? creator.name : creator.lastName) : '';
  const author = last ? last.toLowerCase().replace(/ /g, '_').replace(/,/g, '') : 'noauthor';
  const title = get('title');
  const word = title ? (title.toLowerCase().replace(TITLE_BANNED, '').split(/\s+/g)[0] ?? '') : 'notitle';
  const date = get('date');
  const year = date ? strToDate(date, dates).year : undefined;
  const yearPart = year !== undefined && /^[0-9]+/.test(String(year)) ? String(year) : 'nodate';
  const added = parseInt(String(data.dateAdded ?? '').slice(0, 4), 10);
  const clean = added >= 2020 ? SIMPLE_CLEAN : LEGACY_CLEAN;
  return fold(`${author}_${word}_${yearPart}`).replace(clean, '');
}

/** What the assigner keeps of one item (never the item itself: a library may be large). */
interface Entry {
  itemKey: string;
  /** Milliseconds of the date added (`Infinity` when it has none). */
  added: number;
  own?: AssignedKey;
  base?: string;
}

function addedTime(dateAdded: unknown): number {
  if (typeof dateAdded !== 'string' || dateAdded === '') return Number.POSITIVE_INFINITY;
  // zotero.sqlite's form (`2020-01-02 03:04:05`, UTC) as well as the Web API's ISO 8601.
  const iso = /^\d{4}-\d{2}-\d{2} \d/.test(dateAdded) ? `${dateAdded.replace(' ', 'T')}Z` : dateAdded;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

/**
 * Collects the items the keys must be unique in, then assigns every key at once (see the module
 * comment). Keeps a few strings per item, so a whole library fits in little memory.
 */
export function createKeyAssigner(options: KeyAssignerOptions): KeyAssigner {
  const entries: Entry[] = [];
  const seen = new Set<string>();
  let done = false;
  return {
    add(item) {
      if (done) throw new Error('The keys were assigned already: add every item before assign().');
      const data = item.data;
      if (data.itemType === 'note' || data.itemType === 'attachment' || data.itemType === 'annotation')
        return;
      if (seen.has(item.key)) return;
      seen.add(item.key);
      const own = ownKeyOf(item);
      const bbt = own ? undefined : options.betterBibtex?.get(item.key)?.trim();
      const entry: Entry = { itemKey: item.key, added: addedTime(data.dateAdded) };
      if (own) entry.own = own;
      else if (bbt) entry.own = { citationKey: bbt, source: 'better-bibtex' };
      else entry.base = generatedKeyBase(item, options.schema, options.dates);
      entries.push(entry);
    },
    assign() {
      done = true;
      const keys = new Map<string, AssignedKey>();
      const taken = new Set<string>();
      const holders = new Map<string, string[]>();
      for (const e of entries) {
        if (!e.own) continue;
        taken.add(e.own.citationKey);
        const list = holders.get(e.own.citationKey);
        if (list) list.push(e.itemKey);
        else holders.set(e.own.citationKey, [e.itemKey]);
      }
      const generated = entries
        .filter((e) => e.base !== undefined)
        .sort((a, b) => a.added - b.added || (a.itemKey < b.itemKey ? -1 : a.itemKey > b.itemKey ? 1 : 0));
      const made = new Map<string, AssignedKey>();
      // Per base, the first suffix not yet tried: every one below it is taken (keys only get
      // taken), so a base shared by thousands of items costs one step per item.
      const nextSuffix = new Map<string, number>();
      for (const e of generated) {
        const base = e.base as string;
        let i = nextSuffix.get(base) ?? 0;
        let key = i === 0 ? base : `${base}-${i}`;
        while (taken.has(key)) key = `${base}-${++i}`;
        nextSuffix.set(base, i + 1);
        taken.add(key);
        made.set(e.itemKey, { citationKey: key, source: 'generated' });
      }
      for (const e of entries) keys.set(e.itemKey, e.own ?? (made.get(e.itemKey) as AssignedKey));
      const duplicates = [...holders]
        .filter(([, itemKeys]) => itemKeys.length > 1)
        .map(([citationKey, itemKeys]) => ({ citationKey, itemKeys }));
      return {
        unique: options.unique,
        size: keys.size,
        get: (itemKey) => keys.get(itemKey),
        entries: () => keys.entries(),
        duplicates,
      };
    },
  };
}
