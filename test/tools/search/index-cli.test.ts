/**
 * `zot index build|update|status` and `zot semantic-search` end to end, as subprocesses (needs
 * `npm run build`): on the sample zotero.sqlite with no key, and on the Web API test server with
 * one. Envelopes, exit codes, NDJSON progress on stderr, --dry-run; the background build a
 * search starts on a large enough library; and `zot search` answered from the index giving
 * exactly the answer it gives without one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/core/tool.js';
import { itemQuery, type SearchInput } from '../../../src/core/items/read/search.js';
import { queryIndex, type IndexQuery } from '../../../src/core/search-index/query.js';
import { indexedLibrary, runIndexUpdate } from '../../../src/core/search-index/service.js';
import { openIndexDb } from '../../../src/core/search-index/store.js';
import searchTool from '../../../src/tools/items/search-items.js';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';
import { C, envelope, I, SAMPLE_USER, startSample, stderrEvents, type Sample } from '../items/read/setup.js';

const META = {
  schema_version: expect.any(String),
  cli_version: expect.any(String),
  request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
  latency_ms: expect.any(Number),
};

type Status = {
  state: string;
  building: boolean;
  items: number;
  topLevel: number;
  trashed: number;
  upToDate: boolean | null;
  source: string | null;
};

let sample: Sample;
beforeEach(async () => {
  sample = await startSample();
});
afterEach(async () => {
  await sample.close();
});

const indexPath = () => join(sample.dir, 'data', 'index', `${SAMPLE_USER.replace('/', '-')}.sqlite`);

/** Polls `zot index status` (bounded) until no build runs and the index is complete. */
async function waitForIndex(env: Record<string, string> = {}): Promise<Status> {
  for (let i = 0; i < 120; i++) {
    const r = await sample.zot(['index', 'status'], env);
    const status = envelope(r).data.status as Status;
    if (!status.building && status.state === 'complete') return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the index was not built in time');
}

describe('zot index on zotero.sqlite (no key)', () => {
  it('status before a build says absent; update on an absent index is not_found (exit 4)', async () => {
    const r = await sample.zot(['index', 'status']);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.meta).toEqual(META);
    expect(env.data).toEqual({
      action: 'status',
      library: SAMPLE_USER,
      backend: 'sqlite',
      path: indexPath(),
      report: null,
      status: {
        state: 'absent',
        building: false,
        items: 0,
        topLevel: 0,
        trashed: 0,
        fulltextDocuments: 0,
        vectors: null,
        bytes: 0,
        libraryVersion: null,
        updatedAt: null,
        source: null,
        upToDate: null,
      },
    });

    const update = await sample.zot(['index', 'update']);
    expect(update.code).toBe(4);
    expect(envelope(update)).toMatchObject({
      ok: false,
      error: { code: 'not_found', retryable: false, hint: 'Build it first: `zot index build`.' },
    });
    expect(envelope(update).error.message).toContain(SAMPLE_USER);
    expect(existsSync(indexPath())).toBe(false);
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    for (const command of [
      ['index', 'build', '--rebuild'],
      ['index', 'update'],
    ]) {
      const r = await sample.zot([...command, '--dry-run']);
      expect(r.code).toBe(0);
      const env = r.json();
      expect(env).toMatchObject({
        ok: true,
        dry_run: true,
        data: {
          would: {
            command: command.slice(0, 2).join(' '),
            action: command[1],
            index_dir: join(sample.dir, 'data', 'index'),
            fulltext: false,
            embeddings: 'off',
            writes: 'only the index file of the library (no library data changes)',
          },
        },
      });
      if (command[1] === 'build') expect(env).toMatchObject({ data: { would: { rebuild: true } } });
    }
    expect(existsSync(join(sample.dir, 'data', 'index'))).toBe(false);
    expect((envelope(await sample.zot(['index', 'status'])).data.status as Status).state).toBe('absent');
  });

  it('build: the envelope reports what was added, progress goes to stderr as NDJSON; status and update follow', async () => {
    const r = await sample.zot(['index', 'build', '--json']);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(env.meta).toEqual(META);
    const status = env.data.status as Status;
    expect(env.data).toMatchObject({
      action: 'build',
      library: SAMPLE_USER,
      backend: 'sqlite',
      path: indexPath(),
      report: {
        mode: 'build',
        upToDate: false,
        added: status.items,
        changed: 0,
        deleted: 0,
        unchanged: 0,
        requests: 0,
        fulltext: null,
        vectors: null,
      },
      status: {
        state: 'complete',
        building: false,
        upToDate: true,
        source: expect.stringMatching(/^sqlite:.*zotero\.sqlite$/),
      },
    });
    expect(status.items).toBeGreaterThan(status.topLevel);
    expect(status.trashed).toBeGreaterThan(0);
    expect(existsSync(indexPath())).toBe(true);

    // Progress: each phase starts and completes; every line carries the request id.
    const events = stderrEvents(r.stderr);
    expect(events[0]).toMatchObject({ event: 'start', phase: 'scan', total: status.items });
    expect(events).toContainEqual(
      expect.objectContaining({ event: 'start', phase: 'items', total: status.items }),
    );
    expect(events.at(-1)).toMatchObject({
      event: 'complete',
      phase: 'items',
      done: status.items,
      total: status.items,
    });
    expect(events.every((e) => e.request_id === env.meta.request_id)).toBe(true);

    const after = envelope(await sample.zot(['index', 'status']));
    expect(after.data.report).toBeNull();
    expect(after.data.status).toMatchObject({ ...status, updatedAt: expect.any(String) });

    // zotero.sqlite unchanged: nothing to read.
    const update = await sample.zot(['index', 'update']);
    expect(update.code).toBe(0);
    expect(envelope(update).data.report).toMatchObject({
      mode: 'update',
      upToDate: true,
      added: 0,
      requests: 0,
    });
    const again = await sample.zot(['index', 'build']);
    expect(envelope(again).data.report).toMatchObject({ mode: 'update', upToDate: true });
    // --rebuild starts over.
    const rebuilt = await sample.zot(['index', 'build', '--rebuild']);
    expect(envelope(rebuilt).data.report).toMatchObject({ mode: 'build', added: status.items, unchanged: 0 });
  });

  it('zot semantic-search Q: one envelope of ranked hits; exit codes of its refusals', async () => {
    const r = await sample.zot(['semantic-search', 'Greenland mass balance', '--limit', '3']);
    expect(r.code).toBe(0);
    const env = envelope(r);
    expect(Object.keys(env)).toEqual(['ok', 'data', 'meta']);
    expect(env.data).toMatchObject({
      q: 'Greenland mass balance',
      // What ran: no vectors (ZOTEUS_EMBEDDINGS is off), so keywords alone.
      mode: 'keyword',
      libraries: [
        {
          library: SAMPLE_USER,
          backend: 'sqlite',
          // A small library: indexed for this search.
          index: 'built',
          vectors: { used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' },
        },
      ],
      provenance: expect.any(String),
    });
    const hits = env.data.hits as Array<Record<string, unknown>>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits[0]).toMatchObject({
      key: I.greenlandArticle,
      library: SAMPLE_USER,
      ranks: { keyword: 1, vector: null },
      matched: {
        field: 'title',
        itemKey: I.greenlandArticle,
        snippet: expect.stringContaining('«Greenland»'),
      },
    });
    // The next search uses the index as it is.
    const next = envelope(await sample.zot(['semantic-search', 'Greenland mass balance', '--limit', '3']));
    expect(next.data.libraries).toMatchObject([{ index: 'ready' }]);
    expect(next.data.hits).toEqual(hits);

    const vector = await sample.zot(['semantic-search', 'ice', '--mode', 'vector']);
    expect(vector.code).toBe(3);
    expect(envelope(vector).error).toMatchObject({ code: 'validation_error' });
    const empty = await sample.zot(['semantic-search', '   ']);
    expect(empty.code).toBe(3);
    const badLimit = await sample.zot(['semantic-search', 'ice', '--limit', '51']);
    expect(badLimit.code).toBe(3);
  });
});

describe('the background build a search starts', () => {
  it('zot search on a library of ZOTEUS_INDEX_AUTO_MIN_ITEMS items or more: the answer now, with a notice; the same answer from the index later', async () => {
    const env = { ZOTEUS_INDEX_AUTO_MIN_ITEMS: '1' };
    const args = ['search', 'sea level', '--limit', '100'];
    const first = await sample.zot(args, env);
    expect(first.code).toBe(0);
    const one = envelope(first);
    expect(one.data.message).toMatch(/^Started building the search index of this library in the background/);
    const keys = (one.data.items as Array<{ key: string }>).map((i) => i.key);
    expect(keys).toContain(I.seaLevelArticle);

    const status = await waitForIndex(env);
    expect(status.source).toMatch(/^sqlite:/);

    const second = envelope(await sample.zot(args, env));
    expect(second.data.message).toBeUndefined();
    expect((second.data.items as Array<{ key: string }>).map((i) => i.key)).toEqual(keys);
    expect(second.data.totalResults).toBe(one.data.totalResults);
  }, 90_000);
});

describe('zot search from the index equals zot search without it', () => {
  const open: Deps[] = [];
  afterEach(async () => {
    for (const d of open.splice(0)) await d.services.close();
  });

  /** A fresh process's view: its own deps (the reader's caches are per deps). */
  function deps(): Deps {
    // No background build: without an index file the search is answered from zotero.sqlite.
    const d = sample.deps({ env: { ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0' } });
    open.push(d);
    return d;
  }

  const QUERIES: Array<Record<string, unknown>> = [
    { q: 'sea level', include_children: true },
    { q: 'sea level' },
    { q: 'sea', qmode: 'everything', include_children: true },
    { q: 'sea', qmode: 'everything' },
    { q: 'altimetry', qmode: 'everything' },
    { q: 'church 2011' },
    { q: 'pdf' },
    { q: 'pdf', include_children: true },
    { q: 'muller' },
    { q: 'Erwärmung Ozeane' },
    { q: 'ai', qmode: 'everything' },
    { q: 'learning', sort: 'title' },
    { q: 'learning', sort: 'date', direction: 'desc' },
    { q: 'learning', qmode: 'everything', sort: 'creator', start: 2, limit: 3 },
    {},
    { include_children: true },
    { sort: 'title', direction: 'desc', start: 5, limit: 4 },
    { sort: 'dateAdded' },
    { sort: 'itemType' },
    { sort: 'date' },
    { tag: 'sea level', include_children: true },
    { tag: ['sea level', '-to-cite'] },
    { item_type: 'journalArticle || book' },
    { item_type: '-attachment', sort: 'title', include_children: true },
    { collection_key: C.seaLevel },
    { collection_key: C.climate, q: 'climate', qmode: 'everything' },
    { include_trashed: true, sort: 'title' },
    { q: 'sea', include_trashed: true },
    { since: 1200 },
  ];

  it('the same keys, order and totalResults for each query', async () => {
    type Answer = { keys: string[]; totalResults: number; message?: string };
    const answer = async (input: Record<string, unknown>): Promise<Answer> => {
      const out = await searchTool.run(searchTool.input.parse({ limit: 100, ...input }), deps());
      expect(out.backend).toBe('sqlite');
      return {
        keys: out.items.map((i) => i.key),
        totalResults: out.totalResults,
        ...(out.message ? { message: out.message } : {}),
      };
    };
    const without: Answer[] = [];
    for (const q of QUERIES) without.push(await answer(q));
    expect(existsSync(indexPath())).toBe(false);
    expect(without.filter((a) => a.keys.length > 0).length).toBeGreaterThan(QUERIES.length - 3);

    const d = deps();
    const lib = await indexedLibrary(d, {});
    await runIndexUpdate(d, {}, lib);
    const db = (await openIndexDb(lib.path, { create: false }))!;
    try {
      for (const [i, q] of QUERIES.entries()) {
        const withIndex = await answer(q);
        expect({ q, ...withIndex }).toEqual({ q, ...without[i] });
        // And it was the index that answered: its own query gives those keys (`everything`
        // also asks Zotero's own full-text words, which only the reader knows).
        if (q.qmode === 'everything') continue;
        const direct = queryIndex(db, {
          // The reader's query for the tool's input (Web API names).
          ...itemQuery({ ...q, top: q.include_children !== true } as SearchInput),
          ...(q.start !== undefined ? { start: q.start as number } : {}),
          limit: (q.limit as number | undefined) ?? 100,
        } as IndexQuery);
        expect(direct?.keys, JSON.stringify(q)).toEqual(withIndex.keys);
      }
    } finally {
      db.close();
    }
  });
});

describe('zot index on the Web API (a key, no desktop)', () => {
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it('build reads the library in 1 + ⌈n/50⌉ requests; update after an edit in 3; semantic-search finds the edit', async () => {
    world = await startWorld();
    const lib = world.server.library('users/1');
    const keys = lib.addItems(Array.from({ length: 60 }, (_, i) => ({ title: `Record ${i + 1} on tundra` })));
    const zot = (args: string[]) => runZot(args, { env: world.env() });
    const n = lib.items.size;

    const build = await zot(['index', 'build']);
    expect(build.code).toBe(0);
    expect(envelope(build).data).toMatchObject({
      library: 'users/1',
      backend: 'web',
      report: { mode: 'build', added: n, requests: 1 + Math.ceil(n / 50), libraryVersion: lib.version },
      status: {
        state: 'complete',
        items: n,
        topLevel: n,
        upToDate: null,
        source: `web:${world.env().ZOTERO_API_URL}/users/1`,
      },
    });

    lib.editItem(keys[7]!, { title: 'Pingo formation in permafrost' });
    const update = await zot(['index', 'update']);
    expect(envelope(update).data.report).toMatchObject({ mode: 'update', changed: 1, added: 0, requests: 3 });

    const found = envelope(await zot(['semantic-search', 'pingo']));
    expect(found.data.hits).toMatchObject([
      { key: keys[7], library: 'users/1', matched: { field: 'title' } },
    ]);
    expect(found.data.libraries).toMatchObject([{ library: 'users/1', backend: 'web', index: 'updated' }]);

    // Without a key, the Web API library cannot be indexed: auth_missing, exit 2.
    const keyless = await runZot(['index', 'status'], { env: world.env({ ZOTERO_API_KEY: undefined }) });
    expect(keyless.code).toBe(2);
    expect(envelope(keyless).error.code).toBe('auth_missing');
  });
});
