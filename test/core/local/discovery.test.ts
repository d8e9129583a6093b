/** Finding the Zotero data directory: explicit settings, Zotero's own prefs.js, ~/Zotero. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import {
  discoverZoteroDataDir,
  readZoteroPrefs,
  requireZoteroDatabase,
  zoteroProfileDirs,
} from '../../../src/core/local/index.js';
import { tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let home: string;
beforeEach(() => {
  tmp = tempDir('zotero-discovery-');
  home = join(tmp.dir, 'home');
  mkdirSync(home);
});
afterEach(() => tmp.cleanup());

/** A data directory with an (empty) zotero.sqlite: discovery only looks for the file. */
function dataDir(path: string): string {
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'zotero.sqlite'), '');
  return path;
}

function profile(root: string, name: string, prefs: string, ini?: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'prefs.js'), prefs);
  if (ini !== undefined) writeFileSync(join(root, 'profiles.ini'), ini);
  return dir;
}

const pref = (dir: string, use = true) =>
  `// Mozilla User Preferences\nuser_pref("extensions.zotero.dataDir", ${JSON.stringify(dir)});\n` +
  `user_pref("extensions.zotero.useDataDir", ${use});\nuser_pref("extensions.zotero.lastViewedFolder", "L1");\n`;

describe('discoverZoteroDataDir', () => {
  it('ZOTERO_DATA_DIR wins, and says so; set but empty is reported, not replaced by a guess', () => {
    const custom = dataDir(join(tmp.dir, 'custom'));
    dataDir(join(home, 'Zotero'));
    const env = { HOME: home, ZOTERO_DATA_DIR: custom, ZOT_CONFIG_DIR: join(tmp.dir, 'cfg') };
    const found = discoverZoteroDataDir({ env, config: loadConfig(env), platform: 'linux' });
    expect(found).toMatchObject({ dataDir: custom, database: join(custom, 'zotero.sqlite'), source: 'env' });
    expect(found.reason).toMatch(/ZOTERO_DATA_DIR/);

    const wrong = { ...env, ZOTERO_DATA_DIR: join(tmp.dir, 'nowhere') };
    const missing = discoverZoteroDataDir({ env: wrong, config: loadConfig(wrong), platform: 'linux' });
    expect(missing).toMatchObject({ dataDir: join(tmp.dir, 'nowhere'), database: undefined, source: 'env' });
    expect(missing.reason).toMatch(/ZOTERO_DATA_DIR is set to .*nowhere, which has no zotero\.sqlite/);
    expect(() => requireZoteroDatabase(missing)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('accepts a path to the database file itself, and ~', () => {
    const custom = dataDir(join(home, 'Research', 'Zotero data'));
    const env = { HOME: home, ZOTERO_DATA_DIR: join(custom, 'zotero.sqlite') };
    expect(discoverZoteroDataDir({ env, platform: 'linux' }).dataDir).toBe(custom);
    const tilde = { HOME: home, ZOTERO_DATA_DIR: '~/Research/Zotero data' };
    expect(discoverZoteroDataDir({ env: tilde, platform: 'linux' }).database).toBe(
      join(custom, 'zotero.sqlite'),
    );
  });

  it("the config profile's zotero_data_dir counts as explicit", () => {
    const custom = dataDir(join(tmp.dir, 'from-profile'));
    const cfg = join(tmp.dir, 'cfg');
    mkdirSync(cfg);
    writeFileSync(
      join(cfg, 'config.json'),
      JSON.stringify({ default_profile: 'p', profiles: { p: { zotero_data_dir: custom } } }),
    );
    const env = { HOME: home, ZOT_CONFIG_DIR: cfg };
    const found = discoverZoteroDataDir({ env, config: loadConfig(env), platform: 'linux' });
    expect(found).toMatchObject({ dataDir: custom, source: 'profile' });
    expect(found.reason).toMatch(/zotero_data_dir/);
  });

  it('~/Zotero by default', () => {
    const dflt = dataDir(join(home, 'Zotero'));
    const env = { HOME: home, ZOT_CONFIG_DIR: join(tmp.dir, 'cfg') };
    // The config's default (~/Zotero, source "default") is not an explicit setting.
    const found = discoverZoteroDataDir({ env, config: loadConfig(env), platform: 'linux' });
    expect(found).toMatchObject({ dataDir: dflt, source: 'default' });
    expect(found.reason).toMatch(/default location/);
  });

  it('Linux: a custom location in the profile prefs.js (found through profiles.ini) wins over ~/Zotero', () => {
    dataDir(join(home, 'Zotero'));
    const custom = dataDir(join(tmp.dir, 'elsewhere', 'Zotero'));
    const root = join(home, '.zotero', 'zotero');
    profile(
      root,
      'abcd1234.default',
      pref(custom),
      '[General]\nStartWithLastProfile=1\n\n[Profile0]\nName=default\nIsRelative=1\nPath=abcd1234.default\nDefault=1\n',
    );
    const found = discoverZoteroDataDir({ env: { HOME: home }, platform: 'linux' });
    expect(found).toMatchObject({ dataDir: custom, source: 'zotero-prefs' });
    expect(found.reason).toContain(join(root, 'abcd1234.default', 'prefs.js'));
  });

  it('macOS: Profiles/ under Application Support; without useDataDir, ~/Zotero first, then the named dir', () => {
    const custom = dataDir(join(tmp.dir, 'Dropbox', 'Zotero'));
    const root = join(home, 'Library', 'Application Support', 'Zotero');
    profile(
      root,
      join('Profiles', 'x1y2z3.default'),
      pref(custom, false),
      '[Profile0]\nName=default\nIsRelative=1\nPath=Profiles/x1y2z3.default\n',
    );
    const found = discoverZoteroDataDir({ env: { HOME: home }, platform: 'darwin' });
    expect(found).toMatchObject({ dataDir: custom, source: 'zotero-prefs' });
    expect(found.checked.map((c) => c.source)).toEqual(['default', 'zotero-prefs']);
    dataDir(join(home, 'Zotero'));
    expect(discoverZoteroDataDir({ env: { HOME: home }, platform: 'darwin' }).source).toBe('default');
  });

  it('Windows: %APPDATA%\\Zotero\\Zotero\\Profiles, Windows paths with escaped backslashes', () => {
    const appdata = join(tmp.dir, 'AppData', 'Roaming');
    const custom = dataDir(join(tmp.dir, 'D', 'Zotero'));
    const root = join(appdata, 'Zotero', 'Zotero');
    profile(root, join('Profiles', 'win.default'), pref(custom));
    // Windows' folders, walked with POSIX paths so the tree can live in a temp folder on Linux.
    const found = discoverZoteroDataDir({
      env: { USERPROFILE: home, APPDATA: appdata },
      platform: 'win32',
      path: posix,
    });
    expect(found).toMatchObject({ dataDir: custom, source: 'zotero-prefs' });
    expect(readZoteroPrefs('user_pref("extensions.zotero.dataDir", "C:\\\\Users\\\\me\\\\Zotero");')).toEqual(
      {
        dataDir: 'C:\\Users\\me\\Zotero',
      },
    );
  });

  it('the default profile first: [Install…] Default=, then Default=1', () => {
    const root = join(tmp.dir, 'profiles');
    const a = profile(root, 'a.one', '');
    const b = profile(root, 'b.two', '');
    const c = profile(root, 'c.three', '');
    writeFileSync(
      join(root, 'profiles.ini'),
      `[Install4F96D1932A9F858E]\nDefault=c.three\n\n[Profile0]\nPath=a.one\nIsRelative=1\n\n[Profile1]\nPath=${b}\nIsRelative=0\nDefault=1\n`,
    );
    expect(zoteroProfileDirs(root)).toEqual([c, b, a]);
  });

  it('nothing found: says where it looked', () => {
    const found = discoverZoteroDataDir({ env: { HOME: home }, platform: 'linux' });
    expect(found).toMatchObject({ dataDir: undefined, database: undefined, source: undefined });
    expect(found.reason).toMatch(/No zotero\.sqlite found \(looked in .*Zotero; no Zotero profile/);
    expect(() => requireZoteroDatabase(found)).toThrow(/Zotero desktop data not found/);
  });
});
