/**
 * The parsed cache (styles.ts parsedDir, engine.ts CslForms): after the first engine build a
 * style's and its locales' parsed forms are kept in `$ZOT_CACHE_DIR/csl/parsed/`, and a later
 * process (fresh deps, as a new `zot cite` is) builds from them without parsing XML, giving the
 * same bytes. Each test checks what a user would see: the files, the formatted text, and that
 * a broken or stale entry never changes an answer.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bibliography, citations } from '../../../src/core/citations/engine.js';
import type { CslItem } from '../../../src/core/citations/csl-types.js';
import { resolveStyle } from '../../../src/core/citations/styles.js';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';

const NOWHERE = 'http://127.0.0.1:9';
const require = createRequire(import.meta.url);
const CITEPROC = (require('citeproc/package.json') as { version: string }).version;
const STYLES = require('@citation-js/plugin-csl/lib/styles.json') as Record<string, string>;
const LOCALES = require('@citation-js/plugin-csl/lib/locales.json') as Record<string, string>;
const digest = (xml: string) => createHash('sha256').update(xml).digest('hex');
const APA = digest(STYLES.apa as string);
const EN_US = digest(LOCALES['en-US'] as string);

let dir: string;
let logged: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-parsed-'));
  logged = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A new process's deps (services of its own), offline: APA and en-US are the bundled copies. */
function deps(env: Record<string, string> = {}) {
  const full = {
    HOME: dir,
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTERO_DATA_DIR: join(dir, 'Zotero'),
    ZOTEUS_STYLES_URL: NOWHERE,
    ZOTEUS_LOCALES_URL: NOWHERE,
    ...env,
  };
  return createDeps({
    config: loadConfig(full),
    env: full,
    version: '0.0.0-test',
    surface: 'cli',
    writeLog: (line) => logged.push(line),
  });
}

const parsed = (name = '') => join(dir, 'cache', 'csl', 'parsed', name);
const form = (hash: string) => parsed(`${hash}.citeproc-${CITEPROC}.json`);

const ARTICLE: CslItem = {
  id: 'sleep',
  type: 'article-journal',
  title: 'The effects of sleep on memory consolidation',
  author: [
    { family: 'Smith', given: 'Jane Q.' },
    { family: 'Jones', given: 'Robert' },
  ],
  issued: { 'date-parts': [[2019]] },
  'container-title': 'Journal of Sleep Research',
  volume: '28',
  issue: '4',
  page: '123-135',
  DOI: '10.1111/jsr.12345',
};
const ENTRY =
  'Smith, J. Q., & Jones, R. (2019). The effects of sleep on memory consolidation. Journal of Sleep Research, 28(4), 123–135. https://doi.org/10.1111/jsr.12345';

/** The bibliography entry and the citation with a page locator, as one process makes them. */
async function cite(env: Record<string, string> = {}) {
  const d = deps(env);
  const bib = await bibliography(d, [ARTICLE], { style: 'apa' });
  const cited = await citations(d, [ARTICLE], [{ items: [{ id: 'sleep', locator: '12' }] }], {
    style: 'apa',
  });
  return { entry: bib.entries[0]?.text, citation: cited.citations[0]?.text };
}

interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Array<Node | string>;
}
function* nodes(node: Node): Generator<Node> {
  yield node;
  for (const c of node.children) if (typeof c !== 'string') yield* nodes(c);
}
/** Changes a kept form in place: what the next process builds from. */
function edit(file: string, change: (root: Node) => void): void {
  const root = JSON.parse(readFileSync(file, 'utf8')) as Node;
  change(root);
  writeFileSync(file, JSON.stringify(root));
}

describe('the parsed cache', () => {
  it('the first build keeps the style’s and the locale’s parsed forms; the next process builds from them, the same bytes', async () => {
    expect(existsSync(parsed())).toBe(false);
    const first = await cite();
    expect(first).toEqual({ entry: ENTRY, citation: '(Smith & Jones, 2019, p. 12)' });
    expect(readdirSync(parsed()).sort()).toEqual(
      [`${APA}.citeproc-${CITEPROC}.json`, `${APA}.meta.json`, `${EN_US}.citeproc-${CITEPROC}.json`].sort(),
    );
    const kept = readdirSync(parsed()).map((name) => readFileSync(parsed(name), 'utf8'));
    expect(await cite()).toEqual(first);
    // Read, not written again.
    expect(readdirSync(parsed()).map((name) => readFileSync(parsed(name), 'utf8'))).toEqual(kept);
  });

  it('the next process reads them: a changed form changes its output (the XML is not parsed again)', async () => {
    await cite();
    edit(form(APA), (root) => {
      const layout = [...nodes(root)]
        .find((n) => n.name === 'citation')
        ?.children.find((c): c is Node => typeof c !== 'string' && c.name === 'layout');
      (layout as Node).attrs.prefix = '[';
    });
    edit(form(EN_US), (root) => {
      const page = [...nodes(root)].find(
        (n) => n.name === 'term' && n.attrs.name === 'page' && n.attrs.form === 'short',
      ) as Node;
      for (const n of nodes(page)) n.children = n.children.map((c) => (c === 'p.' ? 'S.' : c));
    });
    expect((await cite()).citation).toBe('[Smith & Jones, 2019, S. 12)');
  });

  it('an entry that is no JSON, or one the engine refuses, is parsed again from the XML and written anew', async () => {
    const first = await cite();
    writeFileSync(form(APA), '{"name":"style","attrs":{},"chil');
    writeFileSync(form(EN_US), 'not json');
    expect(await cite()).toEqual(first);
    expect(JSON.parse(readFileSync(form(APA), 'utf8'))).toMatchObject({ name: 'style' });
    expect(JSON.parse(readFileSync(form(EN_US), 'utf8'))).toMatchObject({ name: 'locale' });
    // A well-formed tree the engine cannot load.
    writeFileSync(form(APA), '{"name":"style","attrs":{},"children":[]}');
    expect(await cite()).toEqual(first);
    expect((JSON.parse(readFileSync(form(APA), 'utf8')) as Node).children.length).toBeGreaterThan(0);
  });

  it('resolution takes a style’s description from the cache; an entry of another format is checked again', async () => {
    await cite();
    const meta = parsed(`${APA}.meta.json`);
    const entry = JSON.parse(readFileSync(meta, 'utf8')) as { format: number; meta: { title: string } };
    expect(entry.meta.title).toBe('American Psychological Association 7th edition');
    writeFileSync(meta, JSON.stringify({ ...entry, meta: { ...entry.meta, title: 'APA, as kept' } }));
    expect((await resolveStyle(deps(), 'apa')).title).toBe('APA, as kept');
    writeFileSync(
      meta,
      JSON.stringify({ format: entry.format + 1, meta: { ...entry.meta, title: 'APA, as kept' } }),
    );
    expect((await resolveStyle(deps(), 'apa')).title).toBe('American Psychological Association 7th edition');
    writeFileSync(meta, JSON.stringify({ format: entry.format, meta: { ...entry.meta, class: 'footnote' } }));
    expect((await resolveStyle(deps(), 'apa')).class).toBe('in-text');
  });

  it('entries not written for 30 days are removed when another is written; recent ones stay', async () => {
    await cite();
    const old = (Date.now() - 31 * 24 * 3_600_000) / 1000;
    utimesSync(form(APA), old, old);
    writeFileSync(parsed('left-by-a-killed-write.json.1.1.tmp'), '{');
    const hourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(parsed('left-by-a-killed-write.json.1.1.tmp'), hourAgo, hourAgo);
    // Vancouver's first build writes its entries.
    await bibliography(deps(), [ARTICLE], { style: 'vancouver' });
    const names = readdirSync(parsed());
    expect(names).not.toContain(`${APA}.citeproc-${CITEPROC}.json`);
    expect(names).not.toContain('left-by-a-killed-write.json.1.1.tmp');
    expect(names).toContain(`${APA}.meta.json`);
    expect(names).toContain(`${EN_US}.citeproc-${CITEPROC}.json`);
    expect(names).toContain(`${digest(STYLES.vancouver as string)}.citeproc-${CITEPROC}.json`);
  });

  it('a cache that cannot be written costs the parse only: the same bytes, no warning', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const env = { ZOT_CACHE_DIR: join(dir, 'a-file', 'cache') };
    expect(await cite(env)).toEqual({ entry: ENTRY, citation: '(Smith & Jones, 2019, p. 12)' });
    expect(await cite(env)).toEqual({ entry: ENTRY, citation: '(Smith & Jones, 2019, p. 12)' });
    expect(logged.filter((line) => /warn/i.test(line))).toEqual([]);
  });
});

describe('macro lookups from an index', () => {
  const style = (body: string) => `<?xml version="1.0" encoding="utf-8"?>
<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">
  <info><id>http://example.org/macros</id><title>Macros</title></info>
  <citation><layout prefix="(" suffix=")"><text macro="who"/><text value=", "/><text macro="when"/></layout></citation>
  ${body}
</style>`;

  it('finds macros defined after their use and inside other macros, in both builds', async () => {
    const path = join(dir, 'macros.csl');
    writeFileSync(
      path,
      style(`<macro name="when"><date variable="issued"><date-part name="year"/></date></macro>
  <macro name="who"><text macro="family"/></macro>
  <macro name="family"><names variable="author"><name form="short" and="symbol"/></names></macro>`),
    );
    for (let run = 0; run < 2; run += 1) {
      const out = await citations(deps(), [ARTICLE], [{ items: [{ id: 'sleep' }] }], { style: path });
      expect(out.citations[0]?.text).toBe('(Smith & Jones, 2019)');
    }
  });

  it('a macro the style does not define renders as nothing, as citeproc-js makes it without the index', async () => {
    const path = join(dir, 'undefined-macro.csl');
    writeFileSync(path, style('<macro name="who"><text variable="title"/></macro>'));
    const out = await citations(deps(), [ARTICLE], [{ items: [{ id: 'sleep' }] }], { style: path });
    expect(out.citations[0]?.text).toBe('(The effects of sleep on memory consolidation, )');
  });
});
