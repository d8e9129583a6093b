/**
 * zotero_semantic_search for a tenant of a shared deployment on PostgreSQL (`Deps.sharedState`):
 * the library's index is built in the database (no index file on the replica's disk), answers
 * as the local SQLite index answers, is brought up to date on the next search, and is the
 * tenant's own.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchFulltextMigration, searchIndexMigration } from '../../../src/core/search-index/postgres.js';
import { indexFile } from '../../../src/core/search-index/store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, type SqlClient } from '../../../src/core/store/sql.js';
import type { AnyTool, Deps } from '../../../src/core/tool.js';
import semanticSearch from '../../../src/tools/search/semantic-search.js';
import indexLibrary from '../../../src/tools/search/zotero-index.js';
import { postgresUrl } from '../../support/postgres.js';
import { I, SAMPLE_USER, startSample, type Sample } from '../../tools/items/read/setup.js';

let sample: Sample;
let db: SqlClient;

beforeAll(async () => {
  sample = await startSample();
  db = await openPostgresClient(await postgresUrl());
  await migrate(db, [searchIndexMigration, searchFulltextMigration]);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await sample?.close();
});

/** A tool's answer, for a tenant on PostgreSQL when `tenant` is given, else on this machine. */
async function call(
  tool: object,
  input: Record<string, unknown>,
  tenant?: string,
  env: Record<string, string> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const t = tool as unknown as AnyTool;
  const base = sample.deps({ env });
  const deps: Deps = tenant ? { ...base, sharedState: { db, owner: tenant } } : base;
  try {
    return t.output.parse(await t.run(t.input.parse(input), deps));
  } finally {
    await base.services.close();
  }
}
const search = (input: Record<string, unknown>, tenant?: string) => call(semanticSearch, input, tenant);

const rowsOf = async (owner: string) =>
  Number(
    (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_items WHERE owner = ?', [owner])
    )[0]!.n,
  );

describe('semantic search of a tenant on PostgreSQL', () => {
  it('builds the index in the database, not on disk, and answers as the SQLite index does', async () => {
    const path = indexFile(sample.deps().config.dataDir, SAMPLE_USER);
    const shared = await search({ q: 'sea level', mode: 'keyword' }, 'tenant:1');
    expect(existsSync(path)).toBe(false);
    expect(shared.libraries).toEqual([
      expect.objectContaining({
        library: SAMPLE_USER,
        index: 'built',
        vectors: expect.objectContaining({ used: false }),
      }),
    ]);
    expect(await rowsOf(`tenant:1:${SAMPLE_USER}`)).toBeGreaterThan(0);

    const local = await search({ q: 'sea level', mode: 'keyword' });
    expect(existsSync(path)).toBe(true);
    expect(shared.hits.length).toBeGreaterThan(0);
    // Same hits, scores, snippets; same item count; only the index state may differ.
    expect(shared.hits).toEqual(local.hits);
    expect(shared.libraries[0].items).toBe(local.libraries[0].items);
    expect(shared.mode).toBe(local.mode);
  });

  it('is up to date on the next search, and each tenant has its own rows', async () => {
    const again = await search({ q: 'sea level', mode: 'keyword' }, 'tenant:1');
    expect(again.libraries[0].index).toBe('ready');
    expect(await rowsOf(`tenant:2:${SAMPLE_USER}`)).toBe(0);
    const other = await search({ q: 'sea level', mode: 'keyword' }, 'tenant:2');
    expect(other.libraries[0].index).toBe('built');
    expect(await rowsOf(`tenant:2:${SAMPLE_USER}`)).toBe(await rowsOf(`tenant:1:${SAMPLE_USER}`));
  });

  it('refuses a collection filter that names no collection, as the local search does', async () => {
    await expect(search({ q: 'sea level', collection_key: 'ZZZZZZZZ' }, 'tenant:1')).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('the index tool of a tenant on PostgreSQL', () => {
  it('has nothing for a tenant who never searched, and says to build before updating', async () => {
    const status = await call(indexLibrary, { action: 'status' }, 'tenant:3');
    expect(status).toMatchObject({
      library: SAMPLE_USER,
      path: `postgresql:${SAMPLE_USER}`,
      report: null,
      status: { state: 'absent', items: 0, building: false, upToDate: null },
    });
    await expect(call(indexLibrary, { action: 'update' }, 'tenant:3')).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('builds the rows in the database (no file), counting what the local index counts, then is up to date', async () => {
    const path = indexFile(sample.deps().config.dataDir, SAMPLE_USER);
    const local = await call(indexLibrary, { action: 'build', rebuild: true });
    const built = await call(indexLibrary, { action: 'build' }, 'tenant:3');
    expect(built).toMatchObject({
      path: `postgresql:${SAMPLE_USER}`,
      report: { mode: 'build', added: local.report.added, fulltext: null },
      status: { state: 'complete', building: false, upToDate: true, source: local.status.source },
    });
    for (const k of ['items', 'topLevel', 'trashed', 'libraryVersion'])
      expect([k, built.status[k]]).toEqual([k, local.status[k]]);
    expect(built.status.bytes).toBeGreaterThan(0);
    expect(await rowsOf(`tenant:3:${SAMPLE_USER}`)).toBe(local.status.items);
    const updated = await call(indexLibrary, { action: 'update' }, 'tenant:3');
    expect(updated.report).toMatchObject({ mode: 'update', upToDate: true, added: 0, changed: 0 });
    expect(existsSync(path)).toBe(true); // the local build's own file, untouched by the tenant
  });

  it("with ZOTEUS_INDEX_FULLTEXT=true, an attachment's text ranks its item as the local index ranks it, read once per state", async () => {
    const env = { ZOTEUS_INDEX_FULLTEXT: 'true' };
    const local = await call(indexLibrary, { action: 'update' }, undefined, env);
    const shared = await call(indexLibrary, { action: 'update' }, 'tenant:3', env);
    expect(shared.report.fulltext).toEqual(local.report.fulltext);
    expect(shared.report.fulltext.indexed).toBeGreaterThanOrEqual(2);
    expect(shared.status.fulltextDocuments).toBe(shared.report.fulltext.indexed);

    const q = { q: 'thermosteric expansion', mode: 'keyword' };
    const mine = await call(semanticSearch, q, 'tenant:3', env);
    expect(mine.hits[0]).toMatchObject({ key: I.seaLevelArticle, matched: { field: 'fulltext' } });
    expect(mine.hits).toEqual((await call(semanticSearch, q, undefined, env)).hits);
    // Another tenant's rows hold no full text: the words find nothing there.
    expect((await search({ q: 'thermosteric', mode: 'keyword' }, 'tenant:1')).hits).toEqual([]);
    expect((await search({ q: 'thermosteric', mode: 'keyword' }, 'tenant:3')).hits[0].key).toBe(
      I.seaLevelArticle,
    );

    const again = await call(indexLibrary, { action: 'update' }, 'tenant:3', env);
    expect(again.report.fulltext).toEqual({ indexed: 0, empty: 0, failed: 0 });
  });
});
