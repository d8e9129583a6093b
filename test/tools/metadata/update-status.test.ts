/**
 * `zot update-status` / `zotero_update_status` against the Zotero test server and loopback
 * fakes of Crossref, arXiv and OpenAlex: a preprint with a published version (applied exactly),
 * an arXiv preprint whose published title differs too much (not applied), early access still
 * without an issue and early access now in one, a plain article left alone; the preview writes
 * nothing and keeps a plan; applying the plan writes it, a re-run changes nothing, and an item
 * edited between preview and apply is a conflict, untouched. The CLI runs in process.
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
let keys: Record<'bio' | 'arxiv' | 'early' | 'issued' | 'plain', string>;

const BIO_DOI = '10.1101/2020.01.01.111111';
const PUBLISHED = {
  ...crossrefWork({ doi: '10.5555/pub.1', title: 'Sea Level Rise and Coastal Flooding in Estuaries' }),
  'container-title': ['Journal of Coasts'],
  volume: '12',
  issue: '3',
  page: '100-110',
  issued: { 'date-parts': [[2021, 5, 4]] },
};

beforeEach(async () => {
  w = await startItemsWorld();
  meta = await startMetadataFakes();
  const lib = w.world.server.library(LIB);
  const [bio, arxiv, early, issued, plain] = lib.addItems([
    {
      itemType: 'preprint',
      title: 'Sea level rise and coastal flooding in estuaries',
      DOI: BIO_DOI,
      repository: 'bioRxiv',
      url: 'https://www.biorxiv.org/content/10.1101/2020.01.01.111111v1',
      date: '2020-01-01',
    },
    {
      itemType: 'preprint',
      title: 'Deep learning for glacier mapping',
      archiveID: 'arXiv:2101.00001',
      url: 'https://arxiv.org/abs/2101.00001',
    },
    { itemType: 'journalArticle', title: 'Soil carbon in the tundra', DOI: '10.5555/ea.1' },
    { itemType: 'journalArticle', title: 'Wetland methane budgets', DOI: '10.5555/ea.2', pages: '' },
    { itemType: 'journalArticle', title: 'Plain', DOI: '10.5555/plain', volume: '3', pages: '1-2' },
  ]) as [string, string, string, string, string];
  keys = { bio, arxiv, early, issued, plain };
  meta.addCrossref({
    ...crossrefWork({
      doi: BIO_DOI,
      title: 'Sea level rise and coastal flooding in estuaries',
      type: 'posted-content',
      relation: { 'is-preprint-of': [{ 'id-type': 'doi', id: '10.5555/pub.1', 'asserted-by': 'subject' }] },
    }),
    subtype: 'preprint',
  });
  meta.addCrossref(PUBLISHED);
  meta.addArxiv({ id: '2101.00001v2', title: 'Deep learning for glacier mapping', doi: '10.5555/pub.2' });
  meta.addCrossref(crossrefWork({ doi: '10.5555/pub.2', title: 'A survey of remote sensing of ice sheets' }));
  meta.addCrossref(crossrefWork({ doi: '10.5555/ea.1', title: 'Soil carbon in the tundra' }));
  meta.addCrossref({
    ...crossrefWork({ doi: '10.5555/ea.2', title: 'Wetland methane budgets' }),
    volume: '7',
    issue: '2',
    page: '55-70',
  });
});
afterEach(async () => {
  await meta.close();
  await w.close();
});

/** `zot …` in process; its sleeps (the services' pace, Retry-After) cost nothing. */
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

describe('zot update-status: the preview', () => {
  it('finds the published version of the bioRxiv preprint and the issue of the early-access article, writes nothing', async () => {
    const before = allKeys().map((k) => JSON.stringify(item(k)));
    w.world.server.clearLog();
    const { code, env } = await zot(['update-status', ...allKeys()]);
    expect(code).toBe(0);
    expect(env.ok).toBe(true);
    const d = env.data;
    expect(d.applied).toBe(false);
    expect(d.planId).toMatch(/^p_[a-z2-7]{16}$/);
    expect(d.threshold).toBe(0.85);
    expect(d.checked).toBe(5);
    expect(d.candidates).toBe(4);
    expect(d.updates).toEqual([
      {
        key: keys.bio,
        title: 'Sea level rise and coastal flooding in estuaries',
        reason: 'preprint_type',
        server: 'bioRxiv/medRxiv',
        evidence: {
          source: 'crossref',
          relation: 'is-preprint-of',
          doi: '10.5555/pub.1',
          title: 'Sea Level Rise and Coastal Flooding in Estuaries',
          venue: 'Journal of Coasts',
          year: '2021',
          similarity: 1,
        },
        changes: [
          { field: 'itemType', from: 'preprint', to: 'journalArticle' },
          { field: 'publicationTitle', from: '', to: 'Journal of Coasts' },
          { field: 'volume', from: '', to: '12' },
          { field: 'issue', from: '', to: '3' },
          { field: 'pages', from: '', to: '100-110' },
          { field: 'date', from: '2020-01-01', to: '2021-05-04' },
          { field: 'DOI', from: BIO_DOI, to: '10.5555/pub.1' },
          {
            field: 'url',
            from: 'https://www.biorxiv.org/content/10.1101/2020.01.01.111111v1',
            to: 'https://doi.org/10.5555/pub.1',
          },
          // The preprint DOI the published one replaces, kept where Zotero has room for it.
          { field: 'extra', from: '', to: `Preprint DOI: ${BIO_DOI}` },
        ],
        dropped: [{ field: 'repository', from: 'bioRxiv', to: '' }],
        status: 'planned',
      },
      {
        key: keys.issued,
        title: 'Wetland methane budgets',
        reason: 'early_access',
        evidence: {
          source: 'crossref',
          relation: 'same-doi',
          doi: '10.5555/ea.2',
          title: 'Wetland methane budgets',
          venue: 'Journal of Tests',
          year: '2020',
          similarity: 1,
        },
        changes: [
          { field: 'publicationTitle', from: '', to: 'Journal of Tests' },
          { field: 'volume', from: '', to: '7' },
          { field: 'issue', from: '', to: '2' },
          { field: 'pages', from: '', to: '55-70' },
        ],
        dropped: [],
        status: 'planned',
      },
    ]);
    expect(d.unmatched).toEqual([
      {
        key: keys.arxiv,
        title: 'Deep learning for glacier mapping',
        reason: 'preprint_type',
        why: expect.stringMatching(/^The published title is too different \(similarity 0\.\d+ < 0\.85\)/),
        evidence: expect.objectContaining({ source: 'arxiv', relation: 'arxiv-doi', doi: '10.5555/pub.2' }),
      },
      {
        key: keys.early,
        title: 'Soil carbon in the tundra',
        reason: 'early_access',
        why: 'Still in early access at Crossref: no volume, issue or pages yet.',
      },
    ]);
    expect(env.next).toEqual([`zot update-status --apply --plan ${d.planId}`]);
    // Batched: the own DOIs in one Crossref list, the published ones in another; arXiv once.
    expect(meta.count('crossref')).toBe(2);
    expect(meta.count('arxiv')).toBe(1);
    expect(d.sources).toEqual([
      { service: 'Crossref', requests: 2 },
      { service: 'arXiv', requests: 1 },
      {
        service: 'OpenAlex',
        note: 'OpenAlex was not asked: it needs an API key (set ZOTEUS_OPENALEX_API_KEY).',
      },
    ]);
    expect(writes()).toEqual([]);
    expect(allKeys().map((k) => JSON.stringify(item(k)))).toEqual(before);
  });

  it('is allowed in read-only mode and needs no confirmation; applying is refused there', async () => {
    const preview = await zot(['update-status', keys.bio], { ZOTEUS_READ_ONLY: 'true' });
    expect(preview.code).toBe(0);
    expect(preview.env.data.updates).toHaveLength(1);
    const apply = await zot(['update-status', keys.bio, '--apply', '--yes'], { ZOTEUS_READ_ONLY: 'true' });
    expect(apply.env.error).toMatchObject({ code: 'permission_denied' });
    expect(apply.code).toBe(2);
    expect(item(keys.bio).itemType).toBe('preprint');
  });

  it('refuses a plan without apply, and a plan with a scope, offline', async () => {
    const a = await zot(['update-status', '--plan', 'p_aaaaaaaaaaaaaaaa']);
    expect(a.env.error).toMatchObject({
      code: 'validation_error',
      message: 'A plan id is for applying: give apply with it.',
    });
    const b = await zot(['update-status', keys.bio, '--apply', '--plan', 'p_aaaaaaaaaaaaaaaa', '--yes']);
    expect(b.env.error.code).toBe('validation_error');
    expect(w.world.server.log.filter((e) => e.path !== '/keys/current')).toEqual([]);
  });
});

describe('zot update-status --apply', () => {
  it('applies exactly the plan, keeps nothing else, and a re-run changes nothing', async () => {
    const preview = await zot(['update-status', ...allKeys()]);
    const planId = preview.env.data.planId as string;
    meta.clearLog();
    const applied = await zot(['update-status', '--apply', '--plan', planId, '--yes']);
    expect(applied.code).toBe(0);
    expect(applied.env.data.applied).toBe(true);
    expect(applied.env.data.updates.map((u: { key: string; status: string }) => [u.key, u.status])).toEqual([
      [keys.bio, 'applied'],
      [keys.issued, 'applied'],
    ]);
    // A plan is applied as it was previewed: no service is asked again.
    expect(meta.log).toEqual([]);
    expect(item(keys.bio)).toMatchObject({
      itemType: 'journalArticle',
      title: 'Sea level rise and coastal flooding in estuaries',
      publicationTitle: 'Journal of Coasts',
      volume: '12',
      issue: '3',
      pages: '100-110',
      date: '2021-05-04',
      DOI: '10.5555/pub.1',
      url: 'https://doi.org/10.5555/pub.1',
      extra: `Preprint DOI: ${BIO_DOI}`,
    });
    // The change of type dropped what a journal article has no place for.
    expect(item(keys.bio).repository).toBeUndefined();
    expect(item(keys.issued)).toMatchObject({ volume: '7', issue: '2', pages: '55-70' });
    expect(item(keys.arxiv).itemType).toBe('preprint');

    w.world.server.clearLog();
    const again = await zot(['update-status', '--apply', '--plan', planId, '--yes']);
    expect(again.code).toBe(0);
    expect(again.env.data.updates.map((u: { status: string }) => u.status)).toEqual([
      'unchanged',
      'unchanged',
    ]);
    expect(writes()).toEqual([]);
    const fresh = await zot(['update-status', ...allKeys()]);
    expect(fresh.env.data.updates).toEqual([]);
    expect(fresh.env.data.planId).toBeUndefined();
  });

  it('leaves an item edited since the preview untouched, as a conflict, and applies the rest (exit 7)', async () => {
    const preview = await zot(['update-status', keys.bio, keys.issued]);
    w.world.server.library(LIB).editItem(keys.bio, { volume: '99' });
    const applied = await zot([
      'update-status',
      '--apply',
      '--plan',
      preview.env.data.planId as string,
      '--yes',
    ]);
    expect(applied.code).toBe(7);
    expect(applied.env.ok).toBe('partial');
    expect(applied.env.data.failed).toEqual([
      expect.objectContaining({
        key: keys.bio,
        reason: 'conflict',
        message: expect.stringMatching(new RegExp(`^Item ${keys.bio} was edited since the preview`)),
      }),
    ]);
    expect(item(keys.bio)).toMatchObject({ itemType: 'preprint', volume: '99', DOI: BIO_DOI });
    expect(item(keys.issued)).toMatchObject({ volume: '7' });
  });

  it('without a plan looks up and applies in one call, with a tag; without --yes and no terminal it asks for confirmation', async () => {
    const refused = await zot(['update-status', keys.bio, '--apply']);
    expect(refused.env.error.code).toBe('confirmation_required');
    expect(item(keys.bio).itemType).toBe('preprint');
    const applied = await zot(['update-status', keys.bio, '--apply', '--tag', 'Published', '--yes']);
    expect(applied.code).toBe(0);
    expect(item(keys.bio)).toMatchObject({ itemType: 'journalArticle', tags: [{ tag: 'Published' }] });
  });

  it('over MCP previews unless apply: true', async () => {
    const mcp = await mcpOf(w, meta.env());
    try {
      const preview = await mcp.call('zotero_update_status', { item_keys: [keys.bio] });
      expect(preview.isError).toBeFalsy();
      expect(item(keys.bio).itemType).toBe('preprint');
      const planId = (preview.structuredContent as { planId: string }).planId;
      const applied = await mcp.call('zotero_update_status', { apply: true, plan_id: planId });
      expect(applied.isError).toBeFalsy();
      expect(item(keys.bio).itemType).toBe('journalArticle');
    } finally {
      await mcp.close();
    }
  });
});

describe('zot update-status: batches, faults and arXiv', () => {
  function seedPreprints(n: number): string[] {
    const seeds = Array.from({ length: n }, (_, i) => ({
      itemType: 'preprint',
      title: `Coastal study number ${i} of the batch`,
      DOI: `10.1101/2020.02.02.${String(100000 + i)}`,
    }));
    for (let i = 0; i < n; i++) {
      meta.addCrossref({
        ...crossrefWork({
          doi: seeds[i]!.DOI,
          title: seeds[i]!.title,
          type: 'posted-content',
          relation: {
            'is-preprint-of': [{ 'id-type': 'doi', id: `10.5555/batch.${i}`, 'asserted-by': 'subject' }],
          },
        }),
      });
      meta.addCrossref({
        ...crossrefWork({ doi: `10.5555/batch.${i}`, title: seeds[i]!.title }),
        volume: '1',
        page: `${i}-${i + 1}`,
      });
    }
    return w.world.server.library(LIB).addItems(seeds);
  }

  it('500 preprints cost 20 Crossref list requests and 10 Zotero reads, not 1,000', async () => {
    const batch = seedPreprints(500);
    w.world.server.clearLog();
    meta.clearLog();
    const { code, env } = await zot(['update-status', ...batch]);
    expect(code).toBe(0);
    expect(env.data.candidates).toBe(500);
    // Every one is planned; 500 updates do not fit the answer: it lists the first ones, and says so.
    expect(env.data.truncated).toBe(true);
    expect(env.data.totalUpdates).toBe(500);
    const listed = env.data.updates.map((u: { key: string }) => u.key) as string[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(500);
    expect(listed).toEqual(batch.slice(0, listed.length));
    // ⌈500/50⌉ for the preprints' records, as many for the published ones.
    expect(meta.count('crossref')).toBe(20);
    expect(w.world.server.log.filter((e) => e.method === 'GET' && /\/items/.test(e.path))).toHaveLength(10);
    // Bounded: the answer stays under 100 KB and says how much it lists.
    expect(JSON.stringify(env).length).toBeLessThan(100_000);
    // The plan holds all 500: applying it writes 500 items in ⌈500/50⌉ batches.
    w.world.server.clearLog();
    const applied = await zot(['update-status', '--apply', '--plan', env.data.planId as string, '--yes']);
    expect(applied.code).toBe(0);
    expect(w.world.server.log.filter((e) => e.method === 'POST' && /\/items$/.test(e.path))).toHaveLength(10);
    expect(batch.every((k) => item(k).itemType === 'journalArticle')).toBe(true);
  });

  it('a Crossref failure for half the batch fails only those entries (exit 7), and 429s are waited out', async () => {
    const batch = seedPreprints(100);
    const firstHalf = Array.from({ length: 50 }, (_, i) => `10.1101/2020.02.02.${String(100000 + i)}`);
    meta.fault('crossref', { ids: firstHalf, kind: 'status', status: 503 });
    meta.fault('crossref', {
      ids: ['10.5555/batch.60'],
      kind: 'status',
      status: 429,
      retryAfter: 1,
      times: 1,
    });
    const { code, env } = await zot(['update-status', ...batch]);
    expect(code).toBe(7);
    expect(env.ok).toBe('partial');
    expect(env.data.failed).toHaveLength(50);
    expect(env.data.failed[0]).toMatchObject({ key: batch[0], reason: 'api_error' });
    expect(env.data.failed[0].message).toMatch(/^Crossref/);
    expect(env.data.totalUpdates ?? env.data.updates.length).toBe(50);
    // The 429 was answered again after its Retry-After, within the retry budget.
    expect(meta.log.filter((e) => e.status === 429)).toHaveLength(1);
  });

  it('an arXiv preprint with a journal DOI on arXiv becomes the article, its arXiv id kept in Extra', async () => {
    const [key] = w.world.server.library(LIB).addItems([
      {
        itemType: 'preprint',
        title: 'Ice shelf collapse and sea level',
        archiveID: 'arXiv:2203.04567',
        url: 'https://arxiv.org/abs/2203.04567v1',
        extra: 'Published as a preprint first.',
      },
    ]) as [string];
    meta.addArxiv({ id: '2203.04567v3', title: 'Ice shelf collapse and sea level', doi: '10.5555/ice.9' });
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/ice.9', title: 'Ice-shelf collapse and sea level' }),
      volume: '4',
    });
    const { code, env } = await zot(['update-status', key, '--apply', '--yes']);
    expect(code).toBe(0);
    expect(env.data.updates[0]).toMatchObject({
      key,
      status: 'applied',
      evidence: { source: 'arxiv', relation: 'arxiv-doi' },
    });
    expect(item(key)).toMatchObject({
      itemType: 'journalArticle',
      DOI: '10.5555/ice.9',
      volume: '4',
      extra: 'Published as a preprint first.\narXiv: 2203.04567',
    });
    expect(item(key).archiveID).toBeUndefined();
  });
});

describe('zot update-status: the published article names its preprint', () => {
  it('finds it through has-preprint (one Crossref request for up to 50 preprints), and says why when nothing is found', async () => {
    const lib = w.world.server.library(LIB);
    const [named, lonely] = lib.addItems([
      { itemType: 'preprint', title: 'Groundwater salinity trends', DOI: '10.21203/rs.3.rs-111111/v1' },
      { itemType: 'preprint', title: 'Unpublished musings', DOI: '10.21203/rs.3.rs-222222/v1' },
    ]) as [string, string];
    // Research Square records without is-preprint-of; the article points back with has-preprint.
    meta.addCrossref(
      crossrefWork({
        doi: '10.21203/rs.3.rs-111111/v1',
        title: 'Groundwater salinity trends',
        type: 'posted-content',
      }),
    );
    meta.addCrossref(
      crossrefWork({
        doi: '10.21203/rs.3.rs-222222/v1',
        title: 'Unpublished musings',
        type: 'posted-content',
      }),
    );
    meta.addCrossref({
      ...crossrefWork({
        doi: '10.5555/gw.3',
        title: 'Groundwater Salinity Trends',
        relation: {
          'has-preprint': [{ 'id-type': 'doi', id: '10.21203/rs.3.rs-111111/v1', 'asserted-by': 'object' }],
        },
      }),
      volume: '8',
    });
    meta.clearLog();
    const { code, env } = await zot(['update-status', named, lonely]);
    expect(code).toBe(0);
    expect(env.data.updates).toEqual([
      expect.objectContaining({
        key: named,
        reason: 'preprint_type',
        server: 'Research Square',
        evidence: expect.objectContaining({
          source: 'crossref',
          relation: 'has-preprint',
          doi: '10.5555/gw.3',
        }),
      }),
    ]);
    expect(env.data.unmatched).toEqual([
      {
        key: lonely,
        title: 'Unpublished musings',
        reason: 'preprint_type',
        why: 'No published version was found (Crossref).',
      },
    ]);
    // The preprints' records, one has-preprint search for both, the published record.
    expect(meta.log.map((e) => (e.query.includes('relation.object') ? 'has-preprint' : 'doi'))).toEqual([
      'doi',
      'has-preprint',
      'doi',
    ]);
  });
});

describe('zot update-status --note', () => {
  it('adds one child note per item updated, with the evidence and the old values; a retry adds none', async () => {
    const first = await zot([
      'update-status',
      keys.bio,
      '--apply',
      '--note',
      '--yes',
      '--idempotency-key',
      'note-1',
    ]);
    expect(first.code).toBe(0);
    const notes = () =>
      [...w.world.server.library(LIB).items.values()].filter(
        (i) => i.itemType === 'note' && i.parentItem === keys.bio,
      ) as unknown as Array<{ note: string }>;
    expect(notes()).toHaveLength(1);
    expect(notes()[0]!.note).toBe(
      '<p>Updated to the published version: <a href="https://doi.org/10.5555/pub.1">10.5555/pub.1</a>, Journal of Coasts (2021). ' +
        'Found through crossref (is-preprint-of), title similarity 1.</p><ul>' +
        '<li>itemType: preprint → journalArticle</li><li>publicationTitle: (empty) → Journal of Coasts</li>' +
        '<li>volume: (empty) → 12</li><li>issue: (empty) → 3</li><li>pages: (empty) → 100-110</li>' +
        '<li>date: 2020-01-01 → 2021-05-04</li><li>DOI: 10.1101/2020.01.01.111111 → 10.5555/pub.1</li>' +
        '<li>url: https://www.biorxiv.org/content/10.1101/2020.01.01.111111v1 → https://doi.org/10.5555/pub.1</li>' +
        '<li>extra: (empty) → Preprint DOI: 10.1101/2020.01.01.111111</li>' +
        '<li>repository: bioRxiv → (removed)</li></ul>',
    );
    // The same call again replays; a new call finds the item up to date and writes nothing.
    const replay = await zot([
      'update-status',
      keys.bio,
      '--apply',
      '--note',
      '--yes',
      '--idempotency-key',
      'note-1',
    ]);
    expect(replay.code).toBe(0);
    const again = await zot(['update-status', keys.bio, '--apply', '--note', '--yes']);
    expect(again.env.data.updates).toEqual([]);
    expect(notes()).toHaveLength(1);
  });
});

/** The NDJSON progress events of a run's stderr. */
function events(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('zot update-status: scopes and keys that name no item', () => {
  it('a key that names no item is one failed entry; the others are answered (exit 7)', async () => {
    const { code, env } = await zot(['update-status', keys.bio, 'ZZZZ2345', keys.issued]);
    expect(code).toBe(7);
    expect(env.ok).toBe('partial');
    expect(env.data.failed).toEqual([
      expect.objectContaining({ index: 1, key: 'ZZZZ2345', reason: 'not_found' }),
    ]);
    expect(env.data.updates.map((u: { key: string }) => u.key)).toEqual([keys.bio, keys.issued]);
    expect(env.data.planId).toMatch(/^p_/);
  });

  it('--collection checks the top-level items of that collection only', async () => {
    const lib = w.world.server.library(LIB);
    const [coll] = lib.addCollections([{ name: 'Coasts' }]) as [string];
    lib.editItem(keys.bio, { collections: [coll] });
    lib.editItem(keys.early, { collections: [coll] });
    lib.editItem(keys.plain, { collections: [coll] });
    meta.clearLog();
    const { code, env } = await zot(['update-status', '--collection', coll]);
    expect(code).toBe(0);
    expect(env.data).toMatchObject({ checked: 3, candidates: 2 });
    expect(env.data.updates.map((u: { key: string }) => u.key)).toEqual([keys.bio]);
    expect(env.data.unmatched.map((u: { key: string }) => u.key)).toEqual([keys.early]);
    // Only the collection's DOIs were asked about.
    expect(meta.log[0]!.ids.sort()).toEqual([BIO_DOI, '10.5555/ea.1'].sort());
  });

  it('--all checks every top-level item of the library, and applies in one call', async () => {
    const { code, env } = await zot(['update-status', '--all', '--apply', '--yes']);
    expect(code).toBe(0);
    expect(env.data).toMatchObject({ applied: true, checked: 5, candidates: 4 });
    // In the library's order (date added, the same for all here), not the keys'.
    expect(
      env.data.updates.map((u: { key: string; status: string }) => `${u.key} ${u.status}`).sort(),
    ).toEqual([`${keys.bio} applied`, `${keys.issued} applied`].sort());
    expect(item(keys.bio)).toMatchObject({ itemType: 'journalArticle', extra: `Preprint DOI: ${BIO_DOI}` });
    w.world.server.clearLog();
    const again = await zot(['update-status', '--all', '--apply', '--yes']);
    expect(again.code).toBe(0);
    expect(again.env.data.updates).toEqual([]);
    expect(writes()).toEqual([]);
  });
});

describe('zot update-status: the preprint identifiers kept, progress, and what was asked', () => {
  it('an SSRN preprint found through OpenAlex keeps its DOI in a Preprint DOI line, the other Extra lines untouched; a re-run writes nothing', async () => {
    const SSRN = '10.2139/ssrn.3456789';
    const [key] = w.world.server.library(LIB).addItems([
      {
        itemType: 'preprint',
        title: 'Tidal energy and estuary ecology',
        DOI: SSRN,
        extra: 'Original Date: 2019\ntex.note: mine',
      },
    ]) as [string];
    meta.addCrossref(
      crossrefWork({ doi: SSRN, title: 'Tidal energy and estuary ecology', type: 'posted-content' }),
    );
    meta.addOpenAlex({
      ...openAlexWork({ doi: SSRN, title: 'Tidal energy and estuary ecology' }),
      type: 'preprint',
      locations: [
        { landing_page_url: `https://doi.org/${SSRN}`, version: 'submittedVersion', is_published: false },
        {
          landing_page_url: 'https://doi.org/10.5555/tide.4',
          version: 'publishedVersion',
          is_published: true,
        },
      ],
    });
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/tide.4', title: 'Tidal Energy and Estuary Ecology' }),
      volume: '31',
      page: '7-19',
    });
    const oa = { ZOTEUS_OPENALEX_API_KEY: 'oa-test-key' };
    const preview = await zot(['update-status', key], oa);
    expect(preview.code).toBe(0);
    const [update] = preview.env.data.updates;
    expect(update).toMatchObject({
      key,
      reason: 'preprint_type',
      server: 'SSRN',
      evidence: { source: 'openalex', relation: 'openalex-work', doi: '10.5555/tide.4', similarity: 1 },
    });
    // The preview shows the line before anything is written.
    expect(update.changes.at(-1)).toEqual({
      field: 'extra',
      from: 'Original Date: 2019\ntex.note: mine',
      to: `Original Date: 2019\ntex.note: mine\nPreprint DOI: ${SSRN}`,
    });
    expect(preview.env.data.sources).toContainEqual({ service: 'OpenAlex', requests: 1 });
    expect(meta.log.filter((e) => e.service === 'openalex').map((e) => e.ids)).toEqual([[SSRN]]);

    const applied = await zot(['update-status', '--apply', '--plan', preview.env.data.planId, '--yes'], oa);
    expect(applied.code).toBe(0);
    expect(item(key)).toMatchObject({
      itemType: 'journalArticle',
      DOI: '10.5555/tide.4',
      volume: '31',
      extra: `Original Date: 2019\ntex.note: mine\nPreprint DOI: ${SSRN}`,
    });
    w.world.server.clearLog();
    const again = await zot(['update-status', key, '--apply', '--yes'], oa);
    expect(again.code).toBe(0);
    expect(again.env.data).toMatchObject({ candidates: 0, updates: [] });
    expect(writes()).toEqual([]);
  });

  it('a journal article flagged only by its bioRxiv URL, and a preprint without identifiers, say nothing was asked, and nothing was', async () => {
    const [key, bare] = w.world.server.library(LIB).addItems([
      {
        itemType: 'journalArticle',
        title: 'Mangrove roots',
        url: 'https://www.biorxiv.org/content/early/2021/01/01/mangrove',
      },
      { itemType: 'preprint', title: 'Kelp forests' },
    ]) as [string, string];
    meta.clearLog();
    const { code, env } = await zot(['update-status', key, bare]);
    expect(code).toBe(0);
    expect(env.data.unmatched).toEqual([
      {
        key,
        title: 'Mangrove roots',
        reason: 'preprint_server',
        why: 'Nothing was asked: its bioRxiv/medRxiv URL made it a candidate, but it has no DOI or arXiv id to look a published version up by.',
      },
      {
        key: bare,
        title: 'Kelp forests',
        reason: 'preprint_type',
        why: 'Nothing was asked: it has no DOI or arXiv id to look a published version up by.',
      },
    ]);
    expect(meta.log).toEqual([]);
    expect(env.data.sources[0]).toEqual({ service: 'Crossref', requests: 0 });
  });

  it('reports each lookup step on stderr: start and complete, with its count and failures', async () => {
    const { code, stderr } = await zot(['update-status', ...allKeys()]);
    expect(code).toBe(0);
    const steps = events(stderr).filter((e) => e.event !== 'progress' && e.phase !== 'read');
    expect(steps.map((e) => [e.event, e.phase, e.total])).toEqual([
      // The three preprint/early DOIs at Crossref, the arXiv id, the arXiv preprint at Crossref, the linked records.
      ['start', 'crossref_records', 3],
      ['complete', 'crossref_records', 3],
      ['start', 'arxiv_records', 1],
      ['complete', 'arxiv_records', 1],
      ['start', 'crossref_published', 2],
      ['complete', 'crossref_published', 2],
    ]);
    expect(steps.at(-1)).toMatchObject({ done: 2, succeeded: 2, failed: 0 });
  });
});

describe('zot update-status --apply: a concurrent edit during the write', () => {
  it('a 412 in the batch answer re-reads; the item edited meanwhile is a conflict, its edit kept, the other applied (exit 7)', async () => {
    const preview = await zot(['update-status', keys.bio, keys.issued]);
    // Between the apply's read and its write, someone sets the volume the plan would set.
    w.world.server.faults.concurrentEdit({
      match: { method: 'POST' },
      apply: (s) => s.library(LIB).editItem(keys.bio, { volume: '99' }),
    });
    w.world.server.clearLog();
    const applied = await zot(['update-status', '--apply', '--plan', preview.env.data.planId, '--yes']);
    expect(applied.code).toBe(7);
    expect(applied.env.ok).toBe('partial');
    // The batch's answer failed the stale item with 412: it was read again, and not sent again.
    expect(w.world.server.log.map((e) => `${e.method} ${e.path}`)).toEqual([
      `GET /${LIB}/items`,
      `POST /${LIB}/items`,
      `GET /${LIB}/items`,
    ]);
    expect(applied.env.data.failed).toEqual([
      expect.objectContaining({
        key: keys.bio,
        reason: 'conflict',
        message: expect.stringMatching(new RegExp(`^Item ${keys.bio} was edited since the preview`)),
      }),
    ]);
    expect(applied.env.data.succeeded).toEqual([keys.issued]);
    expect(item(keys.bio)).toMatchObject({ itemType: 'preprint', volume: '99', DOI: BIO_DOI });
    expect(item(keys.bio).extra ?? '').toBe('');
    expect(item(keys.issued)).toMatchObject({ volume: '7', issue: '2', pages: '55-70' });
  });
});

describe('zot update-status: Semantic Scholar, last and only with its key', () => {
  const S2_KEY = { ZOTEUS_SEMANTIC_SCHOLAR_API_KEY: 's2-test-key' };
  let key: string;
  beforeEach(() => {
    [key] = w.world.server
      .library(LIB)
      .addItems([
        { itemType: 'preprint', title: 'Snowpack and streamflow', archiveID: 'arXiv:2105.00009' },
      ]) as [string];
    // arXiv has no journal DOI for it, and Crossref no relation: only Semantic Scholar knows.
    meta.addArxiv({ id: '2105.00009v1', title: 'Snowpack and streamflow' });
    meta.addSemanticScholar('ARXIV:2105.00009', {
      paperId: 's2paper1',
      title: 'Snowpack and Streamflow',
      externalIds: { ArXiv: '2105.00009', DOI: '10.5555/snow.5' },
      publicationTypes: ['JournalArticle'],
    });
    meta.addCrossref({
      ...crossrefWork({ doi: '10.5555/snow.5', title: 'Snowpack and Streamflow' }),
      volume: '9',
    });
  });

  it('with its key, finds the journal DOI its record carries, in one batch request, and applies it', async () => {
    meta.clearLog();
    const { code, env, stderr } = await zot(['update-status', key, '--apply', '--yes'], S2_KEY);
    expect(code).toBe(0);
    expect(env.data.updates[0]).toMatchObject({
      key,
      status: 'applied',
      evidence: { source: 'semantic-scholar', relation: 's2-doi', doi: '10.5555/snow.5', similarity: 1 },
    });
    const s2 = meta.log.filter((e) => e.service === 'semantic-scholar');
    expect(s2.map((e) => [e.method, e.path, e.ids])).toEqual([
      ['POST', '/paper/batch', ['arxiv:2105.00009']],
    ]);
    expect(env.data.sources).toContainEqual({ service: 'Semantic Scholar', requests: 1 });
    expect(
      events(stderr)
        .filter((e) => e.phase === 'semantic_scholar_papers')
        .map((e) => e.event),
    ).toEqual(expect.arrayContaining(['start', 'complete']));
    expect(item(key)).toMatchObject({
      itemType: 'journalArticle',
      DOI: '10.5555/snow.5',
      volume: '9',
      extra: 'arXiv: 2105.00009',
    });
  });

  it('without its key, it is not asked, and the result says so', async () => {
    meta.clearLog();
    const { code, env } = await zot(['update-status', key]);
    expect(code).toBe(0);
    expect(meta.count('semantic-scholar')).toBe(0);
    expect(env.data.unmatched).toEqual([
      expect.objectContaining({ key, why: 'No published version was found (Crossref, arXiv).' }),
    ]);
    expect(env.data.sources.at(-1)).toEqual({
      service: 'Semantic Scholar',
      note: 'Semantic Scholar was not asked for the candidates still without a match: it is asked only with an API key (set ZOTEUS_SEMANTIC_SCHOLAR_API_KEY).',
    });
  });

  it('a Semantic Scholar failure fails only its entries, as api_error naming it (exit 7)', async () => {
    meta.fault('semantic-scholar', { kind: 'html' });
    const { code, env } = await zot(['update-status', key, keys.bio], S2_KEY);
    expect(code).toBe(7);
    expect(env.data.failed).toEqual([
      expect.objectContaining({
        key,
        reason: 'api_error',
        message: expect.stringMatching(/^Semantic Scholar/),
      }),
    ]);
    expect(env.data.updates.map((u: { key: string }) => u.key)).toEqual([keys.bio]);
  });
});
