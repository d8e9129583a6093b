/** The bundle keeps citeproc-js's copyright and licence notice with its code (CPAL-1.0 / AGPL). Run `npm run build` first. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

describe('dist/bundle', () => {
  it('the chunk holding citeproc-js starts with its notice', () => {
    const dir = join(ROOT, 'dist', 'bundle', 'chunks');
    const holders = readdirSync(dir)
      .map((name) => readFileSync(join(dir, name), 'utf8'))
      .filter((text) => text.includes('CSL.Engine = function'));
    expect(holders).toHaveLength(1);
    expect(holders[0]).toMatch(
      /^\/\*\nCopyright \(c\) 2009-2019 Frank Bennett\n[\s\S]*?Common Public Attribution/,
    );
  });
});
