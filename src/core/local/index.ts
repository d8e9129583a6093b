/**
 * The Zotero desktop app's data, read locally: where it is (`discovery.ts`) and the
 * read-only `zotero.sqlite` reader (`sqlite/`). The fixture builder and the sample libraries
 * that write such files are not product code: they live in `src/demo/`.
 */
export {
  discoverZoteroDataDir,
  profilesIniDirs,
  readZoteroPrefs,
  requireZoteroDatabase,
  zoteroProfileDirs,
  zoteroProfilesRoot,
  type DataDirCandidate,
  type DataDirDiscovery,
  type DataDirSource,
  type DiscoverOptions,
} from './discovery.js';
export * from './sqlite/index.js';
