/**
 * `zot retractions` / `zotero_check_retractions` (issue 19, deliverable 2) end to end: a
 * desktop zotero.sqlite with items whose DOIs the loopback Crossref, OpenAlex know, Zotero's
 * own retractedItems rows, request counts, faults (a service down for half the batch, 429 with
 * Retry-After, an HTML page), the day-long cache, and the tag command offered for the hits.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../../src/tools/index.js';
import { startWorld } from '../../core/library/world.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { fakeClock } from '../../support/metadata-services/clock.js';
import { crossrefWork, openAlexWork } from '../../support/metadata-services/index.js';
import type { ItemSpec } from '../../support/zotero-sqlite/index.js';
import { freshCache, startRetractionWorld, type RetractionWorld } from './setup.js';

const OA_KEY = 'oaTestKey-1234567890';

const article = (key: string, title: string, fields: Record<string, string> = {}): ItemSpec => ({
  key,
  itemType: 'journalArticle',
  fields: { title, ...fields },
});

const ITEMS: ItemSpec[] = [
  { ...article('RETR2345', 'A retracted article', { DOI: '10.1000/retracted' }), collections: ['RDNG2345'] },
  article('CNCR2345', 'An article of concern', { DOI: '10.1000/concern' }),
  { ...article('CRCT2345', 'A corrected article', { DOI: '10.1000/corrected' }), collections: ['RDNG2345'] },
  article('ALEX2345', 'Retracted as OpenAlex says', { DOI: '10.1000/oa-only' }),
  article('ZTFL2345', 'Flagged by Zotero', { DOI: '10.1000/zotero-flag' }),
  article('CLEN2345', 'A sound article', { DOI: '10.1000/clean' }),
  article('NDIX2345', 'An article without DOI'),
  article('EXTR2345', 'DOI in Extra', { extra: 'DOI: 10.1000/EXTRA-retracted' }),
  { key: 'NTE22345', itemType: 'note', note: '<p>A standalone note</p>' },
];

let world: RetractionWorld;
beforeAll(async () => {
  world = await startRetractionWorld(ITEMS, [{ key: 'RDNG2345', name: 'Reading' }]);
  const f = world.fakes;
  f.addCrossref(
    crossrefWork({
      doi: '10.1000/retracted',
      title: 'A retracted article',
      updatedBy: [
        { DOI: '10.1000/notice-r', type: 'retraction', date: [2023, 3, 14], source: 'publisher' },
        {
          DOI: '10.1000/notice-r',
          type: 'retraction',
          date: [2023, 3, 14],
          source: 'retraction-watch',
          recordId: 4411,
        },
      ],
    }),
  );
  f.addCrossref(
    crossrefWork({
      doi: '10.1000/concern',
      title: 'An article of concern',
      updatedBy: [
        { DOI: '10.1000/notice-c', type: 'expression_of_concern', date: [2022, 11], source: 'publisher' },
      ],
    }),
  );
  f.addCrossref(
    crossrefWork({
      doi: '10.1000/corrected',
      title: 'A corrected article',
      updatedBy: [{ DOI: '10.1000/notice-k', type: 'correction', date: [2021, 6, 1], source: 'publisher' }],
    }),
  );
  for (const doi of ['10.1000/oa-only', '10.1000/zotero-flag', '10.1000/clean'])
    f.addCrossref(crossrefWork({ doi, title: doi }));
  f.addCrossref(
    crossrefWork({
      doi: '10.1000/extra-retracted',
      title: 'DOI in Extra',
      updatedBy: [
        { DOI: '10.1000/notice-e', type: 'Retraction', date: [2024, 1, 9], source: 'retraction-watch' },
      ],
    }),
  );
  f.addOpenAlex(
    openAlexWork({ doi: '10.1000/oa-only', title: 'Retracted as OpenAlex says', isRetracted: true }),
  );
  f.addOpenAlex(openAlexWork({ doi: '10.1000/retracted', title: 'A retracted article', isRetracted: true }));
  f.addOpenAlex(openAlexWork({ doi: '10.1000/clean', title: 'A sound article' }));
  world.flagInZotero('ZTFL2345', {
    date: '2022-02-02',
    reasons: ['Falsification/Fabrication of Data'],
    urls: ['https://retractionwatch.com/2022/02/02/flagged/'],
    retractionDOI: '10.1000/NOTICE-Z',
  });
});
afterAll(async () => {
  await world?.close();
});

type Data = {
  hits: Array<Record<string, unknown>>;
  notChecked: Array<Record<string, unknown>>;
  failed: Array<Record<string, unknown>>;
  next: string[];
  notes: string[];
  sources: Record<string, string>;
  checked: number;
  retracted: number;
  succeeded: string[];
  backend: string;
};
const data = (r: { json(): Record<string, unknown> }) => r.json().data as Data;

describe('zot retractions on the desktop’s library', () => {
  it('reports retractions, an expression of concern and a correction (not a retraction), OpenAlex’s and Zotero’s flags', async () => {
    world.fakes.clearLog();
    const r = await world.zot(['retractions', '--all'], {
      env: { ...freshCache(world, 'full'), ZOTEUS_OPENALEX_API_KEY: OA_KEY },
    });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(d.backend).toBe('sqlite');
    expect(d.hits).toEqual([
      {
        key: 'RETR2345',
        title: 'A retracted article',
        doi: '10.1000/retracted',
        type: 'retraction',
        retraction: true,
        date: '2023-03-14',
        noticeDoi: '10.1000/notice-r',
        noticeUrl: 'https://doi.org/10.1000/notice-r',
        sources: ['crossref', 'retraction-watch', 'openalex'],
      },
      {
        key: 'CNCR2345',
        title: 'An article of concern',
        doi: '10.1000/concern',
        type: 'expression_of_concern',
        retraction: false,
        date: '2022-11',
        noticeDoi: '10.1000/notice-c',
        noticeUrl: 'https://doi.org/10.1000/notice-c',
        sources: ['crossref'],
      },
      {
        key: 'CRCT2345',
        title: 'A corrected article',
        doi: '10.1000/corrected',
        type: 'correction',
        retraction: false,
        date: '2021-06-01',
        noticeDoi: '10.1000/notice-k',
        noticeUrl: 'https://doi.org/10.1000/notice-k',
        sources: ['crossref'],
      },
      {
        key: 'ALEX2345',
        title: 'Retracted as OpenAlex says',
        doi: '10.1000/oa-only',
        type: 'retraction',
        retraction: true,
        sources: ['openalex'],
      },
      {
        key: 'ZTFL2345',
        title: 'Flagged by Zotero',
        doi: '10.1000/zotero-flag',
        type: 'retraction',
        retraction: true,
        date: '2022-02-02',
        noticeDoi: '10.1000/notice-z',
        noticeUrl: 'https://doi.org/10.1000/notice-z',
        sources: ['zotero'],
      },
      {
        key: 'EXTR2345',
        title: 'DOI in Extra',
        doi: '10.1000/extra-retracted',
        type: 'retraction',
        retraction: true,
        date: '2024-01-09',
        noticeDoi: '10.1000/notice-e',
        noticeUrl: 'https://doi.org/10.1000/notice-e',
        sources: ['retraction-watch'],
      },
    ]);
    expect(d.retracted).toBe(4);
    expect(d.checked).toBe(7);
    expect(d.notChecked).toEqual([
      {
        key: 'NDIX2345',
        title: 'An article without DOI',
        reason: 'no DOI (DOI field, a DOI: line in Extra, or a doi.org URL): not checked online',
      },
    ]);
    expect(d.failed).toEqual([]);
    expect(d.notes).toEqual([]);
    // The ready tag command for the retracted items only (not the concern, not the correction).
    expect(d.next).toEqual(['zot tag add Retracted RETR2345 ALEX2345 ZTFL2345 EXTR2345']);
    // One Crossref list request for the 7 DOIs; one OpenAlex singleton each, with the key.
    expect(world.fakes.count('crossref')).toBe(1);
    const list = world.fakes.log.find((e) => e.service === 'crossref');
    expect(list?.path).toBe('/works');
    expect(list?.ids).toHaveLength(7);
    expect(list?.query).toContain('mailto=tests%40example.org');
    expect(list?.query).toContain('select=DOI,title,type');
    expect(world.fakes.count('openalex')).toBe(7);
    expect(
      world.fakes.log.filter((e) => e.service === 'openalex').every((e) => e.query.includes('api_key=')),
    ).toBe(true);
    // Nothing was written anywhere: no other requests than the lookups.
    expect(world.fakes.log.every((e) => e.method === 'GET')).toBe(true);
    // The API key never shows.
    expect(r.stdout + r.stderr).not.toContain(OA_KEY);
  });

  it('a re-run within the day asks no service again (the disk cache)', async () => {
    const env = { ...freshCache(world, 'rerun'), ZOTEUS_OPENALEX_API_KEY: OA_KEY };
    const first = data(await world.zot(['retractions', '--all'], { env }));
    world.fakes.clearLog();
    const again = await world.zot(['retractions', '--all'], { env });
    expect(again.code).toBe(0);
    expect(world.fakes.log).toEqual([]);
    expect(data(again).hits).toEqual(first.hits);
    // A day later, the answers are asked for again.
    const later = fakeClock(Date.now() + 24 * 60 * 60 * 1000 + 1000);
    await world.zot(['retractions', '--all'], { env, clock: later });
    expect(world.fakes.count('crossref')).toBe(1);
  });

  it('without an OpenAlex key, OpenAlex is not asked and the result says so', async () => {
    world.fakes.clearLog();
    const r = await world.zot(['retractions', '--all'], { env: freshCache(world, 'nokey') });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(world.fakes.count('openalex')).toBe(0);
    expect(d.notes).toEqual(['OpenAlex was not asked: it needs an API key (set ZOTEUS_OPENALEX_API_KEY).']);
    expect(d.sources.openalex).toBe('skipped: no API key (ZOTEUS_OPENALEX_API_KEY)');
    expect(d.hits.map((h) => h.key)).toEqual(['RETR2345', 'CNCR2345', 'CRCT2345', 'ZTFL2345', 'EXTR2345']);
    expect(d.hits[0]?.sources).toEqual(['crossref', 'retraction-watch']);
  });

  it('keys: an unknown key is one entry of failed (partial, exit 7), a note is not checkable', async () => {
    const r = await world.zot(['retractions', 'RETR2345', 'ZZZZ2345', 'NTE22345'], {
      env: freshCache(world, 'keys'),
    });
    expect(r.code).toBe(7);
    const envelope = r.json();
    expect(envelope.ok).toBe('partial');
    const d = envelope.data as Data;
    expect(d.hits.map((h) => h.key)).toEqual(['RETR2345']);
    expect(d.failed).toEqual([
      expect.objectContaining({ index: 1, key: 'ZZZZ2345', code: 404, reason: 'not_found' }),
      expect.objectContaining({
        index: 2,
        key: 'NTE22345',
        code: 400,
        reason: 'validation_error',
        message: 'NTE22345 is a note, which has no DOI of its own to check.',
      }),
    ]);
    expect(d.next).toEqual(['zot tag add Retracted RETR2345']);
  });

  it('only unknown keys: not_found (exit 4), no service asked', async () => {
    world.fakes.clearLog();
    const r = await world.zot(['retractions', 'ZZZZ2345'], { env: freshCache(world, 'unknown') });
    expect(r.code).toBe(4);
    expect((r.json().error as { code: string }).code).toBe('not_found');
    expect(world.fakes.log).toEqual([]);
  });

  it('a Crossref that answers an HTML page: api_error naming Crossref for its entries', async () => {
    world.fakes.fault('crossref', { kind: 'html' });
    try {
      const r = await world.zot(['retractions', 'RETR2345', 'CLEN2345'], { env: freshCache(world, 'html') });
      expect(r.code).toBe(1);
      const error = r.json().error as {
        code: string;
        message: string;
        failed: Array<Record<string, unknown>>;
      };
      expect(error.code).toBe('api_error');
      // A read wrote nothing: no "may have landed".
      expect(error.message).toBe('Nothing could be answered: all 2 entries failed (see error.failed).');
      expect(error.failed).toEqual([
        expect.objectContaining({
          key: 'RETR2345',
          reason: 'api_error',
          message: 'Crossref answered with something that is not its JSON.',
        }),
        expect.objectContaining({ key: 'CLEN2345', reason: 'api_error' }),
      ]);
    } finally {
      world.fakes.clearFaults();
    }
  });

  it('a cut-off JSON answer is api_error too, and nothing of it is cached', async () => {
    world.fakes.fault('crossref', { kind: 'truncated', times: 1 });
    const env = freshCache(world, 'truncated');
    try {
      const r = await world.zot(['retractions', 'RETR2345'], { env });
      expect(r.code).toBe(1);
      expect((r.json().error as { failed: Array<{ message: string }> }).failed[0]?.message).toBe(
        'Crossref answered with something that is not its JSON.',
      );
    } finally {
      world.fakes.clearFaults();
    }
    const again = await world.zot(['retractions', 'RETR2345'], { env });
    expect(again.code).toBe(0);
    expect(data(again).retracted).toBe(1);
  });

  it('429 with Retry-After is waited out through the retry layer, then answered', async () => {
    world.fakes.clearLog();
    world.fakes.fault('crossref', { kind: 'status', status: 429, retryAfter: 2, times: 1 });
    const clock = fakeClock();
    try {
      const r = await world.zot(['retractions', '--all'], { env: freshCache(world, 'rate'), clock });
      expect(r.code).toBe(0);
      expect(data(r).retracted).toBe(3);
    } finally {
      world.fakes.clearFaults();
    }
    expect(world.fakes.log.filter((e) => e.service === 'crossref').map((e) => e.status)).toEqual([429, 200]);
    expect(clock.sleeps).toContain(2000);
  });

  it('a 429 that outlasts the retry budget: rate_limited for the entries it concerns', async () => {
    world.fakes.fault('crossref', { kind: 'status', status: 429, retryAfter: 30 });
    try {
      const r = await world.zot(['retractions', 'RETR2345'], {
        env: { ...freshCache(world, 'budget'), ZOTEUS_RETRY_BUDGET_MS: '5000' },
      });
      expect(r.code).toBe(5);
      const error = r.json().error as { code: string; failed: Array<Record<string, unknown>> };
      expect(error.code).toBe('rate_limited');
      expect(error.failed[0]).toMatchObject({ key: 'RETR2345', reason: 'rate_limited', retryable: true });
    } finally {
      world.fakes.clearFaults();
    }
  });
});

describe('zot retractions on 500 items', () => {
  let big: RetractionWorld;
  const keys: string[] = [];
  beforeAll(async () => {
    const items: ItemSpec[] = Array.from({ length: 500 }, (_, i) =>
      article('', `Article ${i}`, { DOI: `10.5555/bulk.${i}` }),
    ).map(({ key: _key, ...rest }) => rest);
    big = await startRetractionWorld(items);
    keys.push(...big.ids.keys());
    for (let i = 0; i < 500; i++)
      big.fakes.addCrossref(
        crossrefWork({
          doi: `10.5555/bulk.${i}`,
          title: `Article ${i}`,
          ...(i % 100 === 7
            ? {
                updatedBy: [{ DOI: `10.5555/notice.${i}`, type: 'retraction', source: 'publisher' as const }],
              }
            : {}),
        }),
      );
  });
  afterAll(async () => {
    await big?.close();
  });

  it('costs ⌈500/50⌉ = 10 Crossref list requests of at most 50 DOIs, at most 3 at once, with progress on stderr', async () => {
    big.fakes.clearLog();
    const r = await big.zot(['retractions', '--all'], { env: freshCache(big, 'count') });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(d.checked).toBe(500);
    expect(d.retracted).toBe(5);
    expect(big.fakes.count('crossref')).toBe(10);
    const lists = big.fakes.log.filter((e) => e.service === 'crossref');
    expect(lists.every((e) => e.path === '/works' && e.ids.length === 50)).toBe(true);
    expect(new Set(lists.flatMap((e) => e.ids)).size).toBe(500);
    expect(big.fakes.maxInFlight('crossref')).toBeLessThanOrEqual(3);
    const events = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ event: 'start', phase: 'retractions', total: 500 });
    expect(events.at(-1)).toMatchObject({
      event: 'complete',
      phase: 'retractions',
      succeeded: 500,
      failed: 0,
    });
  });

  it('a Crossref down for half the batch: network_error for those items, the others answered (partial, exit 7)', async () => {
    // The second half of the DOIs: their list requests find the connection reset, every time.
    const down = Array.from({ length: 250 }, (_, i) => `10.5555/bulk.${250 + i}`);
    big.fakes.fault('crossref', { kind: 'reset', ids: down });
    try {
      const r = await big.zot(['retractions', '--all', '--limit', '100', '--start', '200'], {
        env: freshCache(big, 'half'),
      });
      expect(r.code).toBe(7);
      const envelope = r.json();
      expect(envelope.ok).toBe('partial');
      const d = envelope.data as Data & { nextStart: number };
      expect(d.checked).toBe(50);
      expect(d.failed).toHaveLength(50);
      expect(d.failed.every((f) => f.reason === 'network_error' && f.retryable === true)).toBe(true);
      expect(String(d.failed[0]?.message)).toMatch(
        /^Could not reach Crossref \(http:\/\/127\.0\.0\.1:\d+\): /,
      );
      expect(d.failed.map((f) => f.key)).toEqual(keys.slice(250, 300));
      expect(d.succeeded).toEqual(keys.slice(200, 250));
      expect(d.hits.map((h) => h.key)).toEqual([keys[207]]);
      expect(d.nextStart).toBe(300);
    } finally {
      big.fakes.clearFaults();
    }
  });
});

describe('zotero_check_retractions over MCP, and on the Web API', () => {
  it('MCP: next names the tag tool with its arguments; the desktop flags are read', async () => {
    const env = Object.fromEntries(
      Object.entries(world.env(freshCache(world, 'mcp'))).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
    const mcp = await connect(tools, env);
    try {
      const r = (await mcp.client.callTool({
        name: 'zotero_check_retractions',
        arguments: { item_keys: ['RETR2345', 'ZTFL2345', 'CRCT2345'] },
      })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      const d = r.structuredContent as Data;
      expect(d.next).toEqual([
        'zotero_manage_tags (action: add_items, tag: Retracted, item_keys: RETR2345 ZTFL2345)',
      ]);
      expect(d.sources.zotero).toBe('read (zotero.sqlite retractedItems)');
      expect(d.hits.map((h) => [h.key, h.type, h.retraction])).toEqual([
        ['RETR2345', 'retraction', true],
        ['ZTFL2345', 'retraction', true],
        ['CRCT2345', 'correction', false],
      ]);
    } finally {
      await mcp.close();
    }
  });

  it('Web API: the same notices; Zotero’s own flags are not read, and the result says why', async () => {
    const web = await startWorld();
    try {
      const [key] = web.server
        .library('users/1')
        .addItems([{ itemType: 'journalArticle', title: 'A retracted article', DOI: '10.1000/retracted' }]);
      const r = await zotAt(['retractions', key as string], {
        env: { ...web.env(), ...world.fakes.env(), ZOTEUS_LOCAL: 'off' },
        clock: fakeClock(),
      });
      expect(r.code).toBe(0);
      const d = data(r);
      expect(d.backend).toBe('web');
      expect(d.hits.map((h) => h.key)).toEqual([key]);
      expect(d.sources.zotero).toBe('not read: the library is not read from the desktop’s zotero.sqlite');
      expect(d.notes).toContain(
        'Zotero’s own retraction flags were not read: the library is not read from the desktop’s zotero.sqlite.',
      );
      expect(d.next).toEqual([`zot tag add Retracted ${key as string}`]);
    } finally {
      await web.close();
    }
  });
});

describe('zot retractions: what it is asked', () => {
  it('nothing to check, two ways at once, or paging with keys: validation_error (exit 3), offline', async () => {
    world.fakes.clearLog();
    const none = await world.zot(['retractions'], { env: freshCache(world, 'bad') });
    expect(none.code).toBe(3);
    expect(none.json().error).toMatchObject({
      code: 'validation_error',
      message: 'Nothing to check: give item keys, a collection, or all.',
      hint: 'Pass the item keys, --collection KEY, or --all for the whole library.',
    });
    const both = await world.zot(['retractions', 'RETR2345', '--all'], { env: freshCache(world, 'bad') });
    expect(both.code).toBe(3);
    expect((both.json().error as { message: string }).message).toBe(
      'Give one of item keys, a collection or all, not item_keys and all.',
    );
    const paged = await world.zot(['retractions', 'RETR2345', '--limit', '5'], {
      env: freshCache(world, 'bad'),
    });
    expect(paged.code).toBe(3);
    expect(world.fakes.log).toEqual([]);
  });

  it('--collection checks the collection’s items only', async () => {
    world.fakes.clearLog();
    const r = await world.zot(['retractions', '--collection', 'RDNG2345'], {
      env: freshCache(world, 'coll'),
    });
    expect(r.code).toBe(0);
    const d = data(r) as Data & { totalResults: number };
    expect(d.totalResults).toBe(2);
    expect(d.succeeded).toEqual(['RETR2345', 'CRCT2345']);
    expect(d.hits.map((h) => [h.key, h.type])).toEqual([
      ['RETR2345', 'retraction'],
      ['CRCT2345', 'correction'],
    ]);
    expect(world.fakes.log.find((e) => e.service === 'crossref')?.ids.sort()).toEqual([
      '10.1000/corrected',
      '10.1000/retracted',
    ]);
  });

  it('a terminal gets a table of the notices, the notes and the tag command', async () => {
    const r = await zotAt(['retractions', 'RETR2345', 'CRCT2345'], {
      env: world.env(freshCache(world, 'tty')),
      stdoutTTY: true,
      clock: fakeClock(),
      columns: 200,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'RETR2345  RETRACTED 2023-03-14  A retracted article  https://doi.org/10.1000/notice-r  [crossref, retraction-watch]',
    );
    expect(r.stdout).toContain('CRCT2345  correction 2021-06-01  A corrected article');
    expect(r.stdout).toContain('zot tag add Retracted RETR2345');
  });
});
