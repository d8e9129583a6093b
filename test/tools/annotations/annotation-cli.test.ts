/**
 * `zot annotation list` and `zot annotation add` as a person or a script runs them: the JSON
 * envelope on a pipe, the exit codes of agent-interface.md (0, 3 validation, 4 not found), and
 * what reached the Zotero test server. The CLI runs in process (test/surfaces/cli/terminal-harness.ts)
 * on the sample desktop world, with a generated PDF in the sea-level article's storage folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KEY,
  SAMPLE_KEYS,
  startDesktopWorld,
  USER_ID,
  type DesktopWorld,
} from '../../core/library/router-world.js';
import { makePdf } from '../../support/documents/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { storageFile } from '../fulltext/world.js';

const PAGES = [
  ['1 Introduction', 'The tide gauges show a rate of 3.2 mm per year since 1993.'],
  ['2 Methods', 'We compare satellite altimetry with the tide gauge records.'],
];
const SEA = SAMPLE_KEYS.user.items.seaLevelArticle;

let world: DesktopWorld;
let pdfKey: string;
const lib = () => world.server.library(`users/${USER_ID}`);
const annotationsOn = (key: string) =>
  [...lib().items.values()].filter((i) => i.itemType === 'annotation' && i.parentItem === key);

beforeAll(async () => {
  world = await startDesktopWorld();
  const sea = [...lib().items.values()].find(
    (i) => i.itemType === 'attachment' && i.parentItem === SEA && i.contentType === 'application/pdf',
  )!;
  pdfKey = sea.key;
  storageFile(world.dataDir, pdfKey, String(sea.filename), makePdf({ pages: PAGES }));
});
afterAll(async () => {
  await world?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Envelope = { ok: boolean; data: any; error: { code: string; message: string; hint?: string } };
async function zot(argv: string[], env: Record<string, string> = {}) {
  const r = await zotAt(argv, { env: world.env(env) });
  return { ...r, env: r.json() as unknown as Envelope };
}

describe('zot annotation list', () => {
  it('lists the item’s annotations from zotero.sqlite: exit 0, one JSON envelope', async () => {
    const r = await zot(['annotation', 'list', SEA]);
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    expect(r.env.data).toMatchObject({ backend: 'sqlite', itemKey: SEA, totalResults: 2 });
    expect(
      r.env.data.annotations.map((a: { type: string; pageLabel: string }) => [a.type, a.pageLabel]),
    ).toEqual([
      ['highlight', '587'],
      ['note', '590'],
    ]);
    expect(r.env.data.annotations[0].text).toBe('a rate of 3.2 mm per year since 1993');
  });

  it('an unknown key: not_found, exit 4', async () => {
    const r = await zot(['annotation', 'list', 'ZZZZ2345']);
    expect(r.code).toBe(4);
    expect(r.env.ok).toBe(false);
    expect(r.env.error).toMatchObject({
      code: 'not_found',
      message: `No item "ZZZZ2345" in users/${USER_ID}.`,
    });
  });
});

describe('zot annotation add', () => {
  it('highlights the quote: exit 0, the annotation on the server, then listed', async () => {
    world.server.clearLog();
    const r = await zot(
      [
        'annotation',
        'add',
        pdfKey,
        '--quote',
        'satellite altimetry',
        '--comment',
        'Method',
        '--color',
        '#5fb236',
      ],
      { ZOTERO_API_KEY: KEY },
    );
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    expect(r.env.data).toMatchObject({
      attachmentKey: pdfKey,
      text: 'satellite altimetry',
      color: '#5fb236',
      pageIndex: 1,
      pageLabel: '2',
    });
    const key = r.env.data.key as string;
    expect(lib().items.get(key)).toMatchObject({
      itemType: 'annotation',
      parentItem: pdfKey,
      annotationType: 'highlight',
      annotationText: 'satellite altimetry',
      annotationComment: 'Method',
      annotationColor: '#5fb236',
    });
    expect(world.server.log.filter((e) => e.method === 'POST').map((e) => e.path)).toEqual([
      `/users/${USER_ID}/items`,
    ]);
    const listed = await zot(['annotation', 'list', pdfKey], {
      ZOTERO_API_KEY: KEY,
      ZOTEUS_LOCAL: 'off',
    });
    expect(listed.env.error).toBeUndefined();
    expect(listed.code).toBe(0);
    expect(listed.env.data.annotations.map((a: { key: string }) => a.key)).toContain(key);
  });

  it('a quote not in the PDF: validation_error, exit 3, nothing written', async () => {
    const before = annotationsOn(pdfKey).length;
    world.server.clearLog();
    const r = await zot(['annotation', 'add', pdfKey, '--quote', 'coral bleaching'], { ZOTERO_API_KEY: KEY });
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      message: 'The quote was not found in the PDF: “coral bleaching”.',
    });
    expect(annotationsOn(pdfKey)).toHaveLength(before);
    expect(world.server.log.filter((e) => e.method === 'POST')).toHaveLength(0);
  });

  it('a quote found twice: exit 3 listing the candidates with --page; --page 1 picks one', async () => {
    const before = annotationsOn(pdfKey).length;
    const r = await zot(['annotation', 'add', pdfKey, '--quote', 'tide gauge'], { ZOTERO_API_KEY: KEY });
    expect(r.code).toBe(3);
    expect(r.env.error.code).toBe('validation_error');
    expect(r.env.error.message).toMatch(
      /^The quote occurs 2 times in the PDF: page 1 \(label 1\): .*; page 2 \(label 2\): /,
    );
    expect(r.env.error.hint).toBe('--page 1 picks the one on that page, or quote a longer passage.');
    expect(annotationsOn(pdfKey)).toHaveLength(before);
    const picked = await zot(['annotation', 'add', pdfKey, '--quote', 'tide gauge', '--page', '1'], {
      ZOTERO_API_KEY: KEY,
    });
    expect(picked.code).toBe(0);
    expect(picked.env.data).toMatchObject({ pageIndex: 0, text: 'tide gauge', color: '#ffd400' });
    expect(annotationsOn(pdfKey)).toHaveLength(before + 1);
  });

  it('a malformed key or a bad colour: exit 3 before any request', async () => {
    world.server.clearLog();
    const bad = await zot(['annotation', 'add', 'NOPE', '--quote', 'x'], { ZOTERO_API_KEY: KEY });
    expect(bad.code).toBe(3);
    expect(bad.env.error.code).toBe('validation_error');
    const colour = await zot(['annotation', 'add', pdfKey, '--quote', 'x', '--color', 'yellow'], {
      ZOTERO_API_KEY: KEY,
    });
    expect(colour.code).toBe(3);
    expect(colour.env.error.message).toContain('#rrggbb');
    expect(world.server.log).toHaveLength(0);
  });
});
