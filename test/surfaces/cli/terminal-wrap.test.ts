/** Error and hint lines at a terminal wrap to its width under their label (issue 16, point 2). */
import { describe, expect, it } from 'vitest';
import { sandbox } from '../../support/cli.js';
import { zotAt } from './terminal-harness.js';

describe('Error and Hint at 40 columns', () => {
  it('wrap at words, continuation lines under the text, nothing past the width', async () => {
    const r = await zotAt(['search', '--type', 'bok'], {
      env: { ...sandbox().env, NO_COLOR: '1' },
      stdoutTTY: true,
      stderrTTY: true,
      columns: 40,
    });
    expect(r.code).toBe(3);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      "Error: --type 'bok' is not a Zotero item",
      "       type (did you mean 'book'?).",
    ]);
    expect(lines.find((l) => l.startsWith('Hint: '))).toBeDefined();
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
  });
});

describe('zot schema of a command that does not exist', () => {
  it('names the closest commands', async () => {
    const r = await zotAt(['schema', 'serch'], { env: { ...sandbox().env } });
    expect(r.code).toBe(4);
    expect((r.json().error as { message: string }).message).toBe(
      'No command `zot serch`: did you mean `zot schema search`?',
    );
  });
});
