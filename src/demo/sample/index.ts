/**
 * Sample `zotero.sqlite` files, built with the fixture builder: a small realistic library
 * (demos, contract tests) and a large one (benchmarks). Both deterministic.
 */
import { buildZoteroDb, type BuildResult } from '../fixture/builder.js';
import { largeLibrarySpec, type LargeLibraryOptions } from './large.js';
import { sampleLibrarySpec } from './sample.js';

export { largeLibrarySpec, type LargeLibraryOptions } from './large.js';
export { SAMPLE_KEYS, sampleLibrarySpec } from './sample.js';

/** Writes the sample library to `path` (a `zotero.sqlite`; full-text caches go to `storage/` beside it). */
export function buildSampleLibrary(
  path: string,
  options: { overwrite?: boolean } = {},
): Promise<BuildResult> {
  return buildZoteroDb(path, { ...sampleLibrarySpec(), ...options });
}

/** Writes the large benchmark library to `path`. */
export function buildLargeLibrary(
  path: string,
  options: LargeLibraryOptions & { overwrite?: boolean } = {},
): Promise<BuildResult> {
  const { overwrite, ...rest } = options;
  return buildZoteroDb(path, { ...largeLibrarySpec(rest), overwrite });
}
