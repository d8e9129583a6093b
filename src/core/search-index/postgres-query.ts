/**
 * `zotero_search_items` answered from one owner's PostgreSQL index: the twin of `query.ts` over
 * the SQLite file, with the same filters, sort orders, paging and word matching.
 *
 * - `titleCreatorYear`: every word is a substring of the folded title, creators and year; the
 *   trigram index (`pg_trgm`, GIN) finds the rows for words of 3 characters or more, as FTS5's
 *   trigram table does; shorter words are looked for in those rows (or in every row).
 * - `everything`: every word is inside some word of the row's text: the distinct words
 *   (`search_terms`, trigram index) holding it, then the rows whose `tsvector` (GIN) holds one
 *   of them. With `top`, children's text counts for their top-level item.
 *
 * Values compare byte for byte (`COLLATE "C"`), as SQLite's do; a row without a source id sorts
 * first among equals, as SQLite's NULL does. Returns undefined for a sort it does not keep.
 */
import type { SqlClient } from '../store/sql.js';
import { filterExpr, filterList, queryWords } from '../local/sqlite/text.js';
import type { IndexAnswer, IndexQuery } from './query.js';
import { tsLexeme } from './postgres.js';
import { ftsWords } from './terms.js';

const SORT_COLUMNS: Readonly<Record<string, string>> = {
  dateModified: 'date_modified',
  dateAdded: 'date_added',
  title: 'title_sort',
  creator: 'creator_sort',
  itemType: 'item_type',
  date: 'date_sql',
};

/** A LIKE pattern matching `text` anywhere. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function queryPgIndex(
  db: SqlClient,
  owner: string,
  query: Omit<IndexQuery, 'fulltextKeys'>,
): Promise<IndexAnswer | undefined> {
  const sort = query.sort ?? 'dateModified';
  const column = SORT_COLUMNS[sort];
  if (!column) return undefined;
  const where: string[] = ['owner = ?'];
  const params: unknown[] = [owner];

  if (query.onlyTrashed) where.push('deleted = 1');
  else if (!query.includeTrashed) where.push('deleted = 0');
  if (query.top) where.push('parent IS NULL');
  if (query.collectionKey !== undefined) {
    where.push('rid IN (SELECT rid FROM search_item_collections WHERE owner = ? AND ckey = ?)');
    params.push(owner, query.collectionKey);
  }
  if (query.since !== undefined) {
    where.push('version > ?');
    params.push(query.since);
  }
  for (const expr of filterList(query.itemType)) {
    const { negate, values } = filterExpr(expr);
    where.push(`${negate ? 'NOT ' : ''}(item_type = ANY(?::text[]))`);
    params.push(values);
  }
  for (const expr of filterList(query.tag)) {
    const { negate, values } = filterExpr(expr);
    where.push(
      `${negate ? 'NOT ' : ''}EXISTS (SELECT 1 FROM search_item_tags t WHERE t.owner = search_items.owner AND t.rid = search_items.rid AND t.tag = ANY(?::text[]))`,
    );
    params.push(values);
  }
  if (query.keys) {
    where.push('key = ANY(?::text[])');
    params.push([...query.keys]);
  }

  const q = query.q?.trim() ?? '';
  if (q !== '') {
    if ((query.qmode ?? 'titleCreatorYear') === 'titleCreatorYear') {
      const conds: string[] = [];
      const condParams: unknown[] = [];
      for (const w of queryWords(q)) {
        // LIKE on a trigram GIN index for 3 characters or more; strpos for shorter words.
        conds.push([...w].length >= 3 ? 'c.tcy LIKE ?' : 'strpos(c.tcy, ?) > 0');
        condParams.push([...w].length >= 3 ? containing(w) : w);
      }
      if (conds.length > 0) {
        where.push(
          query.top === true
            ? // A child whose title matches (an attachment's) counts for its parent, as in query.ts.
              `rid IN (SELECT t.rid FROM search_items c JOIN search_items t ON t.owner = c.owner AND t.key = c.top
                WHERE c.owner = ? AND ${conds.join(' AND ')} AND NOT (c.rid <> t.rid AND c.deleted = 1 AND t.deleted = 0))`
            : `rid IN (SELECT c.rid FROM search_items c WHERE c.owner = ? AND ${conds.join(' AND ')})`,
        );
        params.push(owner, ...condParams);
      }
    } else {
      const rids = await everythingMatches(db, owner, q, query.top === true);
      if (rids.length === 0) return { keys: [], total: 0 };
      where.push('rid = ANY(?::bigint[])');
      params.push(rids);
    }
  }

  const clause = `WHERE ${where.join(' AND ')}`;
  const desc =
    (query.direction ?? (sort === 'dateAdded' || sort === 'dateModified' ? 'desc' : 'asc')) === 'desc';
  const [counted] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM search_items ${clause}`,
    params,
  );
  const total = Number(counted?.n ?? 0);
  const start = Math.max(0, query.start ?? 0);
  const limit = query.limit === undefined ? Infinity : Math.max(0, query.limit);
  if (limit === 0 || start >= total) return { keys: [], total };
  // Rows with a value first (in the direction asked), then those without, ties in the source's
  // id order, as query.ts.
  const rows = await db.query<{ key: string }>(
    `SELECT key FROM search_items ${clause}
     ORDER BY (${column} = '') ASC,
       CASE WHEN ${column} <> '' THEN ${column} END COLLATE "C" ${desc ? 'DESC' : 'ASC'},
       src_id ASC NULLS FIRST, rid ASC
     ${Number.isFinite(limit) ? `LIMIT ${limit}` : ''} OFFSET ${start}`,
    params,
  );
  return { keys: rows.map((r) => r.key), total };
}

/** Rows (or, with `top`, top-level rows) whose text holds every word of `q`, inside a word. */
async function everythingMatches(db: SqlClient, owner: string, q: string, top: boolean): Promise<number[]> {
  let result: Set<number> | undefined;
  for (const word of ftsWords(q)) {
    const terms = (
      await db.query<{ term: string }>('SELECT term FROM search_terms WHERE owner = ? AND term LIKE ?', [
        owner,
        containing(word),
      ])
    ).map((r) => r.term);
    const hits = new Set<number>();
    if (terms.length > 0) {
      const rows = await db.query<{ rid: number }>(
        top
          ? `SELECT DISTINCT t.rid FROM search_items i JOIN search_items t ON t.owner = i.owner AND t.key = i.top
             WHERE i.owner = ? AND i.tsv @@ ?::tsquery AND NOT (i.rid <> t.rid AND i.deleted = 1 AND t.deleted = 0)`
          : 'SELECT i.rid FROM search_items i WHERE i.owner = ? AND i.tsv @@ ?::tsquery',
        [owner, terms.map(tsLexeme).join(' | ')],
      );
      for (const r of rows) hits.add(Number(r.rid));
    }
    if (!result) result = hits;
    else for (const rid of result) if (!hits.has(rid)) result.delete(rid);
    if (result.size === 0) break;
  }
  return [...(result ?? [])];
}
