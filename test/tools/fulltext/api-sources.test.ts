/**
 * zotero_get_fulltext answering from the Web API's and the local API's `items/{key}/fulltext`
 * (the test server, no fetch mocks): the source and the request it made, `pageApprox` for an
 * index without page breaks and `page` for one with form feeds, completeness from
 * `indexedPages`/`totalPages`, and a 404 falling through to the next source.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemFulltext } from '../../../src/core/fulltext/item-text.js';
import type { Deps } from '../../../src/core/tool.js';
import tool from '../../../src/tools/fulltext/get-fulltext.js';
import { KEY, USER_ID, type DesktopWorld } from '../../core/library/router-world.js';
import { runZot } from '../../support/cli.js';
import { A, FALLBACK_PAGES, PARTIAL_TEXT, SNAPSHOT_TEXT, startApiWorld } from './api-world.js';
import { PAGED_TEXT, REPORT_TEXT } from './world.js';

let world: DesktopWorld;
let web: Deps;
let local: Deps;
beforeAll(async () => {
  world = await startApiWorld();
  web = world.deps({ env: { ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY } });
  local = world.deps();
});
afterAll(async () => {
  await web?.services.close();
  await local?.services.close();
  await world?.close();
});

type Out = Awaited<ReturnType<typeof tool.run>>;
async function call(deps: Deps, input: Parameters<typeof tool.run>[0]): Promise<Out> {
  const out = await tool.run(tool.input.parse(input), deps);
  expect(tool.output.safeParse(out).success).toBe(true);
  return out;
}

/** The full-text requests the server answered since the last clearLog, with their status. */
const fulltextRequests = () =>
  world.server.log.filter((e) => e.path.endsWith('/fulltext')).map((e) => `${e.status} ${e.path}`);

describe.each([
  { name: 'the Web API', deps: () => web, source: 'web', prefix: `users/${USER_ID}` },
  { name: 'the local API', deps: () => local, source: 'localApi', prefix: 'users/0' },
] as const)('from $name', ({ deps, source, prefix }) => {
  const path = (key: string) => `/${prefix}/items/${key}/fulltext`;
  const served = (key: string) => `${prefix === 'users/0' ? '/api' : ''}${path(key)}`;

  it('an index without page breaks: pageApprox = position × pages / characters', async () => {
    world.server.clearLog();
    const out = await call(deps(), { item_key: A.approx, q: 'sea ice extent' });
    expect(out).toMatchObject({
      source,
      sourceDetail: `GET ${path(A.approxPdf)}`,
      backend: source,
      attachment: { key: A.approxPdf },
      complete: true,
      indexedPages: 4,
      totalPages: 4,
      totalChars: REPORT_TEXT.length,
      pageLocator: 'approximate',
    });
    const best = out.passages![0]!;
    expect(best.text).toContain('Sea ice extent declined');
    expect(REPORT_TEXT.slice(best.start, best.end)).toBe(best.text);
    expect(best.pageApprox).toBe(3);
    expect(best.page).toBeUndefined();
    expect(out.message).toContain('approximate');
    expect(fulltextRequests()).toEqual([`200 ${served(A.approxPdf)}`]);
  });

  it('an index with form feeds: exact pages', async () => {
    const out = await call(deps(), { item_key: A.paged, q: 'krill' });
    expect(out).toMatchObject({ source, pageLocator: 'exact', complete: true, totalPages: 3 });
    expect(out.passages![0]).toMatchObject({ page: 2, heading: '2 Beta' });
    expect(out.passages![0]!.pageApprox).toBeUndefined();
    const pages = await call(deps(), { item_key: A.paged, page_range: '3' });
    expect(pages.pages![0]).toMatchObject({ page: 3, text: '3 Gamma\nthird page' });
  });

  it('indexed for 1 of 3 pages and no file: the index answers, complete: false', async () => {
    const out = await call(deps(), { item_key: A.partial });
    expect(out).toMatchObject({ source, complete: false, indexedPages: 1, totalPages: 3 });
    expect(out.text).toBe(PARTIAL_TEXT);
    expect(out.message).toContain('1 of 3 pages');
  });
});

describe('a 404 falls through to the next source', () => {
  it('Web API: the PDF has no indexed text and is not reachable: the indexed snapshot answers', async () => {
    world.server.clearLog();
    const out = await call(web, { item_key: A.fallback, q: 'polynyas' });
    expect(out).toMatchObject({
      source: 'web',
      attachment: { key: A.fallbackHtml, contentType: 'text/html' },
      pageLocator: 'none',
      totalChars: SNAPSHOT_TEXT.length,
    });
    expect(out.passages![0]!.text).toBe(SNAPSHOT_TEXT);
    expect(fulltextRequests()).toEqual([
      `404 /users/${USER_ID}/items/${A.fallbackPdf}/fulltext`,
      `200 /users/${USER_ID}/items/${A.fallbackHtml}/fulltext`,
    ]);
  });

  it('local API: the PDF has no indexed text but is on the desktop: the PDF answers, exact pages', async () => {
    world.server.clearLog();
    const out = await call(local, { item_key: A.fallback, q: 'katabatic polynyas' });
    expect(out).toMatchObject({ source: 'pdf', attachment: { key: A.fallbackPdf }, pageLocator: 'exact' });
    expect(out.sourceDetail).toBe(`${world.dataDir}/storage/${A.fallbackPdf}/fallback.pdf`);
    expect(out.passages![0]).toMatchObject({ page: 2, heading: '2 Section 2' });
    expect(out.totalPages).toBe(FALLBACK_PAGES.length);
    expect(fulltextRequests()).toEqual([`404 /api/users/0/items/${A.fallbackPdf}/fulltext`]);
  });
});

describe('itemFulltext (the search indexer) from the APIs', () => {
  it('the whole indexed text, its source and pages; the file when the API has none', async () => {
    expect(await itemFulltext(web, { itemKey: A.approx })).toEqual({
      text: REPORT_TEXT,
      source: 'web',
      attachmentKey: A.approxPdf,
      pages: 4,
    });
    expect(await itemFulltext(local, { itemKey: A.paged })).toEqual({
      text: PAGED_TEXT.replace(/\f/g, '\n'),
      source: 'localApi',
      attachmentKey: A.pagedPdf,
      pages: 3,
    });
    expect(await itemFulltext(web, { itemKey: A.fallback })).toMatchObject({
      source: 'web',
      attachmentKey: A.fallbackHtml,
      pages: null,
    });
    expect(await itemFulltext(local, { itemKey: A.fallback })).toMatchObject({
      source: 'pdf',
      attachmentKey: A.fallbackPdf,
      pages: 3,
    });
  });
});

describe('zot pdf against the Web API', () => {
  it('reports the Web API as the source, with approximate pages', async () => {
    const r = await runZot(['pdf', A.approx, '--q', 'sea ice extent'], {
      env: world.env({ ZOTEUS_LOCAL: 'off', ZOTERO_API_KEY: KEY }),
    });
    expect(r.code).toBe(0);
    const data = (r.json() as { data: Out }).data;
    expect(data).toMatchObject({ source: 'web', pageLocator: 'approximate', complete: true });
    expect(data.passages![0]!.pageApprox).toBe(3);
  });
});
