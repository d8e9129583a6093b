/**
 * `zot add --isbn` / `--url` (zotero_import's `isbn` and `url`) against the Zotero test server,
 * the resolver fakes, a fake Open Library, a fake Library of Congress SRU server and a local
 * web server of pages.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../../src/core/tool.js';
import importTool from '../../../src/tools/items/import.js';
import { crossrefWork } from '../../support/resolvers/index.js';
import { startLoc, type FakeLoc } from '../../support/resolvers/loc.js';
import { startOpenLibrary, type FakeOpenLibrary } from '../../support/resolvers/openlibrary.js';
import { startPages, type FakePages } from '../../support/resolvers/pages.js';
import { KEY } from '../../core/library/world.js';
import { envelope, LIB, startItemsWorld, type ItemsWorld } from './setup.js';

let w: ItemsWorld;
let ol: FakeOpenLibrary;
let loc: FakeLoc;
let pages: FakePages;
let env: Record<string, string>;
beforeEach(async () => {
  w = await startItemsWorld();
  ol = await startOpenLibrary();
  loc = await startLoc();
  pages = await startPages();
  env = { ZOTEUS_OPENLIBRARY_URL: ol.url, ZOTEUS_LOC_URL: loc.url };
});
afterEach(async () => {
  await Promise.all([w.close(), ol.close(), loc.close(), pages.close()]);
});

const deps = () => w.deps({ env });
const items = () => [...w.world.server.library(LIB).items.values()];
const posts = () => w.requests().filter((r) => r.startsWith('POST'));

/** Windows-1252 bytes of a text (Latin-1 plus the typographic quotes and dashes it uses). */
function toCp1252(text: string): number[] {
  const extra: Record<string, number> = { '\u2013': 0x96, '\u2014': 0x97, '\u201c': 0x93, '\u201d': 0x94 };
  return [...text].map((c) => extra[c] ?? c.charCodeAt(0));
}

/** A valid ISBN-13 (978 00000 iiii c), computed here independently of the product. */
function isbn13(i: number): string {
  const first12 = `97800000${String(i).padStart(4, '0')}`;
  let sum = 0;
  for (let k = 0; k < 12; k++) sum += (k % 2 === 0 ? 1 : 3) * Number(first12[k]);
  return first12 + String((10 - (sum % 10)) % 10);
}

describe('zot add --isbn', () => {
  it('ISBN-10 and ISBN-13 in one Open Library request, saved as books with their fields', async () => {
    ol.add({
      title: 'Information theory',
      subtitle: 'A primer',
      authors: ['Claude Shannon'],
      publishers: ['Bell Press'],
      publish_places: ['Murray Hill'],
      publish_date: '1949',
      number_of_pages: 144,
      isbn_10: ['0306406152'],
      isbn_13: ['9780306406157'],
      key: '/books/OL1M',
    });
    ol.add({ title: 'Second book', authors: ['Ada Lovelace'], isbn_13: ['9781402894626'] });
    const out = await importTool.run({ isbn: ['0-306-40615-2', '978 1 4028 9462 6'] }, deps());
    expect(out.failed).toEqual([]);
    expect(out.succeeded.map((s) => [s.entry, s.itemType, s.title])).toEqual([
      ['0-306-40615-2', 'book', 'Information theory: A primer'],
      ['978 1 4028 9462 6', 'book', 'Second book'],
    ]);
    expect(ol.log.map((e) => [e.path, e.isbns, e.query.jscmd, e.query.format])).toEqual([
      ['/api/books', ['0306406152', '9781402894626'], 'data', 'json'],
    ]);
    expect(loc.log).toEqual([]);
    const stored = w.world.server.library(LIB).items.get(out.succeeded[0]!.key);
    expect(stored).toMatchObject({
      itemType: 'book',
      title: 'Information theory: A primer',
      creators: [{ creatorType: 'author', firstName: 'Claude', lastName: 'Shannon' }],
      publisher: 'Bell Press',
      place: 'Murray Hill',
      date: '1949',
      numPages: '144',
      ISBN: '9780306406157',
      url: 'https://openlibrary.org/books/OL1M/Information_theory',
      libraryCatalog: 'Open Library',
    });
  });

  it('a wrong check digit fails on its own, offline, naming the digit; the valid ISBN still lands', async () => {
    ol.add({ title: 'Good', isbn_13: ['9780306406157'] });
    const out = await importTool.run({ isbn: ['0-306-40615-3', '9780306406157'] }, deps());
    expect(out.succeeded.map((s) => s.entry)).toEqual(['9780306406157']);
    expect(out.failed).toEqual([
      {
        entry: '0-306-40615-3',
        error: {
          code: 'validation_error',
          message:
            "'0-306-40615-3' is not a valid ISBN: its check digit is 3, but the ISBN-10's digits call for 2.",
          retryable: false,
        },
      },
    ]);
    expect(ol.log.flatMap((e) => e.isbns)).toEqual(['9780306406157']);
    const only = await importTool.run({ isbn: ['978-0-306-40615-8'] }, deps()).catch((e: unknown) => e);
    expect(only).toMatchObject({ code: 'validation_error', message: expect.stringContaining('call for 7') });
    expect(ol.log).toHaveLength(1);
  });

  it('Open Library has nothing: the Library of Congress answers; neither: not_found', async () => {
    loc.add({
      nonSort: 'The',
      title: 'adventures of Tom Sawyer /',
      names: [{ name: 'Twain, Mark,' }],
      place: 'New York',
      publisher: 'Signet Classic',
      dateIssued: 'c1997.',
      extent: 'xii, 216 p. ; 18 cm.',
      isbns: ['0306406152 (pbk.)'],
      lccn: '97012345',
    });
    const out = await importTool.run({ isbn: ['ISBN 978-0-306-40615-7', '9781402894626'] }, deps());
    expect(out.succeeded.map((s) => [s.entry, s.title])).toEqual([
      ['ISBN 978-0-306-40615-7', 'The adventures of Tom Sawyer'],
    ]);
    expect(out.failed).toEqual([
      {
        entry: '9781402894626',
        error: {
          code: 'not_found',
          message: 'ISBN 9781402894626 is not in Open Library or the Library of Congress catalogue.',
          retryable: false,
        },
      },
    ]);
    expect(ol.log).toHaveLength(1);
    expect(loc.log.map((e) => [e.isbns, e.query.recordSchema, e.query.operation])).toEqual([
      [['9780306406157', '9781402894626'], 'mods', 'searchRetrieve'],
    ]);
    expect(w.world.server.library(LIB).items.get(out.succeeded[0]!.key)).toMatchObject({
      itemType: 'book',
      creators: [{ creatorType: 'author', firstName: 'Mark', lastName: 'Twain' }],
      place: 'New York',
      publisher: 'Signet Classic',
      date: '1997',
      numPages: '216',
      ISBN: '9780306406157',
      url: 'https://lccn.loc.gov/97012345',
      libraryCatalog: 'Library of Congress Catalog',
    });
  });

  it('120 ISBNs: one Open Library request per 50, one catalogue request per batch with misses', async () => {
    const isbns = Array.from({ length: 120 }, (_, i) => isbn13(i));
    isbns.forEach((isbn, i) => {
      if (i % 6 === 0) loc.add({ title: `Loc ${i}`, isbns: [isbn] });
      else ol.add({ title: `Book ${i}`, isbn_13: [isbn] });
    });
    const out = await importTool.run({ isbn: isbns }, deps());
    expect(out.failed).toEqual([]);
    expect(out.succeeded).toHaveLength(120);
    expect(ol.log.map((e) => e.isbns.length)).toEqual([50, 50, 20]);
    expect(loc.log.map((e) => e.isbns.length)).toEqual([9, 8, 3]);
    expect(posts()).toHaveLength(3);
  });

  it('duplicate check: the same book under its other number is unchanged, nothing looked up', async () => {
    const lib = w.world.server.library(LIB);
    const [known] = lib.addItems([{ itemType: 'book', title: 'Known', ISBN: '978-0-306-40615-7' }]);
    const out = await importTool.run({ isbn: ['0306406152'] }, deps());
    expect(out).toMatchObject({
      succeeded: [],
      unchanged: [{ entry: '0306406152', key: known, reason: 'duplicate' }],
      failed: [],
    });
    expect(ol.log).toEqual([]);
    // A large library: searched, as ISBN-13 and ISBN-10, instead of read whole.
    lib.addItems(Array.from({ length: 250 }, (_, i) => ({ title: `Filler ${i}` })));
    const [ten] = lib.addItems([{ itemType: 'book', title: 'Ten', ISBN: '1402894627' }]);
    w.world.server.clearLog();
    const again = await importTool.run({ isbn: ['978-1-4028-9462-6'] }, deps());
    expect(again.unchanged).toEqual([{ entry: '978-1-4028-9462-6', key: ten, reason: 'duplicate' }]);
    expect(w.world.server.log.filter((e) => e.path === `/${LIB}/items`).map((e) => e.query?.q)).toEqual([
      '9781402894626',
      '1402894627',
    ]);
    expect(ol.log).toEqual([]);
  });

  it('CLI: a catalogue down for one ISBN is a partial result (exit 7); the retry asks only for it', async () => {
    ol.add({ title: 'Landed', isbn_13: ['9780306406157'] });
    loc.fail({ status: 500, times: 1 });
    const args = [
      'add',
      '--isbn',
      '0-306-40615-2',
      '--isbn',
      '9781402894626',
      '--idempotency-key',
      'books-1',
    ];
    const first = await w.zot(args, env);
    expect(first.code).toBe(7);
    const env1 = envelope(first);
    expect(env1.ok).toBe('partial');
    expect(env1.data.succeeded).toMatchObject([
      { entry: '0-306-40615-2', itemType: 'book', title: 'Landed' },
    ]);
    expect(env1.data.failed).toEqual([
      {
        entry: '9781402894626',
        error: {
          code: 'api_error',
          message: 'Library of Congress failed on its side (HTTP 500).',
          retryable: true,
        },
      },
    ]);
    loc.add({ title: 'Late', isbns: ['9781402894626'] });
    ol.log.length = 0;
    loc.log.length = 0;
    w.world.server.clearLog();
    const second = await w.zot(args, env);
    expect(second.code).toBe(0);
    expect(envelope(second).data.succeeded).toMatchObject([
      { entry: '0-306-40615-2', title: 'Landed' },
      { entry: '9781402894626', title: 'Late' },
    ]);
    expect(ol.log.map((e) => e.isbns)).toEqual([['9781402894626']]);
    expect(loc.log.map((e) => e.isbns)).toEqual([['9781402894626']]);
    expect(posts()).toHaveLength(1);
    expect(
      items()
        .map((i) => i.title)
        .sort(),
    ).toEqual(['Landed', 'Late']);
  });

  it('Open Library unreachable: network_error only for the ISBNs the second catalogue lacks', async () => {
    loc.add({ title: 'From the catalogue', isbns: ['9780306406157'] });
    const out = await importTool.run(
      { isbn: ['9780306406157', '9781402894626'] },
      w.deps({ env: { ...env, ZOTEUS_OPENLIBRARY_URL: 'http://127.0.0.1:9/ol' } }),
    );
    expect(out.succeeded.map((s) => s.title)).toEqual(['From the catalogue']);
    expect(out.failed).toMatchObject([
      {
        entry: '9781402894626',
        error: {
          code: 'network_error',
          retryable: true,
          message: expect.stringContaining('Could not reach Open Library (http://127.0.0.1:9)'),
        },
      },
    ]);
    expect(loc.log).toHaveLength(1);
  });

  it('a catalogue answering nonsense is api_error naming it', async () => {
    loc.fail({ status: 200, body: '<html>Service unavailable</html>', type: 'text/html' });
    const miss = await importTool.run({ isbn: ['9781402894626'] }, deps()).catch((e: unknown) => e);
    expect(miss).toMatchObject({
      code: 'api_error',
      message: 'The Library of Congress answered with something that is not an SRU response.',
    });
    ol.fail({ status: 200, body: '<html>maintenance</html>', type: 'text/html' });
    const error = await importTool.run({ isbn: ['9780306406157'] }, deps()).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'api_error',
      message: 'Open Library answered with something that is not JSON.',
    });
  });
});

const HIGHWIRE = `<!doctype html><html><head><title>Paper</title>
  <meta name="citation_title" content="Highwire Paper">
  <meta name="citation_author" content="Lovelace, Ada">
  <meta name="citation_journal_title" content="Journal of Pages">
  <meta name="citation_volume" content="3"><meta name="citation_firstpage" content="10">
  <meta name="citation_publication_date" content="2022/01/15">
</head><body>…</body></html>`;

describe('zot add --url', () => {
  it('Highwire tags become a journal article; the same page again is a duplicate', async () => {
    pages.page('/highwire', HIGHWIRE);
    const out = await importTool.run({ url: [pages.at('/highwire#section-2')] }, deps());
    expect(out.succeeded).toMatchObject([{ itemType: 'journalArticle', title: 'Highwire Paper' }]);
    const stored = w.world.server.library(LIB).items.get(out.succeeded[0]!.key);
    expect(stored).toMatchObject({
      itemType: 'journalArticle',
      title: 'Highwire Paper',
      creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
      publicationTitle: 'Journal of Pages',
      volume: '3',
      pages: '10',
      date: '2022-01-15',
      url: pages.at('/highwire'),
      libraryCatalog: new URL(pages.origin).host,
    });
    expect(stored?.accessDate).toMatch(/^\d{4}-\d{2}-\d{2}/);
    // No credential of the Zotero API goes to a web page.
    expect(pages.log).toHaveLength(1);
    const headers = pages.log[0]!.headers;
    expect(JSON.stringify(headers)).not.toContain(KEY);
    expect(headers.authorization).toBeUndefined();
    expect(headers['zotero-api-key']).toBeUndefined();

    const again = await importTool.run({ url: [pages.at('/highwire')] }, deps());
    expect(again.unchanged).toEqual([
      { entry: pages.at('/highwire'), key: out.succeeded[0]!.key, reason: 'duplicate' },
    ]);
    expect(items()).toHaveLength(1);
  });

  it('JSON-LD ScholarlyArticle, reached through a redirect', async () => {
    const ld = {
      '@context': 'https://schema.org',
      '@type': 'ScholarlyArticle',
      headline: 'Linked Data Paper',
      author: { '@type': 'Person', name: 'Grace Hopper' },
      datePublished: '2019-07-01',
      isPartOf: { '@type': 'Periodical', name: 'LD Journal' },
    };
    pages.page(
      '/ld',
      `<html><head><script type="application/ld+json">${JSON.stringify(ld)}</script></head></html>`,
    );
    pages.redirect('/old-ld', '/ld', 301);
    const out = await importTool.run({ url: [pages.at('/old-ld')] }, deps());
    expect(out.succeeded).toMatchObject([{ itemType: 'journalArticle', title: 'Linked Data Paper' }]);
    expect(w.world.server.library(LIB).items.get(out.succeeded[0]!.key)).toMatchObject({
      creators: [{ creatorType: 'author', firstName: 'Grace', lastName: 'Hopper' }],
      publicationTitle: 'LD Journal',
      date: '2019-07-01',
    });
    expect(pages.log.map((e) => [e.path, e.status])).toEqual([
      ['/old-ld', 301],
      ['/ld', 200],
    ]);
  });

  it('a page naming a DOI is resolved at Crossref; the DOI then counts for the duplicate check', async () => {
    w.fakes.addCrossref(crossrefWork({ doi: '10.1000/page', title: 'Crossref Title', container: 'Nature' }));
    pages.page(
      '/doi',
      `<meta name="citation_title" content="Page Title"><meta name="citation_doi" content="10.1000/page">`,
    );
    const out = await importTool.run({ url: [pages.at('/doi')] }, deps());
    expect(out.succeeded).toMatchObject([
      { entry: pages.at('/doi'), itemType: 'journalArticle', title: 'Crossref Title' },
    ]);
    expect(w.fakes.log.map((e) => [e.service, e.ids])).toEqual([['crossref', ['10.1000/page']]]);
    expect(w.world.server.library(LIB).items.get(out.succeeded[0]!.key)).toMatchObject({
      DOI: '10.1000/page',
      publicationTitle: 'Nature',
      url: pages.at('/doi'),
      libraryCatalog: 'DOI.org (Crossref)',
    });
    w.fakes.clearLog();
    const byDoi = await importTool.run({ doi: '10.1000/page' }, deps());
    expect(byDoi.unchanged).toEqual([
      { entry: '10.1000/page', key: out.succeeded[0]!.key, reason: 'duplicate' },
    ]);
    expect(w.fakes.log).toEqual([]);
  });

  it('a DOI neither Crossref nor DataCite knows: the page’s own metadata is used', async () => {
    pages.page('/unknown-doi', `${HIGHWIRE}<meta name="citation_doi" content="10.1000/nowhere">`);
    const out = await importTool.run({ url: [pages.at('/unknown-doi')] }, deps());
    expect(out.succeeded).toMatchObject([{ title: 'Highwire Paper' }]);
    expect(w.world.server.library(LIB).items.get(out.succeeded[0]!.key)).toMatchObject({
      DOI: '10.1000/nowhere',
      publicationTitle: 'Journal of Pages',
    });
  });

  it('nothing usable, not HTML, gone, unreachable: each page fails on its own with its reason', async () => {
    pages.page(
      '/plain',
      '<html><head><title>Home</title><meta property="og:title" content="Home"></head></html>',
    );
    pages.page('/paper.pdf', '%PDF-1.7', { type: 'application/pdf' });
    pages.page('/ok', HIGHWIRE);
    const events: ProgressEvent[] = [];
    const out = await importTool.run(
      {
        url: [
          pages.at('/plain'),
          pages.at('/paper.pdf'),
          pages.at('/gone'),
          'http://127.0.0.1:9/x',
          pages.at('/ok'),
        ],
      },
      w.deps({ env, progress: events }),
    );
    expect(events.map((e) => `${e.phase}:${e.event}:${e.done}/${e.total}`)).toEqual([
      'read_pages:start:0/5',
      'read_pages:progress:5/5',
      'read_pages:complete:5/5',
      'batch_add:start:0/5',
      'batch_add:progress:5/5',
      'batch_add:complete:5/5',
    ]);
    expect(out.succeeded.map((s) => s.entry)).toEqual([pages.at('/ok')]);
    expect(out.failed.map((f) => [f.entry, f.error.code, f.error.retryable])).toEqual([
      [pages.at('/plain'), 'not_found', false],
      [pages.at('/paper.pdf'), 'validation_error', false],
      [pages.at('/gone'), 'not_found', false],
      ['http://127.0.0.1:9/x', 'network_error', true],
    ]);
    expect(out.failed[0]!.error.message).toBe(
      `${pages.at('/plain')} has no citation metadata Zoteus can read (no Highwire citation_* tags, Dublin Core or JSON-LD article with a title) and names no DOI.`,
    );
    expect(out.failed[1]!.error.message).toContain('is application/pdf, not a web page');
    expect(posts()).toHaveLength(1);
  });

  it('a page in windows-1252, declared only by its <meta charset>, is decoded as such', async () => {
    const html =
      '<meta charset="windows-1252"><meta name="citation_title" content="Caf\u00e9 Societ\u00e0 \u2013 \u201cnotes\u201d">';
    pages.page('/latin', Buffer.from(toCp1252(html)), { type: 'text/html' });
    const out = await importTool.run({ url: [pages.at('/latin')] }, deps());
    expect(out.succeeded).toMatchObject([{ title: 'Caf\u00e9 Societ\u00e0 \u2013 \u201cnotes\u201d' }]);
  });

  it('a huge page is read only up to the cap; the metadata in its head still lands', async () => {
    const chunk = `<p>${'x'.repeat(64 * 1024)}</p>`;
    pages.stream('/huge', HIGHWIRE.replace('</head><body>…</body></html>', '</head><body>'), chunk, 1600);
    const out = await importTool.run({ url: [pages.at('/huge')] }, deps());
    expect(out.succeeded).toMatchObject([{ title: 'Highwire Paper' }]);
    // 100 MB offered; the client stopped after its 4 MiB cap (plus what sockets buffer).
    await new Promise((r) => setTimeout(r, 50));
    expect(pages.written.get('/huge')).toBeLessThan(16 * 1024 * 1024);
  });

  it('CLI: --url twice, one page without metadata: exit 7 and the failed entry', async () => {
    pages.page('/ok', HIGHWIRE);
    pages.page('/plain', '<title>Nothing</title>');
    const r = await w.zot(['add', '--url', pages.at('/ok'), '--url', pages.at('/plain')], env);
    expect(r.code).toBe(7);
    const e = envelope(r);
    expect(e.ok).toBe('partial');
    expect(e.data.succeeded).toMatchObject([{ entry: pages.at('/ok'), itemType: 'journalArticle' }]);
    expect(e.data.failed).toMatchObject([{ entry: pages.at('/plain'), error: { code: 'not_found' } }]);
  });

  it('CLI: a page failing on its side is retried alone with the same idempotency key', async () => {
    pages.page('/ok', HIGHWIRE);
    pages.page('/flaky', 'down', { status: 500, type: 'text/plain' });
    const args = [
      'add',
      '--url',
      pages.at('/ok'),
      '--url',
      pages.at('/flaky'),
      '--idempotency-key',
      'pages-1',
    ];
    const first = await w.zot(args, env);
    expect(first.code).toBe(7);
    expect(envelope(first).data.failed).toEqual([
      {
        entry: pages.at('/flaky'),
        error: {
          code: 'api_error',
          message: `${pages.at('/flaky')} answered HTTP 500 (a failure on its side).`,
          retryable: true,
        },
      },
    ]);
    pages.page('/flaky', HIGHWIRE.replace('Highwire Paper', 'Recovered Paper'));
    pages.log.length = 0;
    w.world.server.clearLog();
    const second = await w.zot(args, env);
    expect(second.code).toBe(0);
    expect(envelope(second).data.succeeded).toMatchObject([
      { entry: pages.at('/ok'), title: 'Highwire Paper' },
      { entry: pages.at('/flaky'), title: 'Recovered Paper' },
    ]);
    expect(pages.log.map((l) => l.path)).toEqual(['/flaky']);
    expect(posts()).toHaveLength(1);
    expect(items()).toHaveLength(2);
  });

  it('--dry-run lists the pages and ISBNs offline', async () => {
    const r = await w.zot(['add', '--isbn', '0-306-40615-2', '--isbn', '0-306-40615-3', '--dry-run'], {
      ...env,
      ZOTERO_API_KEY: undefined,
    });
    expect(r.code).toBe(0);
    expect(envelope(r).data).toMatchObject({
      would: {
        command: 'add',
        source: 'isbn',
        entries: 2,
        preview: [
          { entry: '0-306-40615-2', isbn: '9780306406157' },
          { entry: '0-306-40615-3', invalid: expect.stringContaining('check digit') },
        ],
      },
    });
    expect(ol.log).toEqual([]);
    expect(w.world.server.log).toEqual([]);
  });
});
