/**
 * Judged by another CSL processor (issue 17): the CSL-JSON that `zot export --format csljson`
 * writes, read by pandoc's citeproc (the Haskell `citeproc` library, an engine independent of
 * citeproc-js) with the official style files (APA, Chicago author-date, IEEE), and its
 * bibliography compared with the one `zot cite` makes from the same items with the same style
 * file: the same entries in the same order, word for word, but for the differences listed
 * below, every one of them a difference of the two engines (the same CSL-JSON goes into both),
 * none of the mapping. APA and Chicago are compared in HTML as well: the same italics.
 *
 * Only markup is normalised: both render plain text, where citeproc-js drops italics, sub- and
 * superscripts and pandoc's plain writer drops italics but writes sub- and superscript digits as
 * Unicode sub- and superscript characters (CO₂), which are turned back into digits.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../core/library/world.js';
import { zotAt } from '../surfaces/cli/terminal-harness.js';
import { ALL_ITEMS, judgeAvailability, startJudgedLibrary } from './library.js';

const STYLES = '/usr/share/citation-style-language/styles';
const judge = judgeAvailability(['pandoc']);
const TIMEOUT = 60_000;
const SKIP = judge.skip ? ' (skipped: pandoc is not installed here; .ci/run installs it)' : '';

let dir: string;
let world: World | undefined;
let itemKeys: string[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-pandoc-'));
  if (judge.skip) return;
  world = await startJudgedLibrary(ALL_ITEMS);
  const r = await zotAt(['export', '--all', '--format', 'csljson', '--limit', '1000'], { env: world.env() });
  expect(r.code, r.stderr).toBe(0);
  const data = r.json().data as { text: string; succeeded: string[] };
  itemKeys = data.succeeded;
  writeFileSync(join(dir, 'items.json'), data.text);
  writeFileSync(join(dir, 'paper.md'), "---\nnocite: '@*'\n---\n");
}, TIMEOUT);
afterAll(async () => {
  await world?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** pandoc's bibliography of every item of items.json in `style`, one entry per element. */
function pandoc(style: string, to: 'plain' | 'html' = 'plain'): { entries: string[]; stderr: string } {
  const args = ['paper.md', '--citeproc', '--csl', `${STYLES}/${style}.csl`, '--bibliography', 'items.json'];
  const r = spawnSync('pandoc', [...args, '--to', to, '--wrap=none'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  expect(r.status, r.stderr).toBe(0);
  const entries =
    to === 'plain'
      ? r.stdout.trim().split(/\n\n+/).map(unicodeDigits)
      : [...r.stdout.matchAll(/<div id="ref-[^"]*" class="csl-entry"[^>]*>\n?([\s\S]*?)\n?<\/div>/g)].map(
          (m) => pandocHtml(m[1] ?? ''),
        );
  return { entries, stderr: r.stderr };
}

/**
 * Markup only: pandoc's HTML tags as citeproc-js's (`<em>` → `<i>`, `<strong>` → `<b>`, small
 * caps), without the bare `<span>` pandoc puts around quoted text and with its links as their
 * text (citeproc-js has neither), and both engines' escapes of `&`, `<`, `>` in one spelling.
 */
function pandocHtml(html: string): string {
  return sameEscapes(
    withoutBareSpans(html)
      .replace(/<(\/?)em>/g, '<$1i>')
      .replace(/<(\/?)strong>/g, '<$1b>')
      .replace(/<span class="smallcaps">/g, '<span style="font-variant:small-caps;">')
      .replace(/<a href="[^"]*">([\s\S]*?)<\/a>/g, '$1'),
  );
}
function withoutBareSpans(html: string): string {
  const open: boolean[] = [];
  return html.replace(/<span(?: [^>]*)?>|<\/span>/g, (tag) => {
    if (tag !== '</span>') {
      open.push(tag === '<span>');
      return tag === '<span>' ? '' : tag;
    }
    return open.pop() ? '' : tag;
  });
}
const sameEscapes = (html: string) =>
  html.replace(/&#38;/g, '&amp;').replace(/&#60;/g, '&lt;').replace(/&#62;/g, '&gt;');
/** The text of an HTML entry: its tags out, then its escapes read. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

const SUB = '₀₁₂₃₄₅₆₇₈₉';
const SUP = '⁰¹²³⁴⁵⁶⁷⁸⁹';
/** Markup only: pandoc's plain sub- and superscript digits as the digits citeproc-js's text has. */
function unicodeDigits(text: string): string {
  return text.replace(/[₀-₉⁰¹²³⁴-⁹]/gu, (c) => String(Math.max(SUB.indexOf(c), SUP.indexOf(c))));
}

/** `zot cite` of every item in `style` (the same file), plain text or HTML. */
async function zotCite(style: string, format: 'text' | 'html' = 'text'): Promise<string[]> {
  if (!world) throw new Error('no library');
  const r = await zotAt(['cite', ...itemKeys, '--style', `${STYLES}/${style}.csl`, '--format', format], {
    env: world.env(),
  });
  expect(r.code, r.stderr).toBe(0);
  const data = r.json().data as { entries: Array<{ text: string }>; failed: unknown[]; warnings: string[] };
  expect(data.failed).toEqual([]);
  return data.entries.map((e) =>
    format === 'text'
      ? e.text
      : sameEscapes(e.text.replace(/^<div class="csl-entry">([\s\S]*)<\/div>$/, '$1')),
  );
}

interface Difference {
  zot: string;
  pandoc: string;
}

/**
 * Where the engines part, and why. citeproc-js is Zotero's own engine, so `zot cite` here is
 * what Zotero prints; each line was checked against the style and CSL 1.0.2.
 */
const DIFFERENCES: Record<string, Difference[]> = {
  apa: [
    // citeproc-js turns the hyphen of a number variable into an en dash, as in page ranges; pandoc
    // keeps "101-1" and "19115-1" (a public law's number, an ISO standard's part: no ranges, so
    // pandoc is right).
    {
      zot: 'Coastal Protection Act, Pub. L. No. 101–1, 33 U.S.C. (1990).',
      pandoc: 'Coastal Protection Act, Pub. L. No. 101-1, 33 U.S.C. (1990).',
    },
    // Two names, the second an institution: citeproc-js leaves out the comma that
    // delimiter-precedes-last="always" puts before "&" (it does so for any person + literal name;
    // "Doe, J., & Roe, R." for two persons). pandoc follows the attribute.
    {
      zot: 'Doe, J. & Reuters and Associated Press. (2023, July 5). Greenland ice melt speeds up. The Guardian, A1.',
      pandoc:
        'Doe, J., & Reuters and Associated Press. (2023, July 5). Greenland ice melt speeds up. The Guardian, A1.',
    },
    // is-numeric="version": "1.26.0" is no number to citeproc-js, a number to pandoc (APA then
    // writes the term "Version").
    {
      zot: 'Harris, C. R. (2023). NumPy (1.26.0). NumFOCUS. https://numpy.org',
      pandoc: 'Harris, C. R. (2023). NumPy (Version 1.26.0). NumFOCUS. https://numpy.org',
    },
    // The en dash again (see the public law above).
    {
      zot: 'International Organization for Standardization. (2014). Geographic information: Metadata (No. 19115–1).',
      pandoc:
        'International Organization for Standardization. (2014). Geographic information: Metadata (No. 19115-1).',
    },
    // is-numeric="number" again: "arXiv:2001.08361" has a number in it, which pandoc counts, so
    // APA's label "No." appears; citeproc-js does not.
    {
      zot: 'Kaplan, J., & McCandlish, S. (2020). Scaling laws for neural language models (arXiv:2001.08361). arXiv. https://doi.org/10.48550/arXiv.2001.08361',
      pandoc:
        'Kaplan, J., & McCandlish, S. (2020). Scaling laws for neural language models (No. arXiv:2001.08361). arXiv. https://doi.org/10.48550/arXiv.2001.08361',
    },
  ],
  'chicago-author-date': [
    // The comma before "and" again (delimiter-precedes-last="always").
    {
      zot: 'Doe, Jane and Reuters and Associated Press. 2023. “Greenland Ice Melt Speeds Up.” The Guardian, July 5, 2023.',
      pandoc:
        'Doe, Jane, and Reuters and Associated Press. 2023. “Greenland Ice Melt Speeds Up.” The Guardian, July 5, 2023.',
    },
    // Title case: pandoc lower-cases "ERA5" to "Era5"; CSL leaves words in capitals alone.
    {
      zot: 'Hersbach, Hans. 2018. “ERA5 Hourly Data on Single Levels.” Copernicus Climate Change Service. https://doi.org/10.24381/cds.adbb2d47.',
      pandoc:
        'Hersbach, Hans. 2018. “Era5 Hourly Data on Single Levels.” Copernicus Climate Change Service. https://doi.org/10.24381/cds.adbb2d47.',
    },
    // Title case: pandoc capitalises the Greek letter that starts the title (Β), citeproc-js not.
    {
      zot: 'Meitner, Lise. 1922. “β-Decay and the α Particle.” Zeitschrift Für Physik 9: 131–44.',
      pandoc: 'Meitner, Lise. 1922. “Β-Decay and the α Particle.” Zeitschrift Für Physik 9: 131–44.',
    },
    // A presentation's meeting: Zotero maps it to CSL 1.0.2's event-title; the style reads the
    // older `event`, which zot cite fills from it (citeproc-js 2.4.63 knows only `event`); pandoc
    // 2.17 reads neither from event-title, so it drops "presented at the AGU Fall Meeting 2019".
    {
      zot: 'Presenter, Pia. 2019. “Sea Ice in a Warming World.” Keynote presented at the AGU Fall Meeting 2019, San Francisco, December 10.',
      pandoc: 'Presenter, Pia. 2019. “Sea Ice in a Warming World.” Keynote, San Francisco, December 10.',
    },
    // Title case of words after punctuation: citeproc-js leaves "{braces}", "~tildes", "^carets"
    // and "<tags>" and capitalises "A|b"; pandoc the other way round.
    {
      zot: 'Zola-Durand, Émile, Seán O’Brien, and Ludwig van Beethoven. 2021. “Why 50% of C# & C++ Code_bases Use $ Signs, {braces}, ~tildes, ^carets, A|b, <tags> and \\ Backslashes.” Journal of R&D 7 (2): 1–19.',
      pandoc:
        'Zola-Durand, Émile, Seán O’Brien, and Ludwig van Beethoven. 2021. “Why 50% of C# & C++ Code_bases Use $ Signs, {Braces}, ~Tildes, ^Carets, a|b, <Tags> and \\ Backslashes.” Journal of R&D 7 (2): 1–19.',
    },
  ],
  ieee: [
    // Software with a URL and no access date: IEEE's group of "Accessed: …" and "[Online]" has
    // only an empty variable in it; pandoc takes CSL's group rule (a group whose variables are all
    // empty is left out) across the nested group and drops "[Online].", citeproc-js keeps it.
    {
      zot: '[11] C. R. Harris, “NumPy.” NumFOCUS, 2023. [Online]. Available: https://numpy.org',
      pandoc: '[11] C. R. Harris, “NumPy.” NumFOCUS, 2023. Available: https://numpy.org',
    },
    // IEEE initialises given names (initialize-with=". "): citeproc-js writes a Chinese name
    // whole, family name first without a space; pandoc does too, but adds the initials' full stop.
    {
      zot: '[17] 王小明, 海平面上升与沿海城市. 北京: 科学出版社, 2018.',
      pandoc: '[17] 王小明., 海平面上升与沿海城市. 北京: 科学出版社, 2018.',
    },
    // The meeting again (see Chicago's presentation): pandoc drops "presented at the …".
    {
      zot: '[28] P. Presenter, “Sea ice in a warming world,” presented at the AGU Fall Meeting 2019, San Francisco, Dec. 10, 2019.',
      pandoc: '[28] P. Presenter, “Sea ice in a warming world,” San Francisco, Dec. 10, 2019.',
    },
  ],
};

/** Where the HTML of an entry differs though its text is the same. */
const MARKUP_DIFFERENCES: Record<string, Difference[]> = {
  'chicago-author-date': [
    // citeproc-js leaves the title in Han characters upright under Chicago (it italicises the same
    // title under APA, and a Latin title of the same item under Chicago); pandoc italicises it
    // as any book title. The CSL-JSON is the same for both; the language field makes no difference.
    {
      zot: '王小明. 2018. 海平面上升与沿海城市. 北京: 科学出版社.',
      pandoc: '王小明. 2018. <i>海平面上升与沿海城市</i>. 北京: 科学出版社.',
    },
  ],
};

describe('judged by pandoc’s citeproc, an independent CSL processor', () => {
  it('the judge and the style files are there where CI runs', () => {
    const styles = Object.keys(DIFFERENCES).filter((s) => !existsSync(`${STYLES}/${s}.csl`));
    if (process.env.CI) {
      expect(judge.missing, 'CI must install pandoc (.ci/run)').toEqual([]);
      expect(styles, 'CI must install citation-style-language-styles (.ci/run)').toEqual([]);
    } else expect(judge.skip).toBe(judge.missing.length > 0);
  });

  it.skipIf(judge.skip)(
    `pandoc reads the CSL-JSON export without a warning, one entry per item${SKIP}`,
    () => {
      const { entries, stderr } = pandoc('apa');
      expect(stderr).toBe('');
      expect(itemKeys).toHaveLength(ALL_ITEMS.length);
      expect(entries).toHaveLength(ALL_ITEMS.length);
    },
  );

  for (const style of Object.keys(DIFFERENCES)) {
    it.skipIf(judge.skip)(
      `${style}: the same entries in the same order as zot cite, word for word but for the engines’ known differences${SKIP}`,
      async () => {
        const zot = await zotCite(style);
        const { entries } = pandoc(style);
        expect(zot).toHaveLength(ALL_ITEMS.length);
        expect(entries).toHaveLength(zot.length);
        const differences = zot
          .map((text, i) => ({ zot: text, pandoc: entries[i] ?? '' }))
          .filter((d) => d.zot !== d.pandoc);
        expect(differences).toEqual(DIFFERENCES[style]);
      },
      TIMEOUT,
    );

    // IEEE's numbered layout (second-field-align) is HTML each engine builds its own way: text only.
    if (style === 'ieee') continue;
    it.skipIf(judge.skip)(
      `${style}, HTML: the same italics, sub- and superscripts in every entry; the text differs only as in plain text${SKIP}`,
      async () => {
        const zot = await zotCite(style, 'html');
        const { entries } = pandoc(style, 'html');
        expect(entries).toHaveLength(zot.length);
        const differences = zot
          .map((html, i) => ({ zot: html, pandoc: entries[i] ?? '' }))
          .filter((d) => d.zot !== d.pandoc);
        const text = (d: Difference) => ({ zot: textOf(d.zot), pandoc: textOf(d.pandoc) });
        const sameText = (d: Difference) => textOf(d.zot) === textOf(d.pandoc);
        expect(differences.filter((d) => !sameText(d)).map(text)).toEqual(DIFFERENCES[style]);
        expect(differences.filter(sameText)).toEqual(MARKUP_DIFFERENCES[style] ?? []);
      },
      TIMEOUT,
    );
  }
});
