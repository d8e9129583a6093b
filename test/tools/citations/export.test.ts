/**
 * `zot export` / `zotero_export` (issue 17, deliverable 4) end to end: the sample zotero.sqlite
 * and the Web API test server; BibTeX read back by an independent parser, RIS by citation-js,
 * CSL-JSON by citeproc-js; saving under the evidence table's rules; what reaches the cloud.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@retorquere/bibtex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { startWorld, type World } from '../../core/library/world.js';
import { I, startSample, type Sample } from '../items/read/setup.js';

const require = createRequire(import.meta.url);

let sample: Sample;
let web: World;
beforeAll(async () => {
  sample = await startSample();
  web = await startWorld();
  web.server.library('users/1').addItems([
    {
      key: 'WEBART22',
      itemType: 'journalArticle',
      title: 'Web article',
      date: '2021',
      creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
    },
    {
      key: 'WEBBK222',
      itemType: 'book',
      title: 'The Web book',
      date: '2022',
      extra: 'Citation Key: webbook',
    },
    ...Array.from({ length: 120 }, (_, i) => ({ itemType: 'book', title: `Filler ${i}`, date: '2000' })),
  ]);
});
afterAll(async () => {
  await sample?.close();
  await web?.close();
});

const data = (r: Awaited<ReturnType<typeof zotAt>>) => r.json().data as Record<string, unknown>;

describe('zot export on the desktop’s library', () => {
  it('BibTeX that an independent parser reads back, with keys unique across the library', async () => {
    const r = await zotAt(['export', I.seaLevelArticle, I.attentionPaper, I.deepLearningBook], {
      env: sample.env(),
    });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(d).toMatchObject({ format: 'bibtex', unique: 'library', backend: 'sqlite' });
    const bib = parse(d.text as string, { english: false });
    expect(bib.errors).toEqual([]);
    expect(bib.entries.map((e) => [e.key, e.type])).toEqual([
      ['church2011', 'article'],
      ['vaswani_attention_2017', 'inproceedings'],
      ['goodfellow_deep_2016', 'book'],
    ]);
    expect(bib.entries[0]?.fields).toMatchObject({
      title: 'Sea-level rise from the late 19th to the early 21st century',
      journal: 'Surveys in Geophysics',
      pages: '585–602',
      doi: '10.1007/s10712-011-9119-1',
    });
    expect(d.keys).toEqual([
      { item_key: I.seaLevelArticle, citation_key: 'church2011', source: 'extra' },
      { item_key: I.attentionPaper, citation_key: 'vaswani_attention_2017', source: 'generated' },
      { item_key: I.deepLearningBook, citation_key: 'goodfellow_deep_2016', source: 'generated' },
    ]);
  });

  it('a key does not depend on what else is exported', async () => {
    const alone = data(await zotAt(['export', I.attentionPaper], { env: sample.env() }));
    const all = data(await zotAt(['export', '--all', '--limit', '1000'], { env: sample.env() }));
    const inAll = (all.keys as Array<{ item_key: string; citation_key: string }>).find(
      (k) => k.item_key === I.attentionPaper,
    );
    expect((alone.keys as unknown[])[0]).toMatchObject({ citation_key: inAll?.citation_key });
    const keys = (all.keys as Array<{ citation_key: string }>).map((k) => k.citation_key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('RIS read back by citation-js', async () => {
    const d = data(
      await zotAt(['export', I.seaLevelArticle, I.deepLearningBook, '--format', 'ris'], {
        env: sample.env(),
      }),
    );
    require('@citation-js/plugin-ris');
    const { Cite } = require('@citation-js/core') as {
      Cite: new (input: string) => { data: Array<Record<string, unknown>> };
    };
    const read = new Cite(d.text as string).data;
    expect(read.map((r) => r.title)).toEqual([
      'Sea-level rise from the late 19th to the early 21st century',
      'Deep Learning',
    ]);
    expect(read[0]?.DOI).toBe('10.1007/s10712-011-9119-1');
  });

  it('CSL-JSON that citeproc-js formats', async () => {
    const d = data(await zotAt(['export', I.seaLevelArticle, '--format', 'csljson'], { env: sample.env() }));
    const items = JSON.parse(d.text as string) as Array<Record<string, unknown>>;
    expect(items).toHaveLength(1);
    // Its citation key of its own names it, as Zotero's CSL JSON export does.
    expect(items[0]).toMatchObject({
      id: 'church2011',
      type: 'article-journal',
      DOI: '10.1007/s10712-011-9119-1',
    });
    const CSL = require('citeproc') as {
      Engine: new (
        sys: unknown,
        style: string,
        lang?: string,
      ) => {
        updateItems(ids: string[]): void;
        makeBibliography(): [unknown, string[]];
      };
    };
    const dir = '/usr/share/citation-style-language';
    const engine = new CSL.Engine(
      {
        retrieveLocale: (lang: string) => readFileSync(`${dir}/locales/locales-${lang}.xml`, 'utf8'),
        retrieveItem: (id: string) => items.find((i) => i.id === id),
      },
      readFileSync(`${dir}/styles/apa.csl`, 'utf8'),
      'en-US',
    );
    engine.updateItems(['church2011']);
    expect(engine.makeBibliography()[1][0]).toContain('Surveys in Geophysics');
  });

  it('an unknown key is a failed entry while the others are exported: partial, exit 7', async () => {
    const r = await zotAt(['export', I.seaLevelArticle, 'ZZZZ2345'], { env: sample.env() });
    expect(r.code).toBe(7);
    expect(data(r).failed).toEqual([
      {
        index: 1,
        key: 'ZZZZ2345',
        code: 404,
        message: 'No item "ZZZZ2345" in users/8675309.',
        reason: 'not_found',
        retryable: false,
      },
    ]);
  });

  it('--save writes the file atomically, refuses to replace one without --overwrite, and works in read-only mode', async () => {
    const path = join(sample.dir, 'refs.bib');
    const env = sample.env({ ZOTEUS_READ_ONLY: 'true' });
    const saved = await zotAt(['export', '--all', '--save', path], { env });
    expect(saved.code).toBe(0);
    const d = data(saved);
    const text = readFileSync(path, 'utf8');
    expect(d.saved).toEqual({ path, bytes: Buffer.byteLength(text, 'utf8') });
    expect(parse(text, { english: false }).entries.length).toBe((d.succeeded as string[]).length);
    // Progress went to stderr (not a terminal: NDJSON), stdout stayed one envelope.
    expect(saved.stderr).toContain('"phase":"export"');
    writeFileSync(path, 'mine');
    const again = await zotAt(['export', I.seaLevelArticle, '--save', path], { env });
    expect(again.code).toBe(6);
    expect((again.json().error as { code: string }).code).toBe('conflict');
    expect(readFileSync(path, 'utf8')).toBe('mine');
    const over = await zotAt(['export', I.seaLevelArticle, '--save', path, '--overwrite'], { env });
    expect(over.code).toBe(0);
    expect(readFileSync(path, 'utf8')).toContain('@article{church2011,');
  });

  it('--dry-run says what it would write and writes nothing', async () => {
    const path = join(sample.dir, 'dry.bib');
    const r = await zotAt(['export', '--all', '--save', path, '--dry-run'], { env: sample.env() });
    expect(r.code).toBe(0);
    expect(existsSync(path)).toBe(false);
  });
});

describe('zot export through the Web API', () => {
  it('one item costs the item request alone: the library is never read whole, keys are unique within the export', async () => {
    web.server.log.length = 0;
    const r = await zotAt(['export', 'WEBART22', 'WEBBK222'], { env: web.env() });
    expect(r.code).toBe(0);
    const d = data(r);
    expect(d).toMatchObject({ unique: 'export', backend: 'web' });
    expect(d.keys).toEqual([
      { item_key: 'WEBART22', citation_key: 'lovelace_web_2021', source: 'generated' },
      { item_key: 'WEBBK222', citation_key: 'webbook', source: 'extra' },
    ]);
    const reads = web.server.log.filter((e) => e.path.includes('/items'));
    expect(reads).toHaveLength(1);
  });

  it('a page of the library at a time, with nextStart', async () => {
    const r = await zotAt(['export', '--all', '--limit', '50'], { env: web.env() });
    const d = data(r);
    expect((d.succeeded as string[]).length).toBe(50);
    expect(d.nextStart).toBe(50);
    expect(d.totalResults).toBe(122);
  });
});

describe('at a terminal', () => {
  it('the export is printed as it is, never re-wrapped to the width', async () => {
    const r = await zotAt(['export', I.attentionPaper], { env: sample.env(), stdoutTTY: true, columns: 60 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '\tauthor = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and Jones, Llion and Gomez, Aidan N. and Kaiser, {\\L}ukasz and Polosukhin, Illia},\n',
    );
  });
});
