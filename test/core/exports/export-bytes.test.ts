/**
 * The bytes of whole-library exports from zotero.sqlite stay what they were before the export
 * streamed its pages and read its keys in one SQL pass (issue 17, performance): the digests
 * below were taken from the export as it was at c2f1cb2 (the library hydrated twice, pages of
 * 100 through the reader's listing), on the few-hundred-item library of library-fixture.ts.
 * Every format saved with `--all`, a collection, items by key, and the answer's text page, the
 * envelope's data as well as the file. The crafted items' keys are spelled out, so a change
 * of keys reads as one.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandbox } from '../../support/cli.js';
import { buildSampleLibrary } from '../../support/zotero-sqlite/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { buildExportLibrary, CRAFTED_COLLECTION } from './library-fixture.js';

let box: ReturnType<typeof sandbox>;
let env: Record<string, string>;
let sampleBox: ReturnType<typeof sandbox>;
beforeAll(async () => {
  box = sandbox();
  await buildExportLibrary(box.env.ZOTERO_DATA_DIR as string);
  env = { ...box.env, ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0' };
  sampleBox = sandbox();
  await buildSampleLibrary(join(sampleBox.env.ZOTERO_DATA_DIR as string, 'zotero.sqlite'));
}, 120_000);
afterAll(() => {
  box?.cleanup();
  sampleBox?.cleanup();
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The envelope's data with the sandbox's temporary directory taken out. */
function dataOf(r: Awaited<ReturnType<typeof zotAt>>): Record<string, unknown> {
  const data = { ...(r.json().data as Record<string, unknown>) };
  const saved = data.saved as { path: string; bytes: number } | undefined;
  if (saved) data.saved = { bytes: saved.bytes };
  // Better BibTeX's reason names the sandbox's data directory.
  return JSON.parse(JSON.stringify(data).replaceAll(box.dir, '<sandbox>')) as Record<string, unknown>;
}

async function saved(args: string[], name: string, where = env) {
  const path = join(box.dir, name);
  const r = await zotAt(['export', ...args, '--save', path, '--overwrite'], { env: where });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const text = readFileSync(path, 'utf8');
  return { file: sha(text), bytes: Buffer.byteLength(text), data: sha(JSON.stringify(dataOf(r))) };
}

describe('whole-library exports keep their bytes', () => {
  it('BibTeX, --all --save', async () => {
    expect(await saved(['--all', '--format', 'bibtex'], 'all.bib')).toMatchInlineSnapshot(`
      {
        "bytes": 413405,
        "data": "fcbc0b8b799d0959e56c3382b8c801a1",
        "file": "e6ae8ab97c39a8e2f47654f51be1055f",
      }
    `);
  });

  it('BibLaTeX, --all --save', async () => {
    expect(await saved(['--all', '--format', 'biblatex'], 'all-latex.bib')).toMatchInlineSnapshot(`
      {
        "bytes": 412206,
        "data": "ff671a6de433980ae31b1c006f9f1a24",
        "file": "5a8dfc03aaa146d4bb7bad4ac26cbdaa",
      }
    `);
  });

  it('RIS, --all --save', async () => {
    expect(await saved(['--all', '--format', 'ris'], 'all.ris')).toMatchInlineSnapshot(`
      {
        "bytes": 403043,
        "data": "9009f258bc82ce4e1accafcec227fa6b",
        "file": "5187356aa6e8545639bb8a606ad1e783",
      }
    `);
  });

  it('CSL-JSON, --all --save', async () => {
    expect(await saved(['--all', '--format', 'csljson'], 'all.json')).toMatchInlineSnapshot(`
      {
        "bytes": 500579,
        "data": "60a3255467332c7bcb047b61fbd1ad70",
        "file": "30206a5fed7440da4df1ff8817750ab1",
      }
    `);
  });

  it('the sample library, BibTeX and CSL-JSON, --all --save', async () => {
    const where = { ...sampleBox.env, ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0' };
    expect({
      bibtex: await saved(['--all'], 'sample.bib', where),
      csljson: await saved(['--all', '--format', 'csljson'], 'sample.json', where),
    }).toMatchInlineSnapshot(`
      {
        "bibtex": {
          "bytes": 9403,
          "data": "0cba7ae014b266758bc603b6b519384b",
          "file": "ffe8030545316b24f42f095ccac097de",
        },
        "csljson": {
          "bytes": 16016,
          "data": "82627ac92f89eb96ad35aabf71396115",
          "file": "10c1fb9fbd0de2c4cd8f4a176a062940",
        },
      }
    `);
  });

  it('a collection, --save', async () => {
    expect(await saved(['--collection', CRAFTED_COLLECTION], 'collection.bib')).toMatchInlineSnapshot(`
      {
        "bytes": 542,
        "data": "1b4da181a9c9d7cfbc6612d7a7f49bbf",
        "file": "75224dcb51348136b8531e22523455b1",
      }
    `);
  });

  it('items by key, --save', async () => {
    expect(await saved(['EXTRAKY2', 'TAKENBY2', 'TIEBBBB2', 'CASEITM2'], 'keys.bib')).toMatchInlineSnapshot(`
      {
        "bytes": 470,
        "data": "7a45c60b3374de7c611264397f3b1454",
        "file": "2adfa51a388b29ff8ee8da83c2789809",
      }
    `);
  });

  it('the answer’s text, a page of the library', async () => {
    const r = await zotAt(['export', '--all', '--limit', '1000'], { env });
    expect(r.code).toBe(0);
    const data = dataOf(r);
    expect({ text: sha(data.text as string), data: sha(JSON.stringify(data)) }).toMatchInlineSnapshot(`
      {
        "data": "69ad7f3940d5a5f00499025f20128439",
        "text": "3799bac3d8692e8eb0b3f022c2dad58e",
      }
    `);
  });

  it('the crafted items’ keys, and the own keys two items share', async () => {
    const crafted = ['EXTRAKY2', 'FIELDKY2', 'DUPKEYA2', 'DUPKEYB2', 'TAKENBY2', 'TAKENWN2', 'CASEITM2'];
    crafted.push(
      'STATUTE2',
      'EMAILIT2',
      'NTHNG222',
      'LEGACY22',
      'TIEAAAA2',
      'TIEBBBB2',
      'TRASHED2',
      'TRASHGN2',
    );
    const r = await zotAt(['export', ...crafted, '--format', 'biblatex'], { env });
    const data = dataOf(r);
    expect({ code: r.code, failed: data.failed }).toMatchInlineSnapshot(`
      {
        "code": 0,
        "failed": [],
      }
    `);
    const keys = data.keys as Array<{ item_key: string; citation_key: string; source: string }>;
    expect(keys.map((k) => `${k.item_key} ${k.citation_key} ${k.source}`)).toMatchInlineSnapshot(`
      [
        "EXTRAKY2 smith2019own extra",
        "FIELDKY2 jones2018field field",
        "DUPKEYA2 shared2020 extra",
        "DUPKEYB2 shared2020 field",
        "TAKENBY2 taken_taken_2020-1 generated",
        "TAKENWN2 taken_taken_2020 extra",
        "CASEITM2 united_states_supreme_court_brown_1954 generated",
        "STATUTE2 noauthor_clean_1970 generated",
        "EMAILIT2 obrien-lukasz_matter_2023 generated",
        "NTHNG222 noauthor_notitle_nodate generated",
        "LEGACY22 von_muller_uber:_1850 generated",
        "TIEAAAA2 twin_twin_2001-1 generated",
        "TIEBBBB2 twin_twin_2001-2 generated",
        "TRASHED2 trashed2001 extra",
        "TRASHGN2 twin_twin_2001 generated",
      ]
    `);
    expect(data.duplicateKeys).toMatchInlineSnapshot(`
      [
        {
          "citationKey": "shared2020",
          "itemKeys": [
            "DUPKEYA2",
            "DUPKEYB2",
          ],
        },
      ]
    `);
  });
});
