/**
 * The search index of a tenant's library in PostgreSQL: the shared deployment's twin of the
 * local SQLite index file (`store.ts`, `update.ts`), so that any replica answers a ranked search
 * from the same rows (issue 23, point 3).
 *
 * One set of tables for every tenant, each row keyed by `owner` (the tenant and the library,
 * `searchOwner`): one migration makes them once for all tenants (a schema per tenant would need
 * DDL at each sign-in and a migration run per schema), and every statement names its owner, so
 * one tenant's query never reads another's rows.
 *
 * - `search_items`: one row per item (notes, attachments, annotations too) with what the SQLite
 *   index keeps in `items` and `docs`: the text by field, its words as a `tsvector` (GIN index:
 *   which rows hold a word), each word's weighted frequency (`tf`, for BM25 exactly as FTS5's
 *   `bm25()` computes it) and the row's token count; the folded title, creators and year
 *   (`tcy`, trigram GIN index from `pg_trgm`: substring matches).
 * - `search_terms`: the distinct words (a query word stands for the words it begins), with a
 *   trigram index (`everything` finds a word inside longer words).
 * - `search_item_tags`, `search_item_collections`, `search_vectors` (`real[]`), `search_meta`.
 *
 * Words are made in JS by the tokenizer's own folding (`terms.ts`), not by a PostgreSQL text
 * search configuration: the words, and so the ranking, are those of the SQLite index.
 */
import { ZoteusError } from '../errors.js';
import type { Migration } from '../store/migrations.js';
import type { SqlClient } from '../store/sql.js';
import type { WebApiItem } from '../local/sqlite/types.js';
import type { Embedder } from './embeddings.js';
import type { IndexFeed } from './feed.js';
import { WEIGHTS } from './rank.js';
import { toRecord, type IndexRecord } from './records.js';
import { TEXT_COLUMNS } from './store.js';
import { ftsFold } from './terms.js';
import type { IndexStatus } from './service.js';
import type { FulltextLookup, IndexProgress, UpdateReport } from './update.js';

/** Bumped when what goes into the rows changes: an owner's rows of another version are rebuilt. */
export const PG_INDEX_SCHEMA_VERSION = '1';

const DDL = [
  'CREATE EXTENSION IF NOT EXISTS pg_trgm',
  `CREATE TABLE search_meta (
    owner TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL, PRIMARY KEY (owner, k))`,
  `CREATE TABLE search_items (
    owner TEXT NOT NULL,
    rid BIGINT NOT NULL,
    key TEXT NOT NULL,
    src_id BIGINT,
    parent TEXT,
    top TEXT,
    item_type TEXT NOT NULL,
    own_deleted INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    version BIGINT NOT NULL,
    sig TEXT NOT NULL,
    date_added TEXT NOT NULL,
    date_modified TEXT NOT NULL,
    title_sort TEXT NOT NULL,
    creator_sort TEXT NOT NULL,
    date_sql TEXT NOT NULL,
    creator_summary TEXT NOT NULL,
    title TEXT NOT NULL,
    creators TEXT NOT NULL,
    abstract TEXT NOT NULL,
    tags TEXT NOT NULL,
    notes TEXT NOT NULL,
    annotations TEXT NOT NULL,
    fields TEXT NOT NULL,
    fulltext TEXT NOT NULL,
    tcy TEXT NOT NULL,
    ntok INTEGER NOT NULL,
    tf JSONB NOT NULL,
    tsv TSVECTOR NOT NULL,
    PRIMARY KEY (owner, rid),
    UNIQUE (owner, key))`,
  'CREATE INDEX search_items_tsv ON search_items USING GIN (tsv)',
  'CREATE INDEX search_items_tcy ON search_items USING GIN (tcy gin_trgm_ops)',
  'CREATE INDEX search_items_top ON search_items (owner, top)',
  'CREATE INDEX search_items_parent ON search_items (owner, parent)',
  `CREATE TABLE search_terms (owner TEXT NOT NULL, term TEXT COLLATE "C" NOT NULL, PRIMARY KEY (owner, term))`,
  'CREATE INDEX search_terms_trgm ON search_terms USING GIN (term gin_trgm_ops)',
  `CREATE TABLE search_item_tags (owner TEXT NOT NULL, rid BIGINT NOT NULL, tag TEXT NOT NULL, type INTEGER NOT NULL)`,
  'CREATE INDEX search_item_tags_rid ON search_item_tags (owner, rid)',
  'CREATE INDEX search_item_tags_tag ON search_item_tags (owner, tag)',
  `CREATE TABLE search_item_collections (owner TEXT NOT NULL, rid BIGINT NOT NULL, ckey TEXT NOT NULL)`,
  'CREATE INDEX search_item_collections_rid ON search_item_collections (owner, rid)',
  'CREATE INDEX search_item_collections_key ON search_item_collections (owner, ckey)',
  `CREATE TABLE search_vectors (
    owner TEXT NOT NULL, rid BIGINT NOT NULL, model TEXT NOT NULL, sig TEXT NOT NULL, vec REAL[] NOT NULL,
    PRIMARY KEY (owner, rid))`,
];

/**
 * The tables of the PostgreSQL search index. On SQLite (a single server's state file) nothing:
 * there each library's index is its own SQLite file (`store.ts`).
 */
export const searchIndexMigration: Migration = {
  id: '0007_search_index',
  statements: (dialect) => (dialect === 'postgres' ? DDL : []),
};

/**
 * Which attachments' full text was read, for which state of the attachment (`sig`), and from
 * where (`source`; null: it has none): `fulltext_state` of the SQLite index.
 */
export const searchFulltextMigration: Migration = {
  id: '0101_search_fulltext',
  statements: (dialect) =>
    dialect === 'postgres'
      ? [
          `CREATE TABLE search_fulltext_state (
            owner TEXT NOT NULL, rid BIGINT NOT NULL, sig TEXT NOT NULL, source TEXT,
            PRIMARY KEY (owner, rid))`,
        ]
      : [],
};

/** The owner of a tenant's library's rows: `<tenant>:users/1`. */
export function searchOwner(tenant: string, library: string): string {
  return `${tenant}:${library}`;
}

const WORD_RE = /[\p{L}\p{N}]+/gu;
/** PostgreSQL refuses longer lexemes (2,047 bytes); FTS5 keeps them, no query finds them anyway. */
const MAX_LEXEME_BYTES = 2000;

/** Every word of a text, repeats kept, folded as the FTS5 tokenizer folds (`terms.ts`). */
export function pgTokens(text: string): string[] {
  return ftsFold(text).match(WORD_RE) ?? [];
}

/** A word as a tsquery operand (tsquery's own quoting: never an operator). */
export function tsLexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The row's words: BM25's weighted frequency of each (Σ column weight × count) and the token count. */
function weighed(texts: Record<(typeof TEXT_COLUMNS)[number], string>): {
  tf: Record<string, number>;
  ntok: number;
} {
  const tf: Record<string, number> = Object.create(null) as Record<string, number>;
  let ntok = 0;
  for (const column of TEXT_COLUMNS) {
    const words = pgTokens(texts[column]);
    ntok += words.length;
    for (const w of words) tf[w] = (tf[w] ?? 0) + WEIGHTS[column];
  }
  return { tf, ntok };
}

export async function readPgMeta(db: SqlClient, owner: string, k: string): Promise<string | undefined> {
  const rows = await db.query<{ v: string }>('SELECT v FROM search_meta WHERE owner = ? AND k = ?', [
    owner,
    k,
  ]);
  return rows[0]?.v;
}

async function writePgMeta(
  db: SqlClient,
  owner: string,
  values: Record<string, string | number | undefined>,
): Promise<void> {
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) await db.run('DELETE FROM search_meta WHERE owner = ? AND k = ?', [owner, k]);
    else
      await db.run(
        'INSERT INTO search_meta (owner, k, v) VALUES (?, ?, ?) ON CONFLICT (owner, k) DO UPDATE SET v = excluded.v',
        [owner, k, String(v)],
      );
  }
}

/** What one owner's index holds (`indexStatus` of service.ts), without changing it. */
export async function pgIndexStatus(
  db: SqlClient,
  owner: string,
): Promise<
  Omit<IndexStatus, 'state' | 'building' | 'upToDate'> & { complete: boolean; fingerprint: string | null }
> {
  const [counts] = await db.query<{ items: number; top: number; trashed: number; bytes: number }>(
    `SELECT count(*)::int AS items,
            (count(*) FILTER (WHERE parent IS NULL AND deleted = 0))::int AS top,
            (count(*) FILTER (WHERE deleted = 1))::int AS trashed,
            coalesce(sum(pg_column_size(i.*)), 0)::bigint AS bytes
     FROM search_items i WHERE owner = ?`,
    [owner],
  );
  const [texts] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM search_fulltext_state WHERE owner = ? AND source IS NOT NULL',
    [owner],
  );
  const [vectors] = await db.query<{ model: string; n: number }>(
    'SELECT model, count(*)::int AS n FROM search_vectors WHERE owner = ? GROUP BY model',
    [owner],
  );
  const meta = new Map(
    (await db.query<{ k: string; v: string }>('SELECT k, v FROM search_meta WHERE owner = ?', [owner])).map(
      (r) => [r.k, r.v],
    ),
  );
  const version = Number(meta.get('library_version'));
  return {
    complete: meta.get('complete') === '1',
    items: Number(counts?.items ?? 0),
    topLevel: Number(counts?.top ?? 0),
    trashed: Number(counts?.trashed ?? 0),
    fulltextDocuments: Number(texts?.n ?? 0),
    vectors: vectors ? { count: Number(vectors.n), model: vectors.model } : null,
    bytes: Number(counts?.bytes ?? 0),
    libraryVersion: meta.has('library_version') && Number.isSafeInteger(version) ? version : null,
    updatedAt: meta.get('updated_at') ?? null,
    source: meta.get('source') ?? null,
    fingerprint: meta.get('fingerprint') ?? null,
  };
}

/** Removes every row of one owner (a rebuild, or a tenant who leaves). */
export async function dropPgIndex(db: SqlClient, owner: string): Promise<void> {
  await db.transaction(async (tx) => {
    for (const t of [
      'search_items',
      'search_terms',
      'search_item_tags',
      'search_item_collections',
      'search_vectors',
      'search_fulltext_state',
      'search_meta',
    ])
      await tx.run(`DELETE FROM ${t} WHERE owner = ?`, [owner]);
  });
}

export interface PgUpdateOptions {
  rebuild?: boolean;
  /** Attachments' full text, read for those whose state changed (ZOTEUS_INDEX_FULLTEXT). */
  fulltext?: FulltextLookup | undefined;
  onProgress?: (event: IndexProgress) => void;
  embedder?: Embedder | undefined;
  /** As `updateIndex`'s: a failure to embed is handed here and the update succeeds without vectors. */
  onVectorsError?: ((error: unknown) => void) | undefined;
  signal?: AbortSignal | undefined;
  now?: () => number;
}

/** Rows per INSERT statement (under PostgreSQL's 65,535 parameters). */
const ROWS_PER_INSERT = 100;

/**
 * Builds or brings up to date one owner's index from a feed: the algorithm of `updateIndex`
 * (ask what changed, compare signatures, fetch what differs, delete what is gone; each batch in
 * its own transaction, the "complete" mark last, so a stopped build resumes). Row ids are handed
 * out in the feed's order, as SQLite's are, so "the most recently indexed" means the same rows.
 * With `fulltext`, attachments whose text was not read for their current state are read next.
 */
export async function updatePgIndex(
  db: SqlClient,
  owner: string,
  feed: IndexFeed,
  options: PgUpdateOptions = {},
): Promise<UpdateReport> {
  if (db.dialect !== 'postgres') {
    throw new ZoteusError('internal_error', 'The PostgreSQL search index needs a PostgreSQL database.');
  }
  const now = options.now ?? Date.now;
  const source = await readPgMeta(db, owner, 'source');
  const version = await readPgMeta(db, owner, 'schema_version');
  if (
    options.rebuild ||
    (source !== undefined && source !== feed.source) ||
    (version !== undefined && version !== PG_INDEX_SCHEMA_VERSION)
  ) {
    await dropPgIndex(db, owner);
  }
  const complete = (await readPgMeta(db, owner, 'complete')) === '1';
  const report: UpdateReport = {
    mode: complete ? 'update' : 'build',
    upToDate: false,
    added: 0,
    changed: 0,
    deleted: 0,
    unchanged: 0,
    requests: 0,
    libraryVersion: null,
    fulltext: null,
    vectors: null,
  };
  const fingerprint = await feed.fingerprint();
  if (complete && fingerprint !== undefined && (await readPgMeta(db, owner, 'fingerprint')) === fingerprint) {
    report.upToDate = true;
    const v = Number(await readPgMeta(db, owner, 'library_version'));
    report.libraryVersion = Number.isSafeInteger(v) ? v : null;
  } else {
    const since = complete ? Number(await readPgMeta(db, owner, 'library_version')) : NaN;
    const cursor = await updateItems(
      db,
      owner,
      feed,
      Number.isSafeInteger(since) ? since : undefined,
      complete ? await readPgMeta(db, owner, 'cursor') : undefined,
      options,
      report,
    );
    await writePgMeta(db, owner, {
      schema_version: PG_INDEX_SCHEMA_VERSION,
      ...(await bm25Counts(db, owner)),
      cursor,
      source: feed.source,
      fingerprint,
      library_version: report.libraryVersion ?? undefined,
      complete: 1,
      updated_at: new Date(now()).toISOString(),
    });
  }
  if (options.fulltext) {
    report.fulltext = await updatePgFulltext(db, owner, options.fulltext, options);
    if (report.fulltext.indexed + report.fulltext.empty > 0)
      await writePgMeta(db, owner, await bm25Counts(db, owner));
  }
  if (options.embedder) {
    try {
      report.vectors = await updateVectors(db, owner, options.embedder, options);
    } catch (error) {
      if (!options.onVectorsError || options.signal?.aborted) throw error;
      options.onVectorsError(error);
    }
  }
  return report;
}

/** BM25's row count and token total, read by every ranked search (postgres-rank.ts). */
async function bm25Counts(db: SqlClient, owner: string): Promise<{ rows: number; tokens: number }> {
  const [stats] = await db.query<{ n: number; tokens: number }>(
    'SELECT count(*)::int AS n, coalesce(sum(ntok), 0)::bigint AS tokens FROM search_items WHERE owner = ?',
    [owner],
  );
  return { rows: Number(stats!.n), tokens: Number(stats!.tokens) };
}

async function updateItems(
  db: SqlClient,
  owner: string,
  feed: IndexFeed,
  since: number | undefined,
  cursor: string | undefined,
  options: PgUpdateOptions,
  report: UpdateReport,
): Promise<string | undefined> {
  const changes = await feed.changes(since, cursor);
  report.requests += changes.requests;
  report.libraryVersion = changes.libraryVersion ?? null;
  const stored = new Map<string, string>();
  const listed = changes.complete ? undefined : [...changes.signatures.keys(), ...changes.deleted];
  for (const row of await db.query<{ key: string; sig: string }>(
    `SELECT key, sig FROM search_items WHERE owner = ? ${listed ? 'AND key = ANY(?::text[])' : ''}`,
    listed ? [owner, listed] : [owner],
  ))
    stored.set(row.key, row.sig);

  const gone = new Set<string>();
  if (changes.complete) {
    for (const key of stored.keys()) if (!changes.signatures.has(key)) gone.add(key);
  } else {
    for (const key of changes.deleted) if (stored.has(key)) gone.add(key);
    const present = changes.present;
    if (present) {
      for (const { key } of await db.query<{ key: string }>('SELECT key FROM search_items WHERE owner = ?', [
        owner,
      ]))
        if (!present.has(key)) gone.add(key);
    }
  }
  const wanted: string[] = [];
  for (const [key, sig] of changes.signatures) {
    if (stored.get(key) === sig) report.unchanged++;
    else wanted.push(key);
  }
  options.onProgress?.({ phase: 'scan', done: changes.signatures.size, total: changes.signatures.size });

  // The rows change: the counts BM25 reads are made again at the end (until then, counted live).
  if (gone.size > 0 || wanted.length > 0)
    await writePgMeta(db, owner, { rows: undefined, tokens: undefined });
  if (gone.size > 0) {
    await db.transaction(async (tx) => {
      await removeRows(tx, owner, [...gone]);
      await relink(tx, owner, [...gone]);
    });
    report.deleted += gone.size;
  }

  let done = 0;
  for (let i = 0; i < wanted.length; i += feed.batchSize) {
    if (options.signal?.aborted) throw aborted();
    const keys = wanted.slice(i, i + feed.batchSize);
    const { items, requests } = await feed.fetch(keys);
    report.requests += requests;
    const found = new Map<string, WebApiItem>(items.map((item) => [item.key, item]));
    await db.transaction(async (tx) => {
      const missing = keys.filter((k) => !found.has(k) && stored.has(k));
      if (missing.length > 0) {
        await removeRows(tx, owner, missing);
        report.deleted += missing.length;
      }
      const records = keys.flatMap((k) => {
        const item = found.get(k);
        return item ? [toRecord(item, changes.signatures.get(k)!)] : [];
      });
      await putRows(tx, owner, records, changes.ids);
      for (const r of records) {
        if (stored.has(r.key)) report.changed++;
        else report.added++;
      }
      await relink(tx, owner, keys);
    });
    done += keys.length;
    options.onProgress?.({ phase: 'items', done, total: wanted.length });
  }
  return changes.cursor;
}

function aborted(): ZoteusError {
  return new ZoteusError('internal_error', 'The index update was interrupted; run it again to resume.', {
    retryable: true,
  });
}

/**
 * Row ids for new keys, taken from the owner's counter in one statement: two replicas building
 * at once never hand out the same id.
 */
async function claimRids(tx: SqlClient, owner: string, count: number): Promise<number> {
  const [row] = await tx.query<{ v: string }>(
    `INSERT INTO search_meta (owner, k, v) VALUES (?, 'next_rid', ?)
     ON CONFLICT (owner, k) DO UPDATE SET v = (search_meta.v::bigint + ?::bigint)::text RETURNING v`,
    [owner, String(count + 1), count],
  );
  return Number(row!.v) - count;
}

const ITEM_COLUMNS = [
  'owner',
  'rid',
  'key',
  'src_id',
  'parent',
  'top',
  'item_type',
  'own_deleted',
  'deleted',
  'version',
  'sig',
  'date_added',
  'date_modified',
  'title_sort',
  'creator_sort',
  'date_sql',
  'creator_summary',
  ...TEXT_COLUMNS,
  'tcy',
  'ntok',
  'tf',
  'tsv',
] as const;

async function putRows(
  tx: SqlClient,
  owner: string,
  records: readonly IndexRecord[],
  ids: Map<string, number> | undefined,
): Promise<void> {
  if (records.length === 0) return;
  const existing = new Map(
    (
      await tx.query<{ key: string; rid: number }>(
        'SELECT key, rid FROM search_items WHERE owner = ? AND key = ANY(?::text[])',
        [owner, records.map((r) => r.key)],
      )
    ).map((r) => [r.key, Number(r.rid)]),
  );
  const fresh = records.filter((r) => !existing.has(r.key));
  if (fresh.length > 0) {
    let next = await claimRids(tx, owner, fresh.length);
    for (const r of fresh) existing.set(r.key, next++);
  }
  const rids = records.map((r) => existing.get(r.key)!);
  await tx.run('DELETE FROM search_item_tags WHERE owner = ? AND rid = ANY(?::bigint[])', [owner, rids]);
  await tx.run('DELETE FROM search_item_collections WHERE owner = ? AND rid = ANY(?::bigint[])', [
    owner,
    rids,
  ]);
  const terms = new Set<string>();
  for (let i = 0; i < records.length; i += ROWS_PER_INSERT) {
    const part = records.slice(i, i + ROWS_PER_INSERT);
    const values: string[] = [];
    const params: unknown[] = [];
    for (const r of part) {
      const text = { ...r.text, fulltext: '' };
      const { tf, ntok } = weighed(text);
      const lexemes = Object.keys(tf).filter((w) => Buffer.byteLength(w) <= MAX_LEXEME_BYTES);
      for (const w of lexemes) terms.add(w);
      params.push(
        owner,
        existing.get(r.key)!,
        r.key,
        ids?.get(r.key) ?? null,
        r.parent,
        null,
        r.itemType,
        r.ownDeleted ? 1 : 0,
        r.ownDeleted ? 1 : 0,
        r.version,
        r.sig,
        r.dateAdded,
        r.dateModified,
        r.titleSort,
        r.creatorSort,
        r.dateSql,
        r.creatorSummary,
        ...TEXT_COLUMNS.map((c) => text[c]),
        r.tcy,
        ntok,
        JSON.stringify(tf),
        lexemes,
      );
      values.push(
        `(${ITEM_COLUMNS.map((c) => (c === 'tf' ? '?::jsonb' : c === 'tsv' ? 'array_to_tsvector(?::text[])' : '?')).join(', ')})`,
      );
    }
    const update = ITEM_COLUMNS.filter(
      (c) => c !== 'owner' && c !== 'rid' && c !== 'key' && c !== 'top' && c !== 'deleted',
    )
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    await tx.run(
      `INSERT INTO search_items (${ITEM_COLUMNS.join(', ')}) VALUES ${values.join(', ')}
       ON CONFLICT (owner, key) DO UPDATE SET ${update}`,
      params,
    );
  }
  const tags = records.flatMap((r) => r.tags.map((t) => [existing.get(r.key)!, t.tag, t.type ?? 0] as const));
  if (tags.length > 0) {
    await tx.run(
      `INSERT INTO search_item_tags (owner, rid, tag, type)
       SELECT ?, * FROM unnest(?::bigint[], ?::text[], ?::int[])`,
      [owner, tags.map((t) => t[0]), tags.map((t) => t[1]), tags.map((t) => t[2])],
    );
  }
  const collections = records.flatMap((r) => r.collections.map((c) => [existing.get(r.key)!, c] as const));
  if (collections.length > 0) {
    await tx.run(
      `INSERT INTO search_item_collections (owner, rid, ckey) SELECT ?, * FROM unnest(?::bigint[], ?::text[])`,
      [owner, collections.map((c) => c[0]), collections.map((c) => c[1])],
    );
  }
  if (terms.size > 0) {
    await tx.run(
      'INSERT INTO search_terms (owner, term) SELECT ?, unnest(?::text[]) ON CONFLICT DO NOTHING',
      [owner, [...terms]],
    );
  }
}

async function removeRows(tx: SqlClient, owner: string, keys: readonly string[]): Promise<void> {
  const rids = (
    await tx.query<{ rid: number }>('SELECT rid FROM search_items WHERE owner = ? AND key = ANY(?::text[])', [
      owner,
      keys,
    ])
  ).map((r) => Number(r.rid));
  if (rids.length === 0) return;
  for (const t of [
    'search_items',
    'search_item_tags',
    'search_item_collections',
    'search_vectors',
    'search_fulltext_state',
  ])
    await tx.run(`DELETE FROM ${t} WHERE owner = ? AND rid = ANY(?::bigint[])`, [owner, rids]);
}

/**
 * The top-level ancestor and the effective trash state of the changed rows, their children and
 * grandchildren (`relink` in update.ts).
 */
async function relink(tx: SqlClient, owner: string, keys: readonly string[]): Promise<void> {
  await tx.run(
    `WITH RECURSIVE affected(key, depth) AS (
       SELECT unnest(?::text[]), 0
       UNION
       SELECT c.key, a.depth + 1 FROM search_items c JOIN affected a ON c.parent = a.key
       WHERE c.owner = ? AND a.depth < 2)
     UPDATE search_items i SET
       top = CASE
         WHEN i.parent IS NULL THEN i.key
         ELSE (SELECT CASE WHEN p.parent IS NULL THEN p.key
                           ELSE (SELECT g.key FROM search_items g
                                 WHERE g.owner = i.owner AND g.key = p.parent AND g.parent IS NULL) END
               FROM search_items p WHERE p.owner = i.owner AND p.key = i.parent)
       END,
       deleted = CASE WHEN i.own_deleted = 1 OR coalesce((
         SELECT p.own_deleted = 1 OR coalesce((SELECT g.own_deleted = 1 FROM search_items g
                                                WHERE g.owner = i.owner AND g.key = p.parent), false)
         FROM search_items p WHERE p.owner = i.owner AND p.key = i.parent), false) THEN 1 ELSE 0 END
     WHERE i.owner = ? AND i.key IN (SELECT key FROM affected)`,
    [keys, owner, owner],
  );
}

/**
 * Attachments whose full text was not read for their current state (`updateFulltext` of
 * update.ts): each one's text goes into its row's `fulltext` column, its words into the row's
 * frequencies, token count and `tsvector`, and the terms; an unreadable one is counted failed
 * and tried again next time (no state is kept for it).
 */
async function updatePgFulltext(
  db: SqlClient,
  owner: string,
  lookup: FulltextLookup,
  options: PgUpdateOptions,
): Promise<NonNullable<UpdateReport['fulltext']>> {
  const todo = await db.query<{ rid: number; key: string; sig: string }>(
    `SELECT i.rid, i.key, i.sig FROM search_items i
     LEFT JOIN search_fulltext_state f ON f.owner = i.owner AND f.rid = i.rid
     WHERE i.owner = ? AND i.item_type = 'attachment' AND i.deleted = 0 AND (f.sig IS NULL OR f.sig <> i.sig)
     ORDER BY i.rid`,
    [owner],
  );
  // A text changes the token total: the counts BM25 reads are made again by the caller.
  if (todo.length > 0) await writePgMeta(db, owner, { rows: undefined, tokens: undefined });
  const result = { indexed: 0, empty: 0, failed: 0 };
  let done = 0;
  for (const row of todo) {
    if (options.signal?.aborted) throw aborted();
    let found: { text: string; source: string } | undefined;
    try {
      found = await lookup(row.key);
    } catch {
      result.failed++;
      options.onProgress?.({ phase: 'fulltext', done: ++done, total: todo.length });
      continue;
    }
    await db.transaction(async (tx) => {
      const [current] = await tx.query<Record<(typeof TEXT_COLUMNS)[number], string> & { sig: string }>(
        `SELECT sig, ${TEXT_COLUMNS.join(', ')} FROM search_items WHERE owner = ? AND rid = ? FOR UPDATE`,
        [owner, row.rid],
      );
      // Changed or removed since the list was read: the next update reads it for its new state.
      if (!current || current.sig !== row.sig) return;
      const text = { ...current, fulltext: found?.text ?? '' };
      const { tf, ntok } = weighed(text);
      const lexemes = Object.keys(tf).filter((w) => Buffer.byteLength(w) <= MAX_LEXEME_BYTES);
      await tx.run(
        `UPDATE search_items SET fulltext = ?, ntok = ?, tf = ?::jsonb, tsv = array_to_tsvector(?::text[])
         WHERE owner = ? AND rid = ?`,
        [text.fulltext, ntok, JSON.stringify(tf), lexemes, owner, row.rid],
      );
      await tx.run(
        `INSERT INTO search_fulltext_state (owner, rid, sig, source) VALUES (?, ?, ?, ?)
         ON CONFLICT (owner, rid) DO UPDATE SET sig = excluded.sig, source = excluded.source`,
        [owner, row.rid, row.sig, found?.source ?? null],
      );
      if (found && lexemes.length > 0)
        await tx.run(
          'INSERT INTO search_terms (owner, term) SELECT ?, unnest(?::text[]) ON CONFLICT DO NOTHING',
          [owner, lexemes],
        );
    });
    if (found) result.indexed++;
    else result.empty++;
    options.onProgress?.({ phase: 'fulltext', done: ++done, total: todo.length });
  }
  return result;
}

/** Text given to the embedder per item (update.ts). */
const EMBED_CHARS = 2000;

/** Top-level items whose vector is missing, stale, or of another model. */
async function updateVectors(
  db: SqlClient,
  owner: string,
  embedder: Embedder,
  options: PgUpdateOptions,
): Promise<NonNullable<UpdateReport['vectors']>> {
  const model = `${embedder.provider}:${embedder.model}`;
  await db.run('DELETE FROM search_vectors WHERE owner = ? AND model <> ?', [owner, model]);
  const todo = await db.query<{
    rid: number;
    sig: string;
    title: string;
    creators: string;
    abstract: string;
    tags: string;
  }>(
    `SELECT i.rid, i.sig, i.title, i.creators, i.abstract, i.tags FROM search_items i
     LEFT JOIN search_vectors v ON v.owner = i.owner AND v.rid = i.rid
     WHERE i.owner = ? AND i.parent IS NULL AND i.deleted = 0 AND i.item_type NOT IN ('attachment', 'annotation')
       AND (v.rid IS NULL OR v.sig <> i.sig OR v.model <> ?)
     ORDER BY i.rid`,
    [owner, model],
  );
  let embedded = 0;
  const step = 4096;
  for (let i = 0; i < todo.length; i += step) {
    if (options.signal?.aborted) throw aborted();
    const part = todo.slice(i, i + step);
    const texts = part.map((r) =>
      [r.title, r.creators, r.abstract, r.tags.replace(/\n/g, ', ')]
        .filter(Boolean)
        .join('\n')
        .slice(0, EMBED_CHARS),
    );
    const pending: Promise<unknown>[] = [];
    await embedder.embed(texts, {
      ...(options.signal ? { signal: options.signal } : {}),
      onBatch: (doneCount, _total, vectors) => {
        const rows = part.slice(doneCount - vectors.length, doneCount);
        pending.push(
          db.run(
            `INSERT INTO search_vectors (owner, rid, model, sig, vec)
             SELECT ?, r.rid, ?, r.sig, (SELECT array_agg(x ORDER BY o) FROM jsonb_array_elements_text(r.vec) WITH ORDINALITY e(x, o))::real[]
             FROM jsonb_to_recordset(?::jsonb) AS r(rid bigint, sig text, vec jsonb)
             ON CONFLICT (owner, rid) DO UPDATE SET model = excluded.model, sig = excluded.sig, vec = excluded.vec`,
            [
              owner,
              model,
              JSON.stringify(rows.map((r, j) => ({ rid: Number(r.rid), sig: r.sig, vec: [...vectors[j]!] }))),
            ],
          ),
        );
        embedded += rows.length;
        options.onProgress?.({ phase: 'vectors', done: embedded, total: todo.length });
      },
    });
    await Promise.all(pending);
  }
  return { embedded, model };
}
