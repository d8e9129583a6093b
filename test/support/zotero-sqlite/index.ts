/**
 * The zotero.sqlite fixture builder for tests: `buildZoteroDb(path, spec)` creates a database
 * with Zotero's real tables and columns and shuffled type/field ids. The builder itself lives
 * in `src/core/local/fixture/` because the product's sample-library generator uses it too
 * (product code never imports test/); this is the one entry point tests use.
 */
export * from '../../../src/core/local/fixture/index.js';
export {
  buildLargeLibrary,
  buildSampleLibrary,
  largeLibrarySpec,
  sampleLibrarySpec,
  SAMPLE_KEYS,
  type LargeLibraryOptions,
} from '../../../src/core/local/sample/index.js';
