/**
 * The Zotero desktop app's data, read locally: where it is (`discovery.ts`) and the
 * read-only `zotero.sqlite` reader (`sqlite/`). The fixture builder (`fixture/`) and the
 * sample libraries (`sample/`) are imported from their own modules, never from here, so the
 * reader does not load them.
 */
export {
  discoverZoteroDataDir,
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
