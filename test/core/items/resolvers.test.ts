/** The resolvers against local fakes of Crossref, DataCite and the arXiv API. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { isZoteusError } from '../../../src/core/errors.js';
import {
  parseArxivFeed,
  resolveArxiv,
  resolveDoi,
  resolverSettings,
  splitName,
} from '../../../src/core/items/resolvers.js';
import { localSchema } from '../../../src/core/items/schema.js';
import { validateItem } from '../../../src/core/items/validate.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { crossrefWork, startResolverFakes, type FakeResolvers } from '../../support/resolvers/index.js';
import { sandbox } from '../../support/cli.js';

const schema = localSchema({ cacheDir: '/nonexistent', apiUrl: 'http://127.0.0.1:9' });
let fakes: FakeResolvers;
let box: ReturnType<typeof sandbox>;
beforeAll(async () => {
  fakes = await startResolverFakes();
  box = sandbox();
});
afterAll(async () => {
  await fakes.close();
  box.cleanup();
});
beforeEach(() => {
  fakes.clearLog();
  fakes.clearFaults();
});

const sleeps: number[] = [];
function deps(extra: Record<string, string> = {}) {
  const env = { ...box.env, ...fakes.env(), ...extra };
  return createDeps({
    config: loadConfig(env),
    env,
    version: CLI_VERSION,
    surface: 'cli',
    clock: { now: () => Date.now(), sleep: async (ms) => void sleeps.push(ms) },
  });
}

describe('resolver settings', () => {
  it('reads the base URLs from the environment and refuses a bad one, naming the variable', () => {
    const d = deps();
    expect(resolverSettings(d)).toMatchObject({ crossref: fakes.urls.crossref, arxiv: fakes.urls.arxiv });
    // The sandbox points the resolvers at a dead port; without those variables the defaults apply.
    const bare = Object.fromEntries(
      Object.entries(box.env).filter(([k]) => !/^ZOTEUS_(CROSSREF|DATACITE|ARXIV)_URL$/.test(k)),
    );
    const defaults = resolverSettings(
      createDeps({ config: loadConfig(bare), env: bare, version: '1', surface: 'cli' }),
    );
    expect(defaults).toMatchObject({
      crossref: 'https://api.crossref.org',
      datacite: 'https://api.datacite.org',
      arxiv: 'https://export.arxiv.org/api',
    });
    expect(() => resolverSettings(deps({ ZOTEUS_CROSSREF_URL: 'ftp://x' }))).toThrow(
      /ZOTEUS_CROSSREF_URL must be/,
    );
  });
});

describe('DOIs', () => {
  it('Crossref: a journal article with subtitle, JATS abstract, ISSNs', async () => {
    fakes.addCrossref(
      crossrefWork({
        doi: '10.1000/J1',
        title: 'Deep nets',
        subtitle: 'a survey',
        container: 'Journal of AI',
        year: 2021,
        month: 4,
        volume: '7',
        issue: '2',
        page: '100-120',
        ISSN: ['1234-5678', '8765-4321'],
        abstract: '<jats:title>Abstract</jats:title><jats:p>We survey &amp; compare.</jats:p>',
        authors: [{ given: 'Geoffrey', family: 'Hinton' }, { name: 'Deep Learning Group' }],
      }),
    );
    const r = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.1000/j1');
    expect(r.source).toBe('crossref');
    expect(r.item).toMatchObject({
      itemType: 'journalArticle',
      title: 'Deep nets: a survey',
      publicationTitle: 'Journal of AI',
      date: '2021-04',
      volume: '7',
      issue: '2',
      pages: '100-120',
      ISSN: '1234-5678, 8765-4321',
      DOI: '10.1000/J1',
      abstractNote: 'We survey & compare.',
      libraryCatalog: 'DOI.org (Crossref)',
      creators: [
        { creatorType: 'author', firstName: 'Geoffrey', lastName: 'Hinton' },
        { creatorType: 'author', name: 'Deep Learning Group' },
      ],
    });
    expect(validateItem(schema, r.item, 0)).toEqual([]);
    expect(fakes.log.map((e) => `${e.service} ${e.path}`)).toEqual(['crossref /works/10.1000/j1']);
  });

  it('Crossref: a book chapter becomes a bookSection with bookTitle', async () => {
    fakes.addCrossref(
      crossrefWork({
        doi: '10.1000/ch',
        type: 'book-chapter',
        title: 'Ch 1',
        container: 'Big Book',
        ISBN: ['978-1'],
      }),
    );
    const r = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.1000/ch');
    expect(r.item).toMatchObject({ itemType: 'bookSection', bookTitle: 'Big Book', ISBN: '978-1' });
    expect(validateItem(schema, r.item, 0)).toEqual([]);
  });

  it('DataCite when Crossref does not know the DOI: a dataset', async () => {
    fakes.addDataCite('10.5061/dryad.x', {
      titles: [{ title: 'Field data' }],
      creators: [
        { name: 'Doe, Jane', givenName: 'Jane', familyName: 'Doe', nameType: 'Personal' },
        { name: 'Lab', nameType: 'Organizational' },
      ],
      publisher: 'Dryad',
      publicationYear: 2019,
      types: { resourceTypeGeneral: 'Dataset', citeproc: 'dataset' },
      descriptions: [{ description: 'Some  data.', descriptionType: 'Abstract' }],
      version: '2',
      url: 'https://datadryad.org/x',
    });
    const r = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.5061/dryad.x');
    expect(r.source).toBe('datacite');
    expect(r.item).toMatchObject({
      itemType: 'dataset',
      title: 'Field data',
      repository: 'Dryad',
      date: '2019',
      versionNumber: '2',
      abstractNote: 'Some data.',
      DOI: '10.5061/dryad.x',
      creators: [
        { creatorType: 'author', firstName: 'Jane', lastName: 'Doe' },
        { creatorType: 'author', name: 'Lab' },
      ],
    });
    expect(validateItem(schema, r.item, 0)).toEqual([]);
    expect(fakes.log.map((e) => e.service)).toEqual(['crossref', 'datacite']);
  });

  it('not_found when neither knows it', async () => {
    const error = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.1/nothing').catch(
      (e: unknown) => e,
    );
    expect(isZoteusError(error) && error.code).toBe('not_found');
    expect((error as Error).message).toContain('10.1/nothing');
  });

  it('retries a busy Crossref, then succeeds', async () => {
    fakes.addCrossref(crossrefWork({ doi: '10.1/busy', title: 'Busy' }));
    fakes.fail('crossref', '10.1/busy', { status: 503, times: 2, retryAfter: 0 });
    const r = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.1/busy');
    expect(r.item.title).toBe('Busy');
    expect(fakes.log.filter((e) => e.service === 'crossref').map((e) => e.status)).toEqual([503, 503, 200]);
  });

  it('a Crossref that keeps failing is a retryable error, not not_found', async () => {
    fakes.fail('crossref', '10.1/down', { status: 500 });
    const error = await resolveDoi(deps(), resolverSettings(deps()), schema, '10.1/down').catch(
      (e: unknown) => e,
    );
    expect(isZoteusError(error) && error.code).toBe('api_error');
    expect(isZoteusError(error) && error.retryable).toBe(true);
  });

  it('an unreachable resolver is a network_error', async () => {
    const d = deps({ ZOTEUS_CROSSREF_URL: 'http://127.0.0.1:9', ZOTEUS_DATACITE_URL: 'http://127.0.0.1:9' });
    const error = await resolveDoi(d, resolverSettings(d), schema, '10.1/x').catch((e: unknown) => e);
    expect(isZoteusError(error) && error.code).toBe('network_error');
  });
});

describe('arXiv', () => {
  it('several ids in one request; versions; missing ids are not_found', async () => {
    fakes.addArxiv({
      id: '1706.03762v5',
      title: 'Attention Is\n  All You Need',
      summary: 'The dominant sequence transduction models...',
      authors: ['Ashish Vaswani', 'Noam Shazeer'],
      published: '2017-06-12T17:57:34Z',
      primaryCategory: 'cs.CL',
    });
    fakes.addArxiv({
      id: 'hep-th/9901001v1',
      title: 'Old style',
      authors: ['A. Physicist'],
      published: '1999-01-01T00:00:00Z',
    });
    const out = await resolveArxiv(deps(), resolverSettings(deps()), schema, [
      '1706.03762',
      'hep-th/9901001',
      '2101.99999',
    ]);
    expect(fakes.log).toHaveLength(1);
    const attention = out.get('1706.03762');
    expect(attention && 'item' in attention ? attention.item : attention).toMatchObject({
      itemType: 'preprint',
      title: 'Attention Is All You Need',
      repository: 'arXiv',
      archiveID: 'arXiv:1706.03762',
      DOI: '10.48550/arXiv.1706.03762',
      url: 'https://arxiv.org/abs/1706.03762',
      date: '2017-06-12',
      libraryCatalog: 'arXiv.org',
      extra: 'arXiv:1706.03762 [cs.CL]',
      creators: [
        { creatorType: 'author', firstName: 'Ashish', lastName: 'Vaswani' },
        { creatorType: 'author', firstName: 'Noam', lastName: 'Shazeer' },
      ],
    });
    const missing = out.get('2101.99999');
    expect(isZoteusError(missing) && missing.code).toBe('not_found');
    const old = out.get('hep-th/9901001');
    expect(old && 'item' in old && validateItem(schema, old.item, 0)).toEqual([]);
  });

  it('parses feeds and names', () => {
    expect(
      parseArxivFeed(
        '<feed><entry><id>http://arxiv.org/api/errors#x</id><title>Error</title></entry></feed>',
      ),
    ).toEqual([]);
    expect(splitName('Ludwig van Beethoven')).toEqual({ given: 'Ludwig', family: 'van Beethoven' });
    expect(splitName('Martin Luther King Jr.')).toEqual({ given: 'Martin Luther, Jr.', family: 'King' });
    expect(splitName('Plato')).toEqual({ given: '', family: 'Plato' });
  });
});
