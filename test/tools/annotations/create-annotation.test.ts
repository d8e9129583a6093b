/**
 * zotero_create_annotation on the sample desktop world: a generated PDF (Helvetica 11 pt, lines
 * 14 pt apart from (72, 740)) in the sea-level article's storage folder, the same library in the
 * Web API test server. The highlight's rects are computed here from Helvetica's glyph widths, as
 * test/core/annotations/locate.test.ts does, and the created item is read back from the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyTool, Deps } from '../../../src/core/tool.js';
import createAnnotation from '../../../src/tools/annotations/create-annotation.js';
import {
  KEY,
  SAMPLE_KEYS,
  startDesktopWorld,
  USER_ID,
  type DesktopWorld,
} from '../../core/library/router-world.js';
import { makePdf } from '../../support/documents/index.js';
import { storageFile } from '../fulltext/world.js';

// prettier-ignore
const HELVETICA: Record<string, number> = {
  ' ': 278, ',': 278, '.': 278, '0': 556, '1': 556, '2': 556, '3': 556, '9': 556, I: 278, M: 833, R: 722, T: 611,
  W: 944, a: 556, b: 556, c: 500, d: 556, e: 556, f: 278, g: 556, h: 556, i: 222, k: 500, l: 222, m: 833, n: 556,
  o: 556, p: 556, r: 333, s: 500, t: 278, u: 556, v: 500, w: 722, x: 500, y: 500,
};
const width = (s: string): number => ([...s].reduce((sum, c) => sum + HELVETICA[c]!, 0) * 11) / 1000;
const r3 = (n: number): number => Math.round(n * 1000) / 1000;
function expectedRect(lines: string[], line: number, from: number, to: number): number[] {
  const y = 740 - 14 * line;
  const text = lines[line]!;
  return [72 + width(text.slice(0, from)), y - 2.2, 72 + width(text.slice(0, to)), y + 8.8].map(r3);
}

const PAGES = [
  ['1 Introduction', 'The tide gauges show a rate of 3.2 mm per year since 1993.'],
  ['2 Methods', 'We compare satellite altimetry with the tide gauge records.'],
];

let world: DesktopWorld;
let deps: Deps;
let pdfKey: string;
let otherPdf: string;
const lib = () => world.server.library(`users/${USER_ID}`);

beforeAll(async () => {
  world = await startDesktopWorld();
  deps = world.deps({ env: { ZOTERO_API_KEY: KEY } });
  const attachments = [...lib().items.values()].filter((i) => i.itemType === 'attachment');
  const of = (parent: string) =>
    attachments.find((a) => a.parentItem === parent && a.contentType === 'application/pdf')!;
  const sea = of(SAMPLE_KEYS.user.items.seaLevelArticle);
  pdfKey = sea.key;
  otherPdf = of(SAMPLE_KEYS.user.items.greenlandArticle).key;
  storageFile(world.dataDir, pdfKey, String(sea.filename), makePdf({ pages: PAGES }));
});
afterAll(async () => {
  await world?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(input: Record<string, unknown>): Promise<any> {
  const tool = createAnnotation as unknown as AnyTool;
  return tool.output.parse(await tool.run(tool.input.parse(input), deps));
}

describe('zotero_create_annotation', () => {
  it('highlights a quote where the PDF draws it, and the server holds exactly that annotation', async () => {
    const line = PAGES[1]![1]!;
    const from = line.indexOf('satellite');
    const rect = expectedRect(PAGES[1]!, 1, from, from + 'satellite altimetry'.length);
    const sortIndex = `00001|${String(9 + from).padStart(6, '0')}|00057`;
    const out = await run({
      attachment_key: pdfKey,
      quote: 'satellite   altimetry',
      comment: 'Method',
      color: '#FF6666',
    });
    expect(out).toEqual({
      key: expect.stringMatching(/^[23456789A-Z]{8}$/),
      attachmentKey: pdfKey,
      text: 'satellite altimetry',
      color: '#ff6666',
      pageIndex: 1,
      pageLabel: '2',
      rects: [rect],
      sortIndex,
      libraryVersion: expect.any(Number),
    });
    const stored = lib().items.get(out.key)!;
    expect(stored).toMatchObject({
      itemType: 'annotation',
      parentItem: pdfKey,
      annotationType: 'highlight',
      annotationText: 'satellite altimetry',
      annotationComment: 'Method',
      annotationColor: '#ff6666',
      annotationPageLabel: '2',
      annotationSortIndex: sortIndex,
    });
    expect(JSON.parse(String(stored.annotationPosition))).toEqual({ pageIndex: 1, rects: [rect] });
  });

  it('a quote not in the PDF is a validation_error, and nothing is written', async () => {
    const before = lib().items.size;
    await expect(run({ attachment_key: pdfKey, quote: 'coral bleaching' })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'quote',
      message: 'The quote was not found in the PDF: “coral bleaching”.',
      hint: expect.stringContaining('exactly as it reads in the PDF'),
    });
    expect(lib().items.size).toBe(before);
  });

  it('a quote on two pages lists the candidates; page picks one', async () => {
    const before = lib().items.size;
    await expect(run({ attachment_key: pdfKey, quote: 'tide gauge' })).rejects.toMatchObject({
      code: 'validation_error',
      field: 'quote',
      message:
        'The quote occurs 2 times in the PDF: page 1 (label 1): “…1 Introduction The [tide gauge]s show a rate of 3.2 mm per ye…”; ' +
        'page 2 (label 2): “…satellite altimetry with the [tide gauge] records.…”.',
      hint: '{{param:page=1}} picks the one on that page, or quote a longer passage.',
    });
    expect(lib().items.size).toBe(before);
    const out = await run({ attachment_key: pdfKey, quote: 'tide gauge', page: 1 });
    const from = PAGES[0]![1]!.indexOf('tide gauge');
    expect(out).toMatchObject({
      pageIndex: 0,
      pageLabel: '1',
      text: 'tide gauge',
      color: '#ffd400',
      rects: [expectedRect(PAGES[0]!, 1, from, from + 'tide gauge'.length)],
      sortIndex: `00000|${String('1 Introduction'.length + from).padStart(6, '0')}|00057`,
    });
    expect(lib().items.get(out.key)).toMatchObject({ annotationColor: '#ffd400', annotationComment: '' });
  });

  it('a PDF not on this computer is not_found; a non-attachment or malformed key is refused', async () => {
    await expect(run({ attachment_key: otherPdf, quote: 'x' })).rejects.toMatchObject({
      code: 'not_found',
      message: `The PDF of attachment '${otherPdf}' is not on this computer: no annotation was created.`,
    });
    await expect(
      run({ attachment_key: SAMPLE_KEYS.user.items.seaLevelArticle, quote: 'x' }),
    ).rejects.toMatchObject({
      code: 'validation_error',
      message: `'${SAMPLE_KEYS.user.items.seaLevelArticle}' is not an attachment (it is journalArticle): annotations go on a PDF attachment.`,
    });
    const before = world.server.log.length;
    await expect(run({ attachment_key: 'NOPE', quote: 'x' })).rejects.toMatchObject({ name: 'ZodError' });
    expect(world.server.log.length).toBe(before);
  });

  it('the dry-run plan names the attachment, quote and colour without reading anything', () => {
    const tool = createAnnotation as unknown as AnyTool;
    const before = world.server.log.length;
    expect(
      tool.plan!(
        tool.input.parse({ attachment_key: 'ABCD2345', quote: 'sea level', color: '#5FB236', page: 3 }),
        deps,
      ),
    ).toEqual({ attachment_key: 'ABCD2345', quote: 'sea level', color: '#5fb236', page: 3 });
    expect(world.server.log.length).toBe(before);
  });
});
