/** Rows with hostile text for the golden files and the surface tests. */
import type { EvidenceRow } from '../../src/render/evidence/index.js';

export const HOSTILE_QUESTION = 'Does drug X | drug Y reduce risk?\r\nA "second" line, with \\ backslash';

export const HOSTILE_ROWS: EvidenceRow[] = [
  {
    item_key: 'ABCD2345',
    study: 'Smith | Jones 2020',
    finding: 'Reduced risk by 12% \\ p<0.05',
    quotation: 'Line one\r\nline "two", with comma',
    page: 12,
    page_exact: true,
    coverage: 'passage',
    support: 'supported',
    note: 'n=120',
  },
  {
    item_key: 'BCDE3456',
    study: 'Lee 2019 (BCDE3456)',
    finding: '=SUM(A1:A9)',
    quotation: '   ',
    page: 'e1043',
    page_exact: false,
    coverage: 'abstract-only',
    support: 'supported',
  },
  {
    item_key: 'CDEF4567',
    study: '  Müller 2021  ',
    finding: '+12',
    quotation: '-5 mg/kg was \t toxic',
    page: -5,
    coverage: 'passage',
    support: 'contradicted',
  },
  {
    item_key: 'DEFG5678',
    study: '@home study',
    finding: '\tTabbed finding',
    quotation: 'Unavailable text quoted',
    coverage: 'unavailable',
    support: 'uncertain',
    note: '-- see appendix',
  },
  {
    item_key: 'EFGH6789',
    study: "O'Brien, 2018",
    finding: 'Mixed results; 日本語 テキスト 🙂',
    quotation: '\rCarriage start',
    page: 'pp. 4\u20135',
    coverage: 'passage',
    support: 'uncertain',
  },
  {
    item_key: 'FGHJ7892',
    study: '',
    finding: 'No text found',
    coverage: 'unavailable',
    support: 'unverified',
    note: '   ',
  },
  {
    item_key: 'GHJK8923',
    study: 'Passage claimed',
    finding: 'Claims a passage',
    quotation: null,
    page: '7',
    coverage: 'passage',
    support: 'unverified',
  },
  {
    item_key: 'HJKL9234',
    study: 'Escapes\\|2022',
    finding: 'a\\|b | c\\\\ d\u2028e\u2029f\u0085g\vh\fi',
    quotation: '| starts with a pipe and ends with a backslash \\',
    page: '+12',
    page_exact: true,
    coverage: 'passage',
    support: 'supported',
    note: 'say "hi",\nthen @bye',
  },
];

export const PLAIN_QUESTION = 'Does exercise improve sleep quality in adults?';

export const PLAIN_ROWS: EvidenceRow[] = [
  {
    item_key: 'KLMN2345',
    study: 'Kim 2021',
    finding: 'Sleep quality improved after 12 weeks of aerobic exercise.',
    quotation: 'Participants in the exercise arm reported better sleep (PSQI −2.1).',
    page: 5,
    page_exact: true,
    coverage: 'passage',
    support: 'supported',
  },
  {
    item_key: 'LMNP3456',
    study: 'Patel 2019',
    finding: 'No effect reported in the abstract.',
    coverage: 'abstract-only',
    support: 'unverified',
  },
];

/** Cells that a Markdown viewer would run or restyle if the table passed them through. */
export const MARKUP_QUESTION = 'Does <b>bold</b> or [a link](javascript:alert(0)) in a question run?';

export const MARKUP_ROWS: EvidenceRow[] = [
  {
    item_key: 'MNPQ4567',
    study: '<script>alert(1)</script>',
    finding: '<img src=x onerror=alert(1)> and <a href="javascript:alert(2)">a link</a>',
    quotation: '[click me](javascript:alert(3)) and ![image](javascript:alert(4)) and [ref][1]',
    page: '<!-- 12 -->',
    page_exact: true,
    coverage: 'passage',
    support: 'supported',
    note: '<javascript:alert(5)> <https://example.com> https://example.com/a_b www.example.com',
  },
  {
    item_key: 'NPQR5678',
    study: 'Emphasis *bold* _italic_ **strong** __strong__ ~~struck~~ `code` $x$',
    finding: 'Entities &lt;b&gt; &amp; &#60;script&#62; &#x3C; and Smith & Jones',
    quotation: 'p<0.05 and p < 0.05, [12], snake_case_name, 1_000, mail <a@b.co>',
    page: 'e*1*',
    coverage: 'passage',
    support: 'supported',
    note: '[x]: javascript:alert(6) and a trailing backslash \\',
  },
];
