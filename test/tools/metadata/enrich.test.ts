/**
 * `zot enrich` / `zotero_enrich` against the Zotero test server and loopback fakes of Crossref
 * and OpenAlex: empty fields filled (DOI by a Crossref search above the stated confidence, a
 * near miss not taken), filled fields never touched; the preview writes nothing and keeps a
 * plan; applying the plan writes exactly it, a re-run changes nothing, and a field filled
 * between preview and apply is left as it is. The CLI runs in process.
 */
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { fakeClock } from '../../support/metadata-services/clock.js';
import {
  crossrefWork,
  openAlexWork,
  startMetadataFakes,
  type MetadataFakes,
} from '../../support/metadata-services/index.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

let w: ItemsWorld;
let meta: MetadataFakes;
let keys: Record<'bare' | 'partly' | 'nodoi' | 'near' | 'full', string>;

const ABSTRACT_JATS =
  '<jats:title>Abstract</jats:title><jats:p>Rising seas <jats:italic>flood</jats:italic> estuaries.</jats:p><jats:p>Defences lag.</jats:p>';

beforeEach(async () => {
  w = await startItemsWorld();
  meta = await startMetadataFakes();
  const lib = w.world.server.library(LIB);
  const author = (lastName: string) => [{ creatorType: 'author', firstName: 'A.', lastName }];
  const [bare, partly, nodoi, near, full] = lib.addItems([
    { itemType: 'journalArticle', title: 'Sea level rise in estuaries', DOI: '10.5555/bare.1' },
    {
      itemType: 'journalArticle',
      title: 'Salt marsh accretion',
      DOI: '10.5555/partly.1',
      pages: '5-9',
      publisher: 'My own note on the publisher',
    },
    {
      itemType: 'journalArticle',
      title: 'Permafrost thaw and river chemistry',
      creators: author('Ødegård'),
      date: '2019-03-01',
    },
    {
      itemType: 'journalArticle',
      title: 'Groundwater recharge in arid basins',
      creators: author('Okafor'),
      date: '2018',
    },
    {
      itemType: 'journalArticle',
      title: 'Complete already',
      DOI: '10.5555/full.1',
      abstractNote: 'Mine.',
      ISSN: '1111-1111',
      pages: '1-2',
      publisher: 'Mine',
    },
  ]) as [string, string, string, string, string];
  keys = { bare, partly, nodoi, near, full };
  meta.addCrossref({
    ...crossrefWork({ doi: '10.5555/bare.1', title: 'Sea level rise in estuaries' }),
    abstract: ABSTRACT_JATS,
    ISSN: ['1234-5678', '8765-4321', '1234-5678'],
    page: '100-110',
    publisher: 'Coastal Press',
  });
  meta.addCrossref({
    ...crossrefWork({ doi: '10.5555/partly.1', title: 'Salt marsh accretion' }),
    abstract: '<jats:p>Marshes keep up.</jats:p>',
    ISSN: ['2222-3333'],
    page: '1-20',
    publisher: 'Marsh Society',
  });
  meta.addCrossref({
    ...crossrefWork({ doi: '10.5555/Found.7', title: 'Permafrost Thaw and River Chemistry' }),
    author: [
      { given: 'Kari', family: 'Odegard', sequence: 'first' },
      { given: 'Li', family: 'Wei', sequence: 'additional' },
    ],
    issued: { 'date-parts': [[2020, 1]] },
    page: '33-41',
    publisher: 'Arctic Union',
  });
  // The near miss: the same author and year, but another (longer) title.
  meta.addCrossref({
    ...crossrefWork({
      doi: '10.5555/other.3',
      title: 'Groundwater recharge and extraction in semi-arid mountain basins of the Sahel',
    }),
    author: [{ given: 'Ngozi', family: 'Okafor', sequence: 'first' }],
    issued: { 'date-parts': [[2018]] },
    page: '9-19',
  });
});
afterEach(async () => {
  await meta.close();
  await w.close();
});

/** `zot …` in process; its sleeps (Crossref's pace, resends) cost nothing. */
async function zot(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end('');
  const code = await runCli({
    argv,
    env: w.env({ ...meta.env(), ...env }),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
    clock: fakeClock(),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  const envelope = JSON.parse(stdout) as { ok: boolean | 'partial'; data: any; error: any; next?: string[] };
  return { code, env: envelope, stderr };
}

const item = (key: string) =>
  w.world.server.library(LIB).items.get(key) as unknown as Record<string, unknown>;
const writes = () =>
  w.world.server.log.filter((e) => e.method === 'POST' || e.method === 'PATCH' || e.method === 'PUT');
const allKeys = () => Object.values(keys);
const searches = () =>
  meta.log.filter((e) => e.service === 'crossref' && /query\.bibliographic=/.test(e.query));

const BARE_CHANGES = [
  {
    field: 'abstractNote',
    from: '',
    to: 'Rising seas flood estuaries.\nDefences lag.',
    source: 'crossref',
    status: 'planned',
  },
  { field: 'ISSN', from: '', to: '1234-5678, 8765-4321', source: 'crossref', status: 'planned' },
  { field: 'pages', from: '', to: '100-110', source: 'crossref', status: 'planned' },
  { field: 'publisher', from: '', to: 'Coastal Press', source: 'crossref', status: 'planned' },
];

describe('zot enrich: the preview', () => {
  it('plans only empty fields, takes a DOI from a search that agrees on title, year and author, and writes nothing', async () => {
    const before = allKeys().map((k) => JSON.stringify(item(k)));
    w.world.server.clearLog();
    const { code, env } = await zot(['enrich', ...allKeys()]);
    expect(code).toBe(0);
    expect(env.ok).toBe(true);
    const d = env.data;
    expect(d).toMatchObject({
      applied: false,
      fields: ['DOI', 'abstractNote', 'ISSN', 'pages', 'publisher'],
      threshold: 0.85,
      checked: 5,
      wanting: 4,
    });
    expect(d.planId).toMatch(/^p_[a-z2-7]{16}$/);
    expect(d.enrichments).toEqual([
      {
        key: keys.bare,
        title: 'Sea level rise in estuaries',
        evidence: { source: 'crossref', via: 'doi', doi: '10.5555/bare.1' },
        changes: BARE_CHANGES,
        status: 'planned',
      },
      {
        // pages and publisher hold something: only the abstract and the ISSN are planned.
        key: keys.partly,
        title: 'Salt marsh accretion',
        evidence: { source: 'crossref', via: 'doi', doi: '10.5555/partly.1' },
        changes: [
          { field: 'abstractNote', from: '', to: 'Marshes keep up.', source: 'crossref', status: 'planned' },
          { field: 'ISSN', from: '', to: '2222-3333', source: 'crossref', status: 'planned' },
        ],
        status: 'planned',
      },
      {
        key: keys.nodoi,
        title: 'Permafrost thaw and river chemistry',
        evidence: {
          source: 'crossref',
          via: 'search',
          doi: '10.5555/Found.7',
          title: 'Permafrost Thaw and River Chemistry',
          year: '2020',
          firstAuthor: 'Odegard',
          similarity: 1,
          yearMatches: true,
          authorMatches: true,
          score: expect.any(Number),
        },
        changes: [
          { field: 'DOI', from: '', to: '10.5555/Found.7', source: 'crossref', status: 'planned' },
          { field: 'pages', from: '', to: '33-41', source: 'crossref', status: 'planned' },
          { field: 'publisher', from: '', to: 'Arctic Union', source: 'crossref', status: 'planned' },
        ],
        status: 'planned',
      },
    ]);
    expect(d.unmatched).toEqual([
      {
        key: keys.near,
        title: 'Groundwater recharge in arid basins',
        empty: ['DOI', 'abstract', 'ISSN', 'pages', 'publisher'],
        why: expect.stringMatching(
          /^Crossref's best match for the title, first author and year is not this item \(title similarity 0\.\d+ < 0\.85 \("Groundwater recharge and extraction/,
        ),
        evidence: expect.objectContaining({
          via: 'search',
          doi: '10.5555/other.3',
          yearMatches: true,
          authorMatches: true,
        }),
      },
    ]);
    expect(d.unmatched[0].evidence.similarity).toBeLessThan(0.85);
    expect(env.next).toEqual([`zot enrich --apply --plan ${d.planId}`]);
    // One list for the two DOIs, one search per item without a DOI; OpenAlex skipped, said.
    expect(meta.count('crossref')).toBe(3);
    expect(searches()).toHaveLength(2);
    expect(searches()[0]?.query).toContain('rows=1');
    expect(meta.count('openalex')).toBe(0);
    expect(d.sources).toEqual([
      { service: 'Crossref', requests: 3 },
      {
        service: 'OpenAlex',
        note: 'OpenAlex was not asked: it needs an API key (set ZOTEUS_OPENALEX_API_KEY).',
      },
    ]);
    expect(writes()).toEqual([]);
    expect(allKeys().map((k) => JSON.stringify(item(k)))).toEqual(before);
  });

  it('does not take a search hit with the same title whose year and first author differ', async () => {
    const [key] = w.world.server.library(LIB).addItems([
      {
        itemType: 'journalArticle',
        title: 'Mangrove carbon stocks',
        creators: [{ creatorType: 'author', firstName: 'R.', lastName: 'Tanaka' }],
        date: '2021',
      },
    ]) as [string];
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/mangrove.old', title: 'Mangrove carbon stocks' }),
      author: [{ given: 'P.', family: 'Silva', sequence: 'first' }],
      issued: { 'date-parts': [[2015]] },
    });
    const { code, env } = await zot(['enrich', key]);
    expect(code).toBe(0);
    expect(env.data.enrichments).toEqual([]);
    expect(env.data.planId).toBeUndefined();
    expect(env.data.unmatched).toEqual([
      expect.objectContaining({
        key,
        why: "Crossref's best match for the title, first author and year is not this item (year 2015, not 2021 (±1); first author Silva, not Tanaka): no DOI taken from it.",
        evidence: expect.objectContaining({ similarity: 1, yearMatches: false, authorMatches: false }),
      }),
    ]);
  });

  it('does not take the DOI of a preprint for an article of the same title, authors and year', async () => {
    const [key] = w.world.server.library(LIB).addItems([
      {
        itemType: 'journalArticle',
        title: 'Seagrass meadows decline',
        creators: [{ creatorType: 'author', firstName: 'M.', lastName: 'Rossi' }],
        date: '2022',
      },
    ]) as [string];
    meta.addCrossref({
      ...crossrefWork({
        doi: '10.1101/2022.02.02.222222',
        title: 'Seagrass meadows decline',
        type: 'posted-content',
      }),
      author: [{ given: 'Maria', family: 'Rossi', sequence: 'first' }],
      issued: { 'date-parts': [[2022]] },
    });
    const { env } = await zot(['enrich', key]);
    expect(env.data.enrichments).toEqual([]);
    expect(env.data.unmatched[0].why).toBe(
      "Crossref's best match is a preprint (10.1101/2022.02.02.222222), not this journalArticle: no DOI taken from it.",
    );
  });

  it('fills only the fields asked for, and refuses an unknown field name offline with the closest', async () => {
    const { env } = await zot(['enrich', keys.bare, '--fields', 'abstract,pages']);
    expect(env.data.fields).toEqual(['abstractNote', 'pages']);
    expect(env.data.enrichments[0].changes.map((c: { field: string }) => c.field)).toEqual([
      'abstractNote',
      'pages',
    ]);
    meta.clearLog();
    const bad = await zot(['enrich', keys.bare, '--fields', 'abstrct']);
    expect(bad.code).toBe(3);
    expect(bad.env.error).toMatchObject({
      code: 'validation_error',
      message: "--fields 'abstrct' is not a field enrichment fills (did you mean 'abstract'?).",
    });
    expect(meta.log).toEqual([]);
  });

  it('is allowed in read-only mode; applying is refused there', async () => {
    const preview = await zot(['enrich', keys.bare], { ZOTEUS_READ_ONLY: 'true' });
    expect(preview.code).toBe(0);
    expect(preview.env.data.enrichments).toHaveLength(1);
    const apply = await zot(['enrich', keys.bare, '--apply'], { ZOTEUS_READ_ONLY: 'true' });
    expect(apply.code).toBe(2);
    expect(apply.env.error.code).toBe('permission_denied');
    expect(item(keys.bare).abstractNote ?? '').toBe('');
  });

  it('asks OpenAlex, with its key, only for what Crossref left empty', async () => {
    const [key] = w.world.server
      .library(LIB)
      .addItems([{ itemType: 'journalArticle', title: 'Kelp forests', DOI: '10.5555/kelp.1' }]) as [string];
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/kelp.1', title: 'Kelp forests' }),
      ISSN: ['3333-4444'],
      page: '7-8',
      publisher: undefined,
    });
    meta.addOpenAlex({
      ...openAlexWork({ doi: '10.5555/kelp.1', title: 'Kelp forests' }),
      abstract_inverted_index: { Kelp: [0], forests: [1], shrink: [2], 'fast.': [3] },
      primary_location: { source: { issn: ['9999-0000'], host_organization_name: 'Ocean House' } },
    });
    meta.clearLog();
    const { code, env } = await zot(['enrich', key], { ZOTEUS_OPENALEX_API_KEY: 'oa-key-123' });
    expect(code).toBe(0);
    expect(env.data.enrichments[0].changes).toEqual([
      {
        field: 'abstractNote',
        from: '',
        to: 'Kelp forests shrink fast.',
        source: 'openalex',
        status: 'planned',
      },
      { field: 'ISSN', from: '', to: '3333-4444', source: 'crossref', status: 'planned' },
      { field: 'pages', from: '', to: '7-8', source: 'crossref', status: 'planned' },
      { field: 'publisher', from: '', to: 'Ocean House', source: 'openalex', status: 'planned' },
    ]);
    expect(meta.count('openalex')).toBe(1);
    expect(env.data.sources).toEqual([
      { service: 'Crossref', requests: 1 },
      { service: 'OpenAlex', requests: 1 },
    ]);
  });
});

describe('zot enrich --apply', () => {
  it('applies exactly the plan, and a re-run changes nothing', async () => {
    const preview = await zot(['enrich', ...allKeys()]);
    const planId = preview.env.data.planId as string;
    meta.clearLog();
    const applied = await zot(['enrich', '--apply', '--plan', planId]);
    expect(applied.code).toBe(0);
    expect(applied.env.data.applied).toBe(true);
    expect(
      applied.env.data.enrichments.map((e: { key: string; status: string }) => [e.key, e.status]),
    ).toEqual([
      [keys.bare, 'applied'],
      [keys.partly, 'applied'],
      [keys.nodoi, 'applied'],
    ]);
    // A plan is applied as it was previewed: no service is asked again.
    expect(meta.log).toEqual([]);
    expect(item(keys.bare)).toMatchObject({
      abstractNote: 'Rising seas flood estuaries.\nDefences lag.',
      ISSN: '1234-5678, 8765-4321',
      pages: '100-110',
      publisher: 'Coastal Press',
    });
    expect(item(keys.partly)).toMatchObject({
      abstractNote: 'Marshes keep up.',
      ISSN: '2222-3333',
      pages: '5-9',
      publisher: 'My own note on the publisher',
    });
    expect(item(keys.nodoi)).toMatchObject({
      DOI: '10.5555/Found.7',
      pages: '33-41',
      publisher: 'Arctic Union',
    });
    expect(item(keys.near).DOI ?? '').toBe('');
    expect(item(keys.full)).toMatchObject({ abstractNote: 'Mine.', publisher: 'Mine' });

    w.world.server.clearLog();
    const again = await zot(['enrich', '--apply', '--plan', planId]);
    expect(again.code).toBe(0);
    expect(again.env.data.enrichments.map((e: { status: string }) => e.status)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    expect(writes()).toEqual([]);
    const fresh = await zot(['enrich', ...allKeys()]);
    expect(fresh.env.data.enrichments).toEqual([]);
    expect(fresh.env.data.planId).toBeUndefined();
    // Still empty where no source has anything: the abstract and ISSN of the one found by search, the near miss.
    expect(fresh.env.data.wanting).toBe(2);
    expect(fresh.env.data.unmatched.map((u: { key: string; empty: string[] }) => [u.key, u.empty])).toEqual([
      [keys.nodoi, ['abstract', 'ISSN']],
      [keys.near, ['DOI', 'abstract', 'ISSN', 'pages', 'publisher']],
    ]);
  });

  it('leaves a field filled since the preview as it is, fills the rest, and an item with every field taken is a conflict (exit 7)', async () => {
    const preview = await zot(['enrich', keys.bare, keys.partly]);
    w.world.server.library(LIB).editItem(keys.bare, { pages: 'e1234' });
    w.world.server.library(LIB).editItem(keys.partly, { abstractNote: 'Typed by hand.', ISSN: '0000-0000' });
    const applied = await zot(['enrich', '--apply', '--plan', preview.env.data.planId as string]);
    expect(applied.code).toBe(7);
    expect(applied.env.ok).toBe('partial');
    expect(applied.env.data.failed).toEqual([
      expect.objectContaining({
        key: keys.partly,
        reason: 'conflict',
        message: `Item ${keys.partly} was edited since the preview: abstractNote, ISSN hold another value now, which enrichment never overwrites; nothing was written to it.`,
      }),
    ]);
    expect(item(keys.partly)).toMatchObject({ abstractNote: 'Typed by hand.', ISSN: '0000-0000' });
    expect(item(keys.bare)).toMatchObject({
      pages: 'e1234',
      abstractNote: 'Rising seas flood estuaries.\nDefences lag.',
      publisher: 'Coastal Press',
    });
    const bare = applied.env.data.enrichments.find((e: { key: string }) => e.key === keys.bare);
    expect(bare.status).toBe('applied');
    expect(
      bare.changes.map((c: { field: string; status: string; now?: string }) => [c.field, c.status, c.now]),
    ).toEqual([
      ['abstractNote', 'applied', undefined],
      ['ISSN', 'applied', undefined],
      ['pages', 'conflict', 'e1234'],
      ['publisher', 'applied', undefined],
    ]);
    expect(applied.env.data.enrichments.find((e: { key: string }) => e.key === keys.partly).status).toBe(
      'conflict',
    );
  });

  it('without a plan looks up and applies in one call', async () => {
    const { code, env } = await zot(['enrich', keys.nodoi, '--apply']);
    expect(code).toBe(0);
    expect(env.data.enrichments[0]).toMatchObject({ key: keys.nodoi, status: 'applied' });
    expect(item(keys.nodoi)).toMatchObject({ DOI: '10.5555/Found.7' });
  });

  it('over MCP previews unless apply: true', async () => {
    const mcp = await mcpOf(w, meta.env());
    try {
      const preview = await mcp.call('zotero_enrich', { item_keys: [keys.bare] });
      expect(preview.isError).toBeFalsy();
      expect(item(keys.bare).abstractNote ?? '').toBe('');
      const planId = (preview.structuredContent as { planId: string }).planId;
      expect(planId).toMatch(/^p_/);
      const applied = await mcp.call('zotero_enrich', { apply: true, plan_id: planId });
      expect(applied.isError).toBeFalsy();
      expect((applied.structuredContent as { applied: boolean }).applied).toBe(true);
      expect(item(keys.bare)).toMatchObject({ pages: '100-110', publisher: 'Coastal Press' });
    } finally {
      await mcp.close();
    }
  });
});

describe('zot enrich: batches', () => {
  it('a Crossref failure fails only the entries it concerns (exit 7); a search answering HTML is api_error naming Crossref', async () => {
    meta.fault('crossref', { ids: ['10.5555/bare.1'], kind: 'status', status: 503 });
    // Searches go one at a time without the polite pool: the first (nodoi's) gets an HTML page.
    meta.fault('crossref', { ids: ['/works'], kind: 'html', times: 1 });
    const { code, env } = await zot(['enrich', keys.bare, keys.nodoi, keys.near, keys.full]);
    expect(code).toBe(7);
    expect(env.ok).toBe('partial');
    expect(
      env.data.failed.map((f: { key: string; reason: string; message: string }) => [
        f.key,
        f.reason,
        f.message,
      ]),
    ).toEqual([
      [keys.bare, 'api_error', 'Crossref failed on its side (HTTP 503).'],
      [keys.nodoi, 'api_error', 'Crossref answered with something that is not its JSON.'],
    ]);
    expect(env.data.enrichments).toEqual([]);
    expect(env.data.unmatched.map((u: { key: string }) => u.key)).toEqual([keys.near]);
    expect(writes()).toEqual([]);
  });

  it('500 items with a DOI cost 10 Crossref list requests and 10 Zotero reads; applying writes in 10 batches', async () => {
    const seeds = Array.from({ length: 500 }, (_, i) => ({
      itemType: 'journalArticle',
      title: `Estuary study ${i}`,
      DOI: `10.5555/many.${i}`,
    }));
    for (let i = 0; i < 500; i++)
      meta.addCrossref({
        ...crossrefWork({ doi: `10.5555/many.${i}`, title: `Estuary study ${i}` }),
        page: `${i}-${i + 9}`,
      });
    const batch = w.world.server.library(LIB).addItems(seeds);
    w.world.server.clearLog();
    meta.clearLog();
    const { code, env } = await zot(['enrich', ...batch, '--fields', 'pages,publisher']);
    expect(code).toBe(0);
    expect(env.data.wanting).toBe(500);
    expect(env.data.totalEnrichments ?? env.data.enrichments.length).toBe(500);
    expect(meta.count('crossref')).toBe(10);
    expect(searches()).toEqual([]);
    expect(w.world.server.log.filter((e) => e.method === 'GET' && /\/items/.test(e.path))).toHaveLength(10);
    expect(JSON.stringify(env).length).toBeLessThan(100_000);
    w.world.server.clearLog();
    const applied = await zot(['enrich', '--apply', '--plan', env.data.planId as string]);
    expect(applied.code).toBe(0);
    expect(w.world.server.log.filter((e) => e.method === 'POST' && /\/items$/.test(e.path))).toHaveLength(10);
    expect(
      batch.every((k, i) => item(k).pages === `${i}-${i + 9}` && item(k).publisher === 'Test Publisher'),
    ).toBe(true);
  });
});

describe('zot enrich: scopes and keys that name no item', () => {
  it('a key that names no item is one failed entry; the others are answered (exit 7)', async () => {
    const { code, env } = await zot(['enrich', keys.bare, 'ZZZZ2345']);
    expect(code).toBe(7);
    expect(env.ok).toBe('partial');
    expect(env.data.failed).toEqual([
      expect.objectContaining({ index: 1, key: 'ZZZZ2345', reason: 'not_found' }),
    ]);
    expect(env.data.enrichments.map((e: { key: string }) => e.key)).toEqual([keys.bare]);
    expect(env.data.checked).toBe(1);
  });

  it('--collection fills the top-level items of that collection only', async () => {
    const lib = w.world.server.library(LIB);
    const [coll] = lib.addCollections([{ name: 'Cold places' }]) as [string];
    lib.editItem(keys.bare, { collections: [coll] });
    lib.editItem(keys.nodoi, { collections: [coll] });
    lib.editItem(keys.full, { collections: [coll] });
    meta.clearLog();
    const { code, env } = await zot(['enrich', '--collection', coll]);
    expect(code).toBe(0);
    expect(env.data).toMatchObject({ checked: 3, wanting: 2 });
    expect(env.data.enrichments.map((e: { key: string }) => e.key).sort()).toEqual(
      [keys.bare, keys.nodoi].sort(),
    );
    // One list for the one DOI, one search for the item without one; nothing of the others.
    expect(meta.log.filter((e) => e.query.includes('filter=doi')).map((e) => e.ids)).toEqual([
      ['10.5555/bare.1'],
    ]);
    expect(searches()).toHaveLength(1);
  });

  it('--all fills every top-level item of the library; applied, a re-run writes nothing', async () => {
    const { code, env } = await zot(['enrich', '--all', '--apply']);
    expect(code).toBe(0);
    expect(env.data).toMatchObject({ applied: true, checked: 5, wanting: 4 });
    // In the library's order (date added, the same for all here), not the keys'.
    expect(
      env.data.enrichments.map((e: { key: string; status: string }) => `${e.key} ${e.status}`).sort(),
    ).toEqual([keys.bare, keys.partly, keys.nodoi].map((k) => `${k} applied`).sort());
    expect(item(keys.nodoi)).toMatchObject({ DOI: '10.5555/Found.7', pages: '33-41' });
    expect(item(keys.full)).toMatchObject({ abstractNote: 'Mine.', publisher: 'Mine' });
    w.world.server.clearLog();
    const again = await zot(['enrich', '--all', '--apply']);
    expect(again.code).toBe(0);
    expect(again.env.data.enrichments).toEqual([]);
    expect(writes()).toEqual([]);
  });
});
