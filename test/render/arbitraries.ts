/** fast-check generators of evidence rows whose text is as hostile as we can make it. */
import fc from 'fast-check';
import { COVERAGE_VALUES, SUPPORT_VALUES, type EvidenceRow } from '../../src/render/evidence/index.js';

/** Characters that break tables, CSV, spreadsheets or parsers, plus ordinary and wide ones. */
const HOSTILE_CHARS = [
  '|',
  '\\',
  '"',
  "'",
  ',',
  ';',
  '\r',
  '\n',
  '\t',
  ' ',
  '\u00a0',
  '\u3000',
  '=',
  '+',
  '-',
  '@',
  '\u2028',
  '\u2029',
  '\u0085',
  '\v',
  '\f',
  '\u001c',
  '\u001e',
  '\u0000',
  '`',
  '*',
  '_',
  '<',
  '>',
  '#',
  '[',
  ']',
  '&',
  '!',
  ':',
  '.',
  'a',
  'Z',
  '0',
  '5',
  'é',
  '日',
  '🙂',
  '\u200b',
  '\ufeff',
];

/** Pieces of Markdown and HTML syntax that a viewer would act on if a cell passed them through. */
const MARKUP_PIECES = [
  '(',
  ')',
  '/',
  '~',
  '$',
  '^',
  '{',
  '}',
  '?',
  'x',
  'www.',
  'WWW.',
  'http://',
  'https://',
  'javascript:',
  'mailto:',
  '<script>',
  '</script>',
  '<img src=x onerror=alert(1)>',
  '<b>',
  '<!--',
  'onerror=',
  '&lt;',
  '&#60;',
  '&#x3C;',
  '&amp;',
  '![',
  '](',
  ']: ',
  '<a@b.co>',
  'a@b.co',
  '~~',
  '**',
  '__',
  '``',
  '$$',
];

const hostileChar = fc.constantFrom(...HOSTILE_CHARS, ...MARKUP_PIECES);

/** Text made of hostile characters, arbitrary Unicode, or any code units at all. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: hostileChar, maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
  // Formula starters and numbers that look like them.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('=', '+', '-', '@', '\t', '\r', ''),
        fc.oneof(fc.integer().map(String), fc.string({ unit: hostileChar, maxLength: 8 })),
      )
      .map(([a, b]) => a + b),
  },
);

export const itemKey = fc.stringMatching(/^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/);

export const evidenceRow: fc.Arbitrary<EvidenceRow> = fc.record(
  {
    item_key: itemKey,
    study: hostileText,
    finding: hostileText,
    quotation: fc.option(hostileText, { nil: null }),
    page: fc.option(
      fc.oneof(
        hostileText,
        fc.integer({ min: -100000, max: 100000 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
      { nil: null },
    ),
    page_exact: fc.option(fc.boolean(), { nil: null }),
    coverage: fc.constantFrom(...COVERAGE_VALUES),
    support: fc.constantFrom(...SUPPORT_VALUES),
    note: fc.option(hostileText, { nil: null }),
  },
  { requiredKeys: ['item_key', 'study', 'finding', 'coverage', 'support'] },
);

export const evidenceRows = fc.array(evidenceRow, { minLength: 1, maxLength: 8 });
