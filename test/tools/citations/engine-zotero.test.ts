/**
 * `zot cite --engine zotero` / `zotero_format_bibliography` with `engine: "zotero"` (issue 17,
 * deliverable 5): Zotero formats the items itself, through the Web API (a key, no desktop) or the
 * desktop's local API (the sample library mirrored to the test server, served under `/api`);
 * a library read only from zotero.sqlite is refused unless a key lets the Web API serve it.
 * The test server renders with a deterministic stand-in of citeproc-js (its APA: "Family, I.
 * (Year). Title. <i>Container</i>."), so the strings below are what it sends; what is asserted
 * is what Zoteus makes of them: the requests (one per 50 keys, pages of 100), the text, HTML and
 * Markdown taken from Zotero's HTML, failed entries, the bound, and the refusals.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { startWorld, type World } from '../../core/library/world.js';
import { KEY as DESKTOP_KEY, startDesktopWorld, type DesktopWorld } from '../../core/library/router-world.js';
import { I } from '../items/read/setup.js';

let web: World;
let desktop: DesktopWorld;
let sqliteOnly: DesktopWorld;

const FILLER = 150;
beforeAll(async () => {
  web = await startWorld();
  const lib = web.server.library('users/1');
  lib.addCollections([{ key: 'CLLECT22', name: 'Engines' }]);
  lib.addItems([
    {
      key: 'LVLACE22',
      itemType: 'journalArticle',
      title: 'Web article',
      date: '2021',
      publicationTitle: 'Notes on Engines',
      creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
      dateAdded: '2020-01-01T00:00:00Z',
    },
    {
      key: 'TWAUTH22',
      itemType: 'journalArticle',
      title: 'Sketch of the analytical engine',
      date: '1843',
      publicationTitle: 'Scientific Memoirs',
      creators: [
        { creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' },
        { creatorType: 'author', firstName: 'Charles', lastName: 'Babbage' },
      ],
      dateAdded: '2020-01-02T00:00:00Z',
    },
    {
      key: 'HPPER222',
      itemType: 'book',
      title: 'Compilers',
      creators: [{ creatorType: 'author', firstName: 'Grace', lastName: 'Hopper' }],
      dateAdded: '2020-01-03T00:00:00Z',
    },
    { key: 'NTE22222', itemType: 'note', note: '<p>A note</p>', dateAdded: '2020-01-04T00:00:00Z' },
    ...Array.from({ length: FILLER }, (_, i) => ({
      itemType: 'book',
      title: `Filler ${String(i).padStart(3, '0')}`,
      date: '2000',
      collections: ['CLLECT22'],
      dateAdded: `2021-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
    })),
  ]);
  desktop = await startDesktopWorld({ localApi: true });
  sqliteOnly = await startDesktopWorld();
  // IEEE and Chicago notes as the desktop has them installed (Debian's copies of the official styles).
  mkdirSync(join(desktop.dataDir, 'styles'), { recursive: true });
  for (const id of ['ieee', 'chicago-note-bibliography'])
    copyFileSync(
      `/usr/share/citation-style-language/styles/${id}.csl`,
      join(desktop.dataDir, 'styles', `${id}.csl`),
    );
});
afterAll(async () => {
  await web?.close();
  await desktop?.close();
  await sqliteOnly?.close();
});

interface CiteData {
  engine: string;
  backend: string;
  text: string;
  entries: Array<{ item_key: string; text: string }>;
  succeeded: string[];
  failed: Array<Record<string, unknown>>;
  warnings: string[];
  style: Record<string, unknown>;
  locale: string;
  totalResults?: number;
  nextStart?: number;
  truncated?: boolean;
  remaining?: string[];
}

async function cite(env: Record<string, string>, args: string[]) {
  const r = await zotAt(['cite', ...args], { env });
  const envelope = r.json();
  return {
    code: r.code,
    data: envelope.data as CiteData,
    error: envelope.error as { code: string; message: string; field?: string; hint?: string },
    envelope,
  };
}

/** The item listings the server was asked for (GETs under /items), in order. */
function itemRequests(world: { server: World['server'] }, local = false) {
  return world.server.log.filter(
    (e) => e.method === 'GET' && /\/items(\/top)?$/.test(e.path) && e.path.startsWith(local ? '/api/' : '/'),
  );
}

const LOVELACE = 'Lovelace, A. (2021). Web article. Notes on Engines.';
const SKETCH = 'Lovelace, A., & Babbage, C. (1843). Sketch of the analytical engine. Scientific Memoirs.';

describe('through the Web API', () => {
  it('Zotero formats the entries: one request with include=data,bib, the style and the locale', async () => {
    web.server.clearLog();
    const r = await cite(web.env(), ['LVLACE22', 'TWAUTH22', '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data).toMatchObject({ engine: 'zotero', backend: 'web', locale: 'en-US' });
    expect(r.data.style).toMatchObject({ id: 'apa', source: 'zotero', class: 'in-text' });
    expect(r.data.entries).toEqual([
      { item_key: 'LVLACE22', text: LOVELACE },
      { item_key: 'TWAUTH22', text: SKETCH },
    ]);
    expect(r.data.text).toBe(`${LOVELACE}\n${SKETCH}`);
    const reads = itemRequests(web);
    expect(reads).toHaveLength(1);
    expect(reads[0]?.path).toBe('/users/1/items');
    expect(reads[0]?.query).toMatchObject({
      itemKey: 'LVLACE22,TWAUTH22',
      include: 'data,bib',
      style: 'apa',
      locale: 'en-US',
      includeTrashed: '1',
    });
  });

  it('the default engine is still the local one, and says so', async () => {
    web.server.clearLog();
    const r = await cite(web.env(), ['LVLACE22']);
    expect(r.data.engine).toBe('local');
    expect(itemRequests(web)).toHaveLength(1);
    expect(itemRequests(web)[0]?.query.include).toBeUndefined();
  });

  it('one request per 50 keys, the entries in the order given', async () => {
    const keys = [...web.server.library('users/1').items.values()]
      .filter((i) => i.title?.startsWith('Filler'))
      .map((i) => i.key)
      .slice(0, 120);
    web.server.clearLog();
    const r = await cite(web.env(), [...keys, '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data.entries.map((e) => e.item_key)).toEqual(keys);
    const reads = itemRequests(web);
    expect(reads).toHaveLength(3);
    expect(reads.map((e) => String(e.query.itemKey).split(',').length).sort()).toEqual([20, 50, 50]);
  });

  it('a key that names no item and a note are failed entries, the others formatted: partial, exit 7', async () => {
    const r = await cite(web.env(), ['LVLACE22', 'ZZZZ2345', 'NTE22222', '--engine', 'zotero']);
    expect(r.code).toBe(7);
    expect(r.envelope.ok).toBe('partial');
    expect(r.data.text).toBe(LOVELACE);
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
        key: 'NTE22222',
        code: 400,
        message: 'NTE22222 is a note, not a work to cite.',
        reason: 'validation_error',
        retryable: false,
      },
    ]);
  });

  it('HTML as Zotero wrote it, Markdown with its italics', async () => {
    const html = await cite(web.env(), ['TWAUTH22', '--engine', 'zotero', '--format', 'html']);
    expect(html.data.entries[0]?.text).toBe(
      '<div class="csl-entry">Lovelace, A., &#38; Babbage, C. (1843). Sketch of the analytical engine. <i>Scientific Memoirs</i>.</div>',
    );
    expect(html.data.text).toBe(
      `<div class="csl-bib-body" style="line-height: 2; margin-left: 2em; text-indent:-2em;">\n${html.data.entries[0]?.text}\n</div>`,
    );
    const md = await cite(web.env(), ['TWAUTH22', '--engine', 'zotero', '--format', 'markdown']);
    expect(md.data.text).toBe(
      'Lovelace, A., & Babbage, C. (1843). Sketch of the analytical engine. *Scientific Memoirs*.',
    );
  });

  it('the locale goes to Zotero as a full tag, and Zotero’s terms follow it', async () => {
    web.server.clearLog();
    const r = await cite(web.env(), ['HPPER222', '--engine', 'zotero', '--locale', 'de']);
    expect(r.data.locale).toBe('de-DE');
    expect(r.data.text).toBe('Hopper, G. (o. J.). Compilers.');
    expect(itemRequests(web)[0]?.query.locale).toBe('de-DE');
  });

  it('an in-text citation of one item, as Zotero renders it (the Web API’s <span> taken off)', async () => {
    web.server.clearLog();
    const r = await cite(web.env(), ['TWAUTH22', '--mode', 'citation', '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data.text).toBe('(Lovelace & Babbage, 1843)');
    expect(r.data.entries).toEqual([]);
    expect(itemRequests(web)[0]?.query.include).toBe('data,citation');
    const html = await cite(web.env(), [
      'TWAUTH22',
      '--mode',
      'citation',
      '--engine',
      'zotero',
      '--format',
      'html',
    ]);
    expect(html.data.text).toBe('<span>(Lovelace &#38; Babbage, 1843)</span>');
  });

  it('what Zotero’s API cannot do is refused before any request: clusters, locators, a .csl file', async () => {
    web.server.clearLog();
    const cluster = await cite(web.env(), [
      'LVLACE22',
      'TWAUTH22',
      '--mode',
      'citation',
      '--engine',
      'zotero',
    ]);
    expect(cluster.code).toBe(3);
    expect(cluster.error).toMatchObject({ code: 'validation_error', field: 'item_keys' });
    expect(cluster.error.message).toBe(
      "Zotero's API formats the citation of one item at a time, not a cluster of 2.",
    );
    expect(cluster.error.hint).toContain('--engine local');
    const located = await cite(web.env(), [
      'LVLACE22',
      '--mode',
      'citation',
      '--locator',
      '12',
      '--engine',
      'zotero',
    ]);
    expect(located.error).toMatchObject({ code: 'validation_error', field: 'locators' });
    const file = await cite(web.env(), [
      'LVLACE22',
      '--engine',
      'zotero',
      '--style',
      '/usr/share/citation-style-language/styles/apa.csl',
    ]);
    expect(file.error).toMatchObject({ code: 'validation_error', field: 'style' });
    expect(itemRequests(web)).toHaveLength(0);
  });

  it('an unknown style is the local engine’s did-you-mean, before any request; one Zotero refuses is its word', async () => {
    web.server.clearLog();
    const unknown = await cite(web.env(), ['LVLACE22', '--engine', 'zotero', '--style', 'apaa']);
    expect(unknown.error).toMatchObject({ code: 'validation_error', field: 'style' });
    expect(unknown.error.message).toContain('apa');
    expect(itemRequests(web)).toHaveLength(0);
    // Vancouver is bundled with Zoteus, and this server's Zotero does not know it.
    const refused = await cite(web.env(), ['LVLACE22', '--engine', 'zotero', '--style', 'vancouver']);
    expect(refused.code).toBe(3);
    expect(refused.error).toMatchObject({ code: 'validation_error', field: 'style' });
    expect(refused.error.message).toMatch(/^Zotero refused the style vancouver: .*Invalid style/);
  });

  it('a collection in pages of 100, with nextStart', async () => {
    web.server.clearLog();
    const r = await cite(web.env(), ['--collection', 'CLLECT22', '--engine', 'zotero', '--limit', '140']);
    expect(r.code).toBe(0);
    expect(r.data.entries).toHaveLength(140);
    expect(r.data.entries[0]?.text).toBe('Filler 000. (2000).');
    expect(r.data).toMatchObject({ totalResults: FILLER, nextStart: 140 });
    const reads = itemRequests(web);
    expect(reads.map((e) => [e.path, e.query.start, e.query.limit])).toEqual([
      ['/users/1/collections/CLLECT22/items/top', '0', '100'],
      ['/users/1/collections/CLLECT22/items/top', '100', '40'],
    ]);
    expect(reads.every((e) => e.query.sort === 'dateAdded' && e.query.direction === 'asc')).toBe(true);
  });

  it('bounded like the local engine: a long bibliography stops within the budget and says what remains', async () => {
    const long = Array.from({ length: 400 }, (_, i) => ({
      itemType: 'book',
      title: `Long ${i} ${'word '.repeat(40)}`,
      date: '1999',
    }));
    const keys = web.server.library('users/1').addItems(long);
    const r = await cite(web.env(), [...keys, '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data.truncated).toBe(true);
    const shown = r.data.entries.map((e) => e.item_key);
    expect(shown).toEqual(keys.slice(0, shown.length));
    expect(r.data.remaining).toEqual(keys.slice(shown.length));
    expect(
      Buffer.byteLength(JSON.stringify(r.data.entries) + JSON.stringify(r.data.text)),
    ).toBeLessThanOrEqual(40_000);
  });
});

describe('through the desktop’s local API', () => {
  it('the sample library formatted by the desktop: /api/users/0, its COinS left out of the text', async () => {
    desktop.server.clearLog();
    const r = await cite(desktop.env(), [I.seaLevelArticle, '--engine', 'zotero']);
    expect(r.code).toBe(0);
    expect(r.data).toMatchObject({ engine: 'zotero', backend: 'localApi' });
    expect(r.data.text).toBe(
      'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics.',
    );
    const reads = itemRequests(desktop, true);
    expect(reads.map((e) => e.path)).toEqual(['/api/users/0/items']);
    const html = await cite(desktop.env(), [I.seaLevelArticle, '--engine', 'zotero', '--format', 'html']);
    expect(html.data.entries[0]?.text).toMatch(/<\/div>\n\s*<span class="Z3988" title="[^"]*"><\/span>$/);
  });

  it('a numbered style installed in the desktop: each entry numbered alone, and a warning says so', async () => {
    const r = await cite(desktop.env(), [
      I.seaLevelArticle,
      I.attentionPaper,
      '--engine',
      'zotero',
      '--style',
      'ieee',
    ]);
    expect(r.code).toBe(0);
    expect(r.data.style).toMatchObject({ id: 'ieee', source: 'zotero', citationFormat: 'numeric' });
    expect(r.data.entries.map((e) => e.text.slice(0, 4))).toEqual(['[1] ', '[1] ']);
    expect(r.data.warnings).toEqual([
      "Zotero's API formats each entry of ieee on its own, so every entry has the number 1; --engine local numbers them in order.",
    ]);
  });

  it('a note style’s citation: the desktop’s list, as text', async () => {
    const r = await cite(desktop.env(), [
      I.deepLearningBook,
      '--mode',
      'citation',
      '--engine',
      'zotero',
      '--style',
      'chicago-note-bibliography',
    ]);
    expect(r.data.text).toBe('Ian Goodfellow, Yoshua Bengio and Aaron Courville, Deep Learning.');
    expect(r.data.style).toMatchObject({ class: 'note' });
  });
});

describe('a library read only from zotero.sqlite', () => {
  it('is refused, saying which backend would be needed; nothing is read, nothing falls back', async () => {
    sqliteOnly.server.clearLog();
    const r = await cite(sqliteOnly.env(), [I.seaLevelArticle, '--engine', 'zotero']);
    expect(r.code).toBe(3);
    expect(r.error.code).toBe('validation_error');
    expect(r.error.field).toBe('engine');
    expect(r.error.message).toMatch(
      /^Zotero's own renderer \(--engine zotero\) formats and exports through the Zotero Web API or the desktop app's local API, and users\/8675309 is read from zotero\.sqlite, which has none: /,
    );
    expect(r.error.hint).toContain('ZOTERO_API_KEY');
    expect(r.error.hint).toContain('--engine local');
    expect(sqliteOnly.server.log).toHaveLength(0);
    // The local engine still works there.
    expect((await cite(sqliteOnly.env(), [I.seaLevelArticle])).code).toBe(0);
  });

  it('with an API key, the Web API formats it', async () => {
    sqliteOnly.server.clearLog();
    const r = await cite(sqliteOnly.env({ ZOTERO_API_KEY: DESKTOP_KEY }), [
      I.seaLevelArticle,
      '--engine',
      'zotero',
    ]);
    expect(r.code).toBe(0);
    expect(r.data.backend).toBe('web');
    expect(r.data.text).toBe(
      'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics.',
    );
    expect(itemRequests(sqliteOnly).map((e) => e.path)).toEqual(['/users/8675309/items']);
  });

  it('over MCP: the same refusal, in MCP’s words', async () => {
    const { mcpClient } = await import('../items/read/setup.js');
    const mcp = await mcpClient(sqliteOnly.env());
    try {
      const r = await mcp.call('zotero_format_bibliography', {
        item_keys: [I.seaLevelArticle],
        engine: 'zotero',
      });
      expect(r.isError).toBe(true);
      const text = (r.content[0] as { text: string }).text;
      expect(text).toContain("Zotero's own renderer (engine: zotero)");
      expect(text).toContain('engine: local');
    } finally {
      await mcp.close();
    }
  });
});

describe('the test server formats as Zotero does', () => {
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${web.server.url}${path}`, {
      headers: { 'Zotero-API-Version': '3', 'Zotero-API-Key': 'Zk3yS3cr3tAbCdEf12345678', ...headers },
    });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      text: await res.text(),
      headers: res.headers,
    };
  };

  it('include without data leaves data out; include=citation wraps the Web API’s citation in <span>', async () => {
    const r = await get('/users/1/items?itemKey=LVLACE22&include=citation&style=apa');
    const [item] = JSON.parse(r.text) as Array<Record<string, unknown>>;
    expect(item?.data).toBeUndefined();
    expect(item?.citation).toBe('<span>(Lovelace, 2021)</span>');
  });

  it('format=bib: the whole listing sorted by the style, paging ignored, at most 150 items', async () => {
    const r = await get('/users/1/items?itemKey=TWAUTH22,LVLACE22&format=bib&style=apa&limit=1');
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^text\/html/);
    expect(r.text.match(/csl-entry/g)).toHaveLength(2);
    expect(r.text.indexOf('1843')).toBeLessThan(r.text.indexOf('2021'));
    const atCap = await get('/users/1/collections/CLLECT22/items?format=bib&style=apa');
    expect(atCap.status).toBe(200);
    const all = await get('/users/1/items?format=bib&style=apa');
    expect(all.status).toBe(413);
    expect(all.text).toBe('Cannot generate bibliography with more than 150 items');
  });

  it('an unknown style is a 400; an unknown format too', async () => {
    expect((await get('/users/1/items?include=bib&style=nope')).status).toBe(400);
    const bad = await get('/users/1/items?format=docx');
    expect(bad).toMatchObject({ status: 400, text: "Invalid 'format' value 'docx'" });
  });
});
