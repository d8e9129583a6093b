/**
 * Quotes located in the project's generated PDFs (test/support/documents): Helvetica 11 pt,
 * lines 14 pt apart from (72, 740). The expected rects are computed here from Helvetica's
 * standard glyph widths (AFM, 1/1000 em), independently of pdfjs.
 */
import { describe, expect, it } from 'vitest';
import { findQuote, pdfPages, sortIndexOf } from '../../../src/core/annotations/locate.js';
import { makePdf, paperPages } from '../../support/documents/index.js';

// prettier-ignore
const HELVETICA: Record<string, number> = {
  ' ': 278, '!': 278, ',': 278, '-': 333, '.': 278, ':': 278, ';': 278, '0': 556, '1': 556, '2': 556, '3': 556,
  '4': 556, '5': 556, '6': 556, '7': 556, '8': 556, '9': 556, A: 667, B: 667, C: 722, D: 722, E: 667, F: 611,
  G: 778, H: 722, I: 278, J: 500, K: 667, L: 556, M: 833, N: 722, O: 778, P: 667, Q: 778, R: 722, S: 667, T: 611,
  U: 722, V: 667, W: 944, X: 667, Y: 667, Z: 611, a: 556, b: 556, c: 500, d: 556, e: 556, f: 278, g: 556, h: 556,
  i: 222, j: 222, k: 500, l: 222, m: 833, n: 556, o: 556, p: 556, q: 556, r: 333, s: 500, t: 278, u: 556, v: 500,
  w: 722, x: 500, y: 500, z: 500,
};
const width = (s: string): number => ([...s].reduce((sum, c) => sum + HELVETICA[c]!, 0) * 11) / 1000;
const r3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Where the generator drew `quote` when it starts `before` characters into line `line` of a page. */
function expectedRect(lines: string[], line: number, from: number, to: number): number[] {
  const y = 740 - 14 * line;
  const text = lines[line]!;
  return [72 + width(text.slice(0, from)), y - 2.2, 72 + width(text.slice(0, to)), y + 8.8].map(r3);
}

const pdf = (pages: string[][]): Promise<Awaited<ReturnType<typeof pdfPages>>> =>
  pdfPages(new Uint8Array(makePdf({ pages })));

describe('findQuote on generated PDFs', () => {
  it('a quote inside one line: one rect where the generator drew it, and Zotero’s sort index', async () => {
    const pages = [
      ['1 Introduction', 'Tide gauges show a rate of 3.2 mm per year since 1993.'],
      ['2 Methods', 'We compare satellite altimetry with the tide gauge records.'],
    ];
    const matches = findQuote(await pdf(pages), 'satellite altimetry');
    expect(matches).toHaveLength(1);
    const line = pages[1]![1]!;
    const from = line.indexOf('satellite');
    const to = from + 'satellite altimetry'.length;
    expect(matches[0]).toMatchObject({
      pageIndex: 1,
      pageLabel: '2',
      text: 'satellite altimetry',
      rects: [expectedRect(pages[1]!, 1, from, to)],
      // offset: the characters of the page before it (the heading's 9, then the line's); top: 792 − (726 + 8.8).
      sortIndex: `00001|${String(9 + from).padStart(6, '0')}|00057`,
    });
  });

  it('whitespace and a hyphenated line break: one rect per line, the hyphen inside the first', async () => {
    const page = ['Results', 'Over the decade the ocean warm-', 'ing accelerates   sharply.'];
    const [m, ...more] = findQuote(await pdf([page]), 'the ocean  warming\naccelerates');
    expect(more).toEqual([]);
    const first = page[1]!;
    const from = first.indexOf('the ocean');
    expect(m!.rects).toEqual([
      expectedRect(page, 1, from, first.length),
      expectedRect(page, 2, 0, 'ing accelerates'.length),
    ]);
    expect(m!.sortIndex).toBe(sortIndexOf(0, 'Results'.length + from, 792, 726 + 8.8));
    expect(m!.sortIndex).toBe(`00000|${String(7 + from).padStart(6, '0')}|00057`);
  });

  it('a passage on every page is found once per page, with its context; a missing one not at all', async () => {
    const matches = findQuote(await pdf(paperPages(3)), 'glaciers and ocean');
    expect(matches.map((m) => m.pageIndex)).toEqual([0, 1, 2]);
    expect(matches[1]!.context).toBe(
      '2 of the fixture paper, about [glaciers and ocean] warming. Filler sentence numbe',
    );
    expect(findQuote(await pdf(paperPages(2)), 'coral bleaching')).toEqual([]);
  });
});
