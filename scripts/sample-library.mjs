#!/usr/bin/env node
/**
 * Writes a sample Zotero data directory (zotero.sqlite, and storage/ with full-text caches)
 * from the built product (`npm run build` first):
 *
 *   node scripts/sample-library.mjs DIR                 the small realistic sample library
 *   node scripts/sample-library.mjs DIR --large [N]     the benchmark library (N items, default 50000)
 *
 * Point Zoteus at it with ZOTERO_DATA_DIR=DIR. Deterministic: the same file every time.
 */
import { join } from 'node:path';
import { buildLargeLibrary, buildSampleLibrary } from '../dist/demo/sample/index.js';

const [dir, flag, count] = process.argv.slice(2);
if (!dir || (flag !== undefined && flag !== '--large')) {
  process.stderr.write('usage: node scripts/sample-library.mjs DIR [--large [ITEMS]]\n');
  process.exit(2);
}
const path = join(dir, 'zotero.sqlite');
const built =
  flag === '--large'
    ? await buildLargeLibrary(path, { items: count ? Number(count) : undefined })
    : await buildSampleLibrary(path);
process.stdout.write(
  `${path}: ${built.items.length} items, ${built.collections.length} collections, ${built.libraries.length} libraries\n`,
);
