/**
 * Zoteus on macOS, Windows and Linux, checked on the Linux CI with the platform and the
 * environment injected: Zoteus' own folders, Zotero's default data directory, the Zotero
 * profile root, profiles.ini and prefs.js. Paths are asserted exactly, Windows ones with drive
 * letters and backslashes. Discovery that reads the disk walks a fake profile tree in a temp
 * folder (POSIX paths, so those cases skip on a Windows host); on 'win32' with Windows paths
 * nothing is on this disk, so the candidate paths it computes are what is asserted.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix, win32 } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultZoteroDataDir,
  homeDir,
  pathsOf,
  platformCacheDir,
  platformConfigDir,
  platformDataDir,
  type Env,
} from '../../src/core/paths.js';
import {
  discoverZoteroDataDir,
  profilesIniDirs,
  zoteroProfileDirs,
  zoteroProfilesRoot,
} from '../../src/core/local/index.js';
import { tempDir } from './local/helpers.js';

const dirs = (env: Env, platform: NodeJS.Platform) => ({
  cache: platformCacheDir(env, platform),
  config: platformConfigDir(env, platform),
  data: platformDataDir(env, platform),
  zotero: defaultZoteroDataDir(env, platform),
  profiles: zoteroProfilesRoot(env, platform),
});

describe("Zoteus' folders and Zotero's, per platform", () => {
  it('Linux: XDG folders when set to absolute paths, else ~/.cache, ~/.config, ~/.local/share', () => {
    expect(dirs({ HOME: '/home/ada', USERPROFILE: 'C:\\Users\\ada' }, 'linux')).toEqual({
      cache: '/home/ada/.cache/zoteus',
      config: '/home/ada/.config/zoteus',
      data: '/home/ada/.local/share/zoteus',
      zotero: '/home/ada/Zotero',
      profiles: '/home/ada/.zotero/zotero',
    });
    const xdg = { HOME: '/home/ada', XDG_CACHE_HOME: '/var/cache/ada', XDG_CONFIG_HOME: '/etc/ada' };
    expect(dirs({ ...xdg, XDG_DATA_HOME: '/srv/ada/data' }, 'linux')).toMatchObject({
      cache: '/var/cache/ada/zoteus',
      config: '/etc/ada/zoteus',
      data: '/srv/ada/data/zoteus',
      zotero: '/home/ada/Zotero',
    });
    // The XDG specification: a relative path in these variables is invalid and ignored.
    expect(dirs({ HOME: '/home/ada', XDG_CACHE_HOME: 'cache', XDG_DATA_HOME: './d' }, 'linux')).toMatchObject(
      {
        cache: '/home/ada/.cache/zoteus',
        data: '/home/ada/.local/share/zoteus',
      },
    );
    expect(dirs({ HOME: '/usr/home/ada' }, 'freebsd').config).toBe('/usr/home/ada/.config/zoteus');
  });

  it('macOS: ~/Library (XDG variables are not the convention there)', () => {
    expect(dirs({ HOME: '/Users/ada', XDG_CACHE_HOME: '/tmp/xdg' }, 'darwin')).toEqual({
      cache: '/Users/ada/Library/Caches/zoteus',
      config: '/Users/ada/Library/Preferences/zoteus',
      data: '/Users/ada/Library/Application Support/zoteus',
      zotero: '/Users/ada/Zotero',
      profiles: '/Users/ada/Library/Application Support/Zotero',
    });
  });

  it('Windows: %LOCALAPPDATA% and %APPDATA%, %USERPROFILE% before HOME (Git Bash sets HOME)', () => {
    const env = {
      USERPROFILE: 'C:\\Users\\Ada Lovelace',
      HOME: '/c/Users/Ada Lovelace/git-home',
      APPDATA: 'C:\\Users\\Ada Lovelace\\AppData\\Roaming',
      LOCALAPPDATA: 'C:\\Users\\Ada Lovelace\\AppData\\Local',
      XDG_CONFIG_HOME: '/home/ada/.config',
    };
    expect(dirs(env, 'win32')).toEqual({
      cache: 'C:\\Users\\Ada Lovelace\\AppData\\Local\\zoteus\\Cache',
      config: 'C:\\Users\\Ada Lovelace\\AppData\\Roaming\\zoteus\\Config',
      data: 'C:\\Users\\Ada Lovelace\\AppData\\Local\\zoteus\\Data',
      zotero: 'C:\\Users\\Ada Lovelace\\Zotero',
      profiles: 'C:\\Users\\Ada Lovelace\\AppData\\Roaming\\Zotero\\Zotero',
    });
    // Without APPDATA and LOCALAPPDATA: the profile's own AppData folders.
    expect(dirs({ USERPROFILE: 'D:\\Profiles\\ada' }, 'win32')).toEqual({
      cache: 'D:\\Profiles\\ada\\AppData\\Local\\zoteus\\Cache',
      config: 'D:\\Profiles\\ada\\AppData\\Roaming\\zoteus\\Config',
      data: 'D:\\Profiles\\ada\\AppData\\Local\\zoteus\\Data',
      zotero: 'D:\\Profiles\\ada\\Zotero',
      profiles: 'D:\\Profiles\\ada\\AppData\\Roaming\\Zotero\\Zotero',
    });
    // A roaming profile on another drive than the home folder.
    expect(zoteroProfilesRoot({ USERPROFILE: 'C:\\Users\\ada', APPDATA: 'E:\\Roaming' }, 'win32')).toBe(
      'E:\\Roaming\\Zotero\\Zotero',
    );
  });

  it('the home folder: USERPROFILE, HOMEDRIVE+HOMEPATH, then HOME on Windows; HOME elsewhere', () => {
    expect(homeDir({ USERPROFILE: 'C:\\Users\\ada', HOME: 'H:\\' }, 'win32')).toBe('C:\\Users\\ada');
    expect(homeDir({ HOMEDRIVE: 'D:', HOMEPATH: '\\Users\\ada', HOME: 'H:\\' }, 'win32')).toBe(
      'D:\\Users\\ada',
    );
    expect(homeDir({ HOME: 'H:\\' }, 'win32')).toBe('H:\\');
    expect(homeDir({ HOME: '/home/ada', USERPROFILE: 'C:\\Users\\ada' }, 'linux')).toBe('/home/ada');
    expect(homeDir({ HOME: '/Users/ada' }, 'darwin')).toBe('/Users/ada');
    expect(pathsOf('win32')).toBe(win32);
    expect(pathsOf('darwin')).toBe(posix);
    expect(pathsOf('linux')).toBe(posix);
  });
});

describe('profiles.ini: relative and absolute profile paths', () => {
  const ini = [
    '[Install4F96D1932A9F858E]',
    'Default=Profiles/inst.default',
    '',
    '[Profile1]',
    'Name=other',
    'IsRelative=1',
    'Path=Profiles/b.other',
    '',
    '[Profile0]',
    'Name=default',
    'IsRelative=0',
    'Path=D:\\Zotero profile\\a.default',
    'Default=1',
    '',
  ].join('\r\n');

  it('on Windows: resolved with backslashes under %APPDATA%\\Zotero\\Zotero, the default first', () => {
    const root = 'C:\\Users\\ada\\AppData\\Roaming\\Zotero\\Zotero';
    expect(profilesIniDirs(ini, root, win32)).toEqual([
      'C:\\Users\\ada\\AppData\\Roaming\\Zotero\\Zotero\\Profiles\\inst.default',
      'D:\\Zotero profile\\a.default',
      'C:\\Users\\ada\\AppData\\Roaming\\Zotero\\Zotero\\Profiles\\b.other',
    ]);
  });

  it('on macOS and Linux: resolved against the profile root', () => {
    const posixIni = ini.replace('D:\\Zotero profile\\a.default', '/Volumes/Data/a.default');
    expect(profilesIniDirs(posixIni, '/Users/ada/Library/Application Support/Zotero', posix)).toEqual([
      '/Users/ada/Library/Application Support/Zotero/Profiles/inst.default',
      '/Volumes/Data/a.default',
      '/Users/ada/Library/Application Support/Zotero/Profiles/b.other',
    ]);
    expect(
      profilesIniDirs('[Profile0]\nPath=abcd.default\nIsRelative=1\n', '/home/ada/.zotero/zotero', posix),
    ).toEqual(['/home/ada/.zotero/zotero/abcd.default']);
  });
});

describe('data-directory discovery on Windows, with Windows paths', () => {
  const env = {
    USERPROFILE: 'C:\\Users\\ada',
    HOME: '/c/Users/ada/git-home',
    APPDATA: 'C:\\Users\\ada\\AppData\\Roaming',
  };

  it('looks in %USERPROFILE%\\Zotero and names the profile folder it searched', () => {
    const found = discoverZoteroDataDir({ env, platform: 'win32' });
    expect(found.checked).toEqual([
      { path: 'C:\\Users\\ada\\Zotero', source: 'default', found: false, note: "Zotero's default location" },
    ]);
    expect(found.reason).toBe(
      'No zotero.sqlite found (looked in C:\\Users\\ada\\Zotero; no Zotero profile with a custom data directory under C:\\Users\\ada\\AppData\\Roaming\\Zotero\\Zotero).',
    );
  });

  it('ZOTERO_DATA_DIR: a drive path as given, ~\\ and ~/ from %USERPROFILE%', () => {
    const at = (ZOTERO_DATA_DIR: string) =>
      discoverZoteroDataDir({ env: { ...env, ZOTERO_DATA_DIR }, platform: 'win32' });
    expect(at('D:\\Research\\Zotero')).toMatchObject({ dataDir: 'D:\\Research\\Zotero', source: 'env' });
    expect(at('D:\\Research\\Zotero').reason).toBe(
      'ZOTERO_DATA_DIR is set to D:\\Research\\Zotero, which has no zotero.sqlite.',
    );
    expect(at('~\\Zotero data').dataDir).toBe('C:\\Users\\ada\\Zotero data');
    expect(at('~/Zotero data').dataDir).toBe('C:\\Users\\ada\\Zotero data');
    expect(at('D:/Research/Zotero/').dataDir).toBe('D:\\Research\\Zotero');
  });
});

describe.skipIf(process.platform === 'win32')('data-directory discovery in a profile tree on disk', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('zoteus-platforms-');
  });
  afterEach(() => tmp.cleanup());

  const dataDir = (path: string) => {
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'zotero.sqlite'), '');
    return path;
  };
  const profile = (dir: string, prefs: Record<string, string | boolean>) => {
    mkdirSync(dir, { recursive: true });
    const lines = Object.entries(prefs).map(
      ([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});`,
    );
    writeFileSync(join(dir, 'prefs.js'), `// Mozilla User Preferences\n\n${lines.join('\n')}\n`);
    return dir;
  };

  it('Linux: prefs.js of the profile profiles.ini names (relative path), with useDataDir, wins over ~/Zotero', () => {
    const home = join(tmp.dir, 'home', 'ada');
    const dflt = dataDir(join(home, 'Zotero'));
    const custom = dataDir(join(tmp.dir, 'mnt', 'research', 'Zotero'));
    const root = join(home, '.zotero', 'zotero');
    const prefs = profile(join(root, 'x1y2.default'), {
      'extensions.zotero.dataDir': custom,
      'extensions.zotero.useDataDir': true,
    });
    writeFileSync(
      join(root, 'profiles.ini'),
      '[General]\nStartWithLastProfile=1\n\n[Profile0]\nName=default\nIsRelative=1\nPath=x1y2.default\nDefault=1\n',
    );
    const found = discoverZoteroDataDir({ env: { HOME: home }, platform: 'linux' });
    expect(found).toMatchObject({
      dataDir: custom,
      database: join(custom, 'zotero.sqlite'),
      source: 'zotero-prefs',
      reason: `${custom} (the custom data directory set in Zotero's settings, ${join(prefs, 'prefs.js')}).`,
    });
    expect(found.checked.map((c) => c.path)).toEqual([custom]);

    // useDataDir false: Zotero uses its default folder, and so does discovery.
    profile(prefs, { 'extensions.zotero.dataDir': custom, 'extensions.zotero.useDataDir': false });
    expect(discoverZoteroDataDir({ env: { HOME: home }, platform: 'linux' })).toMatchObject({
      dataDir: dflt,
      source: 'default',
    });
  });

  it('Linux: a profile at an absolute path (IsRelative=0) outside the profile root', () => {
    const home = join(tmp.dir, 'home', 'ada');
    const custom = dataDir(join(tmp.dir, 'data', 'Zotero'));
    const elsewhere = profile(join(tmp.dir, 'profiles', 'moved.default'), {
      'extensions.zotero.dataDir': custom,
      'extensions.zotero.useDataDir': true,
    });
    const root = join(home, '.zotero', 'zotero');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'profiles.ini'), `[Profile0]\nName=default\nIsRelative=0\nPath=${elsewhere}\n`);
    expect(zoteroProfileDirs(root)).toEqual([elsewhere]);
    expect(discoverZoteroDataDir({ env: { HOME: home }, platform: 'linux' })).toMatchObject({
      dataDir: custom,
      source: 'zotero-prefs',
    });
  });

  it('macOS: a custom folder that lost its database gives way to ~/Zotero, saying what was checked', () => {
    const home = join(tmp.dir, 'Users', 'ada');
    const dflt = dataDir(join(home, 'Zotero'));
    const gone = join(tmp.dir, 'Volumes', 'USB', 'Zotero');
    const root = join(home, 'Library', 'Application Support', 'Zotero');
    profile(join(root, 'Profiles', 'abcd.default'), {
      'extensions.zotero.dataDir': gone,
      'extensions.zotero.useDataDir': true,
    });
    writeFileSync(
      join(root, 'profiles.ini'),
      '[Profile0]\nName=default\nIsRelative=1\nPath=Profiles/abcd.default\nDefault=1\n',
    );
    const found = discoverZoteroDataDir({ env: { HOME: home }, platform: 'darwin' });
    expect(found).toMatchObject({ dataDir: dflt, source: 'default' });
    expect(found.checked.map((c) => [c.path, c.source, c.found])).toEqual([
      [gone, 'zotero-prefs', false],
      [dflt, 'default', true],
    ]);
  });

  it("Windows' folders (POSIX paths): %APPDATA%\\Zotero\\Zotero\\Profiles, and ~ is %USERPROFILE%, not HOME", () => {
    const profileHome = join(tmp.dir, 'Users', 'ada');
    const gitHome = join(tmp.dir, 'git-home');
    dataDir(join(gitHome, 'Zotero'));
    const appdata = join(profileHome, 'AppData', 'Roaming');
    const env = { USERPROFILE: profileHome, HOME: gitHome, APPDATA: appdata };
    const options = { env, platform: 'win32' as const, path: posix };

    // HOME's Zotero folder is not the one Zotero uses on Windows.
    const none = discoverZoteroDataDir(options);
    expect(none).toMatchObject({ dataDir: undefined, source: undefined });
    expect(none.checked.map((c) => c.path)).toEqual([join(profileHome, 'Zotero')]);

    const dflt = dataDir(join(profileHome, 'Zotero'));
    expect(discoverZoteroDataDir(options)).toMatchObject({ dataDir: dflt, source: 'default' });

    // A dataDir without useDataDir comes after the default folder, found or not.
    const named = dataDir(join(tmp.dir, 'D', 'Zotero'));
    const root = join(appdata, 'Zotero', 'Zotero');
    profile(join(root, 'Profiles', 'w1n.default'), { 'extensions.zotero.dataDir': named });
    writeFileSync(
      join(root, 'profiles.ini'),
      '[Profile0]\r\nName=default\r\nIsRelative=1\r\nPath=Profiles/w1n.default\r\n',
    );
    expect(discoverZoteroDataDir(options)).toMatchObject({ dataDir: dflt, source: 'default' });
    rmSync(join(dflt, 'zotero.sqlite'));
    expect(discoverZoteroDataDir(options)).toMatchObject({ dataDir: named, source: 'zotero-prefs' });
    expect(zoteroProfilesRoot(env, 'win32', posix)).toBe(root);
  });
});
