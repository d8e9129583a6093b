/**
 * `zot cite` / `zotero_format_bibliography` on the sample library (issue 17, deliverable 2):
 * bibliographies and citations in APA, Chicago author-date, IEEE and a note style, with the
 * official style files (Debian's package, by path) and the bundled APA. The expected strings
 * follow each style's rules: APA 7 (authors "Family, I. I.", "&" before the last, year in
 * parentheses, sentence-case article titles as stored, italic container and volume in HTML),
 * Chicago 17 author-date (full given names, inverted first author only, "and", year after the
 * names, title case in quotes, "Container Volume (Issue): pages" with Chicago's page ranges
 * "233–39"), IEEE (initials first, numbered in citation order, "et al." past six authors, journal
 * abbreviations, "vol.", "no.", "pp.", abbreviated months), Chicago notes (short notes beside a
 * bibliography).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { I, startSample, type Sample } from '../items/read/setup.js';

const STYLES = '/usr/share/citation-style-language/styles';
let sample: Sample;
beforeAll(async () => {
  sample = await startSample();
});
afterAll(() => sample?.close());

interface CiteData {
  text: string;
  entries: Array<{ item_key: string; text: string }>;
  failed: Array<Record<string, unknown>>;
  style: { id: string; source: string };
  [k: string]: unknown;
}

async function cite(
  args: string[],
): Promise<{ code: number; data: CiteData; envelope: Record<string, unknown> }> {
  const r = await zotAt(['cite', ...args], { env: sample.env() });
  const envelope = r.json();
  return { code: r.code, data: envelope.data as CiteData, envelope };
}

const FIVE = [I.seaLevelArticle, I.attentionPaper, I.greenlandArticle, I.deepLearningBook, I.muellerThesis];

const CHURCH_APA =
  'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. Surveys in Geophysics, 32(4–5), 585–602. https://doi.org/10.1007/s10712-011-9119-1';

describe('bibliographies', () => {
  it('APA (bundled, the default): entries in the style’s order, one per line, and the text', async () => {
    const r = await cite([I.seaLevelArticle, I.attentionPaper, I.greenlandArticle]);
    expect(r.code).toBe(0);
    expect(r.data.style).toMatchObject({ id: 'apa', source: 'bundled' });
    expect(r.data.entries.map((e) => e.item_key)).toEqual([
      I.seaLevelArticle,
      I.greenlandArticle,
      I.attentionPaper,
    ]);
    expect(r.data.text).toBe(
      [
        CHURCH_APA,
        'The IMBIE Team, Shepherd, A., Ivins, E., & Rignot, E. (2020). Mass balance of the Greenland Ice Sheet from 1992 to 2018. Nature, 579, 233–239. https://doi.org/10.1038/s41586-019-1855-2',
        'Vaswani, A., Shazeer, N., Parmar, N., Uszkoreit, J., Jones, L., Gomez, A. N., Kaiser, Ł., & Polosukhin, I. (2017). Attention Is All You Need. Advances in Neural Information Processing Systems 30, 5998–6008. https://arxiv.org/abs/1706.03762',
      ].join('\n'),
    );
  });

  it('Chicago author-date', async () => {
    const r = await cite([...FIVE, '--style', `${STYLES}/chicago-author-date.csl`]);
    expect(r.data.text.split('\n')).toEqual([
      'Church, John A., and Neil J. White. 2011. “Sea-Level Rise from the Late 19th to the Early 21st Century.” Surveys in Geophysics 32 (4–5): 585–602. https://doi.org/10.1007/s10712-011-9119-1.',
      'Goodfellow, Ian, Yoshua Bengio, and Aaron Courville. 2016. Deep Learning. Adaptive Computation and Machine Learning. Cambridge, MA: MIT Press. https://www.deeplearningbook.org.',
      'Müller, Anna-Lena. 2019. “Meeresspiegelanstieg an der Nordseeküste: Beobachtungen und Projektionen.” Dissertation, Hamburg: Universität Hamburg.',
      'The IMBIE Team, Andrew Shepherd, Erik Ivins, and Eric Rignot. 2020. “Mass Balance of the Greenland Ice Sheet from 1992 to 2018.” Nature 579 (March): 233–39. https://doi.org/10.1038/s41586-019-1855-2.',
      'Vaswani, Ashish, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, Aidan N. Gomez, Łukasz Kaiser, and Illia Polosukhin. 2017. “Attention Is All You Need.” In Advances in Neural Information Processing Systems 30, 5998–6008. Long Beach, CA. https://arxiv.org/abs/1706.03762.',
    ]);
  });

  it('IEEE: numbered in the order given', async () => {
    const r = await cite([...FIVE, '--style', `${STYLES}/ieee.csl`]);
    expect(r.data.text.split('\n')).toEqual([
      '[1] J. A. Church and N. J. White, “Sea-level rise from the late 19th to the early 21st century,” Surv Geophys, vol. 32, no. 4–5, pp. 585–602, Sep. 2011, doi: 10.1007/s10712-011-9119-1.',
      '[2] A. Vaswani et al., “Attention Is All You Need,” in Advances in Neural Information Processing Systems 30, 2017, pp. 5998–6008. [Online]. Available: https://arxiv.org/abs/1706.03762',
      '[3] The IMBIE Team, A. Shepherd, E. Ivins, and E. Rignot, “Mass balance of the Greenland Ice Sheet from 1992 to 2018,” Nature, vol. 579, pp. 233–239, Mar. 2020, doi: 10.1038/s41586-019-1855-2.',
      '[4] I. Goodfellow, Y. Bengio, and A. Courville, Deep Learning. Cambridge, MA: MIT Press, 2016. [Online]. Available: https://www.deeplearningbook.org',
      '[5] A.-L. Müller, “Meeresspiegelanstieg an der Nordseeküste: Beobachtungen und Projektionen,” Dissertation, Universität Hamburg, Hamburg, 2019.',
    ]);
  });

  it('Chicago notes and bibliography: the bibliography without dates after the names', async () => {
    const r = await cite([
      I.seaLevelArticle,
      I.greenlandArticle,
      '--style',
      `${STYLES}/chicago-note-bibliography.csl`,
    ]);
    expect(r.data.text.split('\n')).toEqual([
      'Church, John A., and Neil J. White. “Sea-Level Rise from the Late 19th to the Early 21st Century.” Surveys in Geophysics 32, no. 4–5 (September 1, 2011): 585–602. https://doi.org/10.1007/s10712-011-9119-1.',
      'The IMBIE Team, Andrew Shepherd, Erik Ivins, and Eric Rignot. “Mass Balance of the Greenland Ice Sheet from 1992 to 2018.” Nature 579 (March 2020): 233–39. https://doi.org/10.1038/s41586-019-1855-2.',
    ]);
  });

  it('HTML and Markdown keep the style’s italics', async () => {
    const html = await cite([I.seaLevelArticle, '--format', 'html']);
    expect(html.data.text).toBe(
      '<div class="csl-bib-body">\n<div class="csl-entry">Church, J. A., &#38; White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. <i>Surveys in Geophysics</i>, <i>32</i>(4–5), 585–602. https://doi.org/10.1007/s10712-011-9119-1</div></div>',
    );
    const md = await cite([I.seaLevelArticle, '--format', 'markdown']);
    expect(md.data.text).toBe(
      'Church, J. A., & White, N. J. (2011). Sea-level rise from the late 19th to the early 21st century. *Surveys in Geophysics*, *32*(4–5), 585–602. <https://doi.org/10.1007/s10712-011-9119-1>',
    );
  });

  it('the same items give the same bytes, whatever ran before', async () => {
    const first = await cite([I.seaLevelArticle, I.attentionPaper]);
    await cite([I.greenlandArticle, '--mode', 'citation']);
    const again = await cite([I.seaLevelArticle, I.attentionPaper]);
    expect(again.data.text).toBe(first.data.text);
  });

  it('a collection’s items, paged', async () => {
    const r = await cite(['--collection', 'SEALEVE2', '--limit', '1']);
    expect(r.code).toBe(0);
    expect(r.data.entries).toHaveLength(1);
    expect(r.data.totalResults).toBeGreaterThan(1);
    expect(r.data.nextStart).toBe(1);
  });
});

describe('citations', () => {
  it('APA cluster with locators, in order, one per key', async () => {
    const r = await cite([
      I.seaLevelArticle,
      I.attentionPaper,
      '--mode',
      'citation',
      '--locator',
      '12',
      '--locator',
      'chapter 3',
    ]);
    expect(r.data.text).toBe('(Church & White, 2011, p. 12; Vaswani et al., 2017, Chapter 3)');
  });

  it('IEEE: the number, with the locator', async () => {
    const r = await cite([
      I.seaLevelArticle,
      '--mode',
      'citation',
      '--locator',
      'page 12-14',
      '--style',
      `${STYLES}/ieee.csl`,
    ]);
    expect(r.data.text).toBe('[1, pp. 12–14]');
  });

  it('over MCP: citations with prefix, suffix and suppressed author', async () => {
    const mcp = await sample.mcp();
    try {
      const r = await mcp.call('zotero_format_bibliography', {
        citations: [
          { item_key: I.seaLevelArticle, prefix: 'see', locator: '3', suppress_author: true },
          { item_key: I.attentionPaper, suffix: 'for attention' },
        ],
      });
      expect((r.structuredContent as { text: string }).text).toBe(
        '(see 2011, p. 3; Vaswani et al., 2017 for attention)',
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('bad input', () => {
  it('an unknown key is a failed entry while the others are formatted: partial, exit 7', async () => {
    const r = await cite([I.seaLevelArticle, 'ZZZZ2345', 'NOPE']);
    expect(r.code).toBe(7);
    expect(r.envelope.ok).toBe('partial');
    expect(r.data.text).toBe(CHURCH_APA);
    expect(r.data.failed).toEqual([
      {
        index: 1,
        key: 'ZZZZ2345',
        code: 404,
        message: 'No item "ZZZZ2345" in users/8675309.',
        reason: 'not_found',
        retryable: false,
      },
      {
        index: 2,
        key: 'NOPE',
        code: 404,
        message:
          'No item "NOPE" in users/8675309: "NOPE" is not a Zotero key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ).',
        reason: 'not_found',
        retryable: false,
      },
    ]);
  });

  it('only unknown keys: not_found, exit 4', async () => {
    const r = await zotAt(['cite', 'ZZZZ2345'], { env: sample.env() });
    expect(r.code).toBe(4);
    expect((r.json().error as { code: string }).code).toBe('not_found');
  });

  it('an unknown style id is a validation_error with the closest ids, before the library is read', async () => {
    const r = await zotAt(['cite', I.seaLevelArticle, '--style', 'apaa'], { env: sample.env() });
    expect(r.code).toBe(3);
    const error = r.json().error as { code: string; message: string };
    expect(error.code).toBe('validation_error');
    expect(error.message).toContain("did you mean 'apa'");
  });

  it('a .csl path that does not exist is not_found', async () => {
    const r = await zotAt(['cite', I.seaLevelArticle, '--style', '/nonexistent/x.csl'], {
      env: sample.env(),
    });
    expect(r.code).toBe(4);
  });

  it('more locators than keys is refused', async () => {
    const r = await zotAt(
      ['cite', I.seaLevelArticle, '--mode', 'citation', '--locator', '1', '--locator', '2'],
      {
        env: sample.env(),
      },
    );
    expect(r.code).toBe(3);
    expect((r.json().error as { message: string }).message).toBe(
      '2 locators for 1 item: one locator per item, in order.',
    );
  });
});
