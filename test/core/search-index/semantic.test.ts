/**
 * `zotero_semantic_search` through its declaration (`run` with deps from createDeps, as the
 * surfaces call it): keyword ranking and what matched, vectors from the fake embeddings server
 * (a synonym found, rate limits waited out on a fake clock, a server down said so), several
 * libraries at once, and a library without an index (built now, or in the background).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import type { Deps } from '../../../src/core/tool.js';
import { indexedLibrary, indexStatus } from '../../../src/core/search-index/service.js';
import indexTool from '../../../src/tools/search/zotero-index.js';
import semanticTool from '../../../src/tools/search/semantic-search.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../support/embeddings-server.js';
import { GROUP_ID, SAMPLE_KEYS, startDesktopWorld, type DesktopWorld } from '../library/router-world.js';
import { startWorld, type World } from '../library/world.js';
import { fakeClock, type FakeClock } from '../zotero/helpers.js';

const USER = 'users/1';
const GROUP = 'groups/10';

const K = {
  fusion: 'FVSIN222',
  auto: 'AVTMBLE2',
  glacier: 'GLACIER2',
  glacierNote: 'GLNTE222',
  glacierPdf: 'GLPDF222',
  glacierAnnotation: 'GLANNT22',
  coral: 'CRALREF2',
  trashed: 'TRASHED2',
  groupCoral: 'GCRALBL2',
} as const;

type Output = Awaited<ReturnType<typeof semanticTool.run>>;
type Input = Parameters<typeof semanticTool.run>[0];

let world: World;
const opened: Deps[] = [];

beforeEach(async () => {
  world = await startWorld();
  world.server.library(USER).addItems([
    {
      key: K.fusion,
      title: 'Reciprocal rank fusion outperforms Condorcet and individual rank learning methods',
      abstractNote:
        'Combining the document rankings of several retrieval systems by summing reciprocal ranks.',
      creators: [{ creatorType: 'author', firstName: 'Gordon', lastName: 'Cormack' }],
      date: '2009',
    },
    {
      key: K.auto,
      title: 'Automobile exhaust and urban air quality',
      abstractNote: 'Emissions from traffic in dense streets.',
    },
    { key: K.glacier, title: 'Glacier dynamics of outlet streams', tags: [{ tag: 'glaciology' }] },
    {
      key: K.glacierNote,
      itemType: 'note',
      parentItem: K.glacier,
      note: '<p>Compare the crevasse maps with the 2015 survey.</p>',
    },
    {
      key: K.glacierPdf,
      itemType: 'attachment',
      parentItem: K.glacier,
      linkMode: 'imported_file',
      title: 'Full Text PDF',
      contentType: 'application/pdf',
    },
    {
      key: K.glacierAnnotation,
      itemType: 'annotation',
      parentItem: K.glacierPdf,
      annotationType: 'highlight',
      annotationText: 'meltwater reaches the bed through a moulin',
      annotationComment: 'drainage mechanism',
      annotationSortIndex: '00003|000120|00200',
    },
    { key: K.coral, title: 'Coral reef mapping with drones' },
    { key: K.trashed, title: 'Discarded coral draft', deleted: true },
  ]);
  world.server.library(GROUP).addItems([{ key: K.groupCoral, title: 'Coral bleaching in a warming sea' }]);
});
afterEach(async () => {
  for (const d of opened.splice(0)) await d.services.close();
  await world.close();
});

/** Deps of the Web API world; indexes are built on first search (no background builds). */
function deps(env: Record<string, string | undefined> = {}, clock?: FakeClock): Deps {
  const d = world.deps({ env: { ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0', ...env }, ...(clock ? { clock } : {}) });
  opened.push(d);
  return d;
}

async function search(input: Input, d: Deps = deps()): Promise<Output> {
  const out = await semanticTool.run(semanticTool.input.parse(input), d);
  const parsed = semanticTool.output.safeParse(out);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  return out;
}

async function refusal(promise: Promise<unknown>): Promise<ZoteusError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ZoteusError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('keyword ranking', () => {
  it('a distinctive phrase ranks its item first, matched in the title, words of the query in «»', async () => {
    const d = deps();
    const out = await search({ q: 'reciprocal rank fusion' }, d);
    // hybrid was asked (the default), keywords alone ran: the answer says what ran.
    expect(out.mode).toBe('keyword');
    expect(out.hits[0]).toMatchObject({
      key: K.fusion,
      library: USER,
      itemType: 'journalArticle',
      title: 'Reciprocal rank fusion outperforms Condorcet and individual rank learning methods',
      ranks: { keyword: 1, vector: null },
      matched: { field: 'title', itemKey: K.fusion },
    });
    const snippet = out.hits[0]!.matched!.snippet;
    expect(snippet).toMatch(/«Reciprocal» «rank» «fusion»/);
    // Built for this search (no index yet), from the Web API; embeddings are off, and it says so.
    expect(out.libraries).toEqual([
      {
        library: USER,
        backend: 'web',
        index: 'built',
        items: 4,
        vectors: { used: false, reason: 'ZOTEUS_EMBEDDINGS is off.' },
      },
    ]);
    // A second search brings the index up to date first (the Web API: two listings).
    world.server.clearLog();
    const again = await search({ q: 'reciprocal rank fusion' }, d);
    expect(again.libraries[0]!.index).toBe('updated');
    expect(again.hits).toEqual(out.hits);
    expect(world.server.log.map((e) => e.path)).toEqual([`/${USER}/items`, `/${USER}/deleted`]);
  });

  it('a word only in a child note or an annotation ranks the parent, naming the child', async () => {
    const note = await search({ q: 'crevasse' });
    expect(note.hits).toHaveLength(1);
    expect(note.hits[0]).toMatchObject({
      key: K.glacier,
      title: 'Glacier dynamics of outlet streams',
      matched: { field: 'notes', itemKey: K.glacierNote },
    });
    expect(note.hits[0]!.matched!.snippet).toContain('«crevasse»');

    const annotation = await search({ q: 'moulin drainage' });
    expect(annotation.hits.map((h) => h.key)).toEqual([K.glacier]);
    expect(annotation.hits[0]!.matched).toMatchObject({ field: 'annotations', itemKey: K.glacierAnnotation });
    expect(annotation.hits[0]!.matched!.snippet).toMatch(/«moulin»/);
    expect(annotation.hits[0]!.matched!.snippet).toMatch(/«drainage»/);
  });

  it('the trash is left out; itemType and limit apply', async () => {
    const coral = await search({ q: 'coral' });
    expect(coral.hits.map((h) => h.key)).toEqual([K.coral]);
    expect((await search({ q: 'coral', item_type: 'book' })).hits).toEqual([]);
    const many = await search({ q: 'glacier coral reciprocal automobile', limit: 2 });
    expect(many.hits).toHaveLength(2);
  });

  it('mode "vector" with embeddings off is a validation_error, before any request', async () => {
    const error = await refusal(search({ q: 'anything', mode: 'vector' }));
    expect(error).toMatchObject({ code: 'validation_error', field: 'mode' });
    expect(error.exitCode).toBe(3);
    expect(error.hint).toContain('ZOTEUS_EMBEDDINGS');
    expect(world.server.log).toHaveLength(0);
  });
});

describe('several libraries at once', () => {
  it('searches a user and a group library, each hit labelled by its library', async () => {
    const out = await search({
      q: 'coral',
      libraries: [{}, { library_id: 10, library_type: 'group' }],
    });
    expect(out.hits.map((h) => [h.library, h.key]).sort()).toEqual(
      [
        [GROUP, K.groupCoral],
        [USER, K.coral],
      ].sort(),
    );
    expect(out.libraries.map((l) => [l.library, l.backend, l.index])).toEqual([
      [USER, 'web', 'built'],
      [GROUP, 'web', 'built'],
    ]);
    // The group's items: its two own and the coral one.
    expect(out.libraries[1]!.items).toBe(3);
    // The same library twice is searched once.
    const twice = await search({ q: 'coral', libraries: [{}, { library_id: 1, library_type: 'user' }] });
    expect(twice.libraries.map((l) => l.library)).toEqual([USER]);
  });
});

describe('vectors from an embeddings server', () => {
  let emb: EmbeddingsServer;
  beforeEach(async () => {
    emb = await startEmbeddingsServer({ dimension: 256 });
  });
  afterEach(async () => {
    await emb.close();
  });

  const embeddings = (extra: Record<string, string> = {}) => ({
    ZOTEUS_EMBEDDINGS: 'openai',
    ZOTEUS_EMBEDDINGS_URL: emb.openaiUrl,
    ZOTEUS_EMBEDDINGS_BATCH: '2',
    ...extra,
  });
  /** Top-level items outside the trash that get a vector: not attachments or annotations. */
  const EMBEDDABLE = 4;

  async function buildWithoutVectors(): Promise<void> {
    await indexTool.run({ action: 'build' }, deps());
  }

  it('zot index update embeds the items in ⌈items/batch⌉ requests; a synonym finds what keywords miss', async () => {
    await buildWithoutVectors();
    expect(emb.log).toHaveLength(0);
    const d = deps(embeddings());
    const update = await indexTool.run({ action: 'update' }, d);
    expect(update.report).toMatchObject({
      mode: 'update',
      vectors: { embedded: EMBEDDABLE, model: 'openai:text-embedding-3-small' },
    });
    expect(emb.log).toHaveLength(Math.ceil(EMBEDDABLE / 2));
    expect(emb.log.every((e) => e.status === 200 && e.model === 'text-embedding-3-small')).toBe(true);
    expect(update.status.vectors).toEqual({ count: EMBEDDABLE, model: 'openai:text-embedding-3-small' });
    // Nothing changed: nothing embedded again.
    emb.clearLog();
    const idle = await indexTool.run({ action: 'update' }, d);
    expect(idle.report!.vectors).toEqual({ embedded: 0, model: 'openai:text-embedding-3-small' });
    expect(emb.log).toHaveLength(0);

    // "vehicle" is in no item; the fake server embeds it like "automobile".
    const keyword = await search({ q: 'vehicle', mode: 'keyword' }, d);
    expect(keyword.hits).toEqual([]);
    expect(keyword.libraries[0]!.vectors).toEqual({ used: false, reason: 'Keyword ranking was asked for.' });

    emb.clearLog();
    const hybrid = await search({ q: 'vehicle' }, d);
    expect(hybrid.hits[0]).toMatchObject({
      key: K.auto,
      ranks: { keyword: null, vector: 1 },
      matched: null,
    });
    expect(hybrid.libraries[0]!.vectors).toEqual({ used: true, model: 'openai:text-embedding-3-small' });
    // One request: the query's vector.
    expect(emb.log.map((e) => e.inputs)).toEqual([['vehicle']]);

    const vector = await search({ q: 'automobiles', mode: 'vector' }, d);
    expect(vector.hits[0]).toMatchObject({ key: K.auto, ranks: { keyword: null, vector: 1 } });

    // Both rankings: the item holding the words and sharing the meaning comes first.
    const both = await search({ q: 'automobile exhaust' }, d);
    expect(both.hits[0]).toMatchObject({ key: K.auto, ranks: { keyword: 1, vector: 1 } });
  });

  it('a 429 with Retry-After while embedding is waited out (on the clock, not for real) and the index completes', async () => {
    await buildWithoutVectors();
    emb.faults.rateLimit({ retryAfter: 7 });
    const clock = fakeClock();
    const out = await indexTool.run({ action: 'update' }, deps(embeddings(), clock));
    expect(out.report!.vectors).toEqual({ embedded: EMBEDDABLE, model: 'openai:text-embedding-3-small' });
    expect(out.status.vectors).toEqual({ count: EMBEDDABLE, model: 'openai:text-embedding-3-small' });
    // The refused batch, sent again, then the rest.
    expect(emb.log.map((e) => e.status)).toEqual([
      429,
      ...Array<number>(Math.ceil(EMBEDDABLE / 2)).fill(200),
    ]);
    expect(emb.log[0]!.inputs).toEqual(emb.log[1]!.inputs);
    expect(clock.sleeps).toContain(7000);
  });

  it('the embeddings server down: keyword hits still come back, and the answer says vectors were not used and why', async () => {
    // Indexed with vectors, then the server goes away.
    await indexTool.run({ action: 'build' }, deps(embeddings()));
    const down = embeddings({ ZOTEUS_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1' });
    const out = await search({ q: 'coral reef' }, deps(down));
    expect(out.hits.map((h) => h.key)).toEqual([K.coral]);
    expect(out.hits[0]!.ranks).toEqual({ keyword: 1, vector: null });
    expect(out.libraries[0]!.vectors.used).toBe(false);
    expect(out.libraries[0]!.vectors.reason).toMatch(/^The embeddings server failed: Could not reach/);
    expect(out.libraries[0]!.vectors.reason).toContain('127.0.0.1:9');

    // mode "vector" cannot answer at all: an error that says why.
    const error = await refusal(search({ q: 'coral reef', mode: 'vector' }, deps(down)));
    expect(error.code).toBe('api_error');
    expect(error.message).toContain('Could not reach');
  });

  it('the embeddings server down while the library is first indexed: keyword hits, and why there are no vectors', async () => {
    const out = await search(
      { q: 'coral reef' },
      deps(embeddings({ ZOTEUS_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1' })),
    );
    expect(out.libraries[0]!.index).toBe('built');
    expect(out.hits.map((h) => h.key)).toEqual([K.coral]);
    expect(out.libraries[0]!.vectors).toMatchObject({ used: false, model: 'openai:text-embedding-3-small' });
    expect(out.libraries[0]!.vectors.reason).toMatch(/^Embedding the library failed: Could not reach/);
    // The items are indexed; the vectors come with the next update that reaches the server.
    const lib = await indexedLibrary(deps(), {});
    expect(await indexStatus(lib)).toMatchObject({ state: 'complete', vectors: null, topLevel: 4 });
    const later = await indexTool.run({ action: 'update' }, deps(embeddings()));
    expect(later.report!.vectors).toEqual({ embedded: EMBEDDABLE, model: 'openai:text-embedding-3-small' });
  });
});

describe('a zotero.sqlite library without an index', () => {
  let desk: DesktopWorld;
  const desks: Deps[] = [];
  afterEach(async () => {
    for (const d of desks.splice(0)) await d.services.close();
    await desk?.close();
  });

  function deskDeps(env: Record<string, string> = {}): Deps {
    const d = desk.deps({ env });
    desks.push(d);
    return d;
  }

  /** Waits (bounded) until no build of the library's index runs and it is complete. */
  async function settled(d: Deps, args: { library_id?: number; library_type?: 'user' | 'group' }) {
    const lib = await indexedLibrary(d, args);
    for (let i = 0; i < 300; i++) {
      const status = await indexStatus(lib);
      if (!status.building && status.state === 'complete') return status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the background build of ${lib.library} did not finish`);
  }

  it('a small library is indexed now, with no request', async () => {
    desk = await startDesktopWorld();
    const out = await search({ q: 'Greenland mass balance' }, deskDeps());
    expect(out.libraries).toMatchObject([
      { library: `users/${SAMPLE_KEYS.user.userID}`, backend: 'sqlite', index: 'built' },
    ]);
    expect(out.hits[0]!.key).toBe(SAMPLE_KEYS.user.items.greenlandArticle);
    expect(desk.server.log).toHaveLength(0);
    // Then used as it is while zotero.sqlite is unchanged.
    const again = await search({ q: 'Greenland mass balance' }, deskDeps());
    expect(again.libraries[0]!.index).toBe('ready');
    expect(again.hits).toEqual(out.hits);
  });

  it('a library of ZOTEUS_INDEX_AUTO_MIN_ITEMS items or more is indexed in the background: a retryable not_found, then hits', async () => {
    desk = await startDesktopWorld();
    const d = deskDeps({ ZOTEUS_INDEX_AUTO_MIN_ITEMS: '1' });
    const error = await refusal(search({ q: 'Greenland mass balance' }, d));
    expect(error).toMatchObject({ code: 'not_found', retryable: true });
    expect(error.message).toContain('being indexed in the background');
    expect(error.exitCode).toBe(4);

    const status = await settled(d, {});
    expect(status.source).toMatch(/^sqlite:/);
    const out = await search({ q: 'Greenland mass balance' }, deskDeps({ ZOTEUS_INDEX_AUTO_MIN_ITEMS: '1' }));
    expect(out.libraries[0]!.index).toBe('ready');
    expect(out.hits[0]!.key).toBe(SAMPLE_KEYS.user.items.greenlandArticle);
  }, 60_000);

  it('one library indexed now, one in the background: hits of the first, a notice for the second', async () => {
    desk = await startDesktopWorld();
    const probe = deskDeps();
    const group = { library_id: GROUP_ID, library_type: 'group' as const };
    const userSize = await (await indexedLibrary(probe, {})).feed.size!();
    const groupSize = await (await indexedLibrary(probe, group)).feed.size!();
    expect(groupSize).toBeLessThan(userSize);
    // The group is below the threshold, the user library is not.
    const d = deskDeps({ ZOTEUS_INDEX_AUTO_MIN_ITEMS: String(groupSize + 1) });
    const out = await search({ q: 'coral reef survey great barrier', libraries: [{}, group] }, d);
    const user = `users/${SAMPLE_KEYS.user.userID}`;
    expect(out.libraries.map((l) => [l.library, l.index])).toEqual([
      [user, 'building'],
      [`groups/${GROUP_ID}`, 'built'],
    ]);
    expect(out.libraries[0]).toMatchObject({ items: 0, vectors: { used: false } });
    expect(out.libraries[0]!.message).toContain('being built in the background');
    expect(out.hits.length).toBeGreaterThan(0);
    expect(out.hits.every((h) => h.library === `groups/${GROUP_ID}`)).toBe(true);
    expect(out.hits[0]!.key).toBe(SAMPLE_KEYS.group.items.coralReport);
    await settled(d, {});
  }, 60_000);
});
