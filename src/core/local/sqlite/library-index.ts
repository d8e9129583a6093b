/**
 * A compact in-memory table of one library's items, loaded once per database snapshot: what
 * listing, filtering, sorting and searching need (type, parent, trash state, version, dates,
 * title, creators, year, tags, collections, folded search text). Filtering and matching run
 * in JS over it; only the page of results is then read in full from SQLite (`hydrate.ts`).
 *
 * The `everything` text (every field, notes, annotations) and the full-text words are loaded
 * on first use only.
 */
import { ZoteusError } from '../../errors.js';
import { jsonRows, type DbContext } from './hydrate.js';
import { filterExpr, filterList, fold, htmlToText, splitMultipartDate } from './text.js';
import type { ItemFilters, QMode, SortField } from './types.js';

export interface IndexRow {
  /** Position in `rows`. */
  pos: number;
  itemID: number;
  key: string;
  itemType: string;
  parentID: number | null;
  /** The top-level item this row belongs to (itself when top-level). */
  top: IndexRow | undefined;
  /** In the trash itself, or under a trashed parent. */
  deleted: boolean;
  version: number;
  dateAdded: string;
  dateModified: string;
  title: string;
  creatorSort: string;
  /** SQL part of the date (`2020-03-00`), '' when none. */
  dateSql: string;
  tags: Array<{ tag: string; type: number }>;
  collections: string[];
  /** Folded title, creators and year: what `titleCreatorYear` matches. */
  tcy: string;
}

/**
 * An inverted index of words: each distinct folded word and the rows it occurs in. A query word
 * (letters and digits only) occurs in a text exactly when it is a substring of one of the text's
 * words, so matching scans the distinct words (a few MB), not the text (tens of MB).
 */
export class WordIndex {
  private readonly words: string[] = [];
  private readonly postings: Int32Array[] = [];
  private readonly cache = new Map<string, Int32Array>();

  constructor(docs: Iterable<[pos: number, text: string]>) {
    // One map entry per distinct word; `last` skips repeats within a document without a Set.
    const map = new Map<string, { last: number; rows: number[] }>();
    for (const [pos, text] of docs) {
      // eslint-disable-next-line no-control-regex
      const words = /^[\x00-\x7f]*$/.test(text) ? text.match(ASCII_WORDS) : text.match(WORDS);
      if (!words) continue;
      for (const word of words) {
        const entry = map.get(word);
        if (entry === undefined) map.set(word, { last: pos, rows: [pos] });
        else if (entry.last !== pos) {
          entry.last = pos;
          entry.rows.push(pos);
        }
      }
    }
    for (const [word, entry] of map) {
      this.words.push(word);
      this.postings.push(Int32Array.from(entry.rows));
    }
  }

  get size(): number {
    return this.words.length;
  }

  /** Rows with a word containing `part` (sorted, distinct). */
  rowsWith(part: string): Int32Array {
    let rows = this.cache.get(part);
    if (rows) return rows;
    const hits: Int32Array[] = [];
    let total = 0;
    for (let i = 0; i < this.words.length; i++) {
      if (this.words[i]!.includes(part)) {
        hits.push(this.postings[i]!);
        total += this.postings[i]!.length;
      }
    }
    if (hits.length === 1) rows = hits[0]!;
    else {
      const all = new Int32Array(total);
      let at = 0;
      for (const h of hits) {
        all.set(h, at);
        at += h.length;
      }
      all.sort();
      let n = 0;
      for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[n++] = all[i]!;
      rows = all.slice(0, n);
    }
    if (this.cache.size > 500) this.cache.clear();
    this.cache.set(part, rows);
    return rows;
  }
}

const WORDS = /[\p{L}\p{N}]+/gu;
const ASCII_WORDS = /[a-z0-9]+/g;

export class LibraryIndex {
  readonly rows: IndexRow[] = [];
  readonly byId = new Map<number, IndexRow>();
  readonly byKey = new Map<string, IndexRow>();
  readonly children = new Map<number, IndexRow[]>();
  readonly collectionKeys: Set<string>;
  private words: WordIndex | undefined;
  private titleSort: string[] | undefined;
  private readonly orders = new Map<string, IndexRow[]>();
  private readonly sortValues = new Map<string, Map<number, string>>();

  constructor(
    private readonly ctx: DbContext,
    readonly libraryID: number,
  ) {
    const { schema } = ctx;
    const lib = libraryID;
    for (const [itemID, itemTypeID, key, version, dateAdded, dateModified] of jsonRows<
      [number, number, string, number, string, string]
    >(
      ctx,
      `SELECT json_group_array(json_array(itemID, itemTypeID, key, version, dateAdded, dateModified))
       FROM items WHERE libraryID = ?`,
      lib,
    )) {
      const row: IndexRow = {
        pos: this.rows.length,
        itemID,
        key,
        itemType: schema.itemTypeName(itemTypeID) ?? `unknown:${itemTypeID}`,
        parentID: null,
        top: undefined,
        deleted: false,
        version,
        dateAdded,
        dateModified,
        title: '',
        creatorSort: '',
        dateSql: '',
        tags: [],
        collections: [],
        tcy: '',
      };
      this.rows.push(row);
      this.byId.set(itemID, row);
      this.byKey.set(key, row);
    }
    // Parents: notes, attachments (whose own notes are in itemNotes too) and annotations.
    const childTables = [
      'itemNotes',
      'itemAttachments',
      ...(ctx.tables.has('itemAnnotations') ? ['itemAnnotations'] : []),
    ];
    for (const table of childTables) {
      const title = table === 'itemNotes' ? 'c.title' : 'NULL';
      for (const [itemID, parentID, noteTitle] of jsonRows<[number, number | null, string | null]>(
        ctx,
        `SELECT json_group_array(json_array(c.itemID, c.parentItemID, ${title}))
         FROM ${table} c JOIN items i ON i.itemID = c.itemID WHERE i.libraryID = ?`,
        lib,
      )) {
        const row = this.byId.get(itemID);
        if (!row) continue;
        if (parentID !== null) row.parentID = parentID;
        if (noteTitle && row.itemType === 'note') row.title = noteTitle;
      }
    }
    const ownDeleted = new Set(ctx.stmt('SELECT itemID FROM deletedItems').pluck().all() as number[]);
    for (const row of this.rows) {
      if (row.parentID === null) continue;
      let list = this.children.get(row.parentID);
      if (!list) this.children.set(row.parentID, (list = []));
      list.push(row);
    }
    // The top-level ancestor and the effective trash state (a trashed parent trashes its children).
    for (const row of this.rows) {
      let cur: IndexRow | undefined = row;
      let deleted = ownDeleted.has(row.itemID);
      for (let depth = 0; cur && cur.parentID !== null && depth < 8; depth++) {
        const parent = this.byId.get(cur.parentID);
        if (!parent) break;
        if (ownDeleted.has(parent.itemID)) deleted = true;
        cur = parent;
      }
      row.top = cur && cur.parentID === null ? cur : undefined;
      row.deleted = deleted;
    }

    // Title and date: the fields that are, or stand for, `title` and `date` in each type.
    const titleIds = schema.fieldIdsFor('title');
    const dateIds = new Set(schema.fieldIdsFor('date'));
    for (const [itemID, fieldID, value] of jsonRows<[number, number, unknown]>(
      ctx,
      `SELECT json_group_array(json_array(d.itemID, d.fieldID, v.value))
       FROM itemData d JOIN itemDataValues v ON v.valueID = d.valueID JOIN items i ON i.itemID = d.itemID
       WHERE d.fieldID IN (${intList([...titleIds, ...dateIds])}) AND i.libraryID = ?`,
      lib,
    )) {
      const row = this.byId.get(itemID);
      if (!row) continue;
      const text = value === null ? '' : String(value);
      if (dateIds.has(fieldID)) row.dateSql = splitMultipartDate(text).sql ?? '';
      else row.title = text;
    }

    /** Per item: [orderIndex, creator type, last name, full name]. */
    const creatorText = new Map<number, Array<[number, string, string, string]>>();
    for (const [itemID, creatorTypeID, firstName, lastName, fieldMode, orderIndex] of jsonRows<
      [number, number, string | null, string | null, number | null, number]
    >(
      ctx,
      `SELECT json_group_array(json_array(ic.itemID, ic.creatorTypeID, c.firstName, c.lastName, c.fieldMode, ic.orderIndex))
       FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID JOIN items i ON i.itemID = ic.itemID
       WHERE i.libraryID = ?`,
      lib,
    )) {
      let list = creatorText.get(itemID);
      if (!list) creatorText.set(itemID, (list = []));
      const name = fieldMode === 1 ? (lastName ?? '') : `${firstName ?? ''} ${lastName ?? ''}`;
      list.push([orderIndex, schema.creatorTypeName(creatorTypeID) ?? '', lastName ?? '', name]);
    }
    const names = new Map<number, string>();
    for (const [itemID, list] of creatorText) {
      const row = this.byId.get(itemID);
      if (!row) continue;
      list.sort((a, b) => a[0] - b[0]);
      const primary = schema.primaryCreatorType(row.itemType) ?? 'author';
      const first =
        list.find((c) => c[1] === primary) ??
        list.find((c) => c[1] === 'editor') ??
        list.find((c) => c[1] === 'contributor');
      row.creatorSort = first ? fold(first[2]) : '';
      names.set(itemID, list.map((c) => c[3]).join(' '));
    }

    for (const [itemID, name, type] of jsonRows<[number, string, number]>(
      ctx,
      `SELECT json_group_array(json_array(it.itemID, t.name, it.type))
       FROM itemTags it JOIN tags t ON t.tagID = it.tagID JOIN items i ON i.itemID = it.itemID WHERE i.libraryID = ?`,
      lib,
    )) {
      this.byId.get(itemID)?.tags.push({ tag: name, type });
    }
    for (const [itemID, key] of jsonRows<[number, string]>(
      ctx,
      `SELECT json_group_array(json_array(ci.itemID, c.key))
       FROM collections c JOIN collectionItems ci ON ci.collectionID = c.collectionID WHERE c.libraryID = ?`,
      lib,
    )) {
      this.byId.get(itemID)?.collections.push(key);
    }
    this.collectionKeys = new Set(
      ctx.stmt('SELECT key FROM collections WHERE libraryID = ?').pluck().all(lib) as string[],
    );

    for (const row of this.rows) {
      const year = row.dateSql.slice(0, 4);
      row.tcy = fold(`${row.title} ${names.get(row.itemID) ?? ''} ${year === '0000' ? '' : year}`);
    }
  }

  /** A predicate for the Web API's listing filters. */
  filter(options: ItemFilters): (row: IndexRow) => boolean {
    const checks: Array<(row: IndexRow) => boolean> = [];
    if (options.onlyTrashed) checks.push((r) => r.deleted);
    else if (!options.includeTrashed) checks.push((r) => !r.deleted);
    if (options.top) checks.push((r) => r.parentID === null);
    if (options.collectionKey !== undefined) {
      const key = options.collectionKey;
      if (!this.collectionKeys.has(key)) {
        throw new ZoteusError('not_found', `No collection ${key} in this library.`, { field: 'collection' });
      }
      checks.push((r) => r.collections.includes(key));
    }
    if (options.since !== undefined) {
      const since = options.since;
      checks.push((r) => r.version > since);
    }
    for (const expr of filterList(options.itemType)) {
      const test = orNot(expr);
      checks.push((r) => test((v) => r.itemType === v));
    }
    for (const expr of filterList(options.tag)) {
      const test = orNot(expr);
      checks.push((r) => test((v) => r.tags.some((t) => t.tag === v)));
    }
    return (row) => checks.every((c) => c(row));
  }

  /**
   * Rows matching every one of `words`. `titleCreatorYear`: in the row's title, creators and
   * year (with `top`, a top-level row also through a child's title). `everything`: in any of its fields, tags, note, annotation text, file name, or full
   * text (`fulltext` gives the item ids of a word's full-text hits); with `top`, a top-level
   * row also matches through its children (not trashed ones).
   */
  matcher(
    words: readonly string[],
    mode: QMode,
    top: boolean,
    fulltext?: (word: string) => Iterable<number>,
  ): (row: IndexRow) => boolean {
    if (words.length === 0) return () => true;
    if (mode === 'titleCreatorYear') {
      // Longest first: usually the most selective, so most rows fail on the first test.
      const sorted = [...words].sort((a, b) => b.length - a.length);
      const own = (row: IndexRow) => sorted.every((w) => row.tcy.includes(w));
      if (!top) return own;
      // With `top`, a child whose title matches (an attachment's) counts for its parent, as in
      // Zotero's own search and the Web API's items/top (not a trashed child of a live parent).
      const viaChild = new Set<IndexRow>();
      for (const row of this.rows) {
        const t = row.top;
        if (t && row !== t && !(row.deleted && !t.deleted) && own(row)) viaChild.add(t);
      }
      return (row) => viaChild.has(row) || own(row);
    }
    const index = this.wordIndex();
    let result: Uint8Array | undefined;
    for (const w of words) {
      const hit = new Uint8Array(this.rows.length);
      const mark = (row: IndexRow | undefined) => {
        if (!row) return;
        if (!top) {
          hit[row.pos] = 1;
          return;
        }
        const t = row.top;
        if (!t || (row !== t && row.deleted && !t.deleted)) return;
        hit[t.pos] = 1;
      };
      for (const pos of index.rowsWith(w)) mark(this.rows[pos]);
      if (fulltext) for (const itemID of fulltext(w)) mark(this.byId.get(itemID));
      if (result) for (let i = 0; i < hit.length; i++) result[i]! &= hit[i]!;
      else result = hit;
    }
    const matched = result!;
    return (row) => matched[row.pos] === 1;
  }

  /**
   * Every row in the order of `sort`/`direction`, computed once per order: a listing or a
   * search then keeps the matching rows in this order (one pass) instead of sorting them.
   */
  sorted(sort: SortField = 'dateModified', direction?: 'asc' | 'desc'): readonly IndexRow[] {
    const k = `${sort}:${direction ?? ''}`;
    let order = this.orders.get(k);
    if (!order) this.orders.set(k, (order = [...this.rows].sort(this.comparator(sort, direction))));
    return order;
  }

  /** A comparator for the Web API's `sort`/`direction`. Ties fall back to the item id. */
  comparator(
    sort: SortField = 'dateModified',
    direction?: 'asc' | 'desc',
  ): (a: IndexRow, b: IndexRow) => number {
    const dir =
      (direction ?? (sort === 'dateAdded' || sort === 'dateModified' ? 'desc' : 'asc')) === 'asc' ? 1 : -1;
    let key: (r: IndexRow) => string;
    switch (sort) {
      case 'dateAdded':
        key = (r) => r.dateAdded;
        break;
      case 'dateModified':
        key = (r) => r.dateModified;
        break;
      case 'title': {
        const folded = (this.titleSort ??= this.rows.map((r) => fold(r.title)));
        key = (r) => folded[r.pos]!;
        break;
      }
      case 'creator':
        key = (r) => r.creatorSort;
        break;
      case 'itemType':
        key = (r) => r.itemType;
        break;
      case 'date':
        key = (r) => r.dateSql;
        break;
      default: {
        const values = this.fieldSortValues(sort);
        key = (r) => values.get(r.itemID) ?? '';
      }
    }
    return (a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka !== kb) {
        // Empty values last, whatever the direction.
        if (ka === '') return 1;
        if (kb === '') return -1;
        return ka < kb ? -dir : dir;
      }
      return a.itemID - b.itemID;
    };
  }

  /** Folded values of a field (and of the fields mapped to it) for sorting. */
  private fieldSortValues(field: string): Map<number, string> {
    let values = this.sortValues.get(field);
    if (values) return values;
    values = new Map();
    const rows = this.ctx
      .stmt(
        `SELECT d.itemID, v.value FROM items i
         JOIN itemData d ON d.itemID = i.itemID JOIN itemDataValues v ON v.valueID = d.valueID
         WHERE i.libraryID = ? AND d.fieldID IN (SELECT value FROM json_each(?))`,
      )
      .all(this.libraryID, JSON.stringify(this.ctx.schema.fieldIdsFor(field))) as Array<{
      itemID: number;
      value: unknown;
    }>;
    for (const r of rows) values.set(r.itemID, fold(String(r.value ?? '')));
    this.sortValues.set(field, values);
    return values;
  }

  /** The word index of every field, note and annotation of the library (built on the first `everything` search). */
  wordIndex(): WordIndex {
    if (this.words) return this.words;
    const parts: string[][] = this.rows.map((r) => [r.tcy]);
    const add = (itemID: number, text: string | null | undefined) => {
      const row = this.byId.get(itemID);
      if (row && text) parts[row.pos]!.push(text);
    };
    // Every field but the title (in tcy already); SQLite joins each item's values into one string.
    // Dates are searched in their stored form (`2020-03-00 March 2020`), which holds the original text.
    const titleIds = intList(this.ctx.schema.fieldIdsFor('title'));
    const fields = this.ctx
      .stmt(
        `SELECT d.itemID, group_concat(v.value, ' ') FROM itemData d
         JOIN itemDataValues v ON v.valueID = d.valueID JOIN items i ON i.itemID = d.itemID
         WHERE i.libraryID = ? AND d.fieldID NOT IN (${titleIds}) GROUP BY d.itemID`,
      )
      .raw()
      .iterate(this.libraryID) as Iterable<[number, string | null]>;
    for (const [itemID, text] of fields) add(itemID, text);
    const notes = this.ctx
      .stmt(
        `SELECT n.itemID, n.note FROM itemNotes n JOIN items i ON i.itemID = n.itemID WHERE i.libraryID = ?`,
      )
      .raw()
      .iterate(this.libraryID) as Iterable<[number, string | null]>;
    for (const [itemID, note] of notes) add(itemID, note ? htmlToText(note) : '');
    if (this.ctx.tables.has('itemAnnotations')) {
      const annotations = this.ctx
        .stmt(
          `SELECT an.itemID, an.text, an.comment FROM itemAnnotations an JOIN items i ON i.itemID = an.itemID
           WHERE i.libraryID = ?`,
        )
        .raw()
        .iterate(this.libraryID) as Iterable<[number, string | null, string | null]>;
      for (const [itemID, text, comment] of annotations) {
        add(itemID, text);
        add(itemID, comment);
      }
    }
    const files = this.ctx
      .stmt(
        `SELECT a.itemID, a.path FROM itemAttachments a JOIN items i ON i.itemID = a.itemID
         WHERE i.libraryID = ? AND a.path IS NOT NULL`,
      )
      .raw()
      .iterate(this.libraryID) as Iterable<[number, string]>;
    for (const [itemID, path] of files) add(itemID, path.replace(/^storage:/, ''));
    for (const row of this.rows) for (const t of row.tags) parts[row.pos]!.push(t.tag);

    const rows = this.rows;
    this.words = new WordIndex(
      (function* () {
        for (let pos = 0; pos < rows.length; pos++)
          yield [pos, fold(parts[pos]!.join(' '))] as [number, string];
      })(),
    );
    return this.words;
  }
}

/** Integers for an SQL `IN (…)` list (ids from the database itself, checked to be integers). */
function intList(ids: readonly number[]): string {
  const ok = ids.filter((n) => Number.isSafeInteger(n));
  return ok.length ? ok.join(', ') : 'NULL';
}

/** The Web API's `a || b` (or) and leading `-` (not) for `tag` and `itemType`. */
function orNot(expr: string): (has: (value: string) => boolean) => boolean {
  const { negate, values } = filterExpr(expr);
  return (has) => {
    const any = values.some(has);
    return negate ? !any : any;
  };
}
