/**
 * The zotero.sqlite fixture builder for tests: `buildZoteroDb(path, spec)` creates a database
 * with Zotero's real tables and columns and shuffled type/field ids. The builder itself lives
 * in `src/demo/fixture/` because `npm run demo` builds its sample library from the compiled
 * `dist/demo/` (only src/ is compiled); this is the one entry point tests use.
 */
export * from '../../../src/demo/fixture/index.js';
export {
  buildLargeLibrary,
  buildSampleLibrary,
  largeLibrarySpec,
  sampleLibrarySpec,
  SAMPLE_KEYS,
  type LargeLibraryOptions,
} from '../../../src/demo/sample/index.js';
