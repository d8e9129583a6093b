/**
 * zotero_semantic_search for a tenant of a shared deployment on PostgreSQL (`Deps.sharedState`):
 * the library's index is built in the database (no index file on the replica's disk), answers
 * as the local SQLite index answers, is brought up to date on the next search, and is the
 * tenant's own.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchIndexMigration } from '../../../src/core/search-index/postgres.js';
import { indexFile } from '../../../src/core/search-index/store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPostgresClient, type SqlClient } from '../../../src/core/store/sql.js';
import type { AnyTool, Deps } from '../../../src/core/tool.js';
import semanticSearch from '../../../src/tools/search/semantic-search.js';
import { postgresUrl } from '../../support/postgres.js';
import { SAMPLE_USER, startSample, type Sample } from '../../tools/items/read/setup.js';

let sample: Sample;
let db: SqlClient;

beforeAll(async () => {
  sample = await startSample();
  db = await openPostgresClient(await postgresUrl());
  await migrate(db, [searchIndexMigration]);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await sample?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function search(input: Record<string, unknown>, tenant?: string): Promise<any> {
  const t = semanticSearch as unknown as AnyTool;
  const base = sample.deps();
  const deps: Deps = tenant ? { ...base, sharedState: { db, owner: tenant } } : base;
  return t.output.parse(await t.run(t.input.parse(input), deps));
}

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
