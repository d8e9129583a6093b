/**
 * `zotero_search_items` answered from an index: the same filters, sorting, paging and word
 * matching as the zotero.sqlite reader's in-memory table (`local/sqlite/library-index.ts`),
 * run as SQL over the index file instead of over a table built in memory on every start.
 *
 * - `titleCreatorYear`: every word is a substring of the folded title, creators and year.
 * - `everything`: every word is inside some word of the row's text (fields, tags, notes,
 *   annotations, indexed full text): the distinct words (`terms`) are scanned for it, then
 *   FTS5 finds the rows holding those words. With `top`, children's text counts for their
 *   top-level item (a trashed child's only for a trashed parent).
 *
 * Returns undefined for what the index does not hold (a sort on a field it does not keep):
 * the caller answers that another way.
 */
import type { ItemFilters, QMode } from '../local/sqlite/types.js';
import { filterExpr, filterList, queryWords } from '../local/sqlite/text.js';
import type { IndexDb } from './store.js';
import { ftsQuote, ftsWords } from './terms.js';

export interface IndexQuery extends ItemFilters {
  q?: string | undefined;
  qmode?: QMode | undefined;
  keys?: readonly string[] | undefined;
  sort?: string | undefined;
  direction?: 'asc' | 'desc' | undefined;
  start?: number | undefined;
  limit?: number | undefined;
  /** Keys of items whose text indexed elsewhere (Zotero's own full-text words) holds a word. */
  fulltextKeys?: ((word: string) => Iterable<string>) | undefined;
}

export interface IndexAnswer {
  /** The page, in order. */
  keys: string[];
  /** Matches before paging. */
  total: number;
}

const SORT_COLUMNS: Readonly<Record<string, string>> = {
  dateModified: 'date_modified',
  dateAdded: 'date_added',
  title: 'title_sort',
  creator: 'creator_sort',
  itemType: 'item_type',
  date: 'date_sql',
};

/** Matches from which a page walks the sort index instead of sorting (see queryIndex). */
const WALK_FROM = 2000;

/** Columns every item has a value in. */
const NEVER_EMPTY = new Set(['date_modified', 'date_added', 'item_type']);

/** FTS5 OR-lists are kept this long (a word inside thousands of words is queried in parts). */
const TERMS_PER_MATCH = 200;

/**
 * In one read transaction: its statements (the matches, the count, the page) see one state of
 * the file, whatever another process's update commits meanwhile.
 */
export function queryIndex(db: IndexDb, query: IndexQuery): IndexAnswer | undefined {
  return db.transaction(() => answer(db, query))();
}

function answer(db: IndexDb, query: IndexQuery): IndexAnswer | undefined {
  const sort = query.sort ?? 'dateModified';
  const column = SORT_COLUMNS[sort];
  if (!column) return undefined;
  const where: string[] = [];
  const params: unknown[] = [];

  if (query.onlyTrashed) where.push('deleted = 1');
  else if (!query.includeTrashed) where.push('deleted = 0');
  if (query.top) where.push('parent IS NULL');
  if (query.collectionKey !== undefined) {
    where.push('rid IN (SELECT rid FROM item_collections WHERE ckey = ?)');
    params.push(query.collectionKey);
  }
  if (query.since !== undefined) {
    where.push('version > ?');
    params.push(query.since);
  }
  for (const expr of filterList(query.itemType)) {
    const { negate, values } = filterExpr(expr);
    where.push(`item_type ${negate ? 'NOT ' : ''}IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(values));
  }
  for (const expr of filterList(query.tag)) {
    const { negate, values } = filterExpr(expr);
    where.push(
      `${negate ? 'NOT ' : ''}EXISTS (SELECT 1 FROM item_tags t WHERE t.rid = items.rid AND t.tag IN (SELECT value FROM json_each(?)))`,
    );
    params.push(JSON.stringify(values));
  }
  if (query.keys) {
    where.push('key IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.keys));
  }

  const q = query.q?.trim() ?? '';
  let candidates: Set<number> | undefined;
  /** At most this many rows can match (known when the words narrowed them first). */
  let bound: number | undefined;
  if (q !== '') {
    if ((query.qmode ?? 'titleCreatorYear') === 'titleCreatorYear') {
      // Trigrams find words of 3 characters or more; shorter ones are looked for in every row.
      const words = queryWords(q);
      const long = words.filter((w) => [...w].length >= 3);
      const conds: string[] = [];
      const condParams: unknown[] = [];
      if (long.length > 0) {
        const match = long.map(ftsQuote).join(' AND ');
        conds.push('rid IN (SELECT rowid FROM tcy_fts WHERE tcy_fts MATCH ?)');
        condParams.push(match);
        bound = db.prepare('SELECT count(*) FROM tcy_fts WHERE tcy_fts MATCH ?').pluck().get(match) as number;
      }
      for (const w of words.filter((w) => [...w].length < 3)) {
        conds.push('rid IN (SELECT rowid FROM tcy_fts WHERE instr(tcy, ?) > 0)');
        condParams.push(w);
      }
      // The matching rows are found once, into a temporary table the count and the page both
      // read: as a subquery of each, SQLite found them again for every statement (a common
      // word matches a tenth of a 250,000-item library).
      const matching =
        query.top !== true
          ? `SELECT rid FROM items WHERE ${conds.join(' AND ')}`
          : // With `top`, a child whose title matches (an attachment's) counts for its parent, as
            // in Zotero's own search (not a trashed child of a live parent).
            `SELECT t.rid FROM items c JOIN items t ON t.key = c.top WHERE ${conds
              .map((cond) => cond.replace(/^rid /, 'c.rid '))
              .join(' AND ')} AND NOT (c.rid <> t.rid AND c.deleted = 1 AND t.deleted = 0)`;
      if (conds.length > 0) {
        fillCandidates(db, `INSERT OR IGNORE INTO candidates (rid) ${matching}`, condParams);
        where.push('rid IN (SELECT rid FROM candidates)');
      }
    } else {
      candidates = everythingMatches(db, q, query.top === true, query.fulltextKeys);
      if (candidates.size === 0) return { keys: [], total: 0 };
      bound = candidates.size;
      fillCandidates(db, 'INSERT INTO candidates (rid) SELECT value FROM json_each(?)', [
        JSON.stringify([...candidates]),
      ]);
      where.push('rid IN (SELECT rid FROM candidates)');
    }
  }

  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const desc =
    (query.direction ?? (sort === 'dateAdded' || sort === 'dateModified' ? 'desc' : 'asc')) === 'desc';
  // Few candidates: look each up by rowid (SQLite would rather scan a filter index with them).
  const few = bound !== undefined && bound <= WALK_FROM;
  const total =
    (db
      .prepare(`SELECT count(*) FROM items ${few ? 'NOT INDEXED' : ''} ${clause}`)
      .pluck()
      .get(...params) as number) ?? 0;
  const start = Math.max(0, query.start ?? 0);
  const limit = query.limit === undefined ? Infinity : Math.max(0, query.limit);
  if (limit === 0 || start >= total) return { keys: [], total };

  // Rows with a value in the sort order first, then those without (whatever the direction),
  // ties in the source's own id order: two queries, so each can walk the column's index.
  const and = (cond: string) => (clause ? `${clause} AND ${cond}` : `WHERE ${cond}`);
  // Many matches: walk the sort column's index and stop after the page (SQLite would rather
  // sort them all). Few: sorting them is cheaper than walking the whole index.
  const via = few ? 'NOT INDEXED' : total > WALK_FROM ? `INDEXED BY items_${column}` : '';
  const page = (cond: string, order: string, from: number, count: number): string[] =>
    db
      .prepare(`SELECT key FROM items ${via} ${and(cond)} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .pluck()
      .all(...params, Number.isFinite(count) ? count : -1, from) as string[];
  const always = NEVER_EMPTY.has(column);
  const valued = always
    ? total
    : ((db
        .prepare(`SELECT count(*) FROM items ${and(`${column} <> ''`)}`)
        .pluck()
        .get(...params) as number) ?? 0);
  const keys: string[] = [];
  if (start < valued) {
    keys.push(
      ...page(
        always ? '1' : `${column} <> ''`,
        `${column} ${desc ? 'DESC' : 'ASC'}, src_id, rid`,
        start,
        Math.min(limit, valued - start),
      ),
    );
  }
  const rest = limit - keys.length;
  if (rest > 0 && start + keys.length < total) {
    keys.push(...page(`${column} = ''`, 'src_id, rid', Math.max(0, start - valued), rest));
  }
  return { keys, total };
}

/** The connection's temporary table of the rows a query matches, emptied, then filled by `insert`. */
function fillCandidates(db: IndexDb, insert: string, params: unknown[]): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS candidates (rid INTEGER PRIMARY KEY); DELETE FROM candidates;');
  db.prepare(insert).run(...params);
}

/** Rows (or, with `top`, top-level rows) whose text holds every word of `q`. */
function everythingMatches(
  db: IndexDb,
  q: string,
  top: boolean,
  fulltextKeys: IndexQuery['fulltextKeys'],
): Set<number> {
  const termsWith = db.prepare('SELECT term FROM terms WHERE instr(term, ?) > 0').pluck();
  const target = db.prepare(
    `SELECT DISTINCT ${top ? 't.rid' : 'i.rid'} FROM docs JOIN items i ON i.rid = docs.rowid
     ${top ? 'JOIN items t ON t.key = i.top' : ''}
     WHERE docs MATCH ? ${top ? 'AND NOT (i.rid <> t.rid AND i.deleted = 1 AND t.deleted = 0)' : ''}`,
  );
  const keyTarget = db.prepare(
    `SELECT ${top ? 't.rid' : 'i.rid'} FROM items i ${top ? 'JOIN items t ON t.key = i.top' : ''}
     WHERE i.key = ? ${top ? 'AND NOT (i.rid <> t.rid AND i.deleted = 1 AND t.deleted = 0)' : ''}`,
  );
  let result: Set<number> | undefined;
  // The tokenizer's words of the query; the full-text lookup gets the same words.
  for (const word of ftsWords(q)) {
    const hits = new Set<number>();
    const terms = termsWith.all(word) as string[];
    for (let i = 0; i < terms.length; i += TERMS_PER_MATCH) {
      const expr = terms
        .slice(i, i + TERMS_PER_MATCH)
        .map(ftsQuote)
        .join(' OR ');
      for (const rid of target.pluck().all(expr) as number[]) hits.add(rid);
    }
    if (fulltextKeys) {
      for (const key of fulltextKeys(word)) {
        const rid = keyTarget.pluck().get(key) as number | undefined;
        if (rid !== undefined) hits.add(rid);
      }
    }
    if (!result) result = hits;
    else for (const rid of result) if (!hits.has(rid)) result.delete(rid);
    if (result.size === 0) break;
  }
  return result ?? new Set();
}

/** Tags of the library's items as `zotero_list_tags` lists them (trash left out unless asked). */
type TagEntry = { tag: string; meta: { type: number; numItems: number } };

/**
 * The tag lists last counted, by index file and state (its `updated_at`, cursor and source
 * fingerprint, which every update rewrites): an MCP server asked for the tags or the stats of
 * an unchanged library again counts nothing (at 250,000 items a count is about a second).
 */
const tagLists = new Map<string, TagEntry[]>();
const TAG_LISTS_KEPT = 4;

export function indexTags(db: IndexDb, options: { includeTrashed?: boolean } = {}): TagEntry[] {
  const state = db
    .prepare("SELECT k, v FROM meta WHERE k IN ('updated_at', 'cursor', 'fingerprint') ORDER BY k")
    .raw()
    .all() as Array<[string, string]>;
  const key = JSON.stringify([db.name, state, options.includeTrashed === true]);
  const kept = tagLists.get(key);
  // Copies: the caller may sort or change what it was given.
  if (kept) return kept.map((e) => ({ tag: e.tag, meta: { ...e.meta } }));
  const tags = countTags(db, options);
  if (tagLists.size >= TAG_LISTS_KEPT) tagLists.delete(tagLists.keys().next().value!);
  tagLists.set(key, tags);
  return tags.map((e) => ({ tag: e.tag, meta: { ...e.meta } }));
}

function countTags(db: IndexDb, options: { includeTrashed?: boolean }): TagEntry[] {
  const rows = db
    .prepare(
      `SELECT t.tag, t.type, count(*) AS n FROM item_tags t JOIN items i ON i.rid = t.rid
       ${options.includeTrashed ? '' : 'WHERE i.deleted = 0'} GROUP BY t.tag, t.type`,
    )
    .raw()
    .all() as Array<[string, number, number]>;
  return rows
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
    .map(([tag, type, n]) => ({ tag, meta: { type, numItems: n } }));
}
