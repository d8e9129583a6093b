/**
 * `zotero_check_citations` on every backend and on a shared deployment: over the Web API (the
 * whole library read page by page, keys of the items' own shared by two items reported as
 * ambiguous), through the desktop's local API (the library read once, though the key
 * assignment pages it too), and with a caller's own folder (`fileRoot`), where the .bib is
 * saved and named as the resource that reads it back.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@retorquere/bibtex-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tool from '../../../src/tools/citations/check-citations.js';
import { startDesktopWorld, type DesktopWorld } from '../../core/library/router-world.js';
import { startWorld, type World } from '../../core/library/world.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { startSample, type Sample } from '../items/read/setup.js';

type Data = Record<string, unknown> & {
  counts: Record<string, number>;
  found: Array<Record<string, unknown>>;
  ambiguous: Array<Record<string, unknown>>;
  failed: Array<Record<string, unknown>>;
};

describe('over the Web API', () => {
  let web: World;
  beforeAll(async () => {
    web = await startWorld();
    web.server.library('users/1').addItems([
      {
        key: 'DUPA2345',
        itemType: 'book',
        title: 'First of two',
        date: '2020',
        extra: 'Citation Key: shared2020',
      },
      {
        key: 'DUPB2345',
        itemType: 'journalArticle',
        title: 'Second of two',
        date: '2020',
        extra: 'tex.note: x\nCitation Key: shared2020',
      },
      {
        key: 'LVLACE22',
        itemType: 'journalArticle',
        title: 'Notes on the analytical engine',
        date: '1843',
        creators: [{ creatorType: 'author', firstName: 'Ada', lastName: 'Lovelace' }],
      },
      {
        key: 'PINNED22',
        itemType: 'book',
        title: 'Pinned in its field',
        date: '2001',
        citationKey: 'pinned_key',
      },
      ...Array.from({ length: 246 }, (_, i) => ({ itemType: 'book', title: `Filler ${i}`, date: '2000' })),
    ]);
  });
  afterAll(async () => {
    await web?.close();
  });

  it('reads the whole library a page of 100 at a time; two items with one key are ambiguous, a failed entry (409)', async () => {
    web.server.log.length = 0;
    const r = await zotAt(['bibcheck', '--text', '-', '--kind', 'markdown'], {
      env: web.env(),
      stdin: 'Ada [@lovelace_notes_1843], pinned [@pinned_key], shared [@shared2020], none [@lovelace1843].',
    });
    expect(r.code).toBe(7);
    const d = r.json().data as Data;
    expect(d).toMatchObject({
      backend: 'web',
      library: 'users/1',
      counts: { found: 2, missing: 1, ambiguous: 1, unstable: 1 },
    });
    expect(d.found).toEqual([
      {
        citation_key: 'lovelace_notes_1843',
        item_key: 'LVLACE22',
        title: 'Notes on the analytical engine',
        source: 'generated',
      },
      { citation_key: 'pinned_key', item_key: 'PINNED22', title: 'Pinned in its field', source: 'field' },
    ]);
    expect(d.ambiguous).toEqual([
      {
        citation_key: 'shared2020',
        items: [
          { item_key: 'DUPA2345', title: 'First of two' },
          { item_key: 'DUPB2345', title: 'Second of two' },
        ],
      },
    ]);
    expect(d.missing).toEqual([
      { citation_key: 'lovelace1843', file: '(text)', line: 1, did_you_mean: ['lovelace_notes_1843'] },
    ]);
    expect(d.failed).toEqual([
      expect.objectContaining({ index: 3, key: 'lovelace1843', code: 404, reason: 'not_found' }),
      {
        index: 2,
        key: 'shared2020',
        code: 409,
        message:
          '2 items have the citation key "shared2020" as their own: DUPA2345, DUPB2345. Give each its own key.',
        reason: 'conflict',
        retryable: false,
      },
    ]);
    // 250 top-level items: three pages, nothing read twice, nothing written.
    const reads = web.server.log.filter((e) => e.path.startsWith('/users/1/items'));
    expect(reads.map((e) => e.path)).toEqual([
      '/users/1/items/top',
      '/users/1/items/top',
      '/users/1/items/top',
    ]);
    expect(web.server.log.filter((e) => e.method !== 'GET')).toEqual([]);
  });

  it('only an ambiguous key: conflict, exit 6, the items named in error.failed', async () => {
    const r = await zotAt(['bibcheck', '--text', '-', '--kind', 'tex'], {
      env: web.env(),
      stdin: '\\cite{shared2020}',
    });
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({
      code: 'conflict',
      message:
        'The cited key names no single item of the library: several items share it (see error.failed).',
      failed: [
        expect.objectContaining({
          key: 'shared2020',
          code: 409,
          message: expect.stringContaining('DUPA2345, DUPB2345'),
        }),
      ],
    });
  });

  it('--write-bib leaves the ambiguous key out', async () => {
    const path = join(web.box.dir, 'web.bib');
    const r = await zotAt(['bibcheck', '--text', '-', '--kind', 'tex', '--write-bib', path], {
      env: web.env(),
      stdin: '\\cite{shared2020,pinned_key}',
    });
    expect(r.code).toBe(7);
    const bib = parse(readFileSync(path, 'utf8'), { english: false });
    expect(bib.entries.map((e) => e.key)).toEqual(['pinned_key']);
  });
});

describe('through the desktop’s local API', () => {
  let world: DesktopWorld;
  beforeAll(async () => {
    world = await startDesktopWorld({ localApi: true });
  });
  afterAll(async () => {
    await world?.close();
  });

  it('the library is read once, though the keys are assigned over the whole of it', async () => {
    world.server.clearLog();
    const r = await zotAt(['bibcheck', '--text', '-', '--kind', 'tex'], {
      env: world.env(),
      stdin: '\\cite{church2011,he_deep_2016}',
    });
    expect(r.code).toBe(0);
    const d = r.json().data as Data;
    expect(d).toMatchObject({
      backend: 'localApi',
      counts: { found: 2, missing: 0, ambiguous: 0, unstable: 1 },
    });
    const reads = world.server.log.filter((e) => /^\/api\/users\/0\/items/.test(e.path));
    expect(reads).toHaveLength(1);
  });
});

describe('on a shared deployment (a caller’s own folder)', () => {
  // A manuscript by path is refused there by the pipeline (test/tools/server-paths.test.ts).
  let sample: Sample;
  let root: string;
  beforeAll(async () => {
    sample = await startSample();
    root = join(sample.dir, 'callers', 'alice');
    mkdirSync(root, { recursive: true });
  });
  afterAll(async () => {
    await sample?.close();
  });

  const run = (input: Record<string, unknown>) =>
    tool.run(input as Parameters<typeof tool.run>[0], { ...sample.deps(), fileRoot: root });

  it('writes the .bib in the folder and names the resource that reads it back', async () => {
    const out = await run({ text: '\\cite{church2011}', kind: 'tex', write_bib: 'refs/my refs.bib' });
    expect(out.succeeded).toEqual(['church2011']);
    expect(out.saved?.path).toBe(join(root, 'refs', 'my refs.bib'));
    expect(out.saved?.resource).toBe('zotero://files/refs/my%20refs.bib');
    expect(readFileSync(join(root, 'refs', 'my refs.bib'), 'utf8')).toContain('@article{church2011,');
  });

  it('a manuscript given as text needs no path', async () => {
    const out = await run({ text: '[@church2011]', kind: 'markdown' });
    expect(out.succeeded).toEqual(['church2011']);
  });
});
