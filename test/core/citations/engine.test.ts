/**
 * The CSL engine wrapper (engine.ts) around citeproc-js. Expected strings are worked out by hand
 * from the style's rules (APA 7th edition, Publication Manual §§ 8.10–8.11, 8.13, 8.19, 9.8,
 * 9.25), not captured from the code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bibliography, citations, htmlToMarkdown, parseLocator } from '../../../src/core/citations/engine.js';
import type { CslItem } from '../../../src/core/citations/csl-types.js';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps, createServiceRegistry } from '../../../src/core/deps.js';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import type { ServiceRegistry } from '../../../src/core/tool.js';
import { startStyleServer, type StyleServer } from '../../support/style-server.js';

const NOWHERE = 'http://127.0.0.1:9';

let dir: string;
let server: StyleServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-engine-'));
  server = await startStyleServer();
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function deps(env: Record<string, string> = {}, services?: ServiceRegistry) {
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
    ...(services ? { services } : {}),
  });
}
const online = () => deps({ ZOTEUS_STYLES_URL: server.stylesUrl, ZOTEUS_LOCALES_URL: server.localesUrl });

async function failure(promise: Promise<unknown>): Promise<ZoteusError> {
  try {
    await promise;
  } catch (error) {
    if (isZoteusError(error)) return error;
    throw error;
  }
  throw new Error('expected a ZoteusError');
}

/** A simple journal article: two authors, volume, issue, pages, DOI. */
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

/** Two works by one author in one year: APA tells them apart by a, b in the order of their titles. */
const BETA: CslItem = {
  id: 'beta',
  type: 'article-journal',
  title: 'Beta waves in learning',
  author: [{ family: 'Brown', given: 'Alice' }],
  issued: { 'date-parts': [[2020]] },
  'container-title': 'Neuron',
};
const ALPHA: CslItem = { ...BETA, id: 'alpha', title: 'Alpha waves in learning' };

describe('APA, by hand', () => {
  // Reference (§ 9.25, § 9.8): Author, A. A., & Author, B. B. (Year). Title of article in
  // sentence case. Periodical in italics, volume in italics(issue), first–last page with an
  // en dash. DOI as an https://doi.org/ URL, no full stop after it.
  const TEXT =
    'Smith, J. Q., & Jones, R. (2019). The effects of sleep on memory consolidation. Journal of Sleep Research, 28(4), 123–135. https://doi.org/10.1111/jsr.12345';

  it('formats a journal article: text, HTML and Markdown', async () => {
    const d = deps();
    const text = await bibliography(d, [ARTICLE], { style: 'apa' });
    expect(text.entries).toEqual([{ id: 'sleep', text: TEXT }]);
    expect(text).toMatchObject({
      style: { id: 'apa', source: 'bundled', class: 'in-text' },
      locale: 'en-US',
      locales: [{ tag: 'en-US', source: 'bundled' }],
      format: 'text',
      hasBibliography: true,
      // APA: double-spaced, hanging indent (§ 2.24, § 9.43).
      meta: { hangingIndent: true, lineSpacing: 2, secondFieldAlign: null },
      errors: [],
      warnings: [],
    });
    const html = await bibliography(d, [ARTICLE], { style: 'apa', format: 'html' });
    expect(html.entries[0]?.text).toBe(
      '<div class="csl-entry">Smith, J. Q., &#38; Jones, R. (2019). The effects of sleep on memory consolidation. <i>Journal of Sleep Research</i>, <i>28</i>(4), 123–135. https://doi.org/10.1111/jsr.12345</div>',
    );
    expect(html.meta).toMatchObject({ bibStart: '<div class="csl-bib-body">\n', bibEnd: '</div>' });
    const md = await bibliography(d, [ARTICLE], { style: 'apa', format: 'markdown' });
    expect(md.entries[0]?.text).toBe(
      'Smith, J. Q., & Jones, R. (2019). The effects of sleep on memory consolidation. *Journal of Sleep Research*, *28*(4), 123–135. <https://doi.org/10.1111/jsr.12345>',
    );
  });

  it('in-text citations: parenthetical with "&", a page locator, prefix and suffix, author suppressed', async () => {
    const out = await citations(
      deps(),
      [ARTICLE],
      [
        { items: [{ id: 'sleep' }] },
        { items: [{ id: 'sleep', locator: '12', label: 'page' }] },
        { items: [{ id: 'sleep', locator: '12', prefix: 'see ', suffix: ', for a review' }] },
        { items: [{ id: 'sleep', suppressAuthor: true }] },
        { items: [{ id: 'sleep', ...parseLocator('chapter 3') }] },
      ],
      { style: 'apa' },
    );
    expect(out.citations.map((c) => c.text)).toEqual([
      '(Smith & Jones, 2019)',
      '(Smith & Jones, 2019, p. 12)',
      '(see Smith & Jones, 2019, p. 12, for a review)',
      '(2019)',
      '(Smith & Jones, 2019, Chapter 3)',
    ]);
    expect(out.citations.every((c) => c.noteIndex === 0)).toBe(true);
  });

  it('two works by one author in one year get a and b, in the order of their titles, in citations and the list', async () => {
    const items = [BETA, ALPHA];
    const out = await citations(
      deps(),
      items,
      [
        { items: [{ id: 'beta' }] },
        { items: [{ id: 'alpha' }] },
        { items: [{ id: 'alpha' }, { id: 'beta' }] },
      ],
      { style: 'apa' },
    );
    expect(out.citations.map((c) => c.text)).toEqual([
      '(Brown, 2020b)',
      '(Brown, 2020a)',
      '(Brown, 2020a, 2020b)',
    ]);
    const list = await bibliography(deps(), items, { style: 'apa' });
    expect(list.entries).toEqual([
      { id: 'alpha', text: 'Brown, A. (2020a). Alpha waves in learning. Neuron.' },
      { id: 'beta', text: 'Brown, A. (2020b). Beta waves in learning. Neuron.' },
    ]);
  });

  it('a German locale changes the terms: "S." for the page', async () => {
    const out = await citations(deps(), [ARTICLE], [{ items: [{ id: 'sleep', locator: '12' }] }], {
      style: 'apa',
      locale: 'de',
    });
    expect(out.locale).toBe('de-DE');
    expect(out.citations[0]?.text).toBe('(Smith & Jones, 2019, S. 12)');
  });
});

describe('the engine', () => {
  it('is built once per style and locale in a process, and gives the same bytes whatever ran before', async () => {
    const inner = createServiceRegistry();
    const built: string[] = [];
    const services: ServiceRegistry = {
      get(name, create) {
        return inner.get(name, () => {
          if (name.startsWith('csl-engine:')) built.push(name);
          return create();
        });
      },
      close: () => inner.close(),
    };
    const d = deps({}, services);
    const first = await bibliography(d, [ARTICLE, BETA, ALPHA], { style: 'apa' });
    await citations(d, [BETA, ALPHA], [{ items: [{ id: 'alpha' }] }], { style: 'apa' });
    await bibliography(d, [ALPHA], { style: 'apa', format: 'markdown' });
    const again = await bibliography(d, [ARTICLE, BETA, ALPHA], { style: 'apa' });
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    // text once, html (for markdown) once.
    expect(built).toHaveLength(2);
    // Only the items given: a one-item list has no "a" suffix left from before.
    expect((await bibliography(d, [ALPHA], { style: 'apa' })).entries[0]?.text).toBe(
      'Brown, A. (2020). Alpha waves in learning. Neuron.',
    );
    expect(built).toHaveLength(2);
  });

  it('a dependent style runs as its parent in its own default-locale; an explicit locale wins', async () => {
    const group: CslItem = {
      id: 'group',
      type: 'article-journal',
      title: 'Gruppenarbeit',
      author: [
        { family: 'Meier', given: 'Anna' },
        { family: 'Huber', given: 'Bernd' },
        { family: 'Keller', given: 'Clara' },
      ],
      issued: { 'date-parts': [[2018]] },
      'container-title': 'Zeitschrift',
    };
    const cluster = [{ items: [{ id: 'group', locator: '4' }] }];
    const german = await citations(online(), [group], cluster, { style: 'berliner-journal-fur-soziologie' });
    expect(german).toMatchObject({
      style: { id: 'berliner-journal-fur-soziologie', parent: { id: 'springer-socpsych-author-date' } },
      locale: 'de-DE',
    });
    // Springer's style sets "et al." for every language; the page term is the locale's.
    expect(german.citations[0]?.text).toBe('(Meier et al. 2018, S. 4)');
    const english = await citations(online(), [group], cluster, {
      style: 'berliner-journal-fur-soziologie',
      locale: 'en-US',
    });
    expect(english.citations[0]?.text).toBe('(Meier et al. 2018, p. 4)');
  });

  it('a note style numbers its notes; the style’s default-locale not available offline is a warning', async () => {
    const note = await citations(
      deps(),
      [ARTICLE],
      [{ items: [{ id: 'sleep' }] }, { items: [{ id: 'sleep' }], noteIndex: 5 }],
      { style: '/usr/share/citation-style-language/styles/chicago-note-bibliography.csl' },
    );
    expect(note.style).toMatchObject({ class: 'note', source: 'path' });
    expect(note.citations.map((c) => c.noteIndex)).toEqual([1, 5]);
    // Harvard (bundled) asks for en-GB, which only a repository has.
    const harvard = await bibliography(deps(), [ARTICLE], { style: 'harvard-cite-them-right' });
    expect(harvard.entries).toHaveLength(1);
    expect(harvard.warnings).toEqual([
      'The locale en-GB of the style is not available (The CSL locale en-GB is not available offline, and the locales repository could not be reached: Could not reach the CSL locales repository (http://127.0.0.1:9): bad port); its terms fall back to en-US.',
    ]);
  });

  it('an explicit locale that cannot be had is an error, not a fallback', async () => {
    const error = await failure(bibliography(deps(), [ARTICLE], { style: 'apa', locale: 'pt-BR' }));
    expect(error.code).toBe('network_error');
    expect((await failure(bibliography(deps(), [ARTICLE], { style: 'apa', locale: 'klingon' }))).code).toBe(
      'validation_error',
    );
  });

  it('refuses clusters that cite what is not given, an empty cluster, and unknown labels', async () => {
    const d = deps();
    const missing = await failure(citations(d, [ARTICLE], [{ items: [{ id: 'nope' }] }], { style: 'apa' }));
    expect(missing.message).toBe('Citation 1 cites nope, which is not among the items given.');
    const empty = await failure(citations(d, [ARTICLE], [{ items: [] }], { style: 'apa' }));
    expect(empty.message).toBe('Citation 1 cites nothing: give at least one item.');
    const label = await failure(
      citations(d, [ARTICLE], [{ items: [{ id: 'sleep', locator: '3', label: 'pgae' }] }], { style: 'apa' }),
    );
    expect(label.code).toBe('validation_error');
    expect(label.message).toMatch(
      /^Unknown locator label "pgae": did you mean 'page'\? CSL knows act, appendix, /,
    );
  });

  it('an empty list of items is an empty bibliography', async () => {
    const out = await bibliography(deps(), [], { style: 'apa' });
    expect(out.entries).toEqual([]);
    expect(out.hasBibliography).toBe(true);
  });
});

describe('locators', () => {
  it('reads a leading label word or abbreviation', () => {
    expect(parseLocator('12')).toEqual({ locator: '12' });
    expect(parseLocator('12-14')).toEqual({ locator: '12-14' });
    expect(parseLocator('p. 12')).toEqual({ label: 'page', locator: '12' });
    expect(parseLocator('pp. 12–14')).toEqual({ label: 'page', locator: '12–14' });
    expect(parseLocator('page 12-14')).toEqual({ label: 'page', locator: '12-14' });
    expect(parseLocator('chapter 3')).toEqual({ label: 'chapter', locator: '3' });
    expect(parseLocator('§ 4')).toEqual({ label: 'section', locator: '4' });
    expect(parseLocator('fig. 2b')).toEqual({ label: 'figure', locator: '2b' });
    expect(parseLocator('Smith 12')).toEqual({ locator: 'Smith 12' });
    expect(parseLocator('iv')).toEqual({ locator: 'iv' });
  });
});

describe('Markdown from citeproc-js HTML', () => {
  it('turns its tags into Markdown and escapes the text', () => {
    expect(htmlToMarkdown('<i>Nature</i>, <b>28</b>, 1&#38;2')).toBe('*Nature*, **28**, 1&2');
    // A normal-style span inside italics ends the emphasis and starts it again.
    expect(htmlToMarkdown('<i>A study of <span style="font-style:normal;">Homo</span> sapiens</i>')).toBe(
      '*A study of* Homo *sapiens*',
    );
    expect(htmlToMarkdown('H<sub>2</sub>O and E = mc<sup>2</sup>')).toBe(
      'H<sub>2</sub>O and E = mc<sup>2</sup>',
    );
    expect(htmlToMarkdown('<span style="font-variant:small-caps;">Smith</span>, J.')).toBe('Smith, J.');
    expect(htmlToMarkdown('C++ *and* [brackets] &#60;tag&#62; a_b')).toBe(
      'C++ \\*and\\* \\[brackets\\] \\<tag\\> a\\_b',
    );
    expect(
      htmlToMarkdown('See https://example.org/a_b_c. Then <a href="https://x.org/y">the page</a>.'),
    ).toBe('See <https://example.org/a_b_c>. Then [the page](https://x.org/y).');
    expect(
      htmlToMarkdown(
        '<div class="csl-entry">\n    <div class="csl-left-margin">[1]</div><div class="csl-right-inline">A. Smith, <i>Title</i>.</div>\n  </div>',
      ),
    ).toBe('\\[1\\] A. Smith, *Title*.');
    // Emphasis markers never stand next to a space inside them.
    expect(htmlToMarkdown('in<i> Journal </i>of')).toBe('in *Journal* of');
  });

  it('IEEE in Markdown: the number column, then the entry', async () => {
    const out = await bibliography(online(), [ARTICLE], { style: 'ieee', format: 'markdown' });
    // IEEE (Editorial Style Manual): initials first, "and" between two authors, the title in
    // quotation marks with the comma inside, the journal in italics, vol./no./pp., the year, the DOI.
    expect(out.entries[0]?.text).toBe(
      '\\[1\\] J. Q. Smith and R. Jones, “The effects of sleep on memory consolidation,” *Journal of Sleep Research*, vol. 28, no. 4, pp. 123–135, 2019, doi: 10.1111/jsr.12345.',
    );
    expect(out.meta.secondFieldAlign).toBe('flush');
  });
});

describe('a conference paper’s meeting (CSL 1.0.2 event-title)', () => {
  it('reaches styles that read only `event` (IEEE; Chicago author-date for a presentation), as Zotero maps it', async () => {
    const paper: CslItem = {
      id: 'agu',
      type: 'paper-conference',
      title: 'Meltwater pulses in outlet glaciers',
      author: [{ family: 'Frost', given: 'Ada' }],
      'event-title': 'AGU Fall Meeting 2019',
      'event-place': 'San Francisco',
      issued: { 'date-parts': [[2019, 12]] },
    };
    const ieee = await bibliography(online(), [paper], { style: 'ieee' });
    expect(ieee.entries[0]?.text).toContain('presented at the AGU Fall Meeting 2019');
    // Chicago prints the event of a presentation (Zotero's presentation is CSL `speech`).
    const talk: CslItem = { ...paper, id: 'talk', type: 'speech', genre: 'Poster' };
    const chicago = await bibliography(online(), [talk], { style: 'chicago-author-date' });
    expect(chicago.entries[0]?.text).toBe(
      'Frost, Ada. 2019. “Meltwater Pulses in Outlet Glaciers.” Poster presented at the AGU Fall Meeting 2019, San Francisco, December.',
    );
  });
});
