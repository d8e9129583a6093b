/** `zotero_import` / `zot add` against the Zotero test server and local resolver fakes. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../../src/core/tool.js';
import importTool from '../../../src/tools/items/import.js';
import { crossrefWork } from '../../support/resolvers/index.js';
import { envelope, LIB, mcpOf, progressLines, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await w.close();
});

const doi = (i: number) => `10.5555/batch.${String(i).padStart(3, '0')}`;
const register = (i: number) =>
  w.fakes.addCrossref(crossrefWork({ doi: doi(i), title: `Batch paper ${i}`, container: 'J' }));
const items = () => [...w.world.server.library(LIB).items.values()];

describe('zot add --doi / --arxiv', () => {
  it('adds by DOI, then reports the existing key instead of a second copy', async () => {
    w.fakes.addCrossref(
      crossrefWork({ doi: '10.1000/one', title: 'One paper', container: 'Nature', year: 2013 }),
    );
    const first = await w.zot(['add', '--doi', 'https://doi.org/10.1000/one']);
    expect(first.code).toBe(0);
    const env = envelope(first);
    expect(env.ok).toBe(true);
    const succeeded = env.data.succeeded as Array<{
      entry: string;
      key: string;
      title: string;
      itemType: string;
    }>;
    expect(succeeded).toEqual([
      {
        entry: 'https://doi.org/10.1000/one',
        key: expect.stringMatching(/^[A-Z0-9]{8}$/),
        itemType: 'journalArticle',
        title: 'One paper',
      },
    ]);
    expect(env.data).toMatchObject({ unchanged: [], failed: [], total: 1, sync_required: true });
    expect(first.stderr).toContain('SYNC_REMINDER');
    expect(env.next).toEqual([
      `zot tag add <tag> ${succeeded[0]!.key}`,
      `zot note add ${succeeded[0]!.key} <text>`,
    ]);
    const stored = w.world.server.library(LIB).items.get(succeeded[0]!.key);
    expect(stored).toMatchObject({
      itemType: 'journalArticle',
      DOI: '10.1000/one',
      publicationTitle: 'Nature',
      date: '2013',
    });

    w.world.server.clearLog();
    w.fakes.clearLog();
    const again = await w.zot(['add', '--doi', '10.1000/ONE']);
    expect(again.code).toBe(0);
    expect(envelope(again).data).toMatchObject({
      succeeded: [],
      unchanged: [{ entry: '10.1000/ONE', key: succeeded[0]!.key, reason: 'duplicate' }],
      failed: [],
    });
    expect(w.requests().filter((r) => r.startsWith('POST'))).toEqual([]);
    expect(w.fakes.log).toEqual([]);
    expect(items()).toHaveLength(1);

    const copy = await w.zot(['add', '--doi', '10.1000/one', '--allow-duplicates']);
    expect(envelope(copy).data.succeeded).toHaveLength(1);
    expect(items()).toHaveLength(2);
  });

  it('adds by arXiv id as a preprint, and knows it again by its arXiv DOI', async () => {
    w.fakes.addArxiv({
      id: '2101.00001v2',
      title: 'A preprint',
      authors: ['Grace Hopper'],
      published: '2021-01-01T00:00:00Z',
    });
    const r = await w.zot(['add', '--arxiv', 'arXiv:2101.00001']);
    expect(r.code).toBe(0);
    const key = (envelope(r).data.succeeded as Array<{ key: string }>)[0]!.key;
    expect(w.world.server.library(LIB).items.get(key)).toMatchObject({
      itemType: 'preprint',
      archiveID: 'arXiv:2101.00001',
      repository: 'arXiv',
      DOI: '10.48550/arXiv.2101.00001',
    });
    const byDoi = await w.zot(['add', '--doi', '10.48550/arXiv.2101.00001']);
    expect(envelope(byDoi).data.unchanged).toEqual([
      { entry: '10.48550/arXiv.2101.00001', key, reason: 'duplicate' },
    ]);
  });

  it('an unknown DOI is not_found (exit 4) with its own message; a malformed one is refused offline', async () => {
    const r = await w.zot(['add', '--doi', '10.1000/missing']);
    expect(r.code).toBe(4);
    expect(envelope(r).error.message).toContain('10.1000/missing is not registered at Crossref or DataCite');
    expect(w.requests().filter((x) => x.startsWith('POST'))).toEqual([]);
    const bad = await w.zot(['add', '--doi', 'not-a-doi']);
    expect(bad.code).toBe(3);
    const two = await w.zot(['add', '--doi', '10.1/a', '--arxiv', '2101.00001']);
    expect(two.code).toBe(3);
    expect(envelope(two).error.message).toContain('exactly one of');
  });

  it('--dry-run: the planned source, offline, without credentials', async () => {
    const r = await w.zot(['add', '--doi', '10.1/x', '--dry-run'], { ZOTERO_API_KEY: undefined });
    expect(r.code).toBe(0);
    expect(envelope(r)).toMatchObject({
      ok: true,
      dry_run: true,
      data: { would: { command: 'add', source: 'doi', doi: '10.1/x' } },
    });
    expect(w.world.server.log).toHaveLength(0);
    expect(w.fakes.log).toHaveLength(0);
  });
});

describe('batch add from a file', () => {
  it('120 identifiers, 5 failing: partial envelope, progress events, idempotent retry of only the 5', async () => {
    const failing = new Set([7, 33, 64, 90, 119]);
    for (let i = 0; i < 120; i++) if (!failing.has(i)) register(i);
    // Two of the failures are a resolver that keeps failing (retryable), three are unknown DOIs.
    w.fakes.fail('crossref', doi(33), { status: 503, retryAfter: 0 });
    w.fakes.fail('crossref', doi(90), { status: 503, retryAfter: 0 });
    const file = join(w.world.box.dir, 'dois.txt');
    writeFileSync(file, `# reading list\n${Array.from({ length: 120 }, (_, i) => doi(i)).join('\n')}\n`);

    const first = await w.zot(
      ['add', '--from-file', file, '--idempotency-key', 'ingest-1', '--tag', 'batch'],
      {},
      undefined,
    );
    expect(first.code).toBe(7);
    const env = envelope(first);
    expect(env.ok).toBe('partial');
    expect(env.meta).toMatchObject({ total: 120, sync_required: true });
    expect(env.data.succeeded).toHaveLength(115);
    const failed = env.data.failed as Array<{ entry: string; error: { code: string; retryable: boolean } }>;
    expect(failed.map((f) => [f.entry, f.error.code, f.error.retryable])).toEqual([
      [doi(7), 'not_found', false],
      [doi(33), 'api_error', true],
      [doi(64), 'not_found', false],
      [doi(90), 'api_error', true],
      [doi(119), 'not_found', false],
    ]);
    // Progress on stderr: start and complete always, in NDJSON, with the request id.
    const events = progressLines(first.stderr);
    expect(events[0]).toMatchObject({ event: 'start', phase: 'batch_add', total: 120, done: 0 });
    expect(events.at(-1)).toMatchObject({
      event: 'complete',
      phase: 'batch_add',
      done: 120,
      total: 120,
      succeeded: 115,
      failed: 5,
    });
    expect(events.every((e) => e.request_id === env.meta.request_id)).toBe(true);
    // Zotero requests: key check, schema, one size probe of an empty library, three batch POSTs.
    expect(w.requests()).toEqual([
      'GET /keys/current',
      'GET /schema',
      `GET /${LIB}/items/top`,
      `POST /${LIB}/items`,
      `POST /${LIB}/items`,
      `POST /${LIB}/items`,
    ]);
    expect(items()).toHaveLength(115);
    expect(items().every((i) => i.tags.some((t) => t.tag === 'batch'))).toBe(true);

    // The resolvers recover; the same command with the same key retries only the five.
    w.fakes.clearFaults();
    for (const i of failing) register(i);
    w.fakes.clearLog();
    w.world.server.clearLog();
    const second = await w.zot([
      'add',
      '--from-file',
      file,
      '--idempotency-key',
      'ingest-1',
      '--tag',
      'batch',
    ]);
    expect(second.code).toBe(0);
    const merged = envelope(second);
    expect(merged.ok).toBe(true);
    expect(merged.data.succeeded).toHaveLength(120);
    expect(merged.data.failed).toEqual([]);
    expect(new Set(w.fakes.log.flatMap((e) => e.ids))).toEqual(new Set([...failing].map(doi)));
    const posts = w.world.server.log.filter((e) => e.method === 'POST');
    expect(posts.map((e) => (e.body as unknown[]).length)).toEqual([5]);
    // Key check and schema answer from the disk caches; the 115 items are read in 2 pages.
    expect(w.requests()).toEqual([
      `GET /${LIB}/items/top`,
      `GET /${LIB}/items/top`,
      `GET /${LIB}/items/top`,
      // The retry's five keys are read first: an earlier attempt may have created them.
      `GET /${LIB}/items`,
      `POST /${LIB}/items`,
    ]);
    expect(items()).toHaveLength(120);
    expect(new Set(items().map((i) => i.DOI)).size).toBe(120);

    // A third run replays the stored envelope without touching anything.
    w.world.server.clearLog();
    const third = await w.zot([
      'add',
      '--from-file',
      file,
      '--idempotency-key',
      'ingest-1',
      '--tag',
      'batch',
    ]);
    expect(third.stdout).toBe(second.stdout);
    expect(w.world.server.log).toHaveLength(0);
  });

  it('in process: progress after each batch of 50; duplicates and repeats are unchanged, not failures', async () => {
    for (let i = 0; i < 60; i++) register(i);
    const existing = w.world.server.library(LIB).addItems([{ title: 'Old', DOI: doi(3) }])[0];
    const events: ProgressEvent[] = [];
    const text = [...Array.from({ length: 60 }, (_, i) => doi(i)), doi(5), 'garbage'].join('\n');
    const out = await importTool.run({ records: text }, w.deps({ progress: events }));
    expect(out.total).toBe(62);
    expect(out.succeeded).toHaveLength(59);
    expect(out.unchanged).toEqual([
      { entry: doi(3), key: existing, reason: 'duplicate' },
      { entry: doi(5), key: out.succeeded.find((s) => s.entry === doi(5))?.key, reason: 'repeated' },
    ]);
    expect(out.failed).toEqual([
      { entry: 'garbage', error: expect.objectContaining({ code: 'validation_error', retryable: false }) },
    ]);
    expect(events.map((e) => `${e.event}:${e.done}`)).toEqual([
      'start:0',
      'progress:52',
      'progress:61',
      'complete:62',
    ]);
  });

  it('duplicate check: a page per 100 items when that is cheaper, a search per identifier otherwise', async () => {
    const lib = w.world.server.library(LIB);
    lib.addItems(Array.from({ length: 250 }, (_, i) => ({ title: `Filler ${i}` })));
    const known = lib.addItems([{ title: 'Known', DOI: '10.1/known' }])[0];
    w.fakes.addCrossref(crossrefWork({ doi: '10.1/new', title: 'New' }));
    // One identifier, 3 pages: a search is cheaper.
    const one = await importTool.run({ doi: '10.1/known' }, w.deps());
    expect(one.unchanged).toEqual([{ entry: '10.1/known', key: known, reason: 'duplicate' }]);
    expect(w.work()).toEqual([`GET /${LIB}/items/top`, `GET /${LIB}/items`]);
    expect(w.world.server.log.at(-1)?.query).toMatchObject({ q: '10.1/known', qmode: 'everything' });
    // Four identifiers, 3 pages: reading the library is cheaper.
    w.world.server.clearLog();
    const four = await importTool.run(
      { identifiers: ['10.1/known', '10.1/new', '10.1/x1', '10.1/x2'] },
      w.deps(),
    );
    expect(four.unchanged.map((u) => u.key)).toEqual([known]);
    const reads = w.work().filter((r) => r.startsWith('GET'));
    expect(reads).toEqual([
      `GET /${LIB}/items/top`,
      `GET /${LIB}/items/top`,
      `GET /${LIB}/items/top`,
      `GET /${LIB}/items/top`,
    ]);
  });

  it('BibTeX, RIS and CSL-JSON records use their own metadata; a collection and tags apply to all', async () => {
    const [coll] = w.world.server.library(LIB).addCollections([{ name: 'Reading' }]);
    const bib =
      '@article{k1, title={Bib Paper}, author={Doe, Jane}, journal={J}, year={2001}, doi={10.7/bib}}';
    const out = await importTool.run({ records: bib, collection_key: coll, tags: ['imported'] }, w.deps());
    expect(out.succeeded).toEqual([expect.objectContaining({ entry: '10.7/bib', title: 'Bib Paper' })]);
    expect(w.fakes.log).toEqual([]);
    const ris = 'TY  - BOOK\nTI  - Ris Book\nAU  - Roe, Rick\nPY  - 1999\nER  - \n';
    const csl = JSON.stringify([
      {
        id: 'x',
        type: 'thesis',
        title: 'Csl Thesis',
        publisher: 'MIT',
        author: [{ family: 'Poe', given: 'E.' }],
      },
    ]);
    await importTool.run({ records: ris, collection_key: coll }, w.deps());
    await importTool.run({ records: csl, format: 'csljson' }, w.deps());
    const byTitle = new Map(items().map((i) => [i.title, i]));
    expect(byTitle.get('Bib Paper')).toMatchObject({
      itemType: 'journalArticle',
      collections: [coll],
      tags: [{ tag: 'imported' }],
      DOI: '10.7/bib',
    });
    expect(byTitle.get('Ris Book')).toMatchObject({ itemType: 'book', collections: [coll] });
    expect(byTitle.get('Csl Thesis')).toMatchObject({ itemType: 'thesis', university: 'MIT' });
  });

  it('a collection that does not exist is not_found before anything is resolved or written', async () => {
    const error = await importTool
      .run({ doi: '10.1/x', collection_key: 'ZZZZ2345' }, w.deps())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'not_found', field: 'collection_key' });
    expect(w.fakes.log).toEqual([]);
    expect(w.requests().some((r) => r.startsWith('POST'))).toBe(false);
  });
});

describe('zotero_import over MCP', () => {
  it('imports a list of identifiers; a partial result is not an error', async () => {
    register(1);
    const mcp = await mcpOf(w);
    try {
      const r = await mcp.call('zotero_import', { identifiers: [doi(1), '10.1/unknown'] });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect((r.content[0] as { text: string }).text).toMatch(/^Partial result: 1 landed, 1 failed/);
      expect(r.structuredContent).toMatchObject({
        succeeded: [{ entry: doi(1) }],
        failed: [{ entry: '10.1/unknown' }],
      });
      const none = await mcp.call('zotero_import', { identifiers: ['10.1/nope1', '10.1/nope2'] });
      expect(none.isError).toBe(true);
      expect(none._meta?.['zoteus/error']).toMatchObject({
        code: 'not_found',
        failed: [{ entry: '10.1/nope1' }, { entry: '10.1/nope2' }],
      });
    } finally {
      await mcp.close();
    }
  });
});
