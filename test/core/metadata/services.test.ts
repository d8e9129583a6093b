/**
 * The metadata services layer (core/metadata/) against the loopback fakes: each service's
 * batching and pace (arXiv one request every 3 seconds, Crossref's list of 50, Semantic
 * Scholar's batch of 500), OpenAlex's key kept out of every log line, the day-long disk cache
 * (a corrupt file is ignored, then replaced), and answers that are not the service's JSON.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { ZoteusError } from '../../../src/core/errors.js';
import { arxivRecords } from '../../../src/core/metadata/arxiv.js';
import { metadataCacheDir } from '../../../src/core/metadata/cache.js';
import { crossrefWorks } from '../../../src/core/metadata/crossref.js';
import { openAlexWorks } from '../../../src/core/metadata/openalex.js';
import { semanticScholarPapers } from '../../../src/core/metadata/semantic-scholar.js';
import type { Deps } from '../../../src/core/tool.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { sandbox } from '../../support/cli.js';
import { fakeClock, type FakeClock } from '../../support/metadata-services/clock.js';
import {
  crossrefWork,
  openAlexWork,
  startMetadataFakes,
  type MetadataFakes,
} from '../../support/metadata-services/index.js';

const OA_KEY = 'oaUnitKey-1234567890';
let fakes: MetadataFakes;
let box: ReturnType<typeof sandbox>;
let n = 0;
const opened: Deps[] = [];

beforeAll(async () => {
  fakes = await startMetadataFakes();
  box = sandbox();
  fakes.addCrossref(
    crossrefWork({
      doi: '10.1000/with,comma',
      title: 'A DOI with a comma',
      relation: {
        'has-preprint': [{ 'id-type': 'doi', id: '10.1101/2020.01.01.000001', 'asserted-by': 'object' }],
      },
    }),
  );
  fakes.addCrossref(crossrefWork({ doi: '10.1000/plain', title: 'Plain' }));
  fakes.addOpenAlex(openAlexWork({ doi: '10.1000/plain', title: 'Plain', isRetracted: true }));
  for (let i = 0; i < 150; i++)
    fakes.addArxiv({
      id: `2401.${String(i).padStart(5, '0')}v2`,
      title: `Paper ${i}`,
      ...(i === 3 ? { doi: '10.1000/Journal.3', journalRef: 'J. Tests 1 (2024) 3' } : {}),
    });
  fakes.addSemanticScholar('DOI:10.1000/plain', {
    paperId: 'abc123',
    title: 'Plain',
    externalIds: { DOI: '10.1000/plain', ArXiv: '2401.00003' },
    venue: 'Journal of Tests',
    journal: { name: 'Journal of Tests', volume: '1', pages: '1-10' },
    publicationTypes: ['JournalArticle'],
    year: 2024,
  });
});
afterAll(async () => {
  for (const d of opened) await d.services.close();
  await fakes?.close();
  box?.cleanup();
});

/** Deps as a surface builds them, with a cache of their own unless `cache` names one. */
function deps(
  o: { env?: Record<string, string>; clock?: FakeClock; logs?: string[]; cache?: string } = {},
): Deps {
  const env = {
    ...box.env,
    ...fakes.env(),
    ZOT_CACHE_DIR: join(box.dir, o.cache ?? `cache-${n++}`),
    ...o.env,
  };
  const d = createDeps({
    config: loadConfig(env),
    env,
    version: CLI_VERSION,
    surface: 'mcp',
    clock: o.clock ?? fakeClock(),
    ...(o.logs ? { debug: true, writeLog: (line: string) => void o.logs?.push(line) } : {}),
  });
  opened.push(d);
  return d;
}

describe('Crossref', () => {
  it('asks a DOI with a comma on its own (a doi: filter cannot hold it), the rest in one list; relations typed', async () => {
    fakes.clearLog();
    const works = await crossrefWorks(deps(), ['10.1000/with,comma', '10.1000/plain', '10.1000/unknown']);
    expect(fakes.log.map((e) => e.path).sort()).toEqual(['/works', '/works/10.1000/with%2Ccomma'].sort());
    expect(works.get('10.1000/unknown')).toBeNull();
    const work = works.get('10.1000/with,comma');
    expect(work).toMatchObject({
      doi: '10.1000/with,comma',
      title: 'A DOI with a comma',
      relations: {
        'has-preprint': [{ idType: 'doi', id: '10.1101/2020.01.01.000001', assertedBy: 'object' }],
      },
    });
  });

  it('without the polite pool: one list at a time, at most one a second', async () => {
    fakes.clearLog();
    const clock = fakeClock();
    const dois = Array.from({ length: 120 }, (_, i) => `10.1000/none.${i}`);
    await crossrefWorks(deps({ clock, env: { ZOTEUS_CROSSREF_MAILTO: '' } }), dois);
    expect(fakes.count('crossref')).toBe(3);
    expect(fakes.maxInFlight('crossref')).toBe(1);
    expect(clock.sleeps.filter((ms) => ms >= 999)).toHaveLength(2);
    expect(fakes.log.every((e) => !e.query.includes('mailto'))).toBe(true);
  });

  it('a corrupt cache file is ignored and replaced by the next answer', async () => {
    const d = deps({ cache: 'corrupt' });
    await crossrefWorks(d, ['10.1000/plain']);
    const dir = metadataCacheDir(d, 'crossref');
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file as string), '{"id": "10.1000/plain", "at": 1, "value": {"do');
    fakes.clearLog();
    const again = await crossrefWorks(deps({ cache: 'corrupt' }), ['10.1000/plain']);
    expect(fakes.count('crossref')).toBe(1);
    expect(again.get('10.1000/plain')).toMatchObject({ title: 'Plain' });
    fakes.clearLog();
    await crossrefWorks(deps({ cache: 'corrupt' }), ['10.1000/plain']);
    expect(fakes.count('crossref')).toBe(0);
  });

  it('a cache folder that cannot be written costs the answer nothing', async () => {
    const blocked = join(box.dir, 'blocked');
    mkdirSync(blocked, { recursive: true });
    writeFileSync(join(blocked, 'metadata'), 'a file where the folder would be');
    const works = await crossrefWorks(deps({ env: { ZOT_CACHE_DIR: blocked } }), ['10.1000/plain']);
    expect(works.get('10.1000/plain')).toMatchObject({ title: 'Plain' });
  });

  it('unreachable: network_error naming Crossref for each DOI', async () => {
    const works = await crossrefWorks(deps({ env: { ZOTEUS_CROSSREF_URL: 'http://127.0.0.1:9' } }), [
      '10.1000/a',
      '10.1000/b',
    ]);
    for (const doi of ['10.1000/a', '10.1000/b']) {
      const error = works.get(doi) as ZoteusError;
      expect(error).toBeInstanceOf(ZoteusError);
      expect(error.code).toBe('network_error');
      expect(error.message).toMatch(/^Could not reach Crossref \(http:\/\/127\.0\.0\.1:9\): /);
    }
  });

  it('a refused connection marks Crossref down for the rest of the call: later batches are not sent', async () => {
    const logs: string[] = [];
    // A port nothing listens on any more.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dois = Array.from({ length: 150 }, (_, i) => `10.1000/down.${i}`);
    const works = await crossrefWorks(
      deps({ logs, env: { ZOTEUS_CROSSREF_URL: `http://127.0.0.1:${port}`, ZOTEUS_CROSSREF_MAILTO: '' } }),
      dois,
    );
    // The first batch: its attempt and the layer's two resends; the other two batches: nothing.
    expect(
      logs.filter((l) => l.includes('ECONNREFUSED')),
      logs.join('\n'),
    ).toHaveLength(3);
    expect(dois.every((d) => (works.get(d) as ZoteusError).code === 'network_error')).toBe(true);
  });
});

describe('OpenAlex', () => {
  it('skipped without a key, and says so; nothing asked', async () => {
    fakes.clearLog();
    const result = await openAlexWorks(deps(), ['10.1000/plain']);
    expect(result).toEqual({
      skipped: 'OpenAlex was not asked: it needs an API key (set ZOTEUS_OPENALEX_API_KEY).',
    });
    expect(fakes.count('openalex')).toBe(0);
  });

  it('one singleton per DOI with the key, which no log line shows', async () => {
    fakes.clearLog();
    const logs: string[] = [];
    const result = await openAlexWorks(deps({ env: { ZOTEUS_OPENALEX_API_KEY: OA_KEY }, logs }), [
      '10.1000/plain',
      '10.1000/unknown',
    ]);
    expect(result.works?.get('10.1000/plain')).toMatchObject({ isRetracted: true, doi: '10.1000/plain' });
    expect(result.works?.get('10.1000/unknown')).toBeNull();
    expect(fakes.count('openalex')).toBe(2);
    expect(fakes.log.every((e) => e.query.includes(`api_key=${OA_KEY}`))).toBe(true);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(OA_KEY);
  });

  it('its key is one of the secrets every output is redacted of', () => {
    const d = deps({
      env: { ZOTEUS_OPENALEX_API_KEY: OA_KEY, ZOTEUS_SEMANTIC_SCHOLAR_API_KEY: 's2UnitKey-123456789' },
    });
    const text = d.redact(`key ${OA_KEY} and s2UnitKey-123456789 in a message`);
    expect(text).not.toContain(OA_KEY);
    expect(text).not.toContain('s2UnitKey-123456789');
  });

  it('an HTML page instead of JSON: api_error naming OpenAlex', async () => {
    fakes.fault('openalex', { kind: 'html' });
    try {
      const result = await openAlexWorks(deps({ env: { ZOTEUS_OPENALEX_API_KEY: OA_KEY } }), [
        '10.1000/plain',
      ]);
      const error = result.works?.get('10.1000/plain') as ZoteusError;
      expect(error.code).toBe('api_error');
      expect(error.message).toBe('OpenAlex answered with something that is not its JSON.');
    } finally {
      fakes.clearFaults();
    }
  });
});

describe('arXiv', () => {
  it('id_list batches of 100, one request every 3 seconds; doi and journal_ref read', async () => {
    fakes.clearLog();
    const clock = fakeClock();
    const ids = Array.from({ length: 150 }, (_, i) => `2401.${String(i).padStart(5, '0')}`);
    const records = await arxivRecords(deps({ clock }), ids);
    expect(fakes.count('arxiv')).toBe(2);
    expect(fakes.log.map((e) => e.ids.length)).toEqual([100, 50]);
    expect(clock.sleeps.filter((ms) => ms >= 2999)).toHaveLength(1);
    expect(records.get('2401.00003')).toEqual({
      id: '2401.00003v2',
      title: 'Paper 3',
      published: '2024-01-01T00:00:00Z',
      updated: '2024-01-01T00:00:00Z',
      doi: '10.1000/journal.3',
      journalRef: 'J. Tests 1 (2024) 3',
    });
    expect(records.get('2401.00004')).toMatchObject({ doi: undefined, journalRef: undefined });
  });

  it('a page that is no Atom feed: api_error naming arXiv', async () => {
    fakes.fault('arxiv', { kind: 'html' });
    try {
      const records = await arxivRecords(deps(), ['2401.00001']);
      expect((records.get('2401.00001') as ZoteusError).message).toBe(
        'arXiv answered with something that is not its Atom feed.',
      );
    } finally {
      fakes.clearFaults();
    }
  });
});

describe('Semantic Scholar', () => {
  it('one batch request for the ids, answers in input order, null for unknown ones', async () => {
    fakes.clearLog();
    const papers = await semanticScholarPapers(deps(), ['DOI:10.1000/plain', 'DOI:10.1000/unknown']);
    expect(fakes.count('semantic-scholar')).toBe(1);
    expect(fakes.log[0]).toMatchObject({ method: 'POST', path: '/paper/batch' });
    expect(papers.get('doi:10.1000/plain')).toMatchObject({
      paperId: 'abc123',
      doi: '10.1000/plain',
      arxiv: '2401.00003',
      journal: { name: 'Journal of Tests', volume: '1', pages: '1-10' },
    });
    expect(papers.get('doi:10.1000/unknown')).toBeNull();
  });
});
