/** Table mode fits the terminal: text columns cut with "…", keys whole, prose wrapped at words. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { terminalWidth } from '../../../src/surfaces/cli/io.js';
import { fitLine, renderObject, renderRows, wrapLine } from '../../../src/surfaces/cli/table.js';
import { runZot, sandbox } from '../../support/cli.js';

const rows = [
  { key: 'ABCD2345', title: 'The collapse of the West Antarctic ice sheet under warming', year: 2011 },
  { key: 'WXYZ6789', title: 'Sea level', year: 2020 },
];

describe('renderRows with a width', () => {
  it('cuts the widest text column with "…" and keeps keys and numbers whole', () => {
    const text = renderRows(rows, undefined, 40);
    expect(text.split('\n')).toEqual([
      'key       title                     year',
      '--------  ------------------------  ----',
      'ABCD2345  The collapse of the Wes…  2011',
      'WXYZ6789  Sea level                 2020',
      '',
    ]);
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(40);
  });

  it('leaves a table that fits alone', () => {
    expect(renderRows(rows, undefined, 200)).toBe(renderRows(rows));
  });
});

describe('prose', () => {
  it('wraps at word boundaries, never mid-word', () => {
    expect(wrapLine('one two three four five', 10)).toEqual(['one two', 'three four', 'five']);
  });

  it('renderObject wraps a long value under its own column', () => {
    const text = renderObject(
      { id: 1, detail: 'the API key could not be checked because nothing answered' },
      undefined,
      40,
    );
    expect(text.split('\n')).toEqual([
      'id      1',
      'detail  the API key could not be checked',
      '        because nothing answered',
      '',
    ]);
  });

  it('a line of a tool’s text wraps with its continuation under its last column', () => {
    expect(fitLine('ABCD2345  journalArticle  2011  Smith — A very long title about ice', 50)).toEqual([
      'ABCD2345  journalArticle  2011  Smith — A very',
      '                                long title about',
      '                                ice',
    ]);
  });
});

describe('terminalWidth', () => {
  it('COLUMNS, else the TTY’s columns, else none', () => {
    expect(terminalWidth({ isTTY: true, columns: 100 }, { COLUMNS: '60' })).toBe(60);
    expect(terminalWidth({ isTTY: true, columns: 100 }, {})).toBe(100);
    expect(terminalWidth({ isTTY: false }, {})).toBeUndefined();
  });
});

describe('zot on a narrow terminal', () => {
  let box: ReturnType<typeof sandbox>;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('zot whoami fits every line in COLUMNS', async () => {
    const r = await runZot(['whoami'], { env: { ...box.env, COLUMNS: '60' }, tty: true });
    expect(r.code).toBe(0);
    const lines = r.stdout.replace(/\r/g, '').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(60);
    expect(r.stdout).not.toMatch(/\{"/);
  });
});
