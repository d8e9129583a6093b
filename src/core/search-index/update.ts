/**
 * Building and updating an index from a feed. One algorithm for a first build and for an
 * update: ask the feed what changed (everything, the first time), compare the signatures with
 * the stored ones, fetch only the items whose signature differs, delete what is gone.
 *
 * - Cost follows the change: an update after 100 edits fetches those 100 items (2 requests of
 *   50 on the Web API, plus the versions and deleted listings), not the library.
 * - Resumable: every batch commits with its items' signatures, and the library version is
 *   recorded only when everything landed; a build killed half-way compares again on the next
 *   run and fetches only what is still missing.
 * - Full text (opt-in) and vectors (when embeddings are configured) follow in their own
 *   phases, keyed by the item signature they were made from, so they resume the same way.
 */
import { ZoteusError } from '../errors.js';
import type { WebApiItem } from '../local/sqlite/types.js';
import type { Embedder } from './embeddings.js';
import { encodeVector } from './embeddings.js';
import type { IndexFeed } from './feed.js';
import { toRecord, type IndexRecord } from './records.js';
import {
  createQueryIndexes,
  dropQueryIndexes,
  readMeta,
  resetIndexDb,
  writeMeta,
  type IndexDb,
} from './store.js';
import { ftsWords } from './terms.js';

export interface IndexProgress {
  phase: 'scan' | 'items' | 'fulltext' | 'vectors';
  done: number;
  total: number;
}

export interface FulltextLookup {
  (attachmentKey: string): Promise<{ text: string; source: string } | undefined>;
}

export interface UpdateOptions {
  /** Empty the index first. */
  rebuild?: boolean;
  onProgress?: (event: IndexProgress) => void;
  /** Index attachments' full text (ZOTEUS_INDEX_FULLTEXT). */
  fulltext?: FulltextLookup | undefined;
  /** Embed top-level items (ZOTEUS_EMBEDDINGS). */
  embedder?: Embedder | undefined;
  /**
   * Vectors are best effort when given: a failure of the embeddings phase (the server down, its
   * rate limit past the budget) is handed here and the update succeeds with the items it
   * brought in (`vectors: null`); the next update embeds what is missing. Without it, it throws.
   */
  onVectorsError?: ((error: unknown) => void) | undefined;
  /** Stops between batches (what was committed stays; the next run resumes). */
  signal?: AbortSignal | undefined;
  now?: () => number;
}

export interface UpdateReport {
  /** `build`: the index was empty (or rebuilt); `update`: it was brought up to date. */
  mode: 'build' | 'update';
  /** Whether the source was unchanged since the last update (nothing was asked). */
  upToDate: boolean;
  added: number;
  changed: number;
  deleted: number;
  unchanged: number;
  /** Requests made to the source (0 for zotero.sqlite). */
  requests: number;
  libraryVersion: number | null;
  fulltext: { indexed: number; empty: number; failed: number } | null;
  vectors: { embedded: number; model: string } | null;
}

/** Above this many changed rows, words are collected in one pass at the end. */
const BULK_ROWS = 2000;

/** Text given to the embedder per item: the parts that say what a work is about. */
const EMBED_CHARS = 2000;

export async function updateIndex(
  db: IndexDb,
  feed: IndexFeed,
  options: UpdateOptions = {},
): Promise<UpdateReport> {
  const now = options.now ?? Date.now;
  if (options.rebuild || (readMeta(db, 'source') !== undefined && readMeta(db, 'source') !== feed.source)) {
    resetIndexDb(db);
  }
  const complete = readMeta(db, 'complete') === '1';
  const mode: UpdateReport['mode'] = complete ? 'update' : 'build';
  const report: UpdateReport = {
    mode,
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
  if (complete && fingerprint !== undefined && readMeta(db, 'fingerprint') === fingerprint) {
    report.upToDate = true;
    report.libraryVersion = numberOrNull(readMeta(db, 'library_version'));
  } else {
    const cursor = await updateItems(
      db,
      feed,
      complete ? numberOrUndefined(readMeta(db, 'library_version')) : undefined,
      complete ? readMeta(db, 'cursor') : undefined,
      options,
      report,
    );
    writeMeta(db, {
      cursor,
      source: feed.source,
      fingerprint,
      library_version: report.libraryVersion ?? undefined,
      complete: 1,
      updated_at: new Date(now()).toISOString(),
    });
  }
  if (options.fulltext) report.fulltext = await updateFulltext(db, options.fulltext, options);
  if (options.embedder) {
    // Fix (tests): a semantic search brings the index up to date first, and an embeddings server
    // that was down made the whole search fail instead of answering by keywords (and saying so).
    try {
      report.vectors = await updateVectors(db, options.embedder, options);
    } catch (error) {
      if (!options.onVectorsError || options.signal?.aborted) throw error;
      options.onVectorsError(error);
    }
  }
  return report;
}

function numberOrUndefined(v: string | undefined): number | undefined {
  const n = Number(v);
  return v !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

function numberOrNull(v: string | undefined): number | null {
  return numberOrUndefined(v) ?? null;
}

async function updateItems(
  db: IndexDb,
  feed: IndexFeed,
  since: number | undefined,
  cursor: string | undefined,
  options: UpdateOptions,
  report: UpdateReport,
): Promise<string | undefined> {
  const changes = await feed.changes(since, cursor);
  report.requests += changes.requests;
  report.libraryVersion = changes.libraryVersion ?? null;
  // Stored signatures: all of them to find what is gone, else only those of the listed keys.
  const stored = new Map<string, string>();
  if (changes.complete) {
    for (const [key, sig] of db.prepare('SELECT key, sig FROM items').raw().iterate() as Iterable<
      [string, string]
    >)
      stored.set(key, sig);
  } else {
    const sigOf = db.prepare('SELECT sig FROM items WHERE key = ?').pluck();
    for (const key of [...changes.signatures.keys(), ...changes.deleted]) {
      const sig = sigOf.get(key) as string | undefined;
      if (sig !== undefined) stored.set(key, sig);
    }
  }

  const gone = new Set<string>();
  if (changes.complete) {
    for (const key of stored.keys()) if (!changes.signatures.has(key)) gone.add(key);
  } else {
    for (const key of changes.deleted) if (stored.has(key)) gone.add(key);
    // The feed listed what exists: every indexed key it does not hold is gone.
    const present = changes.present;
    if (present) {
      for (const key of db.prepare('SELECT key FROM items').pluck().all() as string[]) {
        if (!present.has(key)) gone.add(key);
      }
    }
  }
  const wanted: string[] = [];
  for (const [key, sig] of changes.signatures) {
    const old = stored.get(key);
    if (old === sig) report.unchanged++;
    else wanted.push(key);
  }
  options.onProgress?.({ phase: 'scan', done: changes.signatures.size, total: changes.signatures.size });

  // Many rows: their words are collected from FTS5's own vocabulary once at the end.
  const bulk = wanted.length > BULK_ROWS;
  const write = writer(db, !bulk);
  // Fix (tests): the words of a bulk run were collected only at its very end, so the rows of an
  // interrupted bulk build never got theirs (a resumed run is rarely bulk): `everything`
  // searches missed them. Now the debt is recorded and paid by whichever run completes.
  if (bulk) writeMeta(db, { terms_pending: 1 });
  // A bulk run leaves FTS5's segments unmerged until the 'optimize' that ends it: merged as they
  // come (FTS5's automerge, at every commit), the same words were rewritten once per level, and
  // the build grew faster than the library (6.8× from 50,000 to 250,000 items).
  if (bulk) setMerging(db, false);
  // And it keeps more of the file in memory: each batch inserts at random places of the key and
  // parent indexes, which outgrow SQLite's default 2 MB cache (at 250,000 items 256 MB made
  // the build 137 s → 118 s; pages are taken only as used). Back to the default after.
  const cacheSize = bulk ? (db.pragma('cache_size', { simple: true }) as number) : undefined;
  if (bulk) db.pragma(`cache_size = ${BULK_CACHE_KIB}`);
  // A first build of many rows makes the query indexes once at the end, a sort each, instead of
  // inserting into them batch by batch (see `dropQueryIndexes`). Only a build: an index that is
  // complete may be queried by another process while this one updates it.
  if (bulk && readMeta(db, 'complete') !== '1') dropQueryIndexes(db);
  // Fix (tests): rows were linked to their top-level item (top, effective trash) only after
  // the last batch, so the rows of an interrupted build or update stayed unlinked (top NULL:
  // invisible to ranking and to searches with children) and were never relinked on resume,
  // their signatures being current. Now each batch is linked in the transaction it lands in.
  db.transaction(() => {
    for (const key of gone) write.remove(key);
    if (gone.size > 0) relink(db, gone);
  })();
  report.deleted += gone.size;

  // Fetch in batches, a few at once; each batch lands in its own transaction.
  const batches: string[][] = [];
  for (let i = 0; i < wanted.length; i += feed.batchSize) batches.push(wanted.slice(i, i + feed.batchSize));
  let done = 0;
  let next = 0;
  // Set by the first worker that fails: the others start no new batch.
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < batches.length && !failed) {
      if (options.signal?.aborted) throw aborted();
      const keys = batches[next++]!;
      const { items, requests } = await feed.fetch(keys);
      report.requests += requests;
      const found = new Map<string, WebApiItem>(items.map((i) => [i.key, i]));
      db.transaction(() => {
        const texts: Array<[number, IndexRecord]> = [];
        for (const key of keys) {
          const item = found.get(key);
          if (!item) {
            // Listed, then gone before it could be read: deleted.
            if (stored.has(key)) {
              write.remove(key);
              report.deleted++;
            }
            continue;
          }
          const record = toRecord(item, changes.signatures.get(key)!);
          texts.push([write.putRow(record, changes.ids?.get(key)), record]);
          if (stored.has(key)) report.changed++;
          else report.added++;
        }
        // The text after every row: an upsert between FTS5 writes makes FTS5 flush its pending
        // words each time (one tiny segment per row); in this order a batch is one segment.
        for (const [rid, record] of texts) write.putText(rid, record);
        relink(db, new Set(keys));
      })();
      done += keys.length;
      options.onProgress?.({ phase: 'items', done, total: wanted.length });
    }
  };
  // Fix (tests): Promise.all rejected at the first failure (or abort) while the other workers
  // kept fetching and writing, after the caller had closed the database and released the
  // lock. Now a failure stops new batches, the batches in flight land, then the error is thrown.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(feed.concurrency, batches.length)) }, () =>
      worker().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  createQueryIndexes(db);
  if (bulk || readMeta(db, 'terms_pending') === '1') {
    db.exec('INSERT OR IGNORE INTO terms (term) SELECT term FROM docs_vocab');
    // A bulk load leaves one FTS5 segment per batch; merged, queries read one doclist per
    // word instead of a hundred (under a second on 50,000 items).
    db.exec(
      "INSERT INTO docs (docs) VALUES ('optimize'); INSERT INTO tcy_fts (tcy_fts) VALUES ('optimize');",
    );
    setMerging(db, true);
    writeMeta(db, { terms_pending: undefined });
  } else if (mergingPaused(db)) {
    // Paused by a bulk run whose debt a reset dropped (a rebuild after it was interrupted).
    setMerging(db, true);
  }
  if (cacheSize !== undefined) db.pragma(`cache_size = ${cacheSize}`);
  return changes.cursor;
}

/** SQLite's page cache of a bulk run, in KiB (as `PRAGMA cache_size` takes a negative number). */
const BULK_CACHE_KIB = -262144;

/** FTS5's own merging of segments as rows come (its defaults), or none until an 'optimize'. */
function setMerging(db: IndexDb, on: boolean): void {
  // Literals: FTS5 takes a setting's value as an integer only, and a bound JS number is a REAL.
  for (const table of ['docs', 'tcy_fts']) {
    db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', ${on ? 4 : 0})`);
    // A level of this many segments is merged even without automerge: SQLite's largest
    // setting (FTS5 holds 2,000 segments at most), above the ~780 batches (of 500 rows) of 250,000 items.
    db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('crisismerge', ${on ? 16 : 1999})`);
  }
}

function mergingPaused(db: IndexDb): boolean {
  return ['docs', 'tcy_fts'].some(
    (table) => db.prepare(`SELECT v FROM ${table}_config WHERE k = 'automerge'`).pluck().get() === 0,
  );
}

function aborted(): ZoteusError {
  return new ZoteusError('internal_error', 'The index update was interrupted; run it again to resume.', {
    retryable: true,
  });
}

/** Upserts and removals of item rows with their tags, collections, text and words. */
function writer(db: IndexDb, collectTerms: boolean) {
  const upsert = db.prepare(`
    INSERT INTO items (key, src_id, parent, top, item_type, own_deleted, deleted, version, sig, date_added,
      date_modified, title_sort, creator_sort, date_sql, creator_summary)
    VALUES (@key, @srcId, @parent, NULL, @itemType, @ownDeleted, @ownDeleted, @version, @sig, @dateAdded,
      @dateModified, @titleSort, @creatorSort, @dateSql, @creatorSummary)
    ON CONFLICT(key) DO UPDATE SET src_id = excluded.src_id, parent = excluded.parent,
      item_type = excluded.item_type, own_deleted = excluded.own_deleted, version = excluded.version,
      sig = excluded.sig, date_added = excluded.date_added, date_modified = excluded.date_modified,
      title_sort = excluded.title_sort, creator_sort = excluded.creator_sort, date_sql = excluded.date_sql,
      creator_summary = excluded.creator_summary
    RETURNING rid`);
  const ridOf = db.prepare('SELECT rid FROM items WHERE key = ?').pluck();
  const delItem = db.prepare('DELETE FROM items WHERE rid = ?');
  const delTags = db.prepare('DELETE FROM item_tags WHERE rid = ?');
  const delCollections = db.prepare('DELETE FROM item_collections WHERE rid = ?');
  const delDoc = db.prepare('DELETE FROM docs WHERE rowid = CAST(? AS INTEGER)');
  const delTcy = db.prepare('DELETE FROM tcy_fts WHERE rowid = CAST(? AS INTEGER)');
  const addTcy = db.prepare('INSERT INTO tcy_fts (rowid, tcy) VALUES (?, ?)');
  const delFulltext = db.prepare('DELETE FROM fulltext_state WHERE rid = ?');
  const delVector = db.prepare('DELETE FROM vectors WHERE rid = ?');
  const addTag = db.prepare('INSERT INTO item_tags (rid, tag, type) VALUES (?, ?, ?)');
  const addCollection = db.prepare('INSERT INTO item_collections (rid, ckey) VALUES (?, ?)');
  const addDoc = db.prepare(
    'INSERT INTO docs (rowid, title, creators, abstract, tags, notes, annotations, fields, fulltext) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const addTerm = db.prepare('INSERT OR IGNORE INTO terms (term) VALUES (?)');
  return {
    /** The item's row, tags and collections; returns its rid (then `putText`). */
    putRow(r: IndexRecord, srcId: number | undefined): number {
      const { rid } = upsert.get({
        key: r.key,
        srcId: srcId ?? null,
        parent: r.parent,
        itemType: r.itemType,
        ownDeleted: r.ownDeleted ? 1 : 0,
        version: r.version,
        sig: r.sig,
        dateAdded: r.dateAdded,
        dateModified: r.dateModified,
        titleSort: r.titleSort,
        creatorSort: r.creatorSort,
        dateSql: r.dateSql,
        creatorSummary: r.creatorSummary,
      }) as { rid: number };
      delTags.run(rid);
      delCollections.run(rid);
      // Full text is re-read for a changed attachment (its file may have changed with it).
      delFulltext.run(rid);
      for (const t of r.tags) addTag.run(rid, t.tag, t.type ?? 0);
      for (const c of r.collections) addCollection.run(rid, c);
      return rid;
    },
    /** The item's text in the FTS5 tables (and its words). */
    putText(rid: number, r: IndexRecord): void {
      delDoc.run(rid);
      delTcy.run(rid);
      const t = r.text;
      addDoc.run(rid, t.title, t.creators, t.abstract, t.tags, t.notes, t.annotations, t.fields, '');
      addTcy.run(rid, r.tcy);
      if (collectTerms) for (const text of Object.values(t)) for (const w of ftsWords(text)) addTerm.run(w);
    },
    remove(key: string): void {
      const rid = ridOf.get(key) as number | undefined;
      if (rid === undefined) return;
      delItem.run(rid);
      delTags.run(rid);
      delCollections.run(rid);
      delDoc.run(rid);
      delTcy.run(rid);
      delFulltext.run(rid);
      delVector.run(rid);
    },
  };
}

/**
 * The top-level ancestor and the effective trash state (a trashed parent trashes its
 * children) of the changed rows and of their children and grandchildren (an annotation's
 * attachment's item).
 */
function relink(db: IndexDb, keys: ReadonlySet<string>): void {
  db.transaction(() => {
    db.exec(
      'CREATE TEMP TABLE IF NOT EXISTS affected (key TEXT PRIMARY KEY) WITHOUT ROWID; DELETE FROM affected;',
    );
    const add = db.prepare('INSERT OR IGNORE INTO affected (key) VALUES (?)');
    for (const k of keys) add.run(k);
    db.exec(`
      INSERT OR IGNORE INTO affected (key) SELECT key FROM items WHERE parent IN (SELECT key FROM affected);
      INSERT OR IGNORE INTO affected (key) SELECT key FROM items WHERE parent IN (SELECT key FROM affected);
      UPDATE items SET
        top = CASE
          WHEN parent IS NULL THEN key
          ELSE (SELECT CASE WHEN p.parent IS NULL THEN p.key
                            ELSE (SELECT g.key FROM items g WHERE g.key = p.parent AND g.parent IS NULL) END
                FROM items p WHERE p.key = items.parent)
        END,
        deleted = own_deleted OR coalesce((
          SELECT p.own_deleted OR coalesce((SELECT g.own_deleted FROM items g WHERE g.key = p.parent), 0)
          FROM items p WHERE p.key = items.parent), 0)
      WHERE key IN (SELECT key FROM affected);
      DELETE FROM affected;
    `);
  })();
}

/** Attachments whose full text was not read for their current state. */
async function updateFulltext(
  db: IndexDb,
  lookup: FulltextLookup,
  options: UpdateOptions,
): Promise<NonNullable<UpdateReport['fulltext']>> {
  const todo = db
    .prepare(
      `SELECT i.rid, i.key, i.sig FROM items i LEFT JOIN fulltext_state f ON f.rid = i.rid
       WHERE i.item_type = 'attachment' AND i.deleted = 0 AND (f.sig IS NULL OR f.sig <> i.sig)`,
    )
    .all() as Array<{ rid: number; key: string; sig: string }>;
  const setText = db.prepare('UPDATE docs SET fulltext = ? WHERE rowid = CAST(? AS INTEGER)');
  const setState = db.prepare(
    'INSERT INTO fulltext_state (rid, sig, source) VALUES (?, ?, ?) ON CONFLICT(rid) DO UPDATE SET sig = excluded.sig, source = excluded.source',
  );
  const addTerm = db.prepare('INSERT OR IGNORE INTO terms (term) VALUES (?)');
  const result = { indexed: 0, empty: 0, failed: 0 };
  let done = 0;
  for (const row of todo) {
    if (options.signal?.aborted) throw aborted();
    let found: { text: string; source: string } | undefined;
    try {
      found = await lookup(row.key);
    } catch {
      // An unreadable document is skipped (and retried next time: no state is recorded).
      result.failed++;
      options.onProgress?.({ phase: 'fulltext', done: ++done, total: todo.length });
      continue;
    }
    db.transaction(() => {
      setText.run(found?.text ?? '', row.rid);
      setState.run(row.rid, row.sig, found?.source ?? null);
      if (found) for (const w of ftsWords(found.text)) addTerm.run(w);
    })();
    if (found) result.indexed++;
    else result.empty++;
    options.onProgress?.({ phase: 'fulltext', done: ++done, total: todo.length });
  }
  return result;
}

/** Top-level items whose vector is missing, stale, or from another model. */
async function updateVectors(
  db: IndexDb,
  embedder: Embedder,
  options: UpdateOptions,
): Promise<NonNullable<UpdateReport['vectors']>> {
  const model = `${embedder.provider}:${embedder.model}`;
  const todo = db
    .prepare(
      `SELECT i.rid, i.sig, d.title, d.creators, d.abstract, d.tags FROM items i
       JOIN docs d ON d.rowid = i.rid LEFT JOIN vectors v ON v.rid = i.rid
       WHERE i.parent IS NULL AND i.deleted = 0 AND i.item_type NOT IN ('attachment', 'annotation')
         AND (v.rid IS NULL OR v.sig <> i.sig OR v.model <> ?)`,
    )
    .all(model) as Array<{
    rid: number;
    sig: string;
    title: string;
    creators: string;
    abstract: string;
    tags: string;
  }>;
  const put = db.prepare(
    'INSERT INTO vectors (rid, model, sig, vec) VALUES (?, ?, ?, ?) ON CONFLICT(rid) DO UPDATE SET model = excluded.model, sig = excluded.sig, vec = excluded.vec',
  );
  // Another model's vectors cannot be compared with this one's.
  db.prepare('DELETE FROM vectors WHERE model <> ?').run(model);
  // Whole requests of the embedder's batch size; each batch is stored as it arrives (onBatch),
  // so an interrupted run keeps what was embedded. The outer chunk only bounds memory.
  const step = 4096;
  let embedded = 0;
  for (let i = 0; i < todo.length; i += step) {
    if (options.signal?.aborted) throw aborted();
    const part = todo.slice(i, i + step);
    const texts = part.map((r) =>
      [r.title, r.creators, r.abstract, r.tags.replace(/\n/g, ', ')]
        .filter(Boolean)
        .join('\n')
        .slice(0, EMBED_CHARS),
    );
    await embedder.embed(texts, {
      ...(options.signal ? { signal: options.signal } : {}),
      onBatch: (done, _total, vectors) => {
        const rows = part.slice(done - vectors.length, done);
        db.transaction(() => {
          rows.forEach((r, j) => put.run(r.rid, model, r.sig, encodeVector(vectors[j]!)));
        })();
        embedded += rows.length;
        options.onProgress?.({ phase: 'vectors', done: embedded, total: todo.length });
      },
    });
  }
  return { embedded, model };
}
