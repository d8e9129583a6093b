/**
 * `zot export --engine zotero` / `zotero_export` with `engine: "zotero"` (issue 17, deliverable
 * 5): Zotero's own translators write the file (`format=bibtex|biblatex|ris|csljson` on item
 * listings) through the Web API or the desktop's local API. The test server's translators are
 * deterministic stand-ins (Zotero's BibTeX keys `author_title_year`, unique within one request);
 * what is asserted is what Zoteus does with them: the requests (data then export per 50 keys; the
 * keys then pages of 100 for a listing), how the answers are joined, failed entries, the bound,
 * a library that changes in between, saving, and the refusals.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@retorquere/bibtex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { startWorld, type World } from '../../core/library/world.js';
import { startDesktopWorld, type DesktopWorld } from '../../core/library/router-world.js';
import { I } from '../items/read/setup.js';

let web: World;
let desktop: DesktopWorld;
let sqliteOnly: DesktopWorld;

const FILLER = 250;
/** Items the whole library exports (not the note). */
const EXPORTABLE = FILLER + 4;
const at = (n: number) => new Date(Date.UTC(2021, 0, 1) + n * 1000).toISOString().replace('.000', '');

beforeAll(async () => {
  web = await startWorld();
  const lib = web.server.library('users/1');
  lib.addCollections([{ key: 'BIGCL222', name: 'Long titles' }]);
  lib.addItems([
    {
      key: 'EXART222',
      itemType: 'journalArticle',
      title: 'Web article',
      date: '2021',
      publicationTitle: 'Notes',
      DOI: '10.1/x_y',
      creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
      dateAdded: '2020-01-01T00:00:00Z',
    },
    {
      key: 'EXBK2222',
      itemType: 'book',
      title: 'The Web book',
      date: '2022',
      dateAdded: '2020-01-02T00:00:00Z',
    },
    { key: 'EXNTE222', itemType: 'note', note: '<p>A note</p>', dateAdded: '2020-01-03T00:00:00Z' },
    ...['DUPA2222', 'DUPB2222'].map((key, i) => ({
      key,
      itemType: 'book',
      title: 'Same title',
      date: '2020',
      creators: [{ creatorType: 'author', firstName: 'Jo', lastName: 'Smith' }],
      dateAdded: `2020-02-0${i + 1}T00:00:00Z`,
    })),
    ...Array.from({ length: FILLER }, (_, i) => ({
      itemType: 'book',
      title: `Filler ${i}`,
      date: '2000',
      dateAdded: at(i),
    })),
  ]);
  desktop = await startDesktopWorld({ localApi: true });
  sqliteOnly = await startDesktopWorld();
});
afterAll(async () => {
  await web?.close();
  await desktop?.close();
  await sqliteOnly?.close();
});

async function exp(env: Record<string, string>, args: string[]) {
  const r = await zotAt(['export', ...args], { env });
  const envelope = r.json();
  return {
    code: r.code,
    stderr: r.stderr,
    data: envelope.data as Record<string, unknown> & { text: string; succeeded: string[] },
    error: envelope.error as { code: string; message: string; field?: string; retryable?: boolean },
    envelope,
  };
}

function reads(server: World['server'], local = false) {
  return server.log.filter(
    (e) => e.method === 'GET' && /\/items(\/top)?$/.test(e.path) && e.path.startsWith(local ? '/api/' : '/'),
  );
}

describe('through the Web API', () => {
  it('by key: the items’ data, then one bibtex request; the text as Zotero’s translator wrote it', async () => {
    web.server.clearLog();
    const r = await exp(web.env(), ['EXART222', 'EXBK2222', '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data).toMatchObject({ engine: 'zotero', format: 'bibtex', backend: 'web' });
    expect(r.data.succeeded).toEqual(['EXART222', 'EXBK2222']);
    // Zoteus' own key bookkeeping is the local engine's.
    expect(r.data.keys).toBeUndefined();
    expect(r.data.unique).toBeUndefined();
    expect(r.data.text).toBe(
      [
        '@article{lovelace_web_2021,',
        '\ttitle = {Web article},',
        '\tjournal = {Notes},',
        '\tauthor = {Lovelace, Ada},',
        '\tyear = {2021},',
        '\tdoi = {10.1/x_y},',
        '}',
        '',
        '@book{noauthor_the_2022,',
        '\ttitle = {The Web book},',
        '\tyear = {2022},',
        '}',
        '',
      ].join('\n'),
    );
    const rs = reads(web.server);
    expect(rs).toHaveLength(2);
    expect(rs[0]?.query.format).toBeUndefined();
    expect(rs[1]?.query).toMatchObject({ itemKey: 'EXART222,EXBK2222', format: 'bibtex', limit: '2' });
  });

  it('Zotero’s keys are unique within the request, as its translator makes them', async () => {
    const r = await exp(web.env(), ['DUPA2222', 'DUPB2222', '--engine', 'zotero']);
    const { entries } = parse(r.data.text, { english: false });
    expect(entries.map((e) => e.key)).toEqual(['smith_same_2020', 'smith_same_2020-1']);
  });

  it('a key that names no item and a note are failed entries, the rest exported: partial, exit 7', async () => {
    web.server.clearLog();
    const r = await exp(web.env(), ['EXART222', 'ZZZZ2345', 'EXNTE222', '--engine', 'zotero']);
    expect(r.code).toBe(7);
    expect(r.data.succeeded).toEqual(['EXART222']);
    expect(r.data.failed).toEqual([
      {
        index: 1,
        key: 'ZZZZ2345',
        code: 404,
        message: 'No item "ZZZZ2345" in users/1.',
        reason: 'not_found',
        retryable: false,
      },
      {
        index: 2,
        key: 'EXNTE222',
        code: 400,
        message: 'EXNTE222 is a note, which has no entry of its own.',
        reason: 'validation_error',
        retryable: false,
      },
    ]);
    // The export asked only for what has an entry.
    expect(reads(web.server).at(-1)?.query.itemKey).toBe('EXART222');
  });

  it('a page of the library: its keys in one request, then RIS in pages of 100, joined in order', async () => {
    web.server.clearLog();
    const r = await exp(web.env(), ['--all', '--engine', 'zotero', '--format', 'ris', '--limit', '250']);
    expect(r.code).toBe(0);
    expect(r.data.succeeded).toHaveLength(250);
    expect(r.data).toMatchObject({ totalResults: EXPORTABLE, nextStart: 250 });
    const rs = reads(web.server);
    expect(rs.map((e) => [e.path, e.query.format, e.query.start, e.query.limit])).toEqual([
      ['/users/1/items/top', 'keys', '0', '250'],
      ['/users/1/items/top', 'ris', '0', '100'],
      ['/users/1/items/top', 'ris', '100', '100'],
      ['/users/1/items/top', 'ris', '200', '50'],
    ]);
    expect(rs.every((e) => JSON.stringify(e.query.itemType) === '["-attachment","-note"]')).toBe(true);
    const records = r.data.text.split('ER  - \r\n');
    expect(records).toHaveLength(251);
    expect(records[0]).toBe(
      'TY  - JOUR\r\nTI  - Web article\r\nAU  - Lovelace, Ada\r\nT2  - Notes\r\nPY  - 2021\r\nDO  - 10.1/x_y\r\n',
    );
    expect(records.at(-1)).toBe('');
    expect(r.data.text).not.toContain('\r\n\r\n\r\n');
  });

  it('CSL-JSON: the Web API’s {"items": […]} pages made one array', async () => {
    const r = await exp(web.env(), ['--all', '--engine', 'zotero', '--format', 'csljson', '--limit', '150']);
    const items = JSON.parse(r.data.text) as Array<Record<string, unknown>>;
    expect(items).toHaveLength(150);
    expect(items[0]).toMatchObject({
      id: 'http://zotero.org/users/1/items/EXART222',
      type: 'article-journal',
      title: 'Web article',
    });
  });

  it('--save streams the whole library: one keys request, pages of 100, progress on stderr', async () => {
    const path = join(web.box.dir, 'all.bib');
    web.server.clearLog();
    const r = await exp(web.env(), ['--all', '--engine', 'zotero', '--save', path]);
    expect(r.code).toBe(0);
    const text = readFileSync(path, 'utf8');
    expect(r.data.saved).toEqual({ path, bytes: Buffer.byteLength(text, 'utf8') });
    expect(parse(text, { english: false }).entries).toHaveLength(EXPORTABLE);
    const rs = reads(web.server);
    expect(rs[0]?.query).toMatchObject({ format: 'keys' });
    expect(rs[0]?.query.limit).toBeUndefined();
    expect(rs.slice(1).map((e) => [e.query.start, e.query.limit])).toEqual([
      ['0', '100'],
      ['100', '100'],
      ['200', '54'],
    ]);
    expect(r.stderr).toContain('"phase":"export"');
  });

  it('the library changing between the keys and a page is a conflict, never a file of mismatched pages', async () => {
    web.server.faults.concurrentEdit({
      match: { path: /format=biblatex/ },
      apply: (server) => server.library('users/1').editItem('EXBK2222', { title: 'The Web book, revised' }),
    });
    const path = join(web.box.dir, 'changed.bib');
    const r = await exp(web.env(), ['--all', '--engine', 'zotero', '--format', 'biblatex', '--save', path]);
    expect(r.error).toMatchObject({ code: 'conflict', retryable: true });
    expect(r.error.message).toMatch(
      /^The library changed while Zotero exported it \(version \d+, then \d+\)/,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('bounded like the local engine: a page over the budget is asked again for fewer items', async () => {
    const keys = web.server.library('users/1').addItems(
      Array.from({ length: 100 }, (_, i) => ({
        itemType: 'book',
        title: `Long ${i} ${'word '.repeat(120)}`,
        date: '1999',
        collections: ['BIGCL222'],
        dateAdded: at(10_000 + i),
      })),
    );
    web.server.clearLog();
    const r = await exp(web.env(), ['--collection', 'BIGCL222', '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data.truncated).toBe(true);
    const n = r.data.succeeded.length;
    expect(n).toBeGreaterThan(40);
    expect(r.data.succeeded).toEqual(keys.slice(0, n));
    expect(r.data.nextStart).toBe(n);
    expect(parse(r.data.text, { english: false }).entries).toHaveLength(n);
    expect(Buffer.byteLength(JSON.stringify(r.data.text))).toBeLessThanOrEqual(40_000);
    expect(reads(web.server).map((e) => [e.query.format, e.query.limit])).toEqual([
      ['keys', '100'],
      ['bibtex', '100'],
      ['bibtex', String(n)],
    ]);
  });

  it('charset is the local engine’s: refused before any request', async () => {
    web.server.clearLog();
    const r = await exp(web.env(), ['EXART222', '--engine', 'zotero', '--charset', 'ascii']);
    expect(r.code).toBe(3);
    expect(r.error).toMatchObject({ code: 'validation_error', field: 'charset' });
    expect(web.server.log).toHaveLength(0);
  });
});

describe('through the desktop’s local API', () => {
  it('CSL-JSON as the desktop’s translator writes it (an array), under /api', async () => {
    desktop.server.clearLog();
    const r = await exp(desktop.env(), [
      I.seaLevelArticle,
      I.deepLearningBook,
      '--engine',
      'zotero',
      '--format',
      'csljson',
    ]);
    expect(r.code).toBe(0);
    expect(r.data.backend).toBe('localApi');
    const items = JSON.parse(r.data.text) as Array<Record<string, unknown>>;
    expect(items.map((i) => i.title)).toEqual([
      'Sea-level rise from the late 19th to the early 21st century',
      'Deep Learning',
    ]);
    expect(reads(desktop.server, true).map((e) => [e.path, e.query.format ?? 'json'])).toEqual([
      ['/api/users/0/items', 'json'],
      ['/api/users/0/items', 'csljson'],
    ]);
  });
});

describe('a library read only from zotero.sqlite', () => {
  it('is refused, saying which backend would be needed; nothing is read', async () => {
    sqliteOnly.server.clearLog();
    const r = await exp(sqliteOnly.env(), ['--all', '--engine', 'zotero']);
    expect(r.code).toBe(3);
    expect(r.error).toMatchObject({ code: 'validation_error', field: 'engine' });
    expect(r.error.message).toContain('is read from zotero.sqlite, which has none');
    expect(sqliteOnly.server.log).toHaveLength(0);
  });
});
