/** `npm run demo` is the README's first command: it must run offline, without a key, and succeed. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

describe('npm run demo', () => {
  it('runs its tour to the end with no key and no network', () => {
    const r = spawnSync(process.execPath, ['scripts/demo.mjs'], {
      cwd: ROOT,
      // No key, and a Web API address where nothing listens: the tour must not need either.
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', ZOTERO_API_URL: 'http://127.0.0.1:9' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // The sample library is read offline: collections, a search hit, the item read.
    expect(r.stdout).toMatch(/^CLIMATE2 +Climate Science +\(top level\) +3$/m);
    expect(r.stdout).toMatch(/^CHURCH22 +journalArticle +2011 +Church and White/m);
    expect(r.stdout).toContain('Sea-level rise from the late 19th to the early 21st century');
    expect(r.stdout).toContain('"dry_run": true');
    expect(r.stdout).toContain('"command": "collection create"');
    expect(r.stdout).toContain('"code": "not_found"');
    expect(r.stdout).toMatch(/Done\./);
  });
});
